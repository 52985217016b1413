"""Grounding compares an entry's meaning with the customer's sentences it has at hand first and embeds
the others only when that is not close enough: the same verdict as comparing with every sentence,
without embedding sentences no entry needs — for any split between the sentences at hand and the rest,
hostile entry vectors, and odd messages (empty, blank, repeated, CJK, one letter) through the worker's
analysis."""

from __future__ import annotations

import numpy as np
import pytest
from django.utils import timezone

from memory.extraction.engine import Candidate
from memory.extraction.grounding import CustomerSentences, ground
from memory.models import EMBEDDING_DIMENSIONS, Message
from memory.text import vectors
from memory.text.analysis import split_sentences
from memory.turns import pipeline
from tenants import scope
from tests.support.worker import current_facts, queued, work

SAID = "Thanks so much. We run a fleet of four vans."
ENTRY = "We run a fleet of four vans."


def unit(index: int) -> np.ndarray:
    vector = np.zeros(EMBEDDING_DIMENSIONS, np.float32)
    vector[index] = 1.0
    return vector


def fact(content: str) -> Candidate:
    return Candidate(kind="fact", content=content, topic="fleet", importance=0.5, keywords=[], quote=content)


class RestOfTheSentences:
    def __init__(self, vectors):
        self.vectors, self.calls = vectors, 0

    def __call__(self):
        self.calls += 1
        return self.vectors


def test_an_entry_close_to_a_sentence_at_hand_embeds_no_other_sentence():
    rest = RestOfTheSentences(np.stack([unit(1)]))
    kept, dropped = ground([fact(ENTRY)], np.stack([unit(0)]), SAID, CustomerSentences(np.stack([unit(0)]), rest))
    assert [g.candidate.content for g in kept] == [ENTRY] and dropped == []
    assert rest.calls == 0


def test_an_entry_far_from_the_sentences_at_hand_is_compared_with_the_rest_too():
    rest = RestOfTheSentences(np.stack([unit(0)]))
    kept, _ = ground([fact(ENTRY)], np.stack([unit(0)]), SAID, CustomerSentences(np.stack([unit(1)]), rest))
    assert [g.candidate.content for g in kept] == [ENTRY]
    assert rest.calls == 1


def test_an_entry_far_from_every_sentence_is_still_rejected_and_the_rest_embedded_once():
    """A model's entry that quotes the text but means something else: checked against all sentences."""
    rest = RestOfTheSentences(np.stack([unit(2)]))
    sentences = CustomerSentences(np.stack([unit(1)]), rest)
    kept, dropped = ground([fact(ENTRY), fact(ENTRY)], np.stack([unit(0), unit(0)]), SAID, sentences)
    assert kept == [] and len(dropped) == 2
    assert all("not close to anything the customer said" in r.reason for r in dropped)
    assert rest.calls == 1


@pytest.mark.django_db
def test_the_worker_does_not_embed_a_sentence_that_gave_nothing(space_a, embedder):
    turn = queued(space_a, SAID, recall=False)  # the request embedded nothing
    embedder.calls.clear()
    assert work(space_a, turn) == "done"
    assert list(current_facts(space_a)) == [ENTRY]
    # "Thanks so much." gave no entry, and the fact and its topic are close to the fact's own sentence.
    # (the topic's attribute name is embedded on its own, once per process: no space's content)
    assert [texts for texts, _ in embedder.calls] == [["vehicle"], [ENTRY]]


SAID_WITH_A_RENEWAL = "Thanks so much. We run a fleet of four vans. Our renewal is in May."


def fact_quoting(content: str, quote: str | None = None) -> Candidate:
    return Candidate(kind="fact", content=content, topic="x", importance=0.5, keywords=[], quote=quote or content)


def verdict(result):
    kept, dropped = result
    return [g.candidate.content for g in kept], sorted((r.candidate.content, r.reason) for r in dropped)


@pytest.mark.parametrize("seed", range(40))
def test_lazy_sentences_give_the_old_verdict_for_any_split(seed):
    """Random (hostile) entry vectors near and far from random sentence vectors, any split at hand/rest."""
    rng = np.random.default_rng(seed)
    sentences = split_sentences(SAID_WITH_A_RENEWAL)
    base = rng.normal(size=(len(sentences), EMBEDDING_DIMENSIONS)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    candidates, cvecs = [], []
    for _ in range(6):
        s = rng.integers(len(sentences))
        noise = rng.normal(size=EMBEDDING_DIMENSIONS).astype(np.float32) * rng.choice([0.0, 0.02, 0.05, 0.1, 1.0])
        v = base[s] + noise
        candidates.append(fact_quoting(sentences[s]))
        cvecs.append(v / np.linalg.norm(v))
    cvecs = np.stack(cvecs)
    old = verdict(ground(candidates, cvecs, SAID_WITH_A_RENEWAL, base))
    mask = rng.random(len(sentences)) < 0.5
    at_hand, rest = base[mask], base[~mask]
    lazy = CustomerSentences(
        at_hand if len(at_hand) else np.zeros((0, EMBEDDING_DIMENSIONS), np.float32),
        (lambda: rest) if len(rest) else None,
    )
    assert verdict(ground(candidates, cvecs, SAID_WITH_A_RENEWAL, lazy)) == old


class Scripted:
    name = "scripted"

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
        out = [fact_quoting(p) for p in parts if p] + ([fact_quoting(t)] if t else [])
        return out + [fact_quoting("The customer owns a submarine.", quote=parts[0] or "x")]

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
