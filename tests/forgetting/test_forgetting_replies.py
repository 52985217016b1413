"""An agent's reply is the answer to one turn (``POST …/turns/{id}/reply``): forgetting a memory that turn's
message taught drops the reply's text with the message's, for the reply may quote it. Replies to other turns
stay, the rows stay (a replayed reply stores nothing again), and no one replies to a turn of another space.
"""

from __future__ import annotations

import threading

import pytest
from django.urls import reverse

from memory.models import Memory, Message, Turn
from memory.turns import intake
from memory.turns.intake import receive_turn, store_reply
from memory.turns.pipeline import attempt_turn
from tenants import scope
from tests.conftest import make_space
from tests.support.two_connections import WAIT, Side, forget, until_finished_or_waiting_for_a_lock

pytestmark = pytest.mark.django_db

FACT = "Our dog is called Zorblatquib."
QUOTING = "What a lovely name, Zorblatquib!"
UNRELATED = "Your order of four pallets ships on Monday."


@pytest.fixture
def keeping(client_a, space_a):
    response = client_a.patch(reverse("space-detail", args=[space_a.external_id]),
                              {"settings": {"keep_transcripts": True}}, format="json")  # fmt: skip
    assert response.status_code == 200, response.content
    return space_a


def said(client, space, message: str, session_id: str = "chat") -> dict:
    url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
    response = client.post(url, {"message": message, "session_id": session_id}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def reply(client, space, turn_id, content: str):
    return client.post(reverse("turn-reply", args=[space.external_id, turn_id]), {"content": content}, format="json")


def lines(space) -> dict[str, str | None]:
    """Agent lines by message id: their text, or None when it was dropped."""
    with scope.tenant_scope(space.tenant_id, space):
        return {str(m.pk): m.content for m in Message.objects.filter(space=space).exclude(role="customer")}


def fact_id(body: dict) -> str:
    [fact] = [m["id"] for m in body["created"] if m["kind"] != "topic"]
    return fact


def forget_by(path: str, client, space, fact_turn: dict) -> list[str]:
    """Forget the dog's name through one of the API's paths; the contents deleted (statements only)."""
    if path == "conversation":
        body = said(client, space, "Forget what you know about Zorblatquib.", session_id="later")
    elif path == "forget":
        url = reverse("forget", args=[space.external_id])
        body = client.post(url, {"utterance": "Forget what you know about Zorblatquib."}, format="json").json()
    else:
        response = client.delete(reverse("memory-detail", args=[space.external_id, fact_id(fact_turn)]))
        assert response.status_code == 204, response.content
        return [FACT]
    return [f["content"] for f in body["forgotten"] if f["kind"] != "topic"]


@pytest.mark.parametrize("path", ["conversation", "forget", "delete"])
def test_the_reply_to_the_turn_of_a_forgotten_fact_loses_its_text_and_a_reply_to_another_turn_keeps_it(
    client_a, keeping, path
):
    space = keeping
    fact_turn = said(client_a, space, FACT)
    other_turn = said(client_a, space, "We ordered four pallets of flour.")  # same session
    quoting = reply(client_a, space, fact_turn["turn_id"], QUOTING).json()["message_id"]
    unrelated = reply(client_a, space, other_turn["turn_id"], UNRELATED).json()["message_id"]
    assert lines(space) == {quoting: QUOTING, unrelated: UNRELATED}

    assert forget_by(path, client_a, space, fact_turn) == [FACT]

    # The rows stay, blank, like the customer's line; the reply to the other turn is untouched.
    assert {k: v for k, v in lines(space).items() if k in (quoting, unrelated)} == {quoting: None, unrelated: UNRELATED}
    with scope.tenant_scope(space.tenant_id, space):
        texts = [m.content for m in Message.objects.filter(space=space) if m.content]
    assert not [t for t in texts if "zorblatquib" in t.lower()]
    assert "We ordered four pallets of flour." in texts


def test_a_replayed_reply_does_not_bring_the_forgotten_words_back(client_a, keeping):
    space = keeping
    fact_turn = said(client_a, space, FACT)
    first = reply(client_a, space, fact_turn["turn_id"], QUOTING).json()["message_id"]
    assert forget_by("conversation", client_a, space, fact_turn) == [FACT]
    again = reply(client_a, space, fact_turn["turn_id"], QUOTING)  # a client's retry
    assert again.status_code == 201 and again.json()["message_id"] == first
    assert lines(space)[first] is None


def test_a_reply_that_arrives_after_its_fact_was_forgotten_is_not_kept(client_a, keeping):
    space = keeping
    fact_turn = said(client_a, space, FACT)
    assert forget_by("forget", client_a, space, fact_turn) == [FACT]
    late = reply(client_a, space, fact_turn["turn_id"], QUOTING)
    assert late.status_code == 201, late.content
    assert lines(space) == {late.json()["message_id"]: None}
    # A reply to a turn that lost nothing is kept as before.
    other_turn = said(client_a, space, "We ordered four pallets of flour.")
    kept = reply(client_a, space, other_turn["turn_id"], UNRELATED).json()["message_id"]
    assert lines(space)[kept] == UNRELATED


def test_the_agents_lines_of_an_ingested_transcript_go_with_a_fact_forgotten_from_it(client_a, keeping):
    space = keeping
    url = reverse("transcript-ingest", args=[space.external_id]) + "?wait=true"
    transcript = [
        {"role": "customer", "content": "Hello, I need to update my account."},
        {"role": "agent", "content": "Sure, what changed?"},
        {"role": "customer", "content": FACT},
        {"role": "agent", "content": QUOTING},
    ]
    response = client_a.post(url, {"session_id": "ingested", "messages": transcript}, format="json")
    assert response.status_code == 201, response.content
    other = said(client_a, space, "We ordered four pallets of flour.", session_id="ingested")
    unrelated = reply(client_a, space, other["turn_id"], UNRELATED).json()["message_id"]

    assert forget_by("forget", client_a, space, response.json()) == [FACT]

    # Every agent line of the transcript answers its one turn, so all of them go; the customer's other line stays.
    after = lines(space)
    assert after.pop(unrelated) == UNRELATED
    assert list(after.values()) == [None, None]
    with scope.tenant_scope(space.tenant_id, space):
        customer = [m.content for m in Message.objects.filter(space=space, role="customer")]
    assert sorted(customer, key=str) == [
        "Hello, I need to update my account.",
        None,
        "We ordered four pallets of flour.",
    ]


def test_no_one_replies_to_a_turn_of_another_space(client_a, client_b, keeping, space_a2, space_b):
    space = keeping
    turn_id = said(client_a, space, FACT)["turn_id"]
    attempts = [
        reply(client_b, space, turn_id, QUOTING),  # another tenant, naming this space
        reply(client_b, space_b, turn_id, QUOTING),  # another tenant, through its own space of the same name
        reply(client_a, space_a2, turn_id, QUOTING),  # this tenant, through another of its spaces
    ]
    assert [a.status_code for a in attempts] == [404, 404, 404]
    for other in (space_a2, space_b):
        assert lines(other) == {}
    assert lines(space) == {}
    # And the turn stays this space's: its reply is recorded as the answer to it, in its session.
    message_id = reply(client_a, space, turn_id, QUOTING).json()["message_id"]
    with scope.tenant_scope(space.tenant_id, space):
        message = Message.objects.get(pk=message_id)
        turn = Turn.objects.get(pk=turn_id)
    assert (message.answers_turn_id, message.session_id, message.space_id) == (turn.pk, turn.session_id, space.pk)


# --- a reply and a forget at the same moment, on two real connections ---------------------------------------
# store_reply holds the customer lines of its turn locked; deletion blanks those lines before it looks for
# their replies. Without the lock each of these loses the race and keeps the reply's text.


def told_and_learnt(tenant):
    """A space keeping transcripts, the turn that taught the dog's name and the memory it wrote."""
    space = make_space(tenant, "reply-race", settings={"keep_transcripts": True})
    with scope.tenant_scope(tenant, space):
        turn = attempt_turn(receive_turn(space=space, message=FACT, session_id="chat").turn)
        return space, turn, Memory.objects.get(kind="fact")


def store(space, turn):
    with scope.tenant_scope(space.tenant_id, space):
        turn = Turn.objects.select_related("session").get(pk=turn.pk)
        return store_reply(space=space, turn=turn, content=QUOTING, keep_transcripts=True).pk


@pytest.mark.django_db(transaction=True)
def test_a_forget_during_a_reply_to_the_turn_waits_and_blanks_the_reply(tenant_a, monkeypatch):
    space, turn, fact = told_and_learnt(tenant_a)
    stored, go_on = threading.Event(), threading.Event()
    real_store = intake.store_message

    def store_then_hold_the_transaction(*args, **kwargs):
        result = real_store(*args, **kwargs)
        stored.set()  # the reply is inserted with its text, not yet committed
        go_on.wait(WAIT)
        return result

    monkeypatch.setattr(intake, "store_message", store_then_hold_the_transaction)
    replier = Side(space, lambda: store(space, turn))
    replier.start()
    assert stored.wait(WAIT)
    deleter = Side(space, lambda: forget(space, fact))
    deleter.start()
    until_finished_or_waiting_for_a_lock(deleter)
    go_on.set()
    message_id = replier.finish()
    assert [f.id for f in deleter.finish()] == [fact.pk]
    assert lines(space) == {str(message_id): None}


@pytest.mark.django_db(transaction=True)
def test_a_reply_during_a_forget_of_its_turns_fact_waits_and_is_not_kept(tenant_a):
    space, turn, fact = told_and_learnt(tenant_a)
    deleted, go_on = threading.Event(), threading.Event()

    def forget_then_hold_the_transaction():
        forgotten = forget(space, fact)
        deleted.set()  # the customer's line is blanked and its replies looked for, not yet committed
        go_on.wait(WAIT)
        return forgotten

    deleter = Side(space, forget_then_hold_the_transaction)
    deleter.start()
    assert deleted.wait(WAIT)
    replier = Side(space, lambda: store(space, turn))
    replier.start()
    until_finished_or_waiting_for_a_lock(replier)
    go_on.set()
    assert [f.id for f in deleter.finish()] == [fact.pk]
    message_id = replier.finish()
    assert lines(space) == {str(message_id): None}


def test_without_transcript_retention_the_agents_lines_of_a_transcript_are_not_kept(client_a, space_a):
    url = reverse("transcript-ingest", args=[space_a.external_id]) + "?wait=true"
    transcript = [{"role": "customer", "content": FACT}, {"role": "agent", "content": QUOTING}]
    response = client_a.post(url, {"session_id": "ingested", "messages": transcript}, format="json")
    assert response.status_code == 201, response.content
    assert list(lines(space_a).values()) == [None]  # as a reply's: only its digest
    assert [c["content"] for c in response.json()["created"] if c["kind"] != "topic"] == [FACT]
