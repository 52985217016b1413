"""Deleting a memory for good: the row and every version it superseded, in one transaction."""

from __future__ import annotations

from django.db import transaction

from memory.memory_edits import history_of
from memory.models import Memory


@transaction.atomic
def delete_memory(*, memory: Memory) -> list[Memory]:
    """Delete the memory with its supersession history. Returns what was deleted (content read first)."""
    chain = history_of(memory)
    for row in chain:
        _ = row.content  # read back before the row is gone
    Memory.objects.filter(pk__in=[m.pk for m in chain]).delete()
    return chain
