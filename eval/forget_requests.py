"""Forget requests and corrections in context (eval/data/forget_requests.jsonl), for `make eval`.

Each item brings its own small account — the memory the words point to, look-alikes that must
survive (a preference that mentions a phone, the current address, a warehouse that is not a home)
and a bystander — and one customer message. ``conversational.forget`` runs as a dry run at the default
floor, as the turn loop runs it. Classes: a target named by meaning ("my allergy", "my city", "my
phone number"), an "old" value, corrections that only negate (they delete), corrections that state
a new value and plain statements (they delete nothing and are mined).
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "forget_requests.jsonl"
LANGUAGES = ["en", "ru", "ja", "cs", "es"]


def load() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def build_space(tenant, item: dict):
    """The item's account, written the way imports write memories; returns the space and the keys by id."""
    from memory.models import Memory
    from memory.text.analysis import search_tokens
    from memory.text.digests import keyword_digests
    from memory.text.vectors import embed_for_space
    from tenants import scope, spaces

    with scope.tenant_scope(tenant):
        space = spaces.create_space(tenant=tenant, external_id=f"forget-requests-{item['id']}")
    memories = item["memories"]
    vectors = embed_for_space(space.id, [m["content"] for m in memories])
    rows = {}
    with scope.tenant_scope(tenant, space):
        for memory, vector in zip(memories, vectors, strict=True):
            rows[memory["key"]] = Memory.objects.create(
                tenant_id=tenant.id, space=space, kind="fact", content=memory["content"],
                keyword_digests=keyword_digests(space.id, search_tokens(memory["content"])), embedding=vector,
                importance=0.6,
            )  # fmt: skip
        for memory in memories:
            if memory.get("superseded_by"):
                Memory.objects.filter(pk=rows[memory["key"]].pk).update(superseded_by=rows[memory["superseded_by"]])
    return space, {str(row.pk): key for key, row in rows.items()}


def evaluate(tenant) -> dict:
    from memory.forgetting import conversational
    from memory.forgetting.deletion import DeletionContext
    from tenants import scope

    results = []
    for item in load():
        space, keys_by_id = build_space(tenant, item)
        with scope.tenant_scope(tenant, space):
            outcome = conversational.forget(
                space=space, utterance=item["utterance"], context=DeletionContext(cause="eval"), dry_run=True
            )
        deleted = [keys_by_id.get(str(d.id), "?") for d in outcome.forgotten]
        results.append({**item, "deleted": deleted, "was_mined": not outcome.handled})

    def scores(rows: list[dict]) -> dict:
        targets = sum(len(r["targets"]) for r in rows)
        to_mine = [r for r in rows if r["mined"]]
        return {
            "items": len(rows),
            "wrong_deletions": sum(len(set(r["deleted"]) - set(r["targets"])) for r in rows),
            "recall": sum(len(set(r["deleted"]) & set(r["targets"])) for r in rows) / targets if targets else None,
            "exact": sum(set(r["deleted"]) == set(r["targets"]) for r in rows) / len(rows) if rows else None,
            "mined": sum(r["was_mined"] for r in to_mine) / len(to_mine) if to_mine else None,
        }

    by_class = collections.defaultdict(list)
    for r in results:
        by_class[r["class"]].append(r)
    return {
        "overall": scores(results),
        "per_class": {name: scores(rows) for name, rows in by_class.items()},
        "per_language": {lang: scores([r for r in results if r["lang"] == lang]) for lang in LANGUAGES},
        "mistakes": [r for r in results if set(r["deleted"]) != set(r["targets"]) or r["was_mined"] != r["mined"]],
    }


def report_lines(result: dict, floor: float) -> list[str]:
    def pct(value) -> str:
        return "–" if value is None else f"{100 * value:.1f} %"

    def row(name: str, s: dict) -> str:
        return (
            f"| {name} | {s['items']} | {s['wrong_deletions']} | {pct(s['recall'])} | {pct(s['exact'])} | "
            f"{pct(s['mined'])} |"
        )

    header = [
        "| | Items | Wrong deletions | Targets deleted | Handled exactly | Mined (updates, statements) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    return [
        "## Forget requests and corrections in context",
        "",
        f"{result['overall']['items']} messages (eval/data/forget_requests.jsonl), each against its own small account "
        "holding the memory the words point to, look-alikes that must survive (a preference that mentions a phone, "
        "the current address, a warehouse that is not a home) and a bystander. Dry runs of `conversational.forget` at "
        f"the default floor {floor}. “Mined”: corrections that state a new value and plain statements are left to "
        "the writer (nothing deleted, the turn mined). The set was written together with the rules it measures: it "
        "shows they do what docs/decisions/0005-forgetting.md says in five languages, not how they generalise.",
        "",
        *header,
        *[row(name, s) for name, s in result["per_class"].items()],
        row("all", result["overall"]),
        "",
        *header,
        *[row(lang, s) for lang, s in result["per_language"].items()],
        "",
        "Messages not handled exactly:",
        "",
        *(
            [
                f"- `{r['id']}` “{r['utterance']}” → targets {r['targets']}, deleted {r['deleted']}"
                + ("" if r["was_mined"] == r["mined"] else f", mined {r['was_mined']}")
                for r in result["mistakes"]
            ]
            or ["- none"]
        ),
        "",
    ]


def append_report(report: Path, result: dict, floor: float) -> None:
    report.write_text(report.read_text().rstrip("\n") + "\n\n" + "\n".join(report_lines(result, floor)))
