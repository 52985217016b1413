"""``value_words(terms)``: which words name a value a fact turns on, learned from labelled words.

A rewrite of what the customer said may bring its own words: "attended" for "went", "journey",
"enjoys", "recently" reword; "dog" for "cat", "painting" for "pottery", "sister", "vet" state a thing,
kind, activity or person the customer must have named. Grounding lets an entry bring the first kind
and refuses the second (``memory.extraction.grounding``), and refuses an entry that leaves out such a
word of the words it rewrites ("My sister adopted a greyhound" is not "adopted a greyhound").

A logistic regression over the bundled model's embedding of the word (as a query), trained by
``python -m eval.value_words train`` on ``eval/data/grounding/words_train.jsonl`` (six languages) with
its regularisation chosen on folds that each hold out one language; the weights are plain arrays in
``value_words.npz``, so inference needs numpy alone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.text.analysis import remembered_space_key
from memory.understanding.linear_head import head_probabilities

WEIGHTS = Path(__file__).with_name("value_words.npz")
THRESHOLD = 0.5
# Cosine similarity of two words' embeddings (as queries) from which one is the other reworded: "kid" and
# "child" 0.97, "uni" and "university" 0.95, "дочка" and "дочь" 0.96, while a swapped value of the same kind
# stays below ("husband" and "wife" 0.91, "tea" and "coffee" 0.89, "cat" and "dog" 0.90).
SYNONYM_SIMILARITY = 0.94


def word_vectors(terms: list[str]) -> np.ndarray:
    from memory.text.embeddings import local_embedder

    return local_embedder().embed(list(terms), query=True, cache_scope=remembered_space_key()).astype(np.float32)


def value_probabilities(terms: list[str]) -> np.ndarray:
    """The probability that each term names a value (one embedding batch for them all)."""
    if not terms:
        return np.zeros(0, dtype=np.float32)
    return head_probabilities(WEIGHTS, word_vectors(terms))


def value_words(terms: list[str]) -> set[str]:
    distinct = list(dict.fromkeys(terms))
    return {t for t, p in zip(distinct, value_probabilities(distinct), strict=True) if p >= THRESHOLD}


def reworded(terms: list[str], others: list[str]) -> set[str]:
    """The terms that say one of ``others`` in other words ("child" for "kid")."""
    if not terms or not others:
        return set()
    vectors = word_vectors(list(terms) + list(others))
    similarity = vectors[: len(terms)] @ vectors[len(terms) :].T
    return {t for t, row in zip(terms, similarity, strict=True) if float(row.max()) >= SYNONYM_SIMILARITY}
