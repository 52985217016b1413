"""The runtime role cannot lift its own guards: it owns nothing and holds only row privileges.

The whole suite runs as that role (the owner only creates, migrates and drops the test database),
so these statements are what an SQL injection anywhere in the application could try.
"""

from __future__ import annotations

import psycopg
import pytest
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from tenants.checks import database_role_problem, owned_tables_problem

TENANT = "00000000-0000-4000-8000-000000000001"


def owner_conninfo() -> str:
    owner = settings.ENGRAM_DATABASE_OWNER
    assert owner, "the suite needs a separate owner role (ENGRAM_MIGRATION_DATABASE_URL with DATABASE_URL)"
    params = {
        **owner["OPTIONS"],
        "host": owner["HOST"] or None,
        "user": owner["USER"],
        "password": owner["PASSWORD"] or None,
        "dbname": connection.settings_dict["NAME"],
    }
    if owner["PORT"]:
        params["port"] = owner["PORT"]
    return psycopg.conninfo.make_conninfo(**{key: value for key, value in params.items() if value is not None})


def refused(statement: str) -> str:
    """Run ``statement`` as the runtime role; return PostgreSQL's refusal (the test fails if it ran)."""
    with pytest.raises(DatabaseError) as refusal:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement)
    return str(refusal.value)


@pytest.mark.django_db
def test_the_suite_runs_as_the_runtime_role_which_owns_nothing():
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user, tableowner FROM pg_tables WHERE tablename = 'memory_memory'")
        user, table_owner = cursor.fetchone()
    assert user == settings.ENGRAM_RUNTIME_DATABASE_ROLE
    assert table_owner == settings.ENGRAM_DATABASE_OWNER["USER"] != user
    assert database_role_problem() is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE memory_memory NO FORCE ROW LEVEL SECURITY",
        "ALTER TABLE memory_memory DISABLE ROW LEVEL SECURITY",
        "DROP POLICY tenant_isolation ON memory_memory",
        "CREATE POLICY see_all ON memory_memory USING (true)",
        "ALTER TABLE memory_deletionaudit DISABLE TRIGGER deletion_audit_append_only",
        "ALTER TABLE memory_deletionaudit DISABLE TRIGGER ALL",
        "DROP TRIGGER deletion_audit_append_only ON memory_deletionaudit",
        "DROP TABLE memory_deletionaudit",
        "ALTER TABLE memory_memory OWNER TO CURRENT_USER",
    ],
)
def test_the_runtime_role_cannot_change_the_guards_of_a_table(statement):
    assert "must be owner" in refused(statement)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "statement",
    [
        "TRUNCATE memory_deletionaudit",
        "TRUNCATE memory_memory",
        "TRUNCATE tenants_tenant CASCADE",
        # Refused by privilege, before the append-only trigger is even reached.
        "UPDATE memory_deletionaudit SET actor = 'nobody'",
        "DELETE FROM memory_deletionaudit",
        "DELETE FROM django_migrations",
        "CREATE TABLE public.runtime_owned (id int)",
    ],
)
def test_the_runtime_role_has_no_privilege_to_empty_or_rewrite_what_it_must_keep(statement):
    assert "permission denied" in refused(statement)


@pytest.mark.django_db
def test_the_check_refuses_a_runtime_role_that_owns_tables():
    with psycopg.connect(owner_conninfo()) as owner_connection:
        problem = database_role_problem(owner_connection)
    assert "owns" in problem and "table" in problem
    assert owned_tables_problem() is None


@pytest.mark.django_db(transaction=True)  # autocommit: no lock of the runtime role outlives a statement
def test_a_table_created_later_by_the_owner_is_granted_rows_but_not_truncate():
    with psycopg.connect(owner_conninfo(), autocommit=True) as owner_connection:
        owner_connection.execute("CREATE TABLE later_feature (id int PRIMARY KEY)")
        try:
            with connection.cursor() as cursor:
                cursor.execute("INSERT INTO later_feature VALUES (1)")
                cursor.execute("UPDATE later_feature SET id = 2")
                cursor.execute("SELECT id FROM later_feature")
                assert cursor.fetchall() == [(2,)]
                cursor.execute("DELETE FROM later_feature")
            assert "permission denied" in refused("TRUNCATE later_feature")
            assert "must be owner" in refused("ALTER TABLE later_feature ADD COLUMN sneaky text")
        finally:
            owner_connection.execute("DROP TABLE later_feature")


@pytest.mark.django_db
def test_the_audit_trigger_still_refuses_the_owner():
    with psycopg.connect(owner_conninfo()) as owner_connection:
        for statement in ("UPDATE memory_deletionaudit SET actor = 'x'", "DELETE FROM memory_deletionaudit"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
                with owner_connection.transaction():
                    # The trigger fires per row: one audit row the owner can see (RLS applies to it too).
                    owner_connection.execute("SELECT set_config('engram.tenant_id', %s, true)", [TENANT])
                    owner_connection.execute(
                        "INSERT INTO memory_deletionaudit (id, tenant_id, occurred_at, space_uuid, space_external_id,"
                        " memory_id, memory_kind, cause, actor, limits, content_digest) VALUES (gen_random_uuid(), %s,"
                        " now(), gen_random_uuid(), 'c', gen_random_uuid(), 'fact', 'api_key', 'a', '{}', '')",
                        [TENANT],
                    )
                    owner_connection.execute(statement)
