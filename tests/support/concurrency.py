"""One action run in several threads released together, as several server threads or processes would run it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

from django.db import connection, connections

from memory.store.lock import lock_space
from tenants import scope


def at_once(action: Callable[[], object], count: int, *, timeout: float = 60) -> list:
    """``action()`` in ``count`` threads that start together; their results, in the order they finished.

    Each thread closes its own database connections (the test database can still be dropped), and an
    exception in any thread fails the caller instead of leaving a result missing."""
    start = threading.Barrier(count)
    results, errors = [], []

    def run():
        try:
            start.wait()
            results.append(action())
        except Exception as exc:  # surfaced below, in the caller's thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not errors, errors
    return results


@contextlib.contextmanager
def space_locked(space):
    """The space's writer lock held by another connection, as a long turn being written would hold it."""
    locked, release = threading.Event(), threading.Event()

    def hold():
        try:
            with scope.tenant_scope(space.tenant_id, space):
                lock_space(space.id)
                locked.set()
                release.wait(timeout=300)
        finally:
            connection.close()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert locked.wait(timeout=30), "the space lock was not taken"
    try:
        yield
    finally:
        release.set()
        holder.join(timeout=30)
