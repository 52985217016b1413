"""Import a space export into a space (any tenant): check the whole file, then write it.

Import re-encrypts under the target space's key (ordinary model saves do that), recomputes the
blind indexes under it, keeps the exported vectors when the embedding model is the same and
re-embeds otherwise. It is idempotent: each imported row carries a keyed digest of its origin
(source space and record id), and a record already imported is skipped.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable, Iterable

import numpy as np
from django.db import transaction
from django.utils.dateparse import parse_datetime

from memory.models import EMBEDDING_DIMENSIONS, Episode, Memory
from memory.shared.storing import write_keys
from memory.store.lock import lock_space
from memory.text.analysis import search_tokens
from memory.text.digests import digest, keyword_digests, topic_digest
from memory.text.embeddings import get_embedder
from memory.text.vectors import into_space
from memory.transfer.sealing import FORMAT, VERSION, TransferError, key_of_header, open_sealed
from tenants import scope
from tenants.models import Space

EMBED_BATCH = 64
IMPORT_BATCH = 200
MEMORY_KINDS = set(Memory.Kind.values)
EPISODE_KINDS = set(Episode.Kind.values)


@dataclasses.dataclass
class ExportFile:
    header: dict
    records: list[dict]


def read_export(lines: Iterable[bytes | str], *, passphrase: str | None = None) -> ExportFile:
    """Parse, decrypt and check a whole file before anything is written."""
    iterator = iter(lines)
    header = _json_line(next(iterator, b""), 1)
    if header.get("format") != FORMAT:
        raise TransferError(f"Line 1: not an Engram space export (format {header.get('format')!r}).")
    if header.get("version") != VERSION:
        raise TransferError(f"Line 1: export version {header.get('version')!r} is not supported (expected {VERSION}).")
    encryption = header.get("encryption")
    key = key_of_header(encryption, passphrase) if encryption else None
    records, end = [], None
    for number, raw in enumerate(iterator, start=2):
        if not (raw.strip() if isinstance(raw, (str, bytes)) else raw):
            continue
        if end is not None:
            raise TransferError(f"Line {number}: data after the end record.")
        record = _json_line(raw, number)
        if key is not None:
            record = open_sealed(key, header.get("export_id", ""), number, record.get("sealed"))
        if record.get("type") == "end":
            end = record
            continue
        _check_record(record, number)
        records.append(record)
    if end is None or end.get("records") != len(records):
        raise TransferError("The file is truncated: its end record is missing or counts other records.")
    return ExportFile(header=header, records=records)


def _json_line(raw, number: int) -> dict:
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise TransferError(f"Line {number}: not valid JSON.") from None
    if not isinstance(value, dict):
        raise TransferError(f"Line {number}: must be a JSON object.")
    return value


def _check_record(record: dict, number: int) -> None:
    kind, record_type = record.get("kind"), record.get("type")
    try:
        uuid.UUID(str(record.get("id")))
    except ValueError:
        raise TransferError(f"Line {number}: the record has no valid id.") from None
    if record_type == "memory":
        if kind not in MEMORY_KINDS or not isinstance(record.get("content"), str) or not record["content"]:
            raise TransferError(f"Line {number}: a memory needs a known kind and non-empty content.")
        if not isinstance(record.get("importance"), (int, float)):
            raise TransferError(f"Line {number}: a memory needs a numeric importance.")
    elif record_type == "episode":
        if kind not in EPISODE_KINDS:
            raise TransferError(f"Line {number}: unknown episode kind {kind!r}.")
        keys = record.get("search_keys")
        if not isinstance(keys, dict) or not keys or not all(isinstance(v, str) and v for v in keys.values()):
            raise TransferError(f"Line {number}: an episode needs its search keys.")
        if not isinstance(record.get("inputs"), dict):
            raise TransferError(f"Line {number}: an episode needs its inputs.")
    else:
        raise TransferError(f"Line {number}: unknown record type {record_type!r}.")


@dataclasses.dataclass
class ImportReport:
    memories: int = 0
    episodes: int = 0
    skipped: int = 0
    reembedded: bool = False


def import_export(
    space: Space,
    export: ExportFile,
    *,
    progress: Callable[[int, int], None] = lambda done, total: None,
    batch_transactions: bool = False,
) -> ImportReport:
    """Write the records into ``space``. With ``batch_transactions`` each batch commits on its own
    (long imports from the command line: an interruption keeps finished batches, a rerun skips them);
    otherwise the caller's transaction holds everything."""
    if export.header.get("source", {}).get("kind") == Space.Kind.SHARED and space.kind != Space.Kind.SHARED:
        if any(r["type"] == "episode" for r in export.records):
            raise TransferError("The export holds episodes; import it into a shared space.")
    embedder = get_embedder()
    reuse_vectors = (
        export.header.get("embedding_model") == embedder.name
        and export.header.get("dimensions") == EMBEDDING_DIMENSIONS
    )
    report = ImportReport(reembedded=not reuse_vectors)
    source = str(export.header.get("source", {}).get("space_uuid", ""))
    total = len(export.records)
    progress(0, total)
    for start in range(0, total, IMPORT_BATCH):
        batch = export.records[start : start + IMPORT_BATCH]
        if batch_transactions:
            with scope.tenant_scope(space.tenant_id, space):
                _import_batch(space, batch, source, reuse_vectors, report, embedder)
        else:
            _import_batch(space, batch, source, reuse_vectors, report, embedder)
        progress(min(start + IMPORT_BATCH, total), total)
    with scope.tenant_scope(space.tenant_id, space):
        _link_superseded(space, export.records, source)
    return report


def origin_digest(space: Space, source: str, record_id: str) -> str:
    return digest(space.id, "import-origin", source, record_id)


def _import_batch(space, batch, source, reuse_vectors, report, embedder) -> None:
    lock_space(space.id)
    digests = {r["id"]: origin_digest(space, source, r["id"]) for r in batch}
    seen = set(
        Memory.objects.filter(space=space, origin_digest__in=digests.values()).values_list("origin_digest", flat=True)
    )
    seen |= set(
        Episode.objects.filter(space=space, origin_digest__in=digests.values()).values_list("origin_digest", flat=True)
    )
    if source == str(space.id):  # re-importing a space's own export: its rows are already here
        ids = [r["id"] for r in batch]
        present = {str(i) for i in Memory.objects.filter(space=space, id__in=ids).values_list("id", flat=True)}
        present |= {str(i) for i in Episode.objects.filter(space=space, id__in=ids).values_list("id", flat=True)}
        seen |= {digests[i] for i in present}
    fresh = [r for r in batch if digests[r["id"]] not in seen]
    report.skipped += len(batch) - len(fresh)
    plain = _vectors_for(fresh, reuse_vectors, embedder)
    vectors = dict(zip(plain, into_space(space.id, list(plain.values())), strict=True))
    for record in fresh:
        if record["type"] == "memory":
            _import_memory(space, record, digests[record["id"]], vectors[(record["id"], "")])
            report.memories += 1
        else:
            _import_episode(space, record, digests[record["id"]], vectors)
            report.episodes += 1


def _vectors_for(records, reuse: bool, embedder) -> dict:
    """(record id, argument or "") → vector; exported vectors when the model is the same."""
    vectors, missing = {}, []
    for record in records:
        if record["type"] == "memory":
            wanted = {"": (record["content"], record.get("embedding"))}
        else:
            embeddings = record.get("embeddings") or {}
            wanted = {a: (text, embeddings.get(a)) for a, text in record["search_keys"].items()}
        for argument, (text, exported) in wanted.items():
            if reuse and isinstance(exported, list) and len(exported) == EMBEDDING_DIMENSIONS:
                vectors[(record["id"], argument)] = np.asarray(exported, dtype=np.float32)
            else:
                missing.append(((record["id"], argument), text))
    for start in range(0, len(missing), EMBED_BATCH):
        chunk = missing[start : start + EMBED_BATCH]
        for (address, _text), vector in zip(chunk, embedder.embed([t for _, t in chunk]), strict=True):
            vectors[address] = vector
    return vectors


def _datetime(value):
    parsed = parse_datetime(value) if isinstance(value, str) else None
    return parsed


def _import_memory(space, record, origin, vector) -> None:
    topic = record.get("topic") or None
    tokens = search_tokens(record["content"])
    if topic:
        tokens |= search_tokens(topic) | {topic.lower()}
    memory = Memory.objects.create(
        tenant_id=space.tenant_id,
        space=space,
        kind=record["kind"],
        content=record["content"],
        topic=topic,
        topic_digest=topic_digest(space.id, topic) if topic else "",
        keyword_digests=keyword_digests(space.id, tokens),
        embedding=vector.tolist(),
        importance=float(record["importance"]),
        mention_count=max(1, int(record.get("mention_count") or 1)),
        event_at=_datetime(record.get("event_at")),
        origin_digest=origin,
    )
    created = _datetime(record.get("created_at"))
    if created:
        Memory.objects.filter(pk=memory.pk).update(created_at=created)


def _import_episode(space, record, origin, vectors) -> None:
    episode = Episode(
        tenant_id=space.tenant_id,
        space=space,
        kind=record["kind"],
        agent=str(record.get("agent") or "")[:100],
        output=record.get("output"),
        outcome=record.get("outcome"),
        resolution_comment=record.get("resolution_comment"),
        sentiment=record.get("sentiment") if record.get("sentiment") in Episode.Sentiment.values else "",
        feedback_comment=record.get("feedback_comment"),
        origin_digest=origin,
    )
    episode.inputs = json.dumps(record["inputs"], ensure_ascii=False)
    episode.search_keys = json.dumps(record["search_keys"], ensure_ascii=False)
    episode.save()
    keys = record["search_keys"]
    write_keys(
        space,
        episode,
        {argument: vectors[(record["id"], argument)] for argument in keys},
        {argument: search_tokens(text) for argument, text in keys.items()},
    )
    created = _datetime(record.get("created_at"))
    if created:
        Episode.objects.filter(pk=episode.pk).update(created_at=created)


def _link_superseded(space, records, source) -> None:
    links = [(r["id"], r["superseded_by"]) for r in records if r["type"] == "memory" and r.get("superseded_by")]
    if not links:
        return
    addresses = {i for pair in links for i in pair}
    by_origin = {origin_digest(space, source, i): i for i in addresses}
    found = dict(
        Memory.objects.filter(space=space, origin_digest__in=list(by_origin)).values_list("origin_digest", "id")
    )
    new_ids = {by_origin[d]: pk for d, pk in found.items()}
    for old, new in links:
        if old in new_ids and new in new_ids:
            Memory.objects.filter(pk=new_ids[old]).update(superseded_by=new_ids[new])


@transaction.atomic
def import_into(space: Space, lines: Iterable, *, passphrase: str | None = None) -> ImportReport:
    """The API's import: check the whole file, then write it in the request's transaction."""
    return import_export(space, read_export(lines, passphrase=passphrase))
