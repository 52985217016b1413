"""The per-space lock every writer and every deleter of a space's memory takes first.

One PostgreSQL advisory lock per space, held until the transaction ends. Taking it before any row
lock gives every path the same order (space, then rows), so a writer and a deleter of one space
queue behind each other instead of deadlocking.
"""

from __future__ import annotations

from django.db import connection


def lock_space(space_id) -> None:
    """Serialise writers and deleters of one space until the transaction ends.

    Without it two concurrent turns carrying the same fact would both see no neighbour and both
    insert it, and a merge racing a forget would save the forgotten row back.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"engram-space:{space_id}"])
