"""Erasing a whole space: an audit row per memory, then every row of the space and its key.

Under the space's write lock, like every deletion: a turn writing into the space as it is erased
either finishes first (and its memories are audited and erased with the rest) or finds the space gone.
"""

from __future__ import annotations

from django.db import transaction

from memory.forgetting.audit import record_deletion
from memory.models import DeletionAudit, Memory
from memory.store.lock import lock_space
from tenants import spaces


@transaction.atomic
def erase_space(*, space, actor: str = "") -> int:
    lock_space(space.id)
    count = 0
    for memory in Memory.objects.filter(space=space).defer("embedding").iterator(chunk_size=500):
        record_deletion(memory=memory, space=space, cause=DeletionAudit.Cause.SPACE_ERASURE, actor=actor)
        count += 1
    spaces.erase_space(space=space)
    return count
