"""Every query of a tenant-owned table names the scope's tenant, and Python's idea of the scope never
differs from the server's: a stale tenant in a filter would hide a tenant's own rows (decision 0030)."""

import re

import numpy as np
import psycopg
import pytest
from django.db import DatabaseError, OperationalError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from database.prepared_statements import written_as
from memory.models import Memory
from tenants import scope
from tenants.models import Space
from tests.support.recall import tell


def server_tenant() -> str:
    return scope.current_scope()[0]


def mirror_and_server() -> tuple[str, str]:
    return str(scope.scoped_tenant_id() or ""), server_tenant()


def add_memory(space, text):
    with scope.tenant_scope(space.tenant_id, space):
        return Memory.objects.create(
            tenant_id=space.tenant_id, space=space, kind="fact", content=text, embedding=np.ones(384), importance=0.5
        )


@pytest.mark.django_db
def test_queries_of_tenant_owned_tables_name_the_scope_tenant(space_a, space_b):
    add_memory(space_a, "We run four vans")
    with scope.tenant_scope(space_a.tenant_id, space_a), CaptureQueriesContext(connection) as captured:
        assert [m.content for m in Memory.objects.filter(space=space_a)] == ["We run four vans"]
        assert Space.objects.get(pk=space_a.pk).external_id == space_a.external_id
        Memory.objects.filter(space=space_a).update(importance=0.9)
        Memory.objects.filter(space=space_a).delete()
    statements = [
        q["sql"] for q in captured.captured_queries if "memory_memory" in q["sql"] or "tenants_space" in q["sql"]
    ]
    # The delete is one statement, not the deletion collector's read and its DELETE by primary key alone:
    # same-tenant keys cascade in the database.
    assert len(statements) == 4  # the read, the space, the update, the delete
    for sql in statements:
        assert f"\"tenant_id\" = '{space_a.tenant_id.hex}'::uuid" in sql, sql


@pytest.mark.django_db
def test_a_joined_row_names_the_tenant_and_an_optional_one_is_prefetched(space_a):
    memory = add_memory(space_a, "We run four vans")
    with scope.tenant_scope(space_a.tenant_id, space_a), CaptureQueriesContext(connection) as captured:
        assert Memory.objects.select_related("space").get(pk=memory.pk).space.external_id == space_a.external_id
        with pytest.raises(TypeError, match="prefetch_related"):
            Memory.objects.select_related("source_session")
    (joined,) = [q["sql"] for q in captured.captured_queries]
    assert f'"tenants_space"."tenant_id" = \'{space_a.tenant_id.hex}\'::uuid' in joined


@pytest.mark.django_db
def test_a_save_names_the_tenant_in_its_update(space_a):
    memory = add_memory(space_a, "We run four vans")
    with scope.tenant_scope(space_a.tenant_id, space_a), CaptureQueriesContext(connection) as captured:
        memory.importance = 0.8
        memory.save(update_fields=["importance"])
    (update,) = [q["sql"] for q in captured.captured_queries if q["sql"].startswith("UPDATE")]
    assert f"\"tenant_id\" = '{space_a.tenant_id.hex}'::uuid" in update


@pytest.mark.django_db
def test_no_scope_adds_no_filter_and_sees_nothing(space_a):
    add_memory(space_a, "We run four vans")
    with transaction.atomic():
        assert scope.scoped_tenant_id() is None
        with CaptureQueriesContext(connection) as captured:
            assert Memory.objects.count() == 0  # row-level security: no scope, no rows
        assert "tenant_id" not in captured.captured_queries[-1]["sql"]


@pytest.mark.django_db
def test_the_scope_ends_with_its_transaction(space_a):
    with scope.tenant_scope(space_a.tenant_id):
        assert scope.scoped_tenant_id() == space_a.tenant_id
    assert scope.scoped_tenant_id() is None
    with transaction.atomic():
        assert scope.scoped_tenant_id() is None
        assert server_tenant() == ""


@pytest.mark.django_db
def test_a_rolled_back_savepoint_restores_the_outer_tenant_as_the_server_does(space_a, space_b):
    add_memory(space_a, "We run four vans")
    with scope.tenant_scope(space_a.tenant_id):
        with pytest.raises(RuntimeError), transaction.atomic():
            scope.enter_scope(space_b.tenant_id)
            assert scope.scoped_tenant_id() == space_b.tenant_id
            raise RuntimeError("the block fails")
        assert scope.scoped_tenant_id() == space_a.tenant_id
        assert server_tenant() == str(space_a.tenant_id)
        assert Memory.objects.count() == 1


@pytest.mark.django_db
def test_a_released_savepoint_keeps_its_tenant_as_the_server_does(space_a, space_b):
    with transaction.atomic():
        with transaction.atomic():
            scope.enter_scope(space_b.tenant_id)
        assert scope.scoped_tenant_id() == space_b.tenant_id
        assert server_tenant() == str(space_b.tenant_id)
        scope.clear_scope()
        assert scope.scoped_tenant_id() is None
        assert server_tenant() == ""


@pytest.mark.django_db(transaction=True)
def test_a_reused_atomic_decorator_never_carries_a_tenant_into_the_next_call(space_a, space_b):
    """A function decorated with ``transaction.atomic`` reuses one Atomic object for every call: the
    second call must not see the first call's tenant before it enters its own."""
    add_memory(space_a, "We run four vans")
    add_memory(space_b, "We bake bread")
    seen = []

    @transaction.atomic
    def read(tenant_id):
        seen.append(scope.scoped_tenant_id())
        scope.enter_scope(tenant_id)
        return [m.content for m in Memory.objects.all()]

    assert read(space_a.tenant_id) == ["We run four vans"]
    assert read(space_b.tenant_id) == ["We bake bread"]
    assert seen == [None, None]


@pytest.mark.django_db
def test_the_pipelined_scope_names_its_tenant_in_the_statement_it_rides_with(space_a):
    add_memory(space_a, "We run four vans")
    with transaction.atomic():
        with scope.scope_with_next_statement(space_a.tenant_id), CaptureQueriesContext(connection) as captured:
            assert Memory.objects.count() == 1
        assert f"'{space_a.tenant_id.hex}'::uuid" in captured.captured_queries[-1]["sql"]


@pytest.mark.django_db
def test_every_statement_of_a_recall_request_names_the_tenant(client_a, space_a):
    tell(client_a, space_a, "We run a fleet of four vans.")
    url = reverse("recall", args=[space_a.external_id])
    client_a.post(url, {"query": "warm up"}, format="json")  # the key remembered, the model loaded
    with CaptureQueriesContext(connection) as captured:
        response = client_a.post(url, {"query": "How many vans do you have?"}, format="json")
    assert response.status_code == 200
    assert response.json()["memories"]
    tables = re.compile(r'\b(?:FROM|JOIN)\s+"?(memory_\w+|tenants_(?:space|apikey))"?')
    # A prepared statement is read as written; its values, the tenant among them, as executed.
    touching = [q["sql"] for q in captured.captured_queries if tables.search(written_as(q["sql"]) or q["sql"])]
    assert len(touching) >= 3  # the key, the space, the candidates
    for sql in touching:
        assert f"'{space_a.tenant_id.hex}'::uuid" in sql or f"'{space_a.tenant_id}'" in sql, sql


@pytest.mark.django_db
def test_nested_tenant_scopes_failing_at_every_level_keep_the_mirror_on_the_server_s_tenant(space_a, space_b):
    add_memory(space_a, "We run four vans")
    a, b = str(space_a.tenant_id), str(space_b.tenant_id)
    with scope.tenant_scope(space_a.tenant_id):
        with pytest.raises(ValueError), scope.tenant_scope(space_b.tenant_id):
            with pytest.raises(KeyError), scope.tenant_scope(space_a.tenant_id):
                raise KeyError("the innermost block fails")
            assert mirror_and_server() == (b, b)
            with pytest.raises(DatabaseError), transaction.atomic(savepoint=False):
                scope.enter_scope(space_a.tenant_id)
                with connection.cursor() as cursor:
                    cursor.execute("SELECT 1/0")
            raise ValueError("the middle block fails too")
        assert mirror_and_server() == (a, a)
        with scope.tenant_scope(space_b.tenant_id):
            transaction.set_rollback(True)
        assert mirror_and_server() == (a, a)
        assert Memory.objects.count() == 1


@pytest.mark.django_db
def test_the_pipelined_scope_agrees_with_the_server_whichever_statement_carries_it(space_a, space_b):
    a, b = str(space_a.tenant_id), str(space_b.tenant_id)
    with transaction.atomic():
        scope.enter_scope(space_a.tenant_id)
        with pytest.raises(RuntimeError), transaction.atomic():  # entered in a savepoint that rolls back
            with scope.scope_with_next_statement(space_b.tenant_id):
                Memory.objects.count()
            raise RuntimeError("the savepoint rolls back")
        assert mirror_and_server() == (a, a)
        with scope.scope_with_next_statement(space_b.tenant_id):
            # Carried by the SAVEPOINT statement, so it outlives the savepoint's rollback, as the mark does.
            with pytest.raises(RuntimeError), transaction.atomic():
                raise RuntimeError("the savepoint rolls back")
            assert mirror_and_server() == (b, b)
        with scope.scope_with_next_statement(space_a.tenant_id):
            pass  # no statement: set when the block ends
        assert mirror_and_server() == (a, a)


@pytest.mark.django_db(transaction=True)
def test_a_backend_killed_mid_scope_leaves_no_tenant_for_the_next_transaction(space_a, superuser_conninfo):
    add_memory(space_a, "We run four vans")
    with pytest.raises(OperationalError), scope.tenant_scope(space_a.tenant_id):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            (pid,) = cursor.fetchone()
        with psycopg.connect(superuser_conninfo, autocommit=True) as superuser:
            superuser.execute("SELECT pg_terminate_backend(%s)", [pid])
        Memory.objects.count()
    assert scope.scoped_tenant_id() is None
    with transaction.atomic():
        assert mirror_and_server() == ("", "")
    with scope.tenant_scope(space_a.tenant_id):
        assert Memory.objects.count() == 1


@pytest.mark.django_db
def test_an_exception_before_the_pipelined_scope_s_first_statement_leaves_the_mirror_on_the_server_s_tenant(
    space_a, space_b
):
    add_memory(space_b, "We bake bread")
    with transaction.atomic():
        scope.enter_scope(space_b.tenant_id, space_b)
        with pytest.raises(RuntimeError), scope.scope_with_next_statement(space_a.tenant_id, space_a):
            raise RuntimeError("embedding failed before recall's statement")
        assert server_tenant() == str(space_b.tenant_id)
        assert [m.content for m in Memory.objects.all()] == ["We bake bread"]  # RLS shows it; the filter names A
        assert scope.scoped_tenant_id() == space_b.tenant_id


@pytest.mark.xfail(
    strict=True,
    reason="a known limit (the scope mark of tenants.scope): a bare transaction.savepoint() is not one Django tracks, "
    "so a mark registered after it is not tied to it: savepoint_rollback(sid) reverts the server's SET LOCAL but "
    "Django keeps the mark. No code opens savepoints that way",
)
@pytest.mark.django_db
def test_a_manually_rolled_back_savepoint_restores_the_outer_tenant_as_the_server_does(space_a, space_b):
    add_memory(space_a, "We run four vans")
    with transaction.atomic():
        scope.enter_scope(space_a.tenant_id)
        sid = transaction.savepoint()
        scope.enter_scope(space_b.tenant_id)
        transaction.savepoint_rollback(sid)
        assert server_tenant() == str(space_a.tenant_id)
        assert Memory.objects.count() == 1  # RLS shows it; the filter names B
        assert scope.scoped_tenant_id() == space_a.tenant_id
