"""Grounding: every entry, from any engine, must be supported by the customer's own words this turn.

Three checks, all in code, none in the model:
- the entry's supporting quote occurs in the customer's message;
- lexical support: at least half of the entry's content terms (lemmas, or character bigrams for
  Japanese/Chinese/Korean) occur in the customer's message;
- semantic support: the entry's embedding is close to at least one customer sentence (vectors
  come from the turn's single embedding batch).
An entry that fails is rejected with the reason and recorded on the turn.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from memory.extraction import Candidate
from memory.text_analysis import content_terms, detect_language, normalise

MIN_LEXICAL_SUPPORT = 0.5
# Cosine distance to the closest customer sentence (multilingual-e5-small: paraphrases ~0.05,
# unrelated sentences ~0.2+). A topic name is a word, farther from any whole sentence.
MAX_SEMANTIC_DISTANCE = {"topic": 0.25}
DEFAULT_MAX_SEMANTIC_DISTANCE = 0.15


@dataclasses.dataclass
class Grounded:
    candidate: Candidate
    vector: np.ndarray
    lexical_support: float
    semantic_distance: float


@dataclasses.dataclass
class Rejected:
    candidate: Candidate
    reason: str


def lexical_support(content: str, customer_terms: set[str]) -> float:
    terms = content_terms(content, detect_language(content))
    if not terms:
        return 0.0
    return sum(1 for t in terms if t in customer_terms) / len(terms)


def ground(
    candidates: list[Candidate],
    candidate_vectors: np.ndarray,
    customer_text: str,
    sentence_vectors: np.ndarray,
) -> tuple[list[Grounded], list[Rejected]]:
    customer_normalised = normalise(customer_text)
    language = detect_language(customer_text)
    customer_terms = set(content_terms(customer_text, language))
    for other in ("en", "cs", "de", "es", "fr", "ru"):
        if other != language:  # mixed-language messages: lemmatise under each language too
            customer_terms.update(content_terms(customer_text, other))
    grounded, rejected = [], []
    for candidate, vector in zip(candidates, candidate_vectors, strict=True):
        quote = normalise(candidate.quote)
        if not quote:
            rejected.append(Rejected(candidate, "no supporting quote from the customer"))
            continue
        if quote not in customer_normalised:
            rejected.append(Rejected(candidate, "the quote is not in the customer's message"))
            continue
        support = lexical_support(candidate.content, customer_terms)
        if support < MIN_LEXICAL_SUPPORT:
            rejected.append(Rejected(candidate, f"only {support:.0%} of its words are in the customer's message"))
            continue
        distance = float(np.min(1.0 - sentence_vectors @ vector)) if len(sentence_vectors) else 1.0
        limit = MAX_SEMANTIC_DISTANCE.get(candidate.kind, DEFAULT_MAX_SEMANTIC_DISTANCE)
        if distance > limit:
            rejected.append(
                Rejected(candidate, f"its meaning is not close to anything the customer said (distance {distance:.2f})")
            )
            continue
        grounded.append(Grounded(candidate, vector, support, distance))
    return grounded, rejected
