"""Recall server time and correctness at scale.

Fills a throw-away database with N memories over S spaces of one tenant (binary COPY, real
per-space encryption and blind-index digests, random unit vectors), plus three probe spaces of
5, 500 and 5,000 memories inside the same table, then measures:
- recall server time (the ``recall()`` service, as the API calls it) p50/p95 without the query
  embedding (a fixed query vector) and with the local engine embedding the query;
- the query plan of the vector strategy;
- correctness: the served vector top-k against an exact numpy scan of the same space.

Usage: ``python -m bench.recall_scale 100000 1000`` (rows, spaces); ``make bench`` runs 100k/1k.
"""

from __future__ import annotations

import datetime
import re
import sys
import time
import uuid

import numpy as np

from bench.harness import median, percentile, setup_django, throwaway_database, timed, write_section

PROBE_SIZES = (5, 500, 5000)
K = 10
DIM = 384


def unit_vectors(rng, n):
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float16)


def fill(tenant, spaces_and_counts, rng, progress):
    """COPY ``count`` memories into each space; returns {space_id: (ids, vectors)} for the probes."""
    from django.db import connection
    from pgvector import HalfVector
    from pgvector.psycopg import register_vector

    from memory.text.digests import keyword_digests
    from tenants import scope
    from tenants.encrypted_fields import associated_data, seal
    from tenants.space_keys import data_key_cache, data_key_for

    kept = {}
    now = datetime.datetime.now(datetime.UTC)
    total = sum(c for _, c in spaces_and_counts)
    done = 0
    words = ["van", "renewal", "invoice", "depot", "driver", "pallet", "route", "contract", "delivery", "fleet"]
    with scope.tenant_scope(tenant):
        # Every data key first, and all of them kept in the cache (digests read it): no other query
        # may run on the connection while COPY is open.
        data_key_cache.max_entries = max(data_key_cache.max_entries, len(spaces_and_counts) + 16)
        keys = {space.id: data_key_for(space.id) for space, _ in spaces_and_counts}
        raw = connection.connection
        register_vector(raw)
        columns = (
            "id, tenant_id, space_id, kind, content, topic, topic_digest, keyword_digests, embedding, "
            "importance, mention_count, created_at, updated_at"
        )
        with raw.cursor() as cursor:
            # COPY is refused on a table under row-level security: copy into a temporary table,
            # then INSERT ... SELECT, which the policies check row by row.
            cursor.execute("CREATE TEMP TABLE memory_staging (LIKE memory_memory INCLUDING DEFAULTS) ON COMMIT DROP")
            with cursor.copy(f"COPY memory_staging ({columns}) FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(
                    ["uuid", "uuid", "uuid", "varchar", "bytea", "bytea", "varchar", "varchar[]", "halfvec",
                     "float8", "int4", "timestamptz", "timestamptz"]
                )  # fmt: skip
                for space, count in spaces_and_counts:
                    key = keys[space.id]
                    vectors = unit_vectors(rng, count)
                    ids = [uuid.uuid4() for _ in range(count)]
                    for i in range(count):
                        word = words[(i + rng.integers(10)) % 10]
                        content = f"Fact {i} of {space.external_id}: our {word} number {i}."
                        aad = associated_data(table="memory_memory", field="content", space_id=space.id, row_id=ids[i])
                        copy.write_row(
                            (ids[i], tenant.id, space.id, "fact", seal(content, key=key, aad=aad), None, "",
                             keyword_digests(space.id, [word, str(i)]), HalfVector(vectors[i]),
                             float(rng.random()), 1, now, now)
                        )  # fmt: skip
                    if space.external_id.startswith("probe-"):
                        kept[space.id] = (ids, vectors)
                    done += count
                    progress(done, total)
            cursor.execute(f"INSERT INTO memory_memory ({columns}) SELECT {columns} FROM memory_staging")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_memory")
    return kept


def main(rows: int = 100_000, n_spaces: int = 1_000, queries: int = 200) -> str:
    setup_django()
    from django.db import connection

    import memory.recall.search as recall_module
    from tenants import scope, spaces
    from tenants.tenant_admin import create_tenant

    rng = np.random.default_rng(11)
    with throwaway_database():
        tenant = create_tenant(name="Scale", slug="scale")
        started = time.perf_counter()
        with scope.tenant_scope(tenant):
            made = [spaces.create_space(tenant=tenant, external_id=f"s{i}") for i in range(n_spaces)]
            probes = [spaces.create_space(tenant=tenant, external_id=f"probe-{n}") for n in PROBE_SIZES]
        per_space = max(1, (rows - sum(PROBE_SIZES)) // n_spaces)
        plan = [(s, per_space) for s in made] + list(zip(probes, PROBE_SIZES, strict=True))

        def progress(done, total):
            if done % 50_000 < per_space or done == total:
                print(f"  filled {done}/{total} rows", file=sys.stderr, flush=True)

        kept = fill(tenant, plan, rng, progress)
        fill_seconds = time.perf_counter() - started
        total_rows = per_space * n_spaces + sum(PROBE_SIZES)

        fixed = unit_vectors(rng, 1).astype(np.float32)
        original = recall_module._query_vectors
        sample_spaces = [made[int(i)] for i in rng.integers(0, n_spaces, queries)]

        def run(space, query):
            with scope.tenant_scope(tenant, space):
                recall_module.recall(space=space, query=query)

        recall_module._query_vectors = lambda space, query, analysis: fixed
        try:
            run(sample_spaces[0], "warm up the van fleet")
            without = [timed(lambda s=s: run(s, "our van fleet renewal")) for s in sample_spaces]
            probe_times = {
                n: median([timed(lambda p=p: run(p, "our van fleet renewal")) for _ in range(30)])
                for p, n in zip(probes, PROBE_SIZES, strict=True)
            }
        finally:
            recall_module._query_vectors = original
        run(sample_spaces[0], "warm up the local model")
        # A different query each time: the embedding cache must not answer for the model.
        with_embedding = [
            timed(lambda s=s, i=i: run(s, f"how many vans does our fleet have in depot {i}"))
            for i, s in enumerate(sample_spaces[:100])
        ]

        # Correctness: the served vector strategy's top-k against an exact scan of the space.
        agreement = {}
        for probe, size in zip(probes, PROBE_SIZES, strict=True):
            ids, vectors = kept[probe.id]
            scores = []
            for _ in range(20):
                q = unit_vectors(rng, 1).astype(np.float32)
                exact = [ids[i] for i in np.argsort(1 - vectors.astype(np.float32) @ q[0])[:K]]
                with scope.tenant_scope(tenant, probe):
                    from memory.models import Memory

                    served = recall_module._vector_candidates(Memory.objects.filter(space=probe), q)
                    top = [m.pk for m in sorted(served.values(), key=lambda m: m.distance)[:K]]
                scores.append(len(set(top) & set(exact[: len(top)])) / min(K, size))
            agreement[size] = sum(scores) / len(scores)

        with scope.tenant_scope(tenant, made[0]), connection.cursor() as cursor:
            vector_literal = "[" + ",".join(f"{x:.4f}" for x in fixed[0]) + "]"
            cursor.execute(
                "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT id, embedding <=> %s::halfvec AS distance "
                "FROM memory_memory WHERE space_id = %s AND superseded_by_id IS NULL AND kind <> 'topic' "
                "ORDER BY distance LIMIT 50",
                [vector_literal, made[0].id],
            )
            query_plan = re.sub(
                r"'\[[-0-9.,e]{200,}\]'", "'[…384 values…]'", "\n".join(row[0] for row in cursor.fetchall())
            )

    body = f"""{total_rows:,} memories over {n_spaces:,} spaces of {per_space} (plus probe spaces of
{", ".join(map(str, PROBE_SIZES))}) in one table; filled in {fill_seconds:.0f} s. {queries} recalls on random spaces.

| recall server time | p50 | p95 |
|---|---|---|
| without the query embedding | {median(without):.1f} ms | {percentile(without, 95):.1f} ms |
| with the local engine embedding the query | {median(with_embedding):.1f} ms | {percentile(with_embedding, 95):.1f} ms |

Median recall time by space size (no query embedding): {", ".join(f"{n} rows: {t:.1f} ms" for n, t in probe_times.items())}.

Served vector top-{K} against an exact scan of the same space (mean overlap over 20 random queries):
{", ".join(f"{n} rows: {a:.3f}" for n, a in agreement.items())}. Target ≥ 0.99.

Query plan of the vector strategy (one space):

```
{query_plan}
```
"""
    write_section(f"Recall at scale ({total_rows:,} rows)", body)
    return body


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    print(main(*args))
