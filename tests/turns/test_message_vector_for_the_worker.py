"""The worker reuses the vector the turn request computed for the customer's message: a one-sentence
turn whose entry is the sentence embeds nothing in the worker, writes what a fresh embedding would, and
the vector is gone once the turn is processed. A vector is only ever used for its own row's exact text:
a replayed message or forget request, a transcript sharing a queued message, re-embedding, a model
changed before the worker runs and an engine answering numbers that are not finite never leave a wrong or
stale vector, nor lose the turn."""

from __future__ import annotations

import datetime

import numpy as np
import pytest
from django.utils import timezone

from memory.forgetting.retention import expire_space
from memory.models import EMBEDDING_DIMENSIONS, Memory, Message, Turn
from memory.text import vectors
from memory.text.embeddings import CachingEmbedder, EmbeddingUnavailable, finite_unit_vectors, stored_vector
from memory.turns import pipeline
from memory.turns.sequence import take_turn
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


def test_a_topics_attribute_name_is_embedded_once_for_every_space_and_stored_in_each_spaces_transform(
    space_a, space_a2, space_b, embedder
):
    for space in (space_a, space_a2, space_b):
        assert work(space, queued(space, SENTENCE)) == "done"

    # "vehicle" is our own word, no customer's: one embedding, without a space's cache scope.
    assert [(texts, options) for texts, options in embedder.calls if "vehicle" in texts] == [(["vehicle"], False)]
    stored = {}
    for space in (space_a, space_a2, space_b):
        with scope.tenant_scope(space.tenant_id, space):
            row = Memory.objects.get(kind="topic", superseded_by=None)
            stored[space.id] = stored_vector(row.embedding)
            assert row.content == "vehicle"
        # What the space would have stored had it embedded the word itself, within a half float's precision.
        assert np.allclose(stored[space.id], fresh(space, "vehicle"), atol=2e-3)
    assert not np.allclose(stored[space_a.id], stored[space_a2.id], atol=0.05)  # each space's own transform


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

    # The topic's attribute name first, on its own and once per process (no space's content); then the message.
    assert [texts for texts, _ in embedder.calls] == [["vehicle"], [SENTENCE]]
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

    # The topics' attribute names ("vehicle", "plan") are embedded on their own, once per process.
    [texts] = [texts for texts, _ in embedder.calls if "Our renewal is in May." in texts]
    assert SENTENCE not in [t for texts, _ in embedder.calls for t in texts]
    facts = current_facts(space_a)
    assert set(facts) == {SENTENCE, "Our renewal is in May."}
    assert np.allclose(facts["Our renewal is in May."], fresh(space_a, "Our renewal is in May."), atol=2e-3)


def test_a_stored_vector_that_is_not_a_unit_vector_is_not_trusted(space_a, embedder):
    turn = queued(space_a, SENTENCE)
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Message.objects.filter(pk__in=turn.message_ids).update(pending_embedding=[0.5] * 384)
    embedder.calls.clear()

    assert work(space_a, turn) == "done"

    # The topic's attribute name first, on its own and once per process (no space's content); then the message.
    assert [texts for texts, _ in embedder.calls] == [["vehicle"], [SENTENCE]]
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


SAID = "Thanks so much. We run a fleet of four vans. Our renewal is in May."


def test_a_replayed_message_keeps_one_row_one_vector_and_is_processed_once(space_a):
    first = queued(space_a, SAID, session_id="r")
    before = pending_vector(space_a, first)
    assert before is not None
    with scope.tenant_scope(space_a.tenant_id, space_a):
        again = take_turn(space=space_a, message=SAID, actor="t", session_id="r").turn
    assert again.pk == first.pk
    assert np.array_equal(pending_vector(space_a, first), before)
    assert work(space_a, first) == "done"
    assert pending_vector(space_a, first) is None
    with scope.tenant_scope(space_a.tenant_id, space_a):
        third = take_turn(space=space_a, message=SAID, actor="t", session_id="r").turn
        assert third.pk == first.pk and Turn.objects.get(pk=first.pk).status == Turn.Status.DONE
        assert Message.objects.filter(pk__in=first.message_ids).count() == 1
    assert pending_vector(space_a, first) is None  # a replay after processing stores no vector again


def test_a_replayed_forget_request_forgets_nothing_more_and_keeps_no_vector(space_a):
    queued(space_a, "We run a fleet of four vans.", session_id="f0")
    forget = "Please forget that we run four vans."
    turn = queued(space_a, forget, session_id="f1")
    queued(space_a, "We run a fleet of four vans.", session_id="f2")  # said again, after the forget
    with scope.tenant_scope(space_a.tenant_id, space_a):
        replay = take_turn(space=space_a, message=forget, actor="t", session_id="f1")
    assert replay.turn.pk == turn.pk and not replay.forgot
    assert pending_vector(space_a, turn) is None


def test_a_transcript_turn_sharing_a_queued_message_leaves_a_usable_state(space_a):
    """The same customer message arrives in a single turn (vector stored) and in a transcript of the same
    session (the row is reused): whichever turn runs first, the other still finishes."""
    from memory.turns import intake
    from memory.turns.sequence import take_transcript

    single = queued(space_a, "We run a fleet of four vans.", session_id="t")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        transcript = take_transcript(
            space=space_a,
            messages=[
                intake.IncomingMessage(
                    role="customer",
                    content="We run a fleet of four vans.",
                    sent_at=timezone.now() - datetime.timedelta(seconds=1),
                ),
                intake.IncomingMessage(role="customer", content="Our renewal is in May."),
            ],
            session_id="t",
        ).turn
    assert work(space_a, transcript) == "done"
    assert work(space_a, single) == "done"


def test_reembedding_clears_pending_vectors_in_every_space_of_the_tenant(space_a, space_a2, space_b):
    from memory.text.reembedding import reembed_tenant

    turns = [(space, queued(space, "We run a fleet of four vans.")) for space in (space_a, space_a2, space_b)]
    reembed_tenant(space_a.tenant_id)
    assert pending_vector(space_a, turns[0][1]) is None
    assert pending_vector(space_a2, turns[1][1]) is None
    assert pending_vector(space_b, turns[2][1]) is not None  # another tenant's: untouched


class NextModel:
    """A different embedding model (the old one's dimensions permuted: unrelated directions)."""

    def __init__(self, inner):
        self.inner, self.name = inner, inner.name + "-next"
        self.order = np.random.default_rng(7).permutation(EMBEDDING_DIMENSIONS)

    def embed(self, texts, *, query=False, **options):
        return np.asarray(self.inner.embed(texts, query=query, **options))[:, self.order]


def test_a_vector_stored_under_the_previous_model_is_not_used_after_a_model_change(space_a, monkeypatch):
    """A turn queued before an embedding-model deploy and processed after it (before `reembed` runs, or
    racing it): the stored vector passes the unit-norm check, so without the engine's name stored with
    it the worker wrote the new memory with the previous model's vector (found and fixed)."""
    turn = queued(space_a, "We run a fleet of four vans.")
    current = vectors.get_embedder()
    monkeypatch.setattr(vectors, "get_embedder", lambda: NextModel(current))
    vectors.get_embedder().embed(["warm"])
    assert work(space_a, turn) == "done"
    with scope.tenant_scope(space_a.tenant_id, space_a):
        expected = vectors.embed_for_space(space_a.id, ["We run a fleet of four vans."])[0]
    stored = current_facts(space_a)["We run a fleet of four vans."]
    assert np.allclose(stored, expected, atol=2e-3), "memory written with the previous model's vector"


class BrokenEndpoint:
    """An embedding engine whose endpoint answers with non-finite numbers (a hostile or broken
    OpenAI-compatible server): its reply goes through the engines' own normalisation, as theirs does."""

    def __init__(self, engine, value):
        self.engine, self.name, self.value = engine, engine.name, value

    def embed(self, texts, *, query=False):
        out = np.array(self.engine.embed(texts, query=query), dtype=np.float32)
        out[:, 0] = self.value
        return finite_unit_vectors(out)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_non_finite_vector_from_the_embedder_does_not_lose_the_turn(client_a, space_a, monkeypatch, value):
    """A NaN/inf from the embedding endpoint failed the message insert (halfvec refuses NaN) and the
    whole turn was a 400 blaming the caller (found and fixed): it is the engine failing, so the
    turn is stored and queued, and recall falls back to keywords."""
    from django.urls import reverse

    broken = CachingEmbedder(BrokenEndpoint(vectors.get_embedder().inner, value))
    monkeypatch.setattr(vectors, "get_embedder", lambda: broken)
    with pytest.raises(EmbeddingUnavailable):
        finite_unit_vectors(np.array([[value, 1.0]], np.float32))
    url = reverse("turn-create", args=[space_a.external_id])
    response = client_a.post(url, {"message": "We run a fleet of four vans."}, format="json")
    assert response.status_code in (200, 201, 202), response.content
    with scope.tenant_scope(space_a.tenant_id, space_a):
        [message] = Message.objects.filter(space=space_a)
    assert message.content == "We run a fleet of four vans." and message.pending_embedding is None
