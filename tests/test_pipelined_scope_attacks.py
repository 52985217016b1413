"""Review attacks on tenants/scope.py ``scope_with_next_statement`` (the scope pipelined with the next statement)."""

import threading

import pytest
from django.db import DatabaseError, connection, transaction

from tenants import scope
from tenants.models import Space

pytestmark = pytest.mark.django_db


def visible_space_ids():
    return {str(pk) for pk in Space.objects.values_list("pk", flat=True)}


def test_scope_survives_a_rolled_back_savepoint_that_carried_it(space_a, space_b):
    with transaction.atomic():
        scope.clear_scope()
        with scope.scope_with_next_statement(space_a.tenant_id, space_a):
            with pytest.raises(DatabaseError), transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SELECT 1/0")
            assert scope.current_scope() == (str(space_a.tenant_id), str(space_a.pk))
            assert visible_space_ids() == {str(space_a.pk)}


def test_server_side_cursor_first_still_scoped(space_a, space_a2, space_b):
    with transaction.atomic():
        scope.clear_scope()
        with scope.scope_with_next_statement(space_a.tenant_id):
            ids = {str(pk) for pk in Space.objects.values_list("pk", flat=True).iterator(chunk_size=1)}
        assert ids == {str(space_a.pk), str(space_a2.pk)}
        assert scope.current_scope() == (str(space_a.tenant_id), "")


def test_server_side_cursor_first_runs_in_the_previous_scope(space_a, space_b):
    with transaction.atomic():
        scope.enter_scope(space_b.tenant_id, space_b)
        with scope.scope_with_next_statement(space_a.tenant_id, space_a):
            ids = {str(pk) for pk in Space.objects.values_list("pk", flat=True).iterator(chunk_size=1)}
        assert str(space_b.pk) not in ids, "a statement of tenant A's block read tenant B's space"
        assert scope.current_scope() == (str(space_a.tenant_id), str(space_a.pk))


def test_other_thread_gets_no_scope_from_the_block(space_a):
    seen = []

    def other():
        try:
            with transaction.atomic():
                seen.append(visible_space_ids())
        finally:
            connection.close()

    with transaction.atomic():
        scope.clear_scope()
        with scope.scope_with_next_statement(space_a.tenant_id, space_a):
            thread = threading.Thread(target=other)
            thread.start()
            thread.join()
            assert visible_space_ids() == {str(space_a.pk)}
    assert seen == [set()]


def test_exception_before_any_statement_leaves_the_previous_scope_not_a_half_one(space_a, space_b):
    with transaction.atomic():
        scope.enter_scope(space_b.tenant_id, space_b)
        with pytest.raises(RuntimeError), scope.scope_with_next_statement(space_a.tenant_id, space_a):
            raise RuntimeError("embedding failed before recall's statement")
        # The wrapper is gone: the next statement is not silently re-scoped, and the old scope is whole.
        assert not connection.execute_wrappers
        assert scope.current_scope() == (str(space_b.tenant_id), str(space_b.pk))


def test_scope_value_is_a_parameter_not_sql(space_a):
    with transaction.atomic(), pytest.raises((ValueError, AttributeError, TypeError)):
        with scope.scope_with_next_statement("x', true); SELECT set_config('engram.maintenance','on',true); --"):
            visible_space_ids()


def test_two_requests_on_one_thread_do_not_share_a_scope(client_a, client_b, space_a, space_b):
    from django.urls import reverse

    from tests.support.recall import tell

    tell(client_a, space_a, "Alice's vans are blue.")
    tell(client_b, space_b, "Bob's vans are red.")
    for client, _own, other in ((client_b, "red", "blue"), (client_a, "blue", "red"), (client_b, "red", "blue")):
        body = client.post(
            reverse("recall", args=["customer-1"]), {"query": "What colour are the vans?"}, format="json"
        )
        contents = " ".join(m["content"] for m in body.json()["memories"])
        assert other not in contents
