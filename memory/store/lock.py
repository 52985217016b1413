"""The per-space lock every writer and every deleter of a space's memory takes first.

A row lock on the space, held until the transaction ends. Taking it before any other row lock gives
every path the same order (space, then rows), so a writer and a deleter of one space queue behind each
other instead of deadlocking.

A row lock, not an advisory lock (decision 0030): on a distributed PostgreSQL it is taken on the node
that holds the space's shard, whichever node a client entered by, where an advisory lock holds only on
the node it was taken on. ``FOR NO KEY UPDATE``, not ``FOR UPDATE``: rows being inserted for the space
check their key against it with ``FOR KEY SHARE``, which this does not block, so storing a new turn never
waits for another turn's processing.
"""

from __future__ import annotations

from django.db import connection

from tenants.scope import scoped_tenant_id


def lock_space(space_id) -> None:
    """Serialise writers and deleters of one space until the transaction ends.

    Without it two concurrent turns carrying the same fact would both see no neighbour and both
    insert it, and a merge racing a forget would save the forgotten row back.
    """
    tenant_id = scoped_tenant_id()
    if tenant_id is None:  # row-level security would hide the space: the lock would silently not be taken
        raise RuntimeError("lock_space needs the space's tenant scope")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM tenants_space WHERE tenant_id = %s AND id = %s FOR NO KEY UPDATE", [tenant_id, space_id]
        )
