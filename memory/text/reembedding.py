"""Re-embed every memory and every episode search key of a tenant after an embedding-model change,
in batches, with progress. Each space's vectors are written keyed under its own data key (memory.text.vectors)."""

from __future__ import annotations

from collections.abc import Callable

from memory.models import EpisodeKey, Memory, Message
from memory.text.vectors import embed_for_space
from tenants import scope
from tenants.models import Space

BATCH_SIZE = 64


def reembed_tenant(tenant_id, progress: Callable[[int, int], None] = lambda done, total: None) -> int:
    with scope.tenant_scope(tenant_id):
        total = Memory.objects.count() + EpisodeKey.objects.count()
        space_ids = list(Space.objects.values_list("id", flat=True))
        # Queued turns' message vectors came from the previous model: their pipeline embeds afresh.
        Message.objects.exclude(pending_embedding=None).update(**Message.NO_PENDING_VECTOR)
    done = 0
    progress(done, total)
    for space_id in space_ids:
        last_id = None
        while True:
            # One committed batch at a time: an interrupted run keeps what it finished.
            with scope.tenant_scope(tenant_id, space_id):
                rows = Memory.objects.filter(space_id=space_id).order_by("id")
                if last_id is not None:
                    rows = rows.filter(id__gt=last_id)
                batch = list(rows[:BATCH_SIZE])
                if not batch:
                    break
                vectors = embed_for_space(space_id, [m.content for m in batch])
                for memory, vector in zip(batch, vectors, strict=True):
                    Memory.objects.filter(pk=memory.pk).update(embedding=vector)
            last_id = batch[-1].id
            done += len(batch)
            progress(done, total)
        done = _reembed_episode_keys(tenant_id, space_id, done, total, progress)
    return done


def _reembed_episode_keys(tenant_id, space_id, done: int, total: int, progress) -> int:
    last_id = 0
    while True:
        with scope.tenant_scope(tenant_id, space_id):
            batch = list(
                EpisodeKey.objects.filter(space_id=space_id, id__gt=last_id)
                .select_related("episode")
                .order_by("id")[:BATCH_SIZE]
            )
            if not batch:
                return done
            texts = [key.episode.search_keys_dict[key.argument] for key in batch]
            for key, vector in zip(batch, embed_for_space(space_id, texts), strict=True):
                EpisodeKey.objects.filter(pk=key.pk).update(embedding=vector)
        last_id = batch[-1].id
        done += len(batch)
        progress(done, total)
