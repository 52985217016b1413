"""The per-space lock every writer and every deleter of a space's memory takes first.

A row lock on the space's data-key row (``tenants_spacekey``, one per space), held until the transaction
ends. Taking it before any other row lock gives every path the same order (space, then rows), so a
writer and a deleter of one space queue behind each other instead of deadlocking.

A row lock, not an advisory lock (decision 0030): on a distributed PostgreSQL it is taken on the node
that holds the space's shard, whichever node a client entered by, where an advisory lock holds only on
the node it was taken on. The data-key row rather than the space's own: renaming a space, saving its
settings and checking a new row's key against it (``FOR KEY SHARE``) all lock the space's row, and none
of them should wait for a turn being written; the data-key row is only rewritten by key rotation, which
may wait. Erasing the space deletes the row, so it waits for the space's writers, and a writer that
waited for an erasure finds no row and stops.
"""

from __future__ import annotations

from django.db import connection

from tenants.models import Space
from tenants.scope import scoped_tenant_id


def lock_space(space_id) -> None:
    """Serialise writers and deleters of one space until the transaction ends.

    Without it two concurrent turns carrying the same fact would both see no neighbour and both
    insert it, and a merge racing a forget would save the forgotten row back.
    """
    tenant_id = scoped_tenant_id()
    if tenant_id is None:  # row-level security would hide the row: the lock would silently not be taken
        raise RuntimeError("lock_space needs the space's tenant scope")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM tenants_spacekey WHERE tenant_id = %s AND space_id = %s FOR NO KEY UPDATE",
            [tenant_id, space_id],
        )
        if cursor.fetchone() is None:  # erased while we waited, or another space's scope hides it
            raise Space.DoesNotExist(f"space {space_id} is not in this scope any more: nothing was locked")
