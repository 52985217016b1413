"""The space's writer lock (memory.store.lock): a row lock on the space that serialises its writers and
deleters, never holds up a new turn being stored, and cannot be skipped by a caller outside a scope."""

import threading

import pytest
from django.db import OperationalError, connection, connections, transaction
from django.urls import reverse

from memory.models import Turn
from memory.store.lock import lock_space
from tenants import scope
from tests.support.concurrency import space_locked


@pytest.mark.django_db(transaction=True)
def test_a_second_writer_of_the_space_waits_for_the_first(space_a, space_a2):
    with space_locked(space_a), scope.tenant_scope(space_a.tenant_id, space_a):
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '300ms'")
        lock_space(space_a2.id)  # another space of the tenant: free
        with pytest.raises(OperationalError, match="lock timeout"), transaction.atomic():
            lock_space(space_a.id)


@pytest.mark.django_db(transaction=True)
def test_a_turn_is_stored_while_another_turn_of_the_space_holds_its_lock(client_a, space_a):
    """Storing a turn's rows checks their keys against the space (FOR KEY SHARE), which the writer's lock
    (FOR NO KEY UPDATE) does not block: a FOR UPDATE lock would hold every new turn until processing ended."""
    answers = []

    def post():
        try:
            url = reverse("turn-create", args=[space_a.external_id])
            answers.append(client_a.post(url, {"message": "We run four vans.", "session_id": "s1"}, format="json"))
        finally:
            connections.close_all()

    with space_locked(space_a):
        poster = threading.Thread(target=post, daemon=True)
        poster.start()
        poster.join(timeout=20)
        assert not poster.is_alive(), "storing the turn waited for the space's writer lock"
    assert answers[0].status_code == 201, answers[0].content
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert Turn.objects.filter(space=space_a).count() == 1


def test_the_lock_refuses_to_run_outside_a_scope(db, space_a):
    with pytest.raises(RuntimeError, match="scope"):
        lock_space(space_a.id)
