"""System checks: refuse to run when the database role would bypass row-level security or could lift it."""

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
    return owned_tables_problem(db)


def owned_tables_problem(db=None) -> str | None:
    """The runtime role must own no table: an owner can turn row-level security off, drop policies,
    disable the audit trigger and TRUNCATE."""
    with (db or connection).cursor() as cursor:
        cursor.execute(
            """
            SELECT current_user, count(*), min(c.relname)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
              AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
              AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_%%'
            """
        )
        user, owned, example = cursor.fetchone()
    if owned:
        return (
            f"The database role {user!r} owns {owned} table(s) (e.g. {example!r}), so it could lift row-level "
            "security, drop policies or empty the deletion audit. Run the server as a role that owns nothing."
        )
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
                hint=(
                    "Connect as a role without SUPERUSER and BYPASSRLS that owns no table; migrations run as "
                    "the owner (ENGRAM_MIGRATION_DATABASE_URL). docs/operations.md gives the SQL."
                ),
                id="engram.E001",
            )
        ]
    return []


@checks.register()
def check_api_rate_limit(app_configs=None, **kwargs):
    """A rate limit that does not parse would fail every API request; refuse to start instead."""
    from django.conf import settings

    from tenants.request_budget import Rate

    try:
        Rate.parse(settings.ENGRAM_API_RATE_LIMIT)
    except ValueError as exc:
        return [checks.Error(f"ENGRAM_API_RATE_LIMIT: {exc}", id="engram.E003")]
    return []
