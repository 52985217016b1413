"""Attacks on the reused message vector and on grounding with the sentences at hand."""

from __future__ import annotations

import datetime

import numpy as np
import pytest
from django.utils import timezone

from memory.extraction.engine import Candidate
from memory.extraction.grounding import CustomerSentences, ground
from memory.models import EMBEDDING_DIMENSIONS, Message, Turn
from memory.text import vectors
from memory.text.analysis import split_sentences
from memory.text.embeddings import CachingEmbedder, EmbeddingUnavailable, finite_unit_vectors
from memory.turns import pipeline
from memory.turns.sequence import take_turn
from tenants import scope
from tests.support.worker import pending_vector, queued, work

SAID = "Thanks so much. We run a fleet of four vans. Our renewal is in May."


def fact(content: str, quote: str | None = None) -> Candidate:
    return Candidate(kind="fact", content=content, topic="x", importance=0.5, keywords=[], quote=quote or content)


def verdict(result):
    kept, dropped = result
    return [g.candidate.content for g in kept], sorted((r.candidate.content, r.reason) for r in dropped)


@pytest.mark.parametrize("seed", range(40))
def test_lazy_sentences_give_the_old_verdict_for_any_split(seed):
    """Random (hostile) entry vectors near and far from random sentence vectors, any split at hand/rest."""
    rng = np.random.default_rng(seed)
    sentences = split_sentences(SAID)
    base = rng.normal(size=(len(sentences), EMBEDDING_DIMENSIONS)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    candidates, cvecs = [], []
    for _ in range(6):
        s = rng.integers(len(sentences))
        noise = rng.normal(size=EMBEDDING_DIMENSIONS).astype(np.float32) * rng.choice([0.0, 0.02, 0.05, 0.1, 1.0])
        v = base[s] + noise
        candidates.append(fact(sentences[s]))
        cvecs.append(v / np.linalg.norm(v))
    cvecs = np.stack(cvecs)
    old = verdict(ground(candidates, cvecs, SAID, base))
    mask = rng.random(len(sentences)) < 0.5
    at_hand, rest = base[mask], base[~mask]
    lazy = CustomerSentences(
        at_hand if len(at_hand) else np.zeros((0, EMBEDDING_DIMENSIONS), np.float32),
        (lambda: rest) if len(rest) else None,
    )
    assert verdict(ground(candidates, cvecs, SAID, lazy)) == old


class Scripted:
    name = "review-scripted"

    def __init__(self, per_text):
        self.per_text = per_text

    def extract(self, message):
        return self.per_text(message.text)


ODD_TEXTS = [
    "",
    "   ",
    "We run vans. We run vans. We run vans.",
    "我们有四辆货车。我们的续约在五月。我们有四辆货车。",
    "弊社はバンを四台持っています。契約更新は五月です。",
    "a",
    "We run a fleet of four vans.  ",
    "Ok.\n\n\nWe run a fleet of four vans.\n",
]


@pytest.mark.django_db
@pytest.mark.parametrize("text", ODD_TEXTS)
def test_analyse_on_odd_messages_matches_the_old_rule_and_does_not_crash(space_a, monkeypatch, text):
    """A hostile model answers every message with one entry per sentence (and one that is the whole
    text, and one that means nothing said): the verdict equals the old rule's (all sentences embedded)."""

    def entries(t):
        parts = split_sentences(t) or [t]
        out = [fact(p) for p in parts if p] + ([fact(t)] if t else [])
        return out + [fact("The customer owns a submarine.", quote=parts[0] or "x")]

    monkeypatch.setattr(pipeline, "get_extractor", lambda: Scripted(entries))
    with scope.tenant_scope(space_a.tenant_id, space_a):
        message = Message(space_id=space_a.id, content=text, sent_at=timezone.now())
        known = {text: vectors.embed_for_space(space_a.id, [text])[0]} if text else {}
        _, grounded, rejected = pipeline.analyse([message], known)
        new = ([g.candidate.content for g in grounded[0]], sorted((r.candidate.content, r.reason) for r in rejected))
        candidates = entries(text)
        sentences = split_sentences(text) or [text]
        old = verdict(
            ground(
                candidates,
                vectors.embed_for_space(space_a.id, [c.content for c in candidates]),
                text,
                vectors.embed_for_space(space_a.id, sentences),
            )
        )
    assert new[0] == old[0]
    # reasons carry the distance with 2 decimals; compare without the numbers' last digit noise
    assert [c for c, _ in new[1]] == [c for c, _ in old[1]]


@pytest.mark.django_db
def test_analyse_with_no_messages_and_with_an_empty_batch(space_a):
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert pipeline.analyse([], None) == ([], [], [])


@pytest.mark.django_db
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


@pytest.mark.django_db
def test_a_replayed_forget_request_forgets_nothing_more_and_keeps_no_vector(space_a):
    queued(space_a, "We run a fleet of four vans.", session_id="f0")
    forget = "Please forget that we run four vans."
    turn = queued(space_a, forget, session_id="f1")
    queued(space_a, "We run a fleet of four vans.", session_id="f2")  # said again, after the forget
    with scope.tenant_scope(space_a.tenant_id, space_a):
        replay = take_turn(space=space_a, message=forget, actor="t", session_id="f1")
    assert replay.turn.pk == turn.pk and not replay.forgot
    assert pending_vector(space_a, turn) is None


@pytest.mark.django_db
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


@pytest.mark.django_db
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


@pytest.mark.django_db
def test_a_vector_stored_under_the_previous_model_is_not_used_after_a_model_change(space_a, monkeypatch):
    """A turn queued before an embedding-model deploy and processed after it (before `reembed` runs, or
    racing it): the stored vector passes the unit-norm check, so without the engine's name stored with
    it the worker wrote the new memory with the previous model's vector (review finding, fixed)."""
    from tests.support.worker import current_facts

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


@pytest.mark.django_db
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_non_finite_vector_from_the_embedder_does_not_lose_the_turn(client_a, space_a, monkeypatch, value):
    """A NaN/inf from the embedding endpoint failed the message insert (halfvec refuses NaN) and the
    whole turn was a 400 blaming the caller (review finding, fixed): it is the engine failing, so the
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
