"""What one turn request costs: one embedding of the customer's message for everything, and a small,
bounded number of SQL statements — with the same answers as before.

De-duplication reads its nearest statements without their vectors (``defer("embedding")`` in
``MemoryWriter.updated_by``): no update, correction, held-back entry or merge loads a deferred vector row
by row, and a superseded memory keeps its own vector."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memory.models import Memory, Turn
from memory.recall import search
from memory.turns.pipeline import run_turn
from memory.turns.sequence import take_turn
from tenants import scope
from tests.support.worker import queued, work

pytestmark = pytest.mark.django_db

KNOWN = ["We run a fleet of four vans.", "Our renewal is in May.", "We never deliver on Sundays."]
# A plain turn request (no wait): store the message and the turn, check for a forget request, recall.
# Measured 12 before (a forget search for every message, a savepoint around the intake), 9 after.
PLAIN_TURN_STATEMENTS = 9
# The same through HTTP (authentication, the space, the scope): 33 before, 30 with the rate limit
# counted in Django's database cache on this connection; its one statement now runs on its own. 13 since the
# scope is written with SET LOCAL (decision 0030): the authentication's pipelined scope is two statements.
PLAIN_TURN_REQUEST_STATEMENTS = 13
# The worker's two transactions for a new one-sentence fact (claim; then read the turn and its messages,
# lock the space, de-duplicate and write the fact and its topic, record the result, drop the message's text
# and vector): 26 before, 24 once the writer stopped opening a savepoint inside the attempt's.
# The message's vector is read with the messages and dropped in the statement that drops its text.
WORKER_TURN_STATEMENTS = 24


def post_turn(client, space, message, *, wait=False, **extra):
    url = reverse("turn-create", args=[space.external_id]) + ("?wait=true" if wait else "")
    response = client.post(url, {"message": message, **extra}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


@pytest.fixture
def known_space(client_a, space_a):
    for fact in KNOWN:
        post_turn(client_a, space_a, fact, wait=True, session_id="earlier")
    return space_a


def test_a_plain_turn_embeds_the_customers_message_once(client_a, known_space, embedder):
    body = post_turn(client_a, known_space, "How many vans do we have?", session_id="now")
    assert embedder.calls == [(["How many vans do we have?"], False)]
    assert [m["content"] for m in body["memories"]] == ["We run a fleet of four vans."]


def test_a_forget_request_embeds_its_message_and_what_it_names_in_one_call(client_a, known_space, embedder):
    body = post_turn(client_a, known_space, "Please forget that we run four vans.", session_id="now")
    [(texts, query)] = embedder.calls
    assert texts[0] == "Please forget that we run four vans." and len(texts) == len(set(texts)) and not query
    assert [d["content"] for d in body["forgotten"]] == ["We run a fleet of four vans.", "vehicle"]
    # What was forgotten is not handed back in the same turn.
    assert "We run a fleet of four vans." not in [m["content"] for m in body["memories"]]


def test_a_correction_reuses_the_message_vector_for_its_own_text(client_a, known_space, embedder):
    post_turn(client_a, known_space, "Our company makes furniture.", wait=True, session_id="earlier")
    embedder.calls.clear()
    body = post_turn(client_a, known_space, "That's not my company, we don't make furniture.", session_id="now")
    [(texts, _)] = embedder.calls
    assert texts.count("That's not my company, we don't make furniture.") == 1
    assert [d["content"] for d in body["forgotten"] if d["kind"] != "topic"] == ["Our company makes furniture."]


def test_the_turns_recall_is_the_recall_of_its_message(client_a, known_space):
    """The shared vector changes nothing: the turn recalls exactly what recall alone finds for the message."""
    message = "How many vans do we run?"
    body = post_turn(client_a, known_space, message, session_id="now")
    with scope.tenant_scope(known_space.tenant_id, known_space):
        alone = search.recall(space=known_space, query=message)
    assert [(m["id"], m["score"]["distance"]) for m in body["memories"]] == [
        (str(h["id"]), h["score"]["distance"]) for h in alone.hits
    ]
    assert body["prompt"] == alone.prompt
    assert "We run a fleet of four vans." in {m["content"] for m in body["memories"]}


def test_a_repeated_message_is_not_checked_for_forgetting_again_and_embeds_once(client_a, known_space, embedder):
    post_turn(client_a, known_space, "Please forget that we run four vans.", session_id="now")
    embedder.calls.clear()
    again = post_turn(client_a, known_space, "Please forget that we run four vans.", session_id="now")
    # One call, for the recall. It is made before the message is stored (the vector goes into the same
    # insert), when it is not known yet to be a replay, so it carries what a forget check would match too.
    [(texts, query)] = embedder.calls
    assert texts[0] == "Please forget that we run four vans." and not query
    assert "forgotten" not in again


def test_a_plain_message_does_not_search_for_something_to_forget(known_space, embedder):
    with scope.tenant_scope(known_space.tenant_id, known_space):
        taken = take_turn(space=known_space, message="Our depot is in Brno.", actor="test", recall=False)
    assert embedder.calls == []  # nothing to recall, nothing a rule could delete: no vector needed
    assert taken.forgot is not None and taken.forgot.forgotten == [] and not taken.forgot.is_forget_request
    with scope.tenant_scope(known_space.tenant_id, known_space):
        assert Memory.objects.exclude(kind="topic").count() == len(KNOWN)


def test_the_embedding_engine_down_still_stores_the_turn_and_never_mines_a_forget_request(settings, client_a, space_a):
    settings.ENGRAM_EMBEDDING_ENGINE = "openai"
    settings.ENGRAM_EMBEDDING_BASE_URL = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
    settings.ENGRAM_MODEL_MAX_RETRIES = 0
    body = post_turn(client_a, space_a, "Please forget my phone number.", session_id="now")
    assert body["status"] == "queued" and body["memories"] == []
    assert "vector search skipped" in body["recall_warning"]
    assert "forgotten" not in body  # nothing could be matched; nothing claimed
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert Turn.objects.get(pk=body["turn_id"]).forget_handled


def test_a_plain_turn_makes_a_small_bounded_number_of_statements(known_space):
    with scope.tenant_scope(known_space.tenant_id, known_space):
        take_turn(space=known_space, message="Hello again.", actor="test", session_id="now")  # the session exists
        with CaptureQueriesContext(connection) as queries:
            taken = take_turn(space=known_space, message="How many vans do we have?", actor="test", session_id="now")
    assert taken.receipt.is_new and taken.recalled.hits
    assert len(queries.captured_queries) <= PLAIN_TURN_STATEMENTS, "\n".join(q["sql"] for q in queries)


def test_a_plain_turn_request_makes_a_small_bounded_number_of_statements(client_a, known_space):
    post_turn(client_a, known_space, "Hello again.", session_id="now")
    with CaptureQueriesContext(connection) as queries:
        body = post_turn(client_a, known_space, "How many vans do we have?", session_id="now")
    assert body["memories"]
    assert len(queries.captured_queries) <= PLAIN_TURN_REQUEST_STATEMENTS, "\n".join(q["sql"] for q in queries)


def test_the_workers_pipeline_for_a_one_sentence_turn_makes_a_small_bounded_number_of_statements(known_space):
    with scope.tenant_scope(known_space.tenant_id, known_space):
        turn = take_turn(space=known_space, message="Our depot is in Brno.", actor="test", session_id="now").turn
    with CaptureQueriesContext(connection) as queries:
        assert run_turn(tenant_id=known_space.tenant_id, space_id=known_space.id, turn_id=turn.id) == "done"
    assert len(queries.captured_queries) <= WORKER_TURN_STATEMENTS, "\n".join(q["sql"] for q in queries)


# The worker's statements for a turn that supersedes one fact with an update (claim; read the turn,
# its messages; lock; de-duplicate, write, supersede; record; drop the text): 27 with the neighbours'
# vectors read and 27 without them.
SUPERSESSION_TURN_STATEMENTS = 27


def vectors_by_content(space) -> dict[str, np.ndarray]:
    with scope.tenant_scope(space.tenant_id, space):
        return {
            m.content: np.asarray(m.embedding, dtype=np.float32)
            for m in Memory.objects.filter(space=space, kind="fact")
        }


def worked(space, message, session_id):
    turn = queued(space, message, session_id=session_id)
    with CaptureQueriesContext(connection) as queries:
        assert work(space, turn) == "done"
    sql = [query["sql"] for query in queries.captured_queries]
    # Django loads a deferred field with its own SELECT of the primary key and that one column.
    deferred_loads = [s for s in sql if s.startswith('SELECT "memory_memory"."id", "memory_memory"."embedding" FROM')]
    assert not deferred_loads, "\n".join(deferred_loads)
    return sql


def current_and_superseded(space):
    with scope.tenant_scope(space.tenant_id, space):
        facts = Memory.objects.filter(space=space, kind="fact")
        return (
            sorted(m.content for m in facts if m.superseded_by_id is None),
            sorted(m.content for m in facts if m.superseded_by_id is not None),
        )


def test_an_update_supersedes_without_loading_a_vector_and_the_old_row_keeps_its_own(space_a):
    worked(space_a, "We have 12 employees.", "s1")
    before = vectors_by_content(space_a)
    sql = worked(space_a, "We have 15 employees.", "s2")
    assert current_and_superseded(space_a) == (["We have 15 employees."], ["We have 12 employees."])
    assert np.array_equal(vectors_by_content(space_a)["We have 12 employees."], before["We have 12 employees."])
    assert len(sql) <= SUPERSESSION_TURN_STATEMENTS, "\n".join(sql)


def test_a_correction_supersedes_without_loading_a_vector(space_a):
    worked(space_a, "I live in Leeds.", "s1")
    worked(space_a, "Correction: I moved to York last month.", "s2")
    current, superseded = current_and_superseded(space_a)
    assert superseded == ["I live in Leeds."], current


@override_settings(ENGRAM_TURN_MAX_SUPERSESSIONS=1)
def test_an_entry_held_back_past_the_turns_limit_loads_no_vector_either(space_a):
    worked(space_a, "We have 12 employees. We run 4 vans.", "s1")
    before = vectors_by_content(space_a)
    worked(space_a, "We have 15 employees. We run 6 vans.", "s2")
    current, superseded = current_and_superseded(space_a)
    assert len(superseded) == 1 and len(current) == 3  # one updated, one written beside its old value
    for content in superseded:
        assert np.array_equal(vectors_by_content(space_a)[content], before[content])


def test_a_restatement_merges_and_keeps_the_earlier_wording_with_its_vector(space_a):
    worked(space_a, "We have 40 employees.", "s1")
    before = vectors_by_content(space_a)
    worked(space_a, "We have 40 employees in total.", "s2")
    current, superseded = current_and_superseded(space_a)
    assert current == ["We have 40 employees in total."] and superseded == ["We have 40 employees."]
    # The history row is a copy of the merged row as it was: its vector is the earlier wording's.
    assert np.array_equal(vectors_by_content(space_a)["We have 40 employees."], before["We have 40 employees."])
