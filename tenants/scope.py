"""The row-level-security scope of the current database transaction.

A request resolves its tenant once (API key, console login) and, for the turn loop, its space;
``enter_scope`` then writes both into the transaction with ``SET LOCAL``, so the scope ends with the
transaction and can never leak to the next request on a pooled connection. Outside a request,
``tenant_scope`` opens the transaction itself. ``SET LOCAL`` rather than ``set_config(…, true)``, which
does the same on one PostgreSQL: a distributed PostgreSQL passes ``SET LOCAL`` on to every node the
transaction reaches (Citus, with ``citus.propagate_set_commands = 'local'``), and the row-level-security
policies on the shards read it there (decision 0030). ``SET`` takes no parameters, so each value is
written into the statement as a literal quoted by psycopg, after tenants and spaces were parsed as UUIDs.

``scope_with_next_statement`` sets the same scope in the round trip of the next statement instead
of a round trip of its own (psycopg's pipeline mode): the server still runs each ``SET LOCAL`` as a
statement of its own, strictly before the next one, and an error in one aborts the pipeline before
the next statement runs. Putting the scope inside the query itself (``set_config`` in a CTE) would
not be safe: PostgreSQL does not order a CTE before the row-level-security quals of the same
statement, which read ``current_setting`` as a stable value, possibly once, at executor start.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

import psycopg
from django.db import connection, transaction
from psycopg.sql import Literal

TENANT_SETTING = "engram.tenant_id"
SPACE_SETTING = "engram.space_id"
API_KEY_PREFIX_SETTING = "engram.api_key_prefix"
USER_SETTING = "engram.user_id"
MAINTENANCE_SETTING = "engram.maintenance"


class ScopeRequiresTransaction(RuntimeError):
    pass


class _ScopeMark:
    """The tenant a transaction was scoped to, as Python sees it (``scoped_tenant_id``).

    Registered with ``transaction.on_commit``, so Django drops it exactly when PostgreSQL drops the
    ``SET LOCAL`` it mirrors: at the end of the transaction, or with the savepoint it was entered
    in when that rolls back (a released savepoint keeps both). Its call at commit does nothing.

    Only the savepoints ``transaction.atomic`` opens are known to Django's on-commit list: a scope entered
    after a bare ``transaction.savepoint()`` that is then rolled back by ``savepoint_rollback`` keeps its mark
    while the server drops the setting. Nothing here opens savepoints that way; scopes are entered in atomic
    blocks."""

    __slots__ = ("tenant_id",)

    def __init__(self, tenant_id: uuid.UUID | None):
        self.tenant_id = tenant_id

    def __call__(self) -> None:
        pass


def _mark_scope(tenant) -> _ScopeMark:
    text = _as_text(tenant)
    mark = _ScopeMark(uuid.UUID(text) if text else None)
    transaction.on_commit(mark)
    return mark


def _unmark_scope(mark: _ScopeMark) -> None:
    connection.run_on_commit = [entry for entry in connection.run_on_commit if entry[1] is not mark]


def scoped_tenant_id() -> uuid.UUID | None:
    """The tenant the current transaction is scoped to, without asking the server; None outside a scope.

    Tenant-owned models' managers name it in every query (``tenant_id = …``) beside row-level security,
    so that a distributed PostgreSQL can route each statement to one shard (decision 0030)."""
    for _savepoints, callback, _robust in reversed(connection.run_on_commit):
        if isinstance(callback, _ScopeMark):
            return callback.tenant_id
    return None


def setting_statements(values: dict[str, str]) -> list[str]:
    """One ``SET LOCAL`` per setting, its value a literal psycopg quotes (``SET`` takes no parameters)."""
    return [f"SET LOCAL {name} = {Literal(str(value)).as_string()}" for name, value in values.items()]


def _set_local(values: dict[str, str]) -> None:
    """In one round trip: the statements as one simple query (a pipeline would take them one by one)."""
    with connection.cursor() as cursor:
        cursor.execute("; ".join(setting_statements(values)))


def _set(name: str, value: str) -> None:
    if not connection.in_atomic_block:
        # Outside a transaction SET LOCAL would last no longer than its own statement and protect nothing.
        raise ScopeRequiresTransaction(f"{name} can only be set inside transaction.atomic()")
    _set_local({name: value})


def _as_text(value) -> str:
    if value is None:
        return ""
    return str(value.pk if hasattr(value, "pk") else uuid.UUID(str(value)))


def _scope_settings(tenant, space) -> dict[str, str]:
    return {TENANT_SETTING: _as_text(tenant), SPACE_SETTING: _as_text(space)}


def enter_scope(tenant, space=None) -> None:
    """Scope the current transaction to a tenant (a Tenant or its id) and optionally one space."""
    if not connection.in_atomic_block:
        raise ScopeRequiresTransaction("the scope can only be set inside transaction.atomic()")
    _set_local(_scope_settings(tenant, space))
    _mark_scope(tenant)


@contextlib.contextmanager
def scope_with_next_statement(tenant, space=None) -> Iterator[None]:
    """Like ``enter_scope``, but sent in the same round trip as the next statement of the block.

    Every statement through Django's connection in the block sees the scope: the first one carries
    it (pipelined ahead of it, see the module docstring). A block that runs no statement sets it
    when it ends, so code after the block runs in the scope exactly as after ``enter_scope``.
    """
    if not connection.in_atomic_block:
        raise ScopeRequiresTransaction("the scope can only be set inside transaction.atomic()")
    pending = setting_statements(_scope_settings(tenant, space))
    outer_transaction = connection.atomic_blocks[0]
    # Marked now, so that the block's first query names the tenant it is about to be scoped to.
    mark = _mark_scope(tenant)

    def carry_scope(execute, sql, params, many, context):
        if not pending:
            return execute(sql, params, many, context)
        if not connection.in_atomic_block or connection.atomic_blocks[0] is not outer_transaction:
            # Never carry a scope into another transaction than the one it was entered in.
            raise ScopeRequiresTransaction("a pipelined scope must be used in the transaction that entered it")
        scope_statements = list(pending)
        pending.clear()
        database = context["connection"]
        # Statements here run on the driver's connection, outside Django's own error translation: a server
        # gone mid-pipeline must still surface as Django's OperationalError (the API's 503, the connection
        # marked unusable), not as psycopg's (a 500).
        with database.wrap_database_errors:
            if isinstance(context["cursor"].cursor, psycopg.ServerCursor):
                # A named (server-side) cursor only declares its statement, so the scope must not ride on
                # it (it would never run): set it on a plain cursor first, one round trip more.
                with database.connection.cursor() as plain:
                    plain.execute("; ".join(scope_statements))
                return execute(sql, params, many, context)
            with database.connection.pipeline():
                for statement in scope_statements:
                    context["cursor"].execute(statement)
                return execute(sql, params, many, context)

    try:
        with connection.execute_wrapper(carry_scope):
            yield
    except BaseException:
        if pending:  # the scope was never sent: the server keeps the previous one, and so must Python
            _unmark_scope(mark)
        raise
    if pending:
        enter_scope(tenant, space)


def current_scope() -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(current_setting(%s, true), ''), coalesce(current_setting(%s, true), '')",
            [TENANT_SETTING, SPACE_SETTING],
        )
        tenant, space = cursor.fetchone()
    return tenant, space


@contextlib.contextmanager
def tenant_scope(tenant, space=None) -> Iterator[None]:
    """Run the block in a transaction scoped to ``tenant`` (and ``space``); restore the outer scope after."""
    with transaction.atomic():
        previous = current_scope()
        enter_scope(tenant, space)
        yield
        if not connection.needs_rollback:  # a rolled-back block reverts SET LOCAL by itself
            enter_scope(previous[0] or None, previous[1] or None)


@contextlib.contextmanager
def maintenance_scope() -> Iterator[None]:
    """Lets maintenance commands (key rotation, re-embedding) list tenant ids; nothing else."""
    with transaction.atomic():
        _set(MAINTENANCE_SETTING, "on")
        yield
        if not connection.needs_rollback:
            _set(MAINTENANCE_SETTING, "")


def allow_api_key_lookup(prefix: str) -> None:
    """Make the one API key row with this (random, non-secret) prefix visible for authentication."""
    _set(API_KEY_PREFIX_SETTING, prefix)


def allow_membership_lookup(user_id: int) -> None:
    """Make this user's memberships visible so the console can resolve the tenant."""
    _set(USER_SETTING, str(user_id))


def clear_scope() -> None:
    names = (TENANT_SETTING, SPACE_SETTING, API_KEY_PREFIX_SETTING, USER_SETTING, MAINTENANCE_SETTING)
    if not connection.in_atomic_block:
        raise ScopeRequiresTransaction("the scope can only be cleared inside transaction.atomic()")
    _set_local(dict.fromkeys(names, ""))
    _mark_scope(None)
