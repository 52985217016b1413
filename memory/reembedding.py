"""Re-embed every memory of a tenant after an embedding-model change, in batches, with progress."""

from __future__ import annotations

from collections.abc import Callable

from memory.embeddings import get_embedder
from memory.models import Memory
from tenants import scope
from tenants.models import Space

BATCH_SIZE = 64


def reembed_tenant(tenant_id, progress: Callable[[int, int], None] = lambda done, total: None) -> int:
    with scope.tenant_scope(tenant_id):
        total = Memory.objects.count()
        space_ids = list(Space.objects.values_list("id", flat=True))
    done = 0
    progress(done, total)
    embedder = get_embedder()
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
                vectors = embedder.embed([m.content for m in batch])
                for memory, vector in zip(batch, vectors, strict=True):
                    Memory.objects.filter(pk=memory.pk).update(embedding=vector)
            last_id = batch[-1].id
            done += len(batch)
            progress(done, total)
    return done
