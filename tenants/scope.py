"""The row-level-security scope of the current database transaction.

A request resolves its tenant once (API key, console login) and, for the turn loop, its space;
``enter_scope`` then writes both into the transaction with ``set_config(..., is_local => true)``,
so the scope ends with the transaction and can never leak to the next request on a pooled
connection. Outside a request, ``tenant_scope`` opens the transaction itself.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

from django.db import connection, transaction

TENANT_SETTING = "engram.tenant_id"
SPACE_SETTING = "engram.space_id"
API_KEY_PREFIX_SETTING = "engram.api_key_prefix"
USER_SETTING = "engram.user_id"
MAINTENANCE_SETTING = "engram.maintenance"


class ScopeRequiresTransaction(RuntimeError):
    pass


def _set(name: str, value: str) -> None:
    if not connection.in_atomic_block:
        # Outside a transaction set_config(is_local) would last one statement and protect nothing.
        raise ScopeRequiresTransaction(f"{name} can only be set inside transaction.atomic()")
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, %s, true)", [name, value])


def _get(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(current_setting(%s, true), '')", [name])
        return cursor.fetchone()[0]


def _as_text(value) -> str:
    if value is None:
        return ""
    return str(value.pk if hasattr(value, "pk") else uuid.UUID(str(value)))


def enter_scope(tenant, space=None) -> None:
    """Scope the current transaction to a tenant (a Tenant or its id) and optionally one space."""
    _set(TENANT_SETTING, _as_text(tenant))
    _set(SPACE_SETTING, _as_text(space))


def current_scope() -> tuple[str, str]:
    return _get(TENANT_SETTING), _get(SPACE_SETTING)


@contextlib.contextmanager
def tenant_scope(tenant, space=None) -> Iterator[None]:
    """Run the block in a transaction scoped to ``tenant`` (and ``space``); restore the outer scope after."""
    with transaction.atomic():
        previous = current_scope()
        enter_scope(tenant, space)
        yield
        if not connection.needs_rollback:  # a rolled-back block reverts set_config by itself
            _set(TENANT_SETTING, previous[0])
            _set(SPACE_SETTING, previous[1])


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
    for name in (TENANT_SETTING, SPACE_SETTING, API_KEY_PREFIX_SETTING, USER_SETTING, MAINTENANCE_SETTING):
        _set(name, "")
