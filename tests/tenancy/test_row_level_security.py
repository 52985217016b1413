"""Row-level security: no scope sees nothing, one tenant never reaches another, spaces stay apart."""

import numpy as np
import pytest
from django.db import connection, transaction
from django.db.utils import ProgrammingError

from memory.models import Memory
from tenants import scope
from tenants.checks import database_role_problem
from tenants.models import Space


def count(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")
        return cursor.fetchone()[0]


def add_memory(space, text):
    with scope.tenant_scope(space.tenant_id, space):
        return Memory.objects.create(
            tenant_id=space.tenant_id, space=space, kind="fact", content=text, embedding=np.ones(384), importance=0.5
        )


TENANT_TABLES = [
    "tenants_tenant",
    "tenants_space",
    "tenants_spacekey",
    "tenants_apikey",
    "tenants_membership",
    "memory_memory",
]


@pytest.mark.django_db
def test_raw_sql_without_scope_sees_no_tenant_rows(space_a, space_b, key_a, key_b):
    add_memory(space_a, "We run four vans")
    add_memory(space_b, "We bake bread")
    with transaction.atomic():
        for table in TENANT_TABLES:
            assert count(table) == 0, table
    with scope.tenant_scope(space_a.tenant_id):
        assert count("tenants_space") == 1
        assert count("memory_memory") == 1


@pytest.mark.django_db
def test_tenant_scope_cannot_read_other_tenants_rows(space_a, space_b):
    add_memory(space_b, "We bake bread")
    with scope.tenant_scope(space_a.tenant_id):
        assert list(Space.objects.values_list("id", flat=True)) == [space_a.id]
        assert Memory.objects.count() == 0
        assert count("tenants_apikey") == 0


@pytest.mark.django_db
def test_tenant_scope_cannot_insert_a_row_for_another_tenant(space_a, space_b):
    with pytest.raises(ProgrammingError, match="row-level security"):
        with scope.tenant_scope(space_a.tenant_id):
            with connection.cursor() as cursor:
                cursor.execute(
                    "INSERT INTO tenants_space (id, tenant_id, kind, external_id, display_name, settings, key_id,"
                    " created_at) VALUES (gen_random_uuid(), %s, 'end_user', 'intruder', '', '{}', 'default', now())",
                    [space_b.tenant_id],
                )


@pytest.mark.django_db
def test_tenant_scope_cannot_move_its_row_to_another_tenant(space_a, space_b):
    with pytest.raises(ProgrammingError, match="row-level security"):
        with scope.tenant_scope(space_a.tenant_id):
            with connection.cursor() as cursor:
                cursor.execute("UPDATE tenants_space SET tenant_id = %s", [space_b.tenant_id])


@pytest.mark.django_db
def test_space_scope_cannot_read_another_space_of_the_same_tenant(space_a, space_a2):
    mine = add_memory(space_a, "We run four vans")
    add_memory(space_a2, "We run four vans")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert list(Memory.objects.values_list("id", flat=True)) == [mine.id]
        assert list(Space.objects.values_list("id", flat=True)) == [space_a.id]
    with scope.tenant_scope(space_a.tenant_id):
        assert Memory.objects.count() == 2


@pytest.mark.django_db
def test_every_table_with_a_tenant_id_has_enabled_and_forced_row_level_security():
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
                   (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid)
            FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
            WHERE c.relkind IN ('r', 'p')
              AND (EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id'
                           AND NOT a.attisdropped) OR c.relname = 'tenants_tenant')
            """
        )
        rows = cursor.fetchall()
    assert len(rows) >= 9  # the query must actually find the tenant tables
    unprotected = [name for name, enabled, forced, policies in rows if not (enabled and forced and policies)]
    assert unprotected == []


@pytest.mark.django_db
def test_the_application_role_is_subject_to_row_level_security():
    assert database_role_problem() is None


@pytest.mark.django_db
def test_the_check_refuses_a_superuser_connection(superuser_conninfo):
    import psycopg

    with psycopg.connect(superuser_conninfo) as superuser_connection:
        assert "superuser" in database_role_problem(superuser_connection)
