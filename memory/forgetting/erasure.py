"""Erasing a whole space: an audit row per memory, then every row of the space and its key."""

from __future__ import annotations

from django.db import transaction

from memory.forgetting.audit import record_deletion
from memory.models import DeletionAudit, Memory
from tenants import spaces


@transaction.atomic
def erase_space(*, space, actor: str = "") -> int:
    count = 0
    for memory in Memory.objects.filter(space=space).defer("embedding").iterator(chunk_size=500):
        record_deletion(memory=memory, space=space, cause=DeletionAudit.Cause.SPACE_ERASURE, actor=actor)
        count += 1
    spaces.erase_space(space=space)
    return count
