"""The space's writer lock (memory.store.lock): a row lock that serialises the space's writers and deleters,
never holds up a new turn being stored, a rename or a settings change, and cannot be skipped silently."""

import threading

import pytest
from django.db import OperationalError, connection, connections, transaction
from django.urls import reverse

from memory.models import Turn
from memory.store.lock import lock_space
from tenants import scope, settings_service, spaces
from tenants.models import Space
from tests.support.concurrency import space_locked


@pytest.mark.django_db(transaction=True)
def test_a_second_writer_of_the_space_waits_for_the_first(space_a, space_a2):
    with space_locked(space_a), scope.tenant_scope(space_a.tenant_id):
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


def while_a_writer_holds_the_space(space, change):
    """``change`` in the space's tenant scope while another connection holds the writer lock; a lock timeout
    turns a wait into an OperationalError (found by an attack: a lock on the space's own row made both wait)."""
    with space_locked(space), scope.tenant_scope(space.tenant_id):
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '1s'")
        change()


@pytest.mark.django_db(transaction=True)
def test_renaming_a_space_does_not_wait_for_a_writer_of_its_memory(space_a):
    while_a_writer_holds_the_space(space_a, lambda: spaces.update_space(space=space_a, display_name="Renamed"))


@pytest.mark.django_db(transaction=True)
def test_saving_a_spaces_settings_does_not_wait_for_a_writer_of_its_memory(space_a):
    while_a_writer_holds_the_space(
        space_a,
        lambda: settings_service.change_space_settings(space=space_a, changes={"recall_limit": 7}, actor="test"),
    )


def test_a_space_the_scope_does_not_show_is_not_locked_silently(db, space_a, space_a2):
    with scope.tenant_scope(space_a.tenant_id, space_a), pytest.raises(Space.DoesNotExist):
        lock_space(space_a2.id)
