"""Row-level security for tenant-owned tables, as one-line migration operations.

Policies read two transaction-local settings that ``tenants.scope`` sets inside each request's
transaction: ``engram.tenant_id`` and, for the turn loop, ``engram.space_id``. With neither set a
query sees no tenant rows at all. ``FORCE ROW LEVEL SECURITY`` makes the policies apply to the
table owner too (the owner role, which runs migrations). The runtime role the server connects as
owns no table, so it can neither lift these policies nor drop them (database/roles.py).

In a migration::

    operations = [..., rls.tenant_isolation("memory_memory", space_column="space_id")]
"""

from __future__ import annotations

from django.db import migrations

SCOPE_FUNCTIONS_SQL = """
CREATE OR REPLACE FUNCTION engram_current_tenant() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(current_setting('engram.tenant_id', true), '')::uuid $$;
CREATE OR REPLACE FUNCTION engram_current_space() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(current_setting('engram.space_id', true), '')::uuid $$;
"""

DROP_SCOPE_FUNCTIONS_SQL = """
DROP FUNCTION IF EXISTS engram_current_space();
DROP FUNCTION IF EXISTS engram_current_tenant();
"""


def scope_functions() -> migrations.RunSQL:
    return migrations.RunSQL(SCOPE_FUNCTIONS_SQL, DROP_SCOPE_FUNCTIONS_SQL)


def isolation_predicate(*, tenant_column: str = "tenant_id", space_column: str | None = None) -> str:
    predicate = f"{tenant_column} = engram_current_tenant()"
    if space_column:
        # A space-scoped transaction (the turn loop) sees only its own space's rows.
        predicate += f" AND (engram_current_space() IS NULL OR {space_column} = engram_current_space())"
    return predicate


def tenant_isolation(
    table: str, *, tenant_column: str = "tenant_id", space_column: str | None = None
) -> migrations.RunSQL:
    """Enable and force RLS on ``table`` with the tenant (and optionally space) isolation policy."""
    predicate = isolation_predicate(tenant_column=tenant_column, space_column=space_column)
    forward = f"""
        ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
        ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
        CREATE POLICY tenant_isolation ON {table} USING ({predicate}) WITH CHECK ({predicate});
    """
    backward = f"""
        DROP POLICY IF EXISTS tenant_isolation ON {table};
        ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY;
        ALTER TABLE {table} DISABLE ROW LEVEL SECURITY;
    """
    return migrations.RunSQL(forward, backward)


def extra_policy(table: str, name: str, *, command: str, using: str) -> migrations.RunSQL:
    """An additional permissive policy (OR-ed with the isolation policy), e.g. the API-key lookup."""
    return migrations.RunSQL(
        f"CREATE POLICY {name} ON {table} FOR {command} USING ({using});",
        f"DROP POLICY IF EXISTS {name} ON {table};",
    )
