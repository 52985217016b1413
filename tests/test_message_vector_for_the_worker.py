"""The worker reuses the vector the turn request computed for the customer's message: a one-sentence
turn whose entry is the sentence embeds nothing in the worker, writes what a fresh embedding would, and
the vector is gone once the turn is processed. A vector is only ever used for its own row's exact text."""

from __future__ import annotations

import datetime

import numpy as np
import pytest
from django.utils import timezone

from memory.forgetting.retention import expire_space
from memory.models import Message, Turn
from memory.text import vectors
from tenants import scope
from tenants.models import Space
from tests.support.worker import FLEET, current_facts, make_due, pending_vector, queued, work

pytestmark = pytest.mark.django_db

SENTENCE = "We run a fleet of four vans."


def fresh(space, text):
    return vectors.embed_for_space(space.id, [text])[0]


def test_the_worker_embeds_nothing_for_a_one_sentence_message_the_request_embedded(space_a, embedder):
    turn = queued(space_a, SENTENCE)
    assert pending_vector(space_a, turn) is not None  # stored with the message, in the request
    embedder.calls.clear()

    assert work(space_a, turn) == "done"

    # Neither the fact (the sentence itself) nor the sentence it is grounded in is embedded again; the
    # topic name the extractor proposed (the attribute, #25) is a new text, the one thing left to embed.
    assert [texts for texts, _ in embedder.calls] == [["vehicle"]]
    assert list(current_facts(space_a)) == [SENTENCE]
    assert pending_vector(space_a, turn) is None  # used: vectors of the transcript are not kept


def test_the_entry_written_from_the_stored_vector_is_what_a_fresh_embedding_writes(space_a, space_a2):
    """Same vectors, same de-duplication: one space's worker reuses the request's vectors, the other's
    (``recall=false``: nothing embedded by the request) embeds afresh."""
    said = [SENTENCE, "Our renewal is in May.", SENTENCE, "We run a fleet of five vans.", "Our renewal is in May."]
    outcomes = {}
    for space, reuses in ((space_a, True), (space_a2, False)):
        outcomes[reuses] = []
        for index, text in enumerate(said):
            turn = queued(space, text, session_id=f"s{index}", recall=reuses)
            assert (pending_vector(space, turn) is not None) is reuses
            assert work(space, turn) == "done"
            with scope.tenant_scope(space.tenant_id, space):
                done = Turn.objects.get(pk=turn.pk)
            outcomes[reuses].append((len(done.created_ids), len(done.merged_ids), len(done.superseded_ids)))
    assert outcomes[True] == outcomes[False]
    assert any(merged for _, merged, _ in outcomes[True])  # the repeat was de-duplicated, in both

    reused, embedded = current_facts(space_a), current_facts(space_a2)
    assert set(reused) == set(embedded)
    for text, vector in reused.items():
        # Each space has its own transform, so compare each with a fresh embedding in its own space.
        assert np.allclose(vector, fresh(space_a, text), atol=2e-3)
        assert np.allclose(embedded[text], fresh(space_a2, text), atol=2e-3)


def test_a_message_stored_without_a_vector_is_embedded_by_the_worker(space_a, embedder):
    turn = queued(space_a, SENTENCE, recall=False)  # nothing to recall: the request embeds nothing
    assert pending_vector(space_a, turn) is None and embedder.calls == []

    assert work(space_a, turn) == "done"

    assert [texts for texts, _ in embedder.calls] == [[SENTENCE, "vehicle"]]
    assert list(current_facts(space_a)) == [SENTENCE]


def test_a_retry_after_a_transient_failure_still_reuses_the_vector(space_a, openai_engines, embedder):
    openai_engines.down = True
    turn = queued(space_a, SENTENCE)
    assert work(space_a, turn) == "queued"
    assert pending_vector(space_a, turn) is not None  # kept for the retry

    openai_engines.down = False
    openai_engines.replies = [FLEET]
    make_due(space_a, turn.id)
    embedder.calls.clear()
    assert work(space_a, turn) == "done"

    assert embedder.calls == []  # the model's entry is the sentence, with no topic entry
    assert list(current_facts(space_a)) == [SENTENCE]
    assert pending_vector(space_a, turn) is None


def test_a_turn_that_finally_fails_drops_the_vector(settings, monkeypatch, space_a):
    from memory.turns import pipeline

    settings.ENGRAM_TURN_MAX_ATTEMPTS = 1
    monkeypatch.setattr(pipeline, "analyse", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("a bug")))
    turn = queued(space_a, SENTENCE)

    assert work(space_a, turn) == "failed"  # a crash fails; a model outage waits, then falls back (#28)

    assert pending_vector(space_a, turn) is None


def test_a_vector_serves_only_its_own_rows_exact_text(space_a, embedder):
    """Hostile: the row's vector is replaced by another text's. It is used for that row's exact text (the
    request wrote it with the text, in one insert), never for a different text of the turn."""
    first = queued(space_a, SENTENCE, session_id="s1")
    second = queued(space_a, "Our renewal is in May.", session_id="s1", recall=False)
    with scope.tenant_scope(space_a.tenant_id, space_a):
        turn = Turn.objects.get(pk=first.pk)
        # One turn over both messages, as a transcript is: only the first carries a vector.
        turn.message_ids = [*first.message_ids, *second.message_ids]
        turn.save(update_fields=["message_ids"])
        Turn.objects.filter(pk=second.pk).update(status=Turn.Status.DONE)
    embedder.calls.clear()

    assert work(space_a, turn) == "done"

    [texts] = [texts for texts, _ in embedder.calls]
    assert "Our renewal is in May." in texts and SENTENCE not in texts
    facts = current_facts(space_a)
    assert set(facts) == {SENTENCE, "Our renewal is in May."}
    assert np.allclose(facts["Our renewal is in May."], fresh(space_a, "Our renewal is in May."), atol=2e-3)


def test_a_stored_vector_that_is_not_a_unit_vector_is_not_trusted(space_a, embedder):
    turn = queued(space_a, SENTENCE)
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Message.objects.filter(pk__in=turn.message_ids).update(pending_embedding=[0.5] * 384)
    embedder.calls.clear()

    assert work(space_a, turn) == "done"

    assert [texts for texts, _ in embedder.calls] == [[SENTENCE, "vehicle"]]
    assert np.allclose(current_facts(space_a)[SENTENCE], fresh(space_a, SENTENCE), atol=2e-3)


def test_another_spaces_message_and_its_vector_are_never_used(space_a, space_a2, embedder):
    """Hostile: a turn of one space names a message of another space of the same tenant (which carries a
    vector in that space's transform). The worker of the first space neither reads it nor mines it."""
    theirs = queued(space_a2, SENTENCE)
    ours = queued(space_a, "Hello!")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Turn.objects.filter(pk=ours.pk).update(message_ids=theirs.message_ids)
    embedder.calls.clear()

    assert work(space_a, ours) == "done"

    assert embedder.calls == [] and current_facts(space_a) == {}
    assert pending_vector(space_a2, theirs) is not None  # untouched: it is the other space's turn's
    assert work(space_a2, theirs) == "done"
    assert list(current_facts(space_a2)) == [SENTENCE]


def test_a_forget_request_keeps_neither_its_text_nor_its_vector(space_a):
    queued(space_a, SENTENCE)
    turn = queued(space_a, "Please forget that we run four vans.", session_id="later")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        [message] = Message.objects.filter(pk__in=turn.message_ids)
    assert message.content is None and message.pending_embedding is None
    # Nothing to mine and nothing to embed: the worker finishes the turn (it crashed on an empty turn once).
    assert work(space_a, turn) == "done"


def test_retention_drops_the_vector_with_the_text(space_a):
    turn = queued(space_a, SENTENCE)
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Message.objects.filter(pk__in=turn.message_ids).update(sent_at=timezone.now() - datetime.timedelta(days=400))
        report = expire_space(Space.objects.select_related("tenant").get(pk=space_a.pk))
    assert report.transcript_lines == 1
    assert pending_vector(space_a, turn) is None
