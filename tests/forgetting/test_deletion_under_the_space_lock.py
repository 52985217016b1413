"""A forget and a merge of the same memory, on two real connections: the forgotten row never comes back.

Deletion takes the writer's space lock first (memory.store.lock). Each test pauses one side at the
exact point of the race, lets the other side run until it has either finished or is waiting for a
lock in PostgreSQL, then lets the first go on. Without the lock in the deleting path the merge saves
the deleted row back (Django's save() inserts a row whose UPDATE finds nothing) and these tests fail.
"""

from __future__ import annotations

import threading

import pytest
from django.http import Http404

from memory.dedup.edits import edit_memory
from memory.dedup.writer import MemoryWriter
from memory.models import DeletionAudit, Episode, Memory
from memory.shared import storing
from memory.turns.intake import receive_turn
from memory.turns.pipeline import attempt_turn
from tenants import scope
from tests.conftest import make_space
from tests.support.two_connections import WAIT, Side, forget, until_finished_or_waiting_for_a_lock

FLEET = "We run a fleet of four vans."
REFUND = "The customer asks for a refund because the parcel arrived damaged"


def say(space, message: str, session: str):
    turn = receive_turn(space=space, message=message, session_id=session).turn
    return attempt_turn(turn)


def fleet_fact(space) -> Memory:
    with scope.tenant_scope(space.tenant_id, space):
        say(space, FLEET, "first")
        return Memory.objects.get(kind="fact")


def facts(space) -> list[tuple]:
    with scope.tenant_scope(space.tenant_id, space):
        return [(m.id, m.content, m.mention_count) for m in Memory.objects.filter(kind="fact")]


def audited_ids(space) -> list:
    with scope.tenant_scope(space.tenant_id):
        return list(DeletionAudit.objects.filter(space_uuid=space.id).values_list("memory_id", flat=True))


@pytest.mark.django_db(transaction=True)
def test_a_forget_arriving_during_a_merge_waits_and_deletes_the_merged_memory(tenant_a, monkeypatch):
    space = make_space(tenant_a, "forget-during-merge")
    fact = fleet_fact(space)
    merging, go_on = threading.Event(), threading.Event()
    real_merge = MemoryWriter.merge

    def merge_that_pauses(writer, memory, grounded, topic_key):
        if memory.kind == "fact":  # the writer has read the row it is about to update
            merging.set()
            go_on.wait(WAIT)
        return real_merge(writer, memory, grounded, topic_key)

    monkeypatch.setattr(MemoryWriter, "merge", merge_that_pauses)
    writer = Side(space, lambda: say(space, FLEET, "second"))
    writer.start()
    assert merging.wait(WAIT)
    deleter = Side(space, lambda: forget(space, fact))
    deleter.start()
    until_finished_or_waiting_for_a_lock(deleter)
    go_on.set()
    turn = writer.finish()
    forgotten = deleter.finish()

    assert turn.status == "done" and fact.pk in turn.merged_ids
    # The merge came first, so the forget deleted the memory as merged; nothing was saved back after it.
    assert [f.id for f in forgotten] == [fact.pk]
    assert facts(space) == []
    assert audited_ids(space) == [fact.pk]


@pytest.mark.django_db(transaction=True)
def test_a_merge_arriving_during_a_forget_waits_and_writes_the_restatement_as_a_new_memory(tenant_a):
    space = make_space(tenant_a, "merge-during-forget")
    fact = fleet_fact(space)
    deleted, go_on = threading.Event(), threading.Event()

    def forget_then_hold_the_transaction():
        forgotten = forget(space, fact)
        deleted.set()
        go_on.wait(WAIT)  # the rows are deleted, the transaction not yet committed
        return forgotten

    deleter = Side(space, forget_then_hold_the_transaction)
    deleter.start()
    assert deleted.wait(WAIT)
    writer = Side(space, lambda: say(space, FLEET, "second"))
    writer.start()
    until_finished_or_waiting_for_a_lock(writer)
    go_on.set()
    forgotten = deleter.finish()
    turn = writer.finish()

    assert [f.id for f in forgotten] == [fact.pk]
    assert audited_ids(space) == [fact.pk]
    # The forget came first: the customer saying it again afterwards is a new statement, stored as a new
    # memory with its own id and a first mention, not the forgotten row brought back with its count.
    [(new_id, content, mentions)] = facts(space)
    assert new_id != fact.pk and (content, mentions) == (FLEET, 1)
    assert turn.status == "done" and new_id in turn.created_ids


@pytest.mark.django_db(transaction=True)
def test_a_case_deleted_during_a_duplicate_merge_is_not_saved_back(tenant_a, monkeypatch):
    space = make_space(tenant_a, "shared-race", kind="shared")
    with scope.tenant_scope(tenant_a, space):
        case = storing.store_case(space, storing.NewCase(kind="episode", inputs={"question": REFUND}, output="ok"))
    merging, go_on = threading.Event(), threading.Event()
    real_merge = storing.merge_into_existing

    def merge_that_pauses(existing, new_case, choice):
        merging.set()
        go_on.wait(WAIT)
        return real_merge(existing, new_case, choice)

    monkeypatch.setattr(storing, "merge_into_existing", merge_that_pauses)
    again = storing.NewCase(kind="episode", inputs={"question": REFUND}, output="ok", feedback_comment="again")
    writer = Side(space, lambda: storing.store_case(space, again, storing.DuplicateChoice(on_duplicate="merge")))
    writer.start()
    assert merging.wait(WAIT)
    deleter = Side(space, lambda: storing.delete_episode(space, case.episode, actor="race test"))
    deleter.start()
    until_finished_or_waiting_for_a_lock(deleter)
    go_on.set()
    assert writer.finish().action == "merged"
    deleter.finish()

    with scope.tenant_scope(tenant_a, space):
        assert not Episode.objects.filter(space=space).exists()
    assert audited_ids(space) == [case.episode.pk]


@pytest.mark.django_db
def test_forgetting_a_memory_already_forgotten_deletes_and_audits_nothing_more(space_a):
    fact = fleet_fact(space_a)
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert [f.id for f in forget(space_a, fact)] == [fact.pk]
        assert forget(space_a, fact) == []  # the caller's copy is stale: the row is gone
    assert audited_ids(space_a) == [fact.pk]


@pytest.mark.django_db
def test_a_memory_from_another_space_is_not_deleted_through_this_one(space_a, space_a2):
    other = fleet_fact(space_a2)
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert forget(space_a, other) == []
    assert [row[0] for row in facts(space_a2)] == [other.pk]
    assert audited_ids(space_a) == [] and audited_ids(space_a2) == []


@pytest.mark.django_db
def test_editing_a_memory_forgotten_meanwhile_is_a_404_and_brings_nothing_back(space_a):
    fact = fleet_fact(space_a)
    with scope.tenant_scope(space_a.tenant_id, space_a):
        forget(space_a, fact)
        with pytest.raises(Http404):
            edit_memory(memory=fact, content="We run a fleet of five vans.")
    assert facts(space_a) == []


@pytest.mark.django_db
def test_feedback_on_a_case_deleted_meanwhile_is_a_404_and_brings_nothing_back(tenant_a):
    space = make_space(tenant_a, "shared-stale", kind="shared")
    with scope.tenant_scope(tenant_a, space):
        episode = storing.store_case(space, storing.NewCase(kind="episode", inputs={"question": REFUND})).episode
        storing.delete_episode(space, episode, actor="test")
        with pytest.raises(Http404):
            storing.update_feedback(episode, fields={"feedback_comment": "late"})
        storing.delete_episode(space, episode, actor="test")  # a second delete: nothing left, no second audit
        assert not Episode.objects.filter(space=space).exists()
    assert audited_ids(space) == [episode.pk]
