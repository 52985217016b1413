"""A statement the server parses, rewrites and plans once per connection: ``PREPARE``, then ``EXECUTE``.

Recall's candidate statement is one SQL text per shape (which strategies ran, how many query vectors), its
values all parameters. Sent whole every time, the server parsed its dozen CTEs, added row-level security's
policies to each scan and planned it again: about 2 ms of the statement's 4 on a 40-row space (interleaved
in one process, 2026-12-05: recall p50 9.0 → 7.1 ms). Prepared once on a connection, later executions skip
that work. Row-level security still applies to each execution (the policies read ``current_setting`` when the
statement runs, and the scope is set before it as for any statement), and the values stay values: Django's
client-side binding quotes them into ``EXECUTE name(…)`` as it would into the statement itself.

A connection's prepared statements are its own and outlive a rolled-back transaction, so they are remembered
per driver connection: a new or replaced connection prepares again. Nothing in Engram deallocates them
(``DISCARD ALL`` would). Shapes are few; past ``MAX_PER_CONNECTION`` a statement is sent whole, and every
statement is with ``ENGRAM_PREPARED_STATEMENTS`` off (docs/operations.md, "Database connections").

>>> sql, params = prepared("SELECT %s::int + 1", [41])  # doctest: +SKIP
>>> sql  # doctest: +SKIP
'EXECUTE engram_3f1c…(%s)'
"""

from __future__ import annotations

import hashlib
import re
import threading
import weakref

from django.conf import settings
from django.db import connection

MAX_PER_CONNECTION = 64
NAME_PREFIX = "engram_"
_PLACEHOLDER = re.compile(r"%s|%%")

_prepared_on: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # driver connection → names
_sql_of: dict[str, str] = {}  # name → the statement as written (with %s), for tools that EXPLAIN it
_lock = threading.Lock()


def name_for(sql: str) -> str:
    return NAME_PREFIX + hashlib.sha256(sql.encode()).hexdigest()[:24]


def as_server_parameters(sql: str) -> str:
    """``%s`` placeholders in order → ``$1``, ``$2``…; ``%%`` → ``%`` (the text is then sent without values)."""
    numbers = iter(range(1, 1 + sql.count("%s")))
    return _PLACEHOLDER.sub(lambda m: f"${next(numbers)}" if m.group() == "%s" else "%", sql)


def prepared(sql: str, params: list) -> tuple[str, list]:
    """``sql`` with ``params`` as ``EXECUTE`` of a statement prepared on this thread's connection (prepared
    now, in two round trips, when it is not yet). As given with ``ENGRAM_PREPARED_STATEMENTS`` off (a pooler in
    transaction mode would send the EXECUTE to another server connection than the PREPARE)."""
    if not settings.ENGRAM_PREPARED_STATEMENTS:
        return sql, params
    connection.ensure_connection()
    driver = connection.connection
    name = name_for(sql)
    with _lock:
        names = _prepared_on.setdefault(driver, set())
        known = name in names
    if not known:
        if len(names) >= MAX_PER_CONNECTION:
            return sql, params
        with connection.cursor() as cursor:
            # The server may hold it already though this process has no record of it (a PREPARE whose
            # bookkeeping an exception cut short): preparing it again would fail the request's transaction.
            cursor.execute("SELECT 1 FROM pg_prepared_statements WHERE name = %s", [name])
            if cursor.fetchone() is None:
                cursor.execute(f"PREPARE {name} AS {as_server_parameters(sql)}")
        with _lock:
            names.add(name)
            _sql_of[name] = sql
    values = f"({', '.join(['%s'] * len(params))})" if params else ""
    return f"EXECUTE {name}{values}", params


def forget_connection(driver) -> None:
    """Drop this process's record of what ``driver`` has prepared (the server keeps it: the next use of a
    statement finds it there and does not prepare it again)."""
    with _lock:
        _prepared_on.pop(driver, None)


def written_as(executed: str) -> str | None:
    """For ``EXECUTE name(…)`` of a statement prepared here, the statement as written (with ``%s``)."""
    match = re.match(rf"\s*EXECUTE\s+({NAME_PREFIX}[0-9a-f]+)\b", executed)
    return _sql_of.get(match.group(1)) if match else None
