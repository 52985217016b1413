"""Export a space as JSON lines (decrypted for transfer, optionally sealed with a passphrase).

Format (one JSON object per line):

1. a header: ``{"format": "engram.space-export", "version": 1, "source": {...}, "embedding_model",
   "dimensions", "settings", "encryption": null | {kdf parameters}}``;
2. records: ``{"type": "memory", ...}`` and ``{"type": "episode", ...}``, decrypted for transfer,
   with their embeddings;
3. a trailer: ``{"type": "end", "records": N}`` — a file without it, or with another count, is
   refused as truncated.

Sealing is ``memory.transfer.sealing``; reading a file back is ``memory.transfer.importing``.
Not exported: sessions, turns and kept transcript lines (processing records and raw customer
text); tasks lose their session binding on import.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator

from django.utils import timezone

from memory.models import EMBEDDING_DIMENSIONS, Episode, EpisodeKey, Memory
from memory.text.embeddings import get_embedder, stored_vector
from memory.text.vectors import out_of_space
from memory.transfer.sealing import FORMAT, VERSION, new_sealing, seal
from tenants import scope
from tenants.models import Space


def _vector(value, space_id) -> list[float]:
    # The model's own vector, not the space's keyed one: the importing space keys it under its own key.
    return [round(float(x), 5) for x in out_of_space(space_id, stored_vector(value))[0]]


def _iso(value):
    return value.isoformat() if value else None


def memory_record(memory: Memory) -> dict:
    return {
        "type": "memory",
        "id": str(memory.pk),
        "kind": memory.kind,
        "content": memory.content,
        "topic": memory.topic,
        "importance": memory.importance,
        "mention_count": memory.mention_count,
        "event_at": _iso(memory.event_at),
        "created_at": _iso(memory.created_at),
        "superseded_by": str(memory.superseded_by_id) if memory.superseded_by_id else None,
        "embedding": _vector(memory.embedding, memory.space_id),
    }


def episode_record(episode: Episode, keys: Iterable[EpisodeKey]) -> dict:
    return {
        "type": "episode",
        "id": str(episode.pk),
        "kind": episode.kind,
        "agent": episode.agent,
        "inputs": episode.inputs_dict,
        "search_keys": episode.search_keys_dict,
        "output": episode.output,
        "outcome": episode.outcome,
        "resolution_comment": episode.resolution_comment,
        "sentiment": episode.sentiment,
        "feedback_comment": episode.feedback_comment,
        "created_at": _iso(episode.created_at),
        "embeddings": {key.argument: _vector(key.embedding, episode.space_id) for key in keys},
    }


def export_lines(space: Space, *, passphrase: str | None = None) -> Iterator[str]:
    """The export, line by line, read inside its own scoped transaction (safe to stream)."""
    export_id = str(uuid.uuid4())
    key, encryption = new_sealing(passphrase) if passphrase else (None, None)
    with scope.tenant_scope(space.tenant_id, space):
        header = {
            "format": FORMAT,
            "version": VERSION,
            "export_id": export_id,
            "exported_at": timezone.now().isoformat(),
            "source": {
                "space_uuid": str(space.id),
                "external_id": space.external_id,
                "kind": space.kind,
                "display_name": space.display_name,
            },
            "embedding_model": get_embedder().name,
            "dimensions": EMBEDDING_DIMENSIONS,
            "settings": space.settings,
            "counts": {
                "memories": Memory.objects.filter(space=space).count(),
                "episodes": Episode.objects.filter(space=space).count(),
            },
            "encryption": encryption,
        }
        yield _line(header)
        line = 1
        for record in _records(space):
            line += 1
            yield _line(seal(key, export_id, line, record) if key else record)
        line += 1
        end = {"type": "end", "records": line - 2}
        yield _line(seal(key, export_id, line, end) if key else end)


def _records(space: Space) -> Iterator[dict]:
    # Oldest first, so a superseding row's target already exists on import.
    for memory in Memory.objects.filter(space=space).order_by("created_at", "id").iterator(chunk_size=500):
        yield memory_record(memory)
    episodes = Episode.objects.filter(space=space).order_by("created_at", "id")
    last = None
    while True:
        batch = list((episodes.filter(id__gt=last) if last else episodes).order_by("id")[:500])
        if not batch:
            break
        keys: dict = {}
        for key in EpisodeKey.objects.filter(episode__in=batch).order_by("argument"):
            keys.setdefault(key.episode_id, []).append(key)
        for episode in batch:
            yield episode_record(episode, keys.get(episode.pk, []))
        last = batch[-1].pk


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
