"""Grounding compares an entry's meaning with the customer's sentences it has at hand first and embeds
the others only when that is not close enough: the same verdict as comparing with every sentence,
without embedding sentences no entry needs."""

from __future__ import annotations

import numpy as np
import pytest

from memory.extraction.engine import Candidate
from memory.extraction.grounding import CustomerSentences, ground
from memory.models import EMBEDDING_DIMENSIONS
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
    assert [texts for texts, _ in embedder.calls] == [[ENTRY, "vehicle"]]
