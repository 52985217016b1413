"""A space's facts stored as the writer stores them, and what a database dump would show of their vectors (the
per-space vector keying's tests and its benchmark)."""

from __future__ import annotations

import numpy as np

from memory.models import Memory
from memory.text.analysis import search_tokens
from memory.text.digests import keyword_digests
from memory.text.embeddings import stored_vector
from memory.text.vectors import SpaceRotation, embed_for_space, into_space, public_mixer, rotation_from_key
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


def sorted_magnitudes(rows: np.ndarray) -> np.ndarray:
    """What a keyed signed permutation leaves unchanged: each row's coordinates' sizes, in order."""
    return np.sort(np.abs(rows), axis=1)


def invariant_attack_hits(stored: np.ndarray, guesses: np.ndarray) -> np.ndarray:
    """An attacker who knows the construction and the public mixer: strip public mixing steps from
    the stored rows and from the guesses, and match rows to guesses by the magnitudes a keyed signed
    permutation cannot hide. The rows each of those six strategies matches to their own guess."""
    mixer = public_mixer()
    hits = []
    for stored_side in (stored, stored @ mixer.T):
        for guess_side in (guesses, guesses @ mixer, guesses @ mixer @ mixer):
            distance = np.linalg.norm(
                sorted_magnitudes(stored_side)[:, None, :] - sorted_magnitudes(guess_side)[None, :, :], axis=2
            )
            hits.append(int(np.sum(np.argmin(distance, axis=1) == np.arange(len(stored)))))
    return np.array(hits)


def as_stored(rows: np.ndarray) -> np.ndarray:
    return rows.astype(np.float16).astype(np.float32)  # the halfvec column's rounding


def keyed_signed_permutation(key: bytes) -> SpaceRotation:
    """The transform without its mixing rounds: what the mixer is there to prevent."""
    rotation = rotation_from_key(key)
    return SpaceRotation(permutations=rotation.permutations[:1], signs=rotation.signs[:1])


def nearest_row_hits(stored: np.ndarray, guesses: np.ndarray) -> int:
    """The dump attack: each guess's nearest stored row, counted when it is the guess's own."""
    return int(np.sum(np.argmax(guesses @ stored.T, axis=1) == np.arange(len(guesses))))
