"""Two database roles: the owner migrates and owns the schema; the runtime role only reads and writes rows.

The web server and the worker connect as the runtime role (``DATABASE_URL``). It owns no table, so
even an injected statement cannot ``ALTER TABLE … NO FORCE ROW LEVEL SECURITY``, drop a policy,
disable the audit trigger or ``TRUNCATE``. Schema work — ``migrate``, ``flush`` and the test
database's creation and removal — switches the default connection to the owner's credentials
(``ENGRAM_MIGRATION_DATABASE_URL``, or the embedded server's owner role) for its duration.

After every ``migrate`` the owner grants the runtime role its row privileges, and sets default
privileges so a table created later (by a migration or ``createcachetable``) is granted too:

- every table: SELECT, INSERT, UPDATE, DELETE (never TRUNCATE, REFERENCES or TRIGGER);
- the deletion audit: SELECT and INSERT only (it is append-only);
- ``django_migrations``: SELECT only;
- sequences: USAGE and SELECT.
"""

from __future__ import annotations

import contextlib

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

CREDENTIALS = ("USER", "PASSWORD", "HOST", "PORT", "OPTIONS")
APPEND_ONLY_TABLES = ("memory_deletionaudit",)
READ_ONLY_TABLES = ("django_migrations",)


def owner_credentials(alias: str = DEFAULT_DB_ALIAS) -> dict | None:
    """The owner's connection settings for ``alias``, or None when migrations run as the runtime role."""
    owner = getattr(settings, "ENGRAM_DATABASE_OWNER", None)
    return owner if alias == DEFAULT_DB_ALIAS and owner else None


def runtime_role(alias: str = DEFAULT_DB_ALIAS) -> str:
    return settings.ENGRAM_RUNTIME_DATABASE_ROLE if alias == DEFAULT_DB_ALIAS else settings.DATABASES[alias]["USER"]


@contextlib.contextmanager
def as_owner(connection):
    """Run the block on ``connection`` with the owner's credentials (same database), then switch back.

    Re-entrant: inside an owner block (``migrate`` called while the test database is being
    created) it does nothing."""
    owner = owner_credentials(connection.alias)
    if owner is None or connection.settings_dict["USER"] == owner["USER"]:
        yield
        return
    runtime = {key: connection.settings_dict.get(key) for key in CREDENTIALS}
    close_with_pools(connection)
    connection.settings_dict.update(owner)
    try:
        yield
    finally:
        close_with_pools(connection)
        connection.settings_dict.update(runtime)


def close_with_pools(connection) -> None:
    """Close ``connection`` and its process's pools: a pooled connection handed back would be handed out
    again with credentials switched since (``as_owner``), or in a process forked since (config/wsgi.py)."""
    connection.close()
    if hasattr(connection, "close_pool"):
        connection.close_pool()


def grant_runtime_privileges(using: str = DEFAULT_DB_ALIAS, **kwargs) -> None:
    """Grant the runtime role exactly its row privileges (a ``post_migrate`` receiver; idempotent)."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return
    runtime = runtime_role(using)
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user, current_schema()")
        owner, schema = cursor.fetchone()
        if not runtime or runtime == owner:
            return  # one role for both: the system check says why that is refused
        quote = connection.ops.quote_name
        role, schema = quote(runtime), quote(schema)
        statements = [
            f"GRANT USAGE ON SCHEMA {schema} TO {role}",
            # An older setup may have granted more; never revoke the rest (a running worker keeps working).
            f"REVOKE TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA {schema} FROM {role}",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}",
            f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {role}",
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {role}",
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT USAGE, SELECT ON SEQUENCES TO {role}",
        ]
        existing = set(connection.introspection.table_names(cursor))
        statements += [
            f"REVOKE UPDATE, DELETE ON {quote(table)} FROM {role}" for table in APPEND_ONLY_TABLES if table in existing
        ]
        statements += [
            f"REVOKE INSERT, UPDATE, DELETE ON {quote(table)} FROM {role}"
            for table in READ_ONLY_TABLES
            if table in existing
        ]
        for statement in statements:
            cursor.execute(statement)


def install(app_config) -> None:
    """Grant after every ``migrate`` and ``flush``: post_migrate is sent once per app, so listen to one."""
    from django.db.models.signals import post_migrate

    post_migrate.connect(grant_runtime_privileges, sender=app_config, dispatch_uid="engram-grant-runtime-privileges")


def superuser_conninfo(alias: str = DEFAULT_DB_ALIAS) -> str:
    """A psycopg connection string for a database superuser on the alias's (test) database: the embedded
    server's superuser, or ENGRAM_TEST_SUPERUSER_URL's role when DATABASE_URL is set. For tests and checks that
    inspect what the runtime role may not (row-level security bypassed), never for the application."""
    import os

    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from database import embedded_postgres

    db = connections[alias].settings_dict
    if settings.ENGRAM_EMBEDDED_DATABASE:
        return f"host={db['HOST']} port={db['PORT']} user={embedded_postgres.SUPERUSER} dbname={db['NAME']}"
    url = os.environ.get("ENGRAM_TEST_SUPERUSER_URL")
    if not url:
        raise RuntimeError("With DATABASE_URL, set ENGRAM_TEST_SUPERUSER_URL for the tests that inspect as superuser.")
    return make_conninfo(**{**conninfo_to_dict(url), "dbname": db["NAME"]})
