"""The per-space transform is cheap to derive and still a rotation: distances are the model's, a key
always gives the same transform, and neither a dump's guesser nor someone who knows the construction
(its public mixer included) can match a stored row to its sentence or link it across spaces. Vectors
stored under the first version's dense rotation move to it by migration, and back."""

from __future__ import annotations

import hashlib
import importlib

import numpy as np
import pytest

from memory.models import Memory
from memory.recall.search import recall
from memory.text import vectors
from memory.text.embeddings import get_embedder, stored_vector
from memory.text.vectors import (
    into_space,
    into_space_v1,
    public_mixer,
    rekey_stored_vectors,
    rotation_from_key,
    v1_to_current,
)
from tenants import scope
from tenants.models import SpaceKey
from tenants.space_keys import data_key_cache
from tests.conftest import make_space
from tests.support.vectors import (
    FACTS,
    QUERIES,
    as_stored,
    dumped_vectors,
    invariant_attack_hits,
    keyed_signed_permutation,
    nearest_row_hits,
    store,
)

structured_rotation = importlib.import_module("memory.migrations.0016_vectors_structured_rotation")


def keys(count: int) -> list[bytes]:
    return [hashlib.sha256(f"space-{n}".encode()).digest() for n in range(count)]


@pytest.fixture(scope="module")
def public_facts() -> np.ndarray:
    return get_embedder().embed(FACTS)


def test_the_transform_keeps_every_distance_and_undoes_exactly(public_facts):
    noise = np.random.default_rng(7).standard_normal((64, 384)).astype(np.float32)
    for rows in (public_facts, noise / np.linalg.norm(noise, axis=1, keepdims=True)):
        for key in keys(5):
            rotation = rotation_from_key(key)
            keyed = rotation.apply(rows)
            assert np.abs(keyed @ keyed.T - rows @ rows.T).max() < 1e-5
            assert np.abs(rotation.invert(keyed) - rows).max() < 1e-5
            # ...and a keyed row is nothing like its own model vector.
            assert np.abs(np.sum(keyed * rows, axis=1)).max() < 0.35


def test_a_key_gives_the_same_transform_forever_and_another_key_another():
    first_axis = np.eye(384, dtype=np.float32)[:1]
    rotation = rotation_from_key(bytes(range(32)))
    # Pinned: a numpy or library upgrade that changed these would make every stored vector unreadable.
    assert rotation.permutations[0][:6].tolist() == [135, 303, 305, 293, 25, 183]
    assert np.allclose(
        rotation.apply(first_axis)[0, :4], [0.05630548, -0.00653995, -0.06528093, -0.07398242], atol=1e-6
    )
    other = rotation_from_key(bytes(range(1, 33)))
    assert np.abs(rotation.apply(first_axis) @ other.apply(first_axis).T).max() < 0.25


def test_a_cached_space_costs_kilobytes_not_the_matrix():
    rotation = rotation_from_key(bytes(32))
    assert rotation.nbytes <= 10 * 1024
    assert public_mixer().nbytes == 384 * 384 * 4  # once per process, shared by every space


def test_an_attacker_who_knows_the_construction_matches_rows_no_better_than_chance(public_facts):
    naive, invariant, unmixed = 0, np.zeros(6, int), np.zeros(6, int)
    for key in keys(20):
        stored = as_stored(rotation_from_key(key).apply(public_facts))
        naive += nearest_row_hits(stored, public_facts)
        invariant += invariant_attack_hits(stored, public_facts)
        unmixed += invariant_attack_hits(as_stored(keyed_signed_permutation(key).apply(public_facts)), public_facts)
    # Chance is 1 in 12 (20 of 240); 45 is more than five standard deviations above it, for the
    # naive attack and for the best of the six invariant strategies.
    assert naive <= 45, naive
    assert invariant.max() <= 45, invariant
    # The same invariant attack on a keyed signed permutation alone (no mixing) finds every row.
    assert unmixed.max() >= 20 * len(FACTS) - 2, unmixed


def test_the_same_sentences_in_two_spaces_are_not_linked_row_by_row(public_facts):
    linked, invariant, trials = 0, np.zeros(6, int), 0
    pairs = keys(20)
    for first, second in zip(pairs[0::2], pairs[1::2], strict=True):
        a = as_stored(rotation_from_key(first).apply(public_facts))
        b = as_stored(rotation_from_key(second).apply(public_facts))
        linked += nearest_row_hits(a, b)
        invariant += invariant_attack_hits(a, b)
        trials += len(FACTS)
    assert linked <= 25, f"{linked} of {trials} rows linked"  # chance: 10 of 120
    assert invariant.max() <= 25, invariant


@pytest.mark.django_db
def test_the_migration_moves_dense_keyed_vectors_to_the_structured_transform_and_back(tenant_a, public_facts):
    space = make_space(tenant_a, "stored-before")
    with scope.tenant_scope(tenant_a, space):
        dense = into_space_v1(space.id, public_facts)
        structured = into_space(space.id, public_facts)
    store(space, FACTS, keyed_vectors=dense)
    _, before = dumped_vectors(space)

    structured_rotation.to_structured(None, None)
    contents, moved = dumped_vectors(space)
    order = [FACTS.index(content) for content in contents]  # dumped rows come in id order
    # Two float16 roundings (in the old basis, then in the new one): far below any threshold.
    assert np.abs(moved - structured[order]).max() < 3e-3
    for query, fact in zip(QUERIES[:3], FACTS[:3], strict=True):
        with scope.tenant_scope(tenant_a, space):
            # What the migration must keep is the vectors' order by distance: the bounds alone rank by it.
            hits = recall(space=space, query=query, limit=3, overrides={"relevance_gate": False}).hits
            assert hits[0]["content"] == fact

    structured_rotation.to_dense(None, None)
    _, back = dumped_vectors(space)
    assert np.abs(back - before).max() < 3e-3


@pytest.mark.django_db
def test_rekeying_leaves_the_rows_of_a_space_whose_key_is_gone_untouched(tenant_a, space_a, space_a2, public_facts):
    store(space_a, FACTS[:3], public_facts[:3])
    store(space_a2, FACTS[:3], public_facts[:3])
    before = raw_vectors(space_a)
    with scope.tenant_scope(tenant_a, space_a):
        SpaceKey.objects.filter(space=space_a).delete()
    data_key_cache.clear()
    vectors.rotation_cache.clear()

    assert rekey_stored_vectors(v1_to_current) == 3  # only the space that still has its key
    assert np.array_equal(raw_vectors(space_a), before)


def raw_vectors(space) -> np.ndarray:
    """The stored vectors alone (without the data key the text no longer decrypts)."""
    with scope.tenant_scope(space.tenant_id, space):
        rows = Memory.objects.filter(space_id=space.id).order_by("id").values_list("embedding", flat=True)
        return np.stack([stored_vector(row) for row in rows])
