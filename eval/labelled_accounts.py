"""The labelled accounts of eval/data/accounts.json as end-user spaces, for recall and forgetting."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def build_accounts(tenant) -> dict:
    """One end-user space per labelled account, written the way imports write memories."""
    from memory.models import Memory
    from memory.text.analysis import search_tokens
    from memory.text.digests import keyword_digests, topic_digest
    from memory.text.vectors import embed_for_space
    from tenants import scope, spaces

    accounts = json.loads((DATA / "accounts.json").read_text())
    built = {}
    for name, account in accounts.items():
        with scope.tenant_scope(tenant):
            space = spaces.create_space(tenant=tenant, external_id=name)
        texts = [m["content"] for m in account["memories"]]
        ids = {}
        with scope.tenant_scope(tenant, space):
            vectors = embed_for_space(space.id, texts)
            for memory, vector in zip(account["memories"], vectors, strict=True):
                tokens = search_tokens(memory["content"]) | search_tokens(memory["topic"]) | {memory["topic"].lower()}
                row = Memory.objects.create(
                    tenant_id=tenant.id, space=space, kind=memory["kind"], content=memory["content"],
                    topic=memory["topic"], topic_digest=topic_digest(space.id, memory["topic"]),
                    keyword_digests=keyword_digests(space.id, tokens), embedding=vector, importance=0.6,
                )  # fmt: skip
                ids[str(row.id)] = memory["key"]
        built[name] = {"space": space, "keys_by_id": ids}
    return built
