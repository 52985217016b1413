"""What a cold space costs the per-space vector transform, before (dense Haar rotation per space) and
after (keyed signed permutations around a public mixer), and what the dump-guess attack finds.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m bench.vector_rotation

Prints a Markdown table (docs/decisions/0006-vectors-keyed-per-space.md quotes it); writes nothing.
"""

from __future__ import annotations

import hashlib
import os
import sys

import numpy as np

from bench.harness import machine_line, median, percentile, setup_django, throwaway_database, timed

DIMENSIONS = 384


def _timings(fn, rounds: int) -> list[float]:
    fn()
    return [timed(fn) for _ in range(rounds)]


def _row(label: str, values: list[float]) -> str:
    return f"| {label} | {median(values):.3f} | {percentile(values, 95):.3f} |"


def transform_costs(rounds: int) -> list[str]:
    from cryptography.hazmat.primitives.hashes import SHA256
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    from memory.text.vectors import DENSE_ROTATION_INFO_V1, dense_rotation_v1, public_mixer, rotation_from_key

    public_mixer()
    keys = [os.urandom(32) for _ in range(rounds)]
    key_iter = iter(keys * 4)
    seed = HKDF(algorithm=SHA256(), length=32, salt=None, info=DENSE_ROTATION_INFO_V1).derive(keys[0])
    words = np.frombuffer(hashlib.shake_256(seed).digest(DIMENSIONS * DIMENSIONS * 8), dtype="<u4")
    uniform = (words.astype(np.float64) + 0.5) / 2.0**32
    gaussian = (np.sqrt(-2.0 * np.log(uniform[0::2])) * np.cos(2.0 * np.pi * uniform[1::2])).reshape(
        DIMENSIONS, DIMENSIONS
    )
    dense, structured = dense_rotation_v1(keys[0]), rotation_from_key(keys[0])
    rng = np.random.default_rng(0)
    one, batch = (rng.standard_normal((n, DIMENSIONS)).astype(np.float32) for n in (1, 64))
    return [
        _row("before: key → SHAKE-256 stream (1.2 MB)", _timings(lambda: hashlib.shake_256(seed).digest(DIMENSIONS * DIMENSIONS * 8), rounds)),
        _row("before: Box-Muller (73,728 pairs)", _timings(lambda: np.sqrt(-2.0 * np.log(uniform[0::2])) * np.cos(2.0 * np.pi * uniform[1::2]), rounds)),
        _row("before: QR of 384 × 384 + sign fix", _timings(lambda: np.linalg.qr(gaussian), rounds)),
        _row("before: derive, whole", _timings(lambda: dense_rotation_v1(next(key_iter)), rounds)),
        _row("after: derive, whole (HKDF, SHAKE-256 12.5 kB, 4 argsorts)", _timings(lambda: rotation_from_key(next(key_iter)), rounds)),
        _row("before: apply to 1 vector", _timings(lambda: one @ dense, rounds * 10)),
        _row("after: apply to 1 vector", _timings(lambda: structured.apply(one), rounds * 10)),
        _row("before: apply to 64 vectors", _timings(lambda: batch @ dense, rounds * 10)),
        _row("after: apply to 64 vectors", _timings(lambda: structured.apply(batch), rounds * 10)),
        f"| memory per cached space, before / after | {dense.nbytes} B | {structured.nbytes} B |",
    ]  # fmt: skip


def key_costs(spaces: int) -> list[str]:
    """In the database: the data key of a space not in the key cache, and ``into_space`` on a space
    whose data key is cached (as it is once recall has decrypted anything) but whose transform is not."""
    from memory.text import vectors
    from tenants import scope
    from tenants.space_keys import data_key_cache, data_key_for
    from tenants.spaces import create_space
    from tenants.tenant_admin import create_tenant

    tenant = create_tenant(name="Vector bench", slug="vector-bench")
    with scope.tenant_scope(tenant):
        ids = [create_space(tenant=tenant, external_id=f"c-{n}").id for n in range(spaces)]
    query = np.random.default_rng(1).standard_normal((1, DIMENSIONS)).astype(np.float32)
    unwrap, cold_after, cold_before = [], [], []
    for space_id in ids:
        with scope.tenant_scope(tenant, space_id):
            data_key_cache.forget(space_id)
            unwrap.append(timed(lambda space_id=space_id: data_key_for(space_id)))
            vectors.rotation_cache.forget(space_id)
            cold_after.append(timed(lambda space_id=space_id: vectors.into_space(space_id, query)))
            cold_before.append(
                timed(lambda space_id=space_id: query @ vectors.dense_rotation_v1(data_key_for(space_id)))
            )
    return [
        _row("data key not cached: SELECT + AES-GCM unwrap", unwrap),
        _row("before: `into_space`, 1 vector, cold space (key cached)", cold_before),
        _row("after: `into_space`, 1 vector, cold space (key cached)", cold_after),
    ]


def recall_costs(spaces: int = 50) -> list[str]:
    """The service-level recall on spaces of 12 facts, the query's embedding already cached: with the
    space's transform not cached (and the data key cached, as after any earlier request), then cached."""
    from memory.models import Memory
    from memory.recall.search import recall
    from memory.text import vectors
    from memory.text.analysis import search_tokens
    from memory.text.digests import keyword_digests
    from memory.text.embeddings import get_embedder
    from tenants import scope
    from tenants.spaces import create_space
    from tenants.tenant_admin import create_tenant
    from tests.support.vectors import FACTS

    tenant = create_tenant(name="Vector recall bench", slug="vector-recall-bench")
    public = get_embedder().embed(FACTS)
    question = "How many vans do they have?"
    cold, warm = [], []
    for n in range(spaces):
        with scope.tenant_scope(tenant):
            space = create_space(tenant=tenant, external_id=f"r-{n}")
        with scope.tenant_scope(tenant, space):
            Memory.objects.bulk_create(
                [
                    Memory(tenant_id=tenant.id, space=space, kind="fact", content=text, embedding=vector,
                           importance=0.5, keyword_digests=keyword_digests(space.id, search_tokens(text)))
                    for text, vector in zip(FACTS, vectors.into_space(space.id, public), strict=True)
                ]
            )  # fmt: skip
            recall(space=space, query=question)  # embeds the question once (cached per space)
            # Warm, cold, warm: whatever else the first calls warm up is not blamed on the transform.
            warm.append(timed(lambda space=space: recall(space=space, query=question)))
            vectors.rotation_cache.forget(space.id)
            cold.append(timed(lambda space=space: recall(space=space, query=question)))
            warm.append(timed(lambda space=space: recall(space=space, query=question)))
    return [
        _row(f"`recall()` in process, transform not cached ({spaces} spaces)", cold),
        _row("`recall()` in process, transform cached", warm),
    ]


def attack_figures(spaces: int = 200) -> list[str]:
    """The dump-guess attack of tests/tenancy/test_vectors_keyed_per_space.py replayed in process over many
    space keys, with the halfvec column's float16 rounding; and how far that rounding moves distances."""
    from memory.text.embeddings import get_embedder
    from memory.text.vectors import dense_rotation_v1, rotation_from_key
    from tests.support.vectors import FACTS, invariant_attack_hits, nearest_row_hits

    public = get_embedder().embed(FACTS)
    keys = [hashlib.sha256(f"attack-{n}".encode()).digest() for n in range(spaces)]
    trials = spaces * len(FACTS)

    def stored(rows):
        return rows.astype(np.float16).astype(np.float32)

    def distance_error(rows):
        rows = stored(rows)
        rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        return float(np.abs(rows @ rows.T - public @ public.T).max())

    dense_keys = keys[:20]  # ~50 ms a key
    dense = sum(nearest_row_hits(stored(public @ dense_rotation_v1(k)), public) for k in dense_keys)
    structured = [stored(rotation_from_key(k).apply(public)) for k in keys]
    after = sum(nearest_row_hits(rows, public) for rows in structured)
    invariant = sum(invariant_attack_hits(rows, public) for rows in structured)  # per strategy
    linked = sum(nearest_row_hits(a, b) for a, b in zip(structured[0::2], structured[1::2], strict=True))
    worst = max(distance_error(rotation_from_key(k).apply(public)) for k in keys)
    return [
        f"| nearest stored row is the guess's own: plain vectors | {nearest_row_hits(stored(public), public)} of 12 |",
        f"| … dense rotation (before), 20 keys | {dense} of {len(dense_keys) * len(FACTS)} (chance 20) |",
        f"| … structured transform (after), {spaces} keys | {after} of {trials} (chance {spaces}) |",
        f"| … after, 'undo the public mixer, compare sorted magnitudes', six strategies | {', '.join(map(str, invariant))} of {trials} each |",
        f"| the same sentences in two spaces, linked row by row (after) | {linked} of {trials // 2} (chance {spaces // 2}) |",
        f"| largest distance change from float16 storage (after, {spaces} keys) | {worst:.1e} |",
    ]


def main(rounds: int = 200, spaces: int = 200) -> str:
    setup_django()
    lines = [f"{machine_line()}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}", ""]
    lines += ["| step | median ms | p95 ms |", "| --- | ---: | ---: |", *transform_costs(rounds)]
    with throwaway_database("engram_bench_vectors"):
        lines += key_costs(spaces)
        lines += recall_costs()
    lines += ["", "| attack (12 sentences per space) | rows matched |", "| --- | ---: |", *attack_figures()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(main(*(int(a) for a in sys.argv[1:])))
