"""A space's facts stored as the writer stores them, and what a database dump would show of their vectors (the
per-space vector keying's tests and its benchmark)."""

from __future__ import annotations

import numpy as np

from memory.models import Memory
from memory.text.analysis import search_tokens
from memory.text.digests import keyword_digests
from memory.text.embeddings import stored_vector
from memory.text.vectors import embed_for_space, into_space
from tenants import scope

FACTS = [
    "We run four delivery vans out of our Brno depot.",
    "Our contract renewal is in June.",
    "Please always send invoices to billing@alice.example.",
    "The warehouse closes at six in the evening.",
    "Our biggest customer is a bakery chain in Vienna.",
    "We pay suppliers within thirty days.",
    "The company was founded in 1998 by two brothers.",
    "Our drivers do not work on Sundays.",
    "We would like a quote for refrigerated transport.",
    "Our office moved to Olomouc last spring.",
    "Ninety people work for us.",
    "We export mostly to Poland and Slovakia.",
]
QUERIES = [
    "How many vans do they have?",
    "When is the contract renewal?",
    "Where do invoices go?",
    "When does the warehouse close?",
    "Who founded the company?",
    "Which countries do they export to?",
]


def store(space, texts=FACTS, public_vectors=None, *, keyed_vectors=None) -> list[Memory]:
    """Rows as the writer stores them; ``public_vectors`` (the model's vectors of ``texts``) saves
    embedding the same sentences again for every space; ``keyed_vectors`` are stored as given."""
    with scope.tenant_scope(space.tenant_id, space):
        if keyed_vectors is not None:
            vectors = keyed_vectors
        elif public_vectors is None:
            vectors = embed_for_space(space.id, texts)
        else:
            vectors = into_space(space.id, public_vectors)
        return Memory.objects.bulk_create(
            [
                Memory(tenant_id=space.tenant_id, space=space, kind="fact", content=text, embedding=vector,
                       importance=0.5, keyword_digests=keyword_digests(space.id, search_tokens(text)))
                for text, vector in zip(texts, vectors, strict=True)
            ]
        )  # fmt: skip


def dumped_vectors(space) -> tuple[list[str], np.ndarray]:
    """What a database dump holds for the space: the stored halfvec rows (and, for scoring, which row is which)."""
    with scope.tenant_scope(space.tenant_id, space):
        rows = list(Memory.objects.filter(space=space).order_by("id"))
    return [r.content for r in rows], np.stack([stored_vector(r.embedding) for r in rows])
