"""System checks: refuse to run when the database role would bypass row-level security."""

from __future__ import annotations

from django.core import checks
from django.db import connection
from django.db.utils import OperationalError


def database_role_problem(db=None) -> str | None:
    """A sentence saying why the connected role defeats RLS, or None when it is fine."""
    with (db or connection).cursor() as cursor:
        cursor.execute("SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")
        user, is_superuser, bypasses_rls = cursor.fetchone()
    if is_superuser:
        return f"The database role {user!r} is a superuser, so row-level security would not apply to it."
    if bypasses_rls:
        return f"The database role {user!r} has BYPASSRLS, so row-level security would not apply to it."
    return None


@checks.register()
def check_database_role(app_configs=None, **kwargs):
    try:
        problem = database_role_problem()
    except OperationalError as exc:
        return [checks.Error(f"Cannot reach the database: {exc}", id="engram.E002")]
    if problem:
        return [
            checks.Error(
                problem,
                hint="Connect as a role without SUPERUSER and BYPASSRLS (docs/operations.md gives the SQL).",
                id="engram.E001",
            )
        ]
    return []
