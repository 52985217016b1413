"""``subject_words(terms)``: which of a sentence's words could name what it is about, learned from labelled words.

A statement whose attribute the reading does not name ("other") takes its topic from its own words. A topic
names a subject — "adoption", "conference", "studio", "family" — never a filler: a verb ("provide",
"symbolize", "check"), an evaluation ("special", "glad"), an adverb or a chat word ("kinda", "whoa"). Suffix
rules told a verb from a noun in four languages; this reads the word's meaning in any language the bundled
model knows.

A logistic regression over the bundled model's embedding of the word (as a query: the vector grounding's
value-word reading already embedded), trained by ``python -m eval.topic_words train`` on
``eval/data/understanding/topic_words_train.jsonl`` (seven languages) with its regularisation chosen on folds
that each hold out one language; scored on seven languages it never saw (``make eval``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.understanding.linear_head import head_probabilities
from memory.understanding.value_words import word_vectors

WEIGHTS = Path(__file__).with_name("topic_words.npz")
THRESHOLD = 0.5


def subject_probabilities(terms: list[str]) -> np.ndarray:
    """The probability that each term names a subject (one embedding batch for them all)."""
    if not terms:
        return np.zeros(0, dtype=np.float32)
    return head_probabilities(WEIGHTS, word_vectors(terms))


def subject_words(terms: list[str]) -> set[str]:
    distinct = list(dict.fromkeys(terms))
    return {t for t, p in zip(distinct, subject_probabilities(distinct), strict=True) if p >= THRESHOLD}
