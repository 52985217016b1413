"""Work on two real database connections at once, each in its own transaction and tenant scope."""

from __future__ import annotations

import threading
import time

from django.db import connection, connections

from memory.forgetting.deletion import DeletionContext, delete_memories
from memory.models import DeletionAudit, Memory
from tenants import scope

WAIT = 30


class Side(threading.Thread):
    """One connection's work in its own transaction; an exception is kept for the test to raise."""

    def __init__(self, space, work):
        super().__init__(daemon=True)
        self.space, self.work, self.error, self.result = space, work, None, None

    def run(self):
        try:
            with scope.tenant_scope(self.space.tenant_id, self.space):
                self.result = self.work()
        except BaseException as exc:  # surfaced by finish()
            self.error = exc
        finally:
            connections.close_all()

    def finish(self):
        self.join(timeout=WAIT * 2)
        assert not self.is_alive(), "a side never finished (deadlock?)"
        if self.error is not None:
            raise self.error
        return self.result


def forget(space, memory: Memory):
    context = DeletionContext(cause=DeletionAudit.Cause.API_KEY, actor="forget race test")
    return delete_memories(space=space, memories=[memory], context=context)


def until_finished_or_waiting_for_a_lock(side: Side) -> None:
    """Return once ``side`` has finished or a connection to this test's database waits on a lock (it queued
    behind the other side). Only this database: another test run on the same server must not count."""
    deadline = time.monotonic() + WAIT
    while side.is_alive() and time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
        time.sleep(0.05)
    assert not side.is_alive(), "the side neither finished nor waited for a lock"
