"""Recall server time and correctness at scale.

Fills a throw-away database in two steps: first about 2,000 memories in spaces of the same size as
the large run's (the small baseline), measured; then up to N memories over S spaces of one tenant
(binary COPY, real per-space encryption and blind-index digests, random unit vectors), plus three
probe spaces of 5, 500 and 5,000 memories inside the same table, measured again. Each time:
- the recall request's server time through the whole API stack (Django's test client: key check,
  rate limit, space, scope, the candidate statement, rendering), read from its ``Server-Timing``
  header: ``total`` less ``embed`` is the server's own time, the query embedding excluded;
- the same with the local engine embedding a new query each time (no cache hit).
Then, at the large size: the ratio of the two p95s (flat with size: target ≤ 1.5×), the median
by probe space size, the query plan of the candidate statement, and correctness (the served vector
top-k against an exact numpy scan of the same space).

Usage: ``python -m bench.recall_scale 100000 1000 [200]`` (rows, spaces, requests); ``make bench`` runs 100k/1k.
"""

from __future__ import annotations

import datetime
import re
import sys
import time
import uuid

import numpy as np

from bench.harness import median, percentile, setup_django, throwaway_database, write_section

PROBE_SIZES = (5, 500, 5000)
BASELINE_ROWS = 2_000
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
            "importance, mention_count, superseded_reason, origin_digest, created_at, updated_at"
        )
        with raw.cursor() as cursor:
            # COPY is refused on a table under row-level security: copy into a temporary table,
            # then INSERT ... SELECT, which the policies check row by row.
            cursor.execute("CREATE TEMP TABLE memory_staging (LIKE memory_memory INCLUDING DEFAULTS) ON COMMIT DROP")
            with cursor.copy(f"COPY memory_staging ({columns}) FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(
                    ["uuid", "uuid", "uuid", "varchar", "bytea", "bytea", "varchar", "varchar[]", "halfvec",
                     "float8", "int4", "varchar", "varchar", "timestamptz", "timestamptz"]
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
                             float(rng.random()), 1, "", "", now, now)
                        )  # fmt: skip
                    if space.external_id.startswith("probe-"):
                        kept[space.id] = (ids, vectors)
                    done += count
                    progress(done, total)
            cursor.execute(f"INSERT INTO memory_memory ({columns}) SELECT {columns} FROM memory_staging")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_memory")
    return kept


def server_times(client, url_of, spaces, queries, api_key) -> tuple[list[float], list[float]]:
    """Per request: (server time less the query embedding, server time with it), from ``Server-Timing``."""
    import json
    import re

    own, whole = [], []
    for space, query in zip(spaces, queries, strict=True):
        response = client.post(
            url_of(space), json.dumps({"query": query}), content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {api_key}",
        )  # fmt: skip
        assert response.status_code == 200, response.content
        phases = {k: float(v) for k, v in re.findall(r"(\w+);dur=([0-9.]+)", response["Server-Timing"])}
        own.append(phases["total"] - phases.get("embed", 0.0))
        whole.append(phases["total"])
    return own, whole


def main(rows: int = 100_000, n_spaces: int = 1_000, queries: int = 200) -> str:
    setup_django()
    from django.db import connection
    from django.test import Client
    from django.urls import reverse

    import memory.recall.search as recall_module
    from tenants import scope, spaces
    from tenants.api_keys import issue_api_key
    from tenants.tenant_admin import create_tenant

    rng = np.random.default_rng(11)
    with throwaway_database():
        tenant = create_tenant(name="Scale", slug="scale")
        api_key = issue_api_key(tenant=tenant, name="bench", scopes=["turns"]).secret
        client = Client(HTTP_HOST="127.0.0.1")

        def url_of(space):
            return reverse("recall", args=[space.external_id])

        started = time.perf_counter()
        with scope.tenant_scope(tenant):
            made = [spaces.create_space(tenant=tenant, external_id=f"s{i}") for i in range(n_spaces)]
            probes = [spaces.create_space(tenant=tenant, external_id=f"probe-{n}") for n in PROBE_SIZES]
        per_space = max(1, (rows - sum(PROBE_SIZES)) // n_spaces)
        baseline_spaces = made[: max(1, min(n_spaces, round(BASELINE_ROWS / per_space)))]

        def progress(done, total):
            if done % 50_000 < per_space or done == total:
                print(f"  filled {done}/{total} rows", file=sys.stderr, flush=True)

        fixed = unit_vectors(rng, 1).astype(np.float32)
        original = recall_module._query_vectors

        def measure(pool) -> dict:
            """Server time without the embedding (a fixed query vector) and with the local engine."""
            sample = [pool[int(i)] for i in rng.integers(0, len(pool), queries)]
            recall_module._query_vectors = lambda space, query, analysis, query_vector=None: fixed
            try:
                server_times(client, url_of, sample[:5], ["warm up the van fleet"] * 5, api_key)
                without, _ = server_times(client, url_of, sample, ["our van fleet renewal"] * len(sample), api_key)
            finally:
                recall_module._query_vectors = original
            server_times(client, url_of, sample[:1], ["warm up the local model"], api_key)
            # A different query each time: the embedding cache must not answer for the model.
            texts = [f"how many vans does our fleet have in depot {i}" for i in range(len(sample) // 2)]
            own, whole = server_times(client, url_of, sample[: len(texts)], texts, api_key)
            return {"without": without, "own": own, "whole": whole}

        fill(tenant, [(s, per_space) for s in baseline_spaces], rng, progress)
        baseline_rows = per_space * len(baseline_spaces)
        small = measure(baseline_spaces)

        rest = [(s, per_space) for s in made[len(baseline_spaces) :]]
        kept = fill(tenant, rest + list(zip(probes, PROBE_SIZES, strict=True)), rng, progress)
        fill_seconds = time.perf_counter() - started
        total_rows = per_space * n_spaces + sum(PROBE_SIZES)
        large = measure(made)

        recall_module._query_vectors = lambda space, query, analysis, query_vector=None: fixed
        try:
            probe_times = {}
            for p, n in zip(probes, PROBE_SIZES, strict=True):
                own, _ = server_times(client, url_of, [p] * 30, ["our van fleet renewal"] * 30, api_key)
                probe_times[n] = median(own)
        finally:
            recall_module._query_vectors = original

        # Correctness: the served vector candidates' top-k against an exact scan of the same space.
        agreement = {}
        for probe, size in zip(probes, PROBE_SIZES, strict=True):
            ids, vectors = kept[probe.id]
            scores = []
            for _ in range(20):
                q = unit_vectors(rng, 1).astype(np.float32)
                exact = [ids[i] for i in np.argsort(1 - vectors.astype(np.float32) @ q[0])[:K]]
                recall_module._query_vectors = lambda space, query, analysis, query_vector=None, q=q: q
                try:
                    with scope.tenant_scope(tenant, probe):
                        result = recall_module.recall(space=probe, query="our van fleet renewal")
                finally:
                    recall_module._query_vectors = original
                served = [c for c in result.candidates if c.item.nearest_position is not None]
                top = [c.id for c in sorted(served, key=lambda c: c.distance)[:K]]
                scores.append(len(set(top) & set(exact[: len(top)])) / min(K, size))
            agreement[size] = sum(scores) / len(scores)

        from database.prepared_statements import written_as
        from memory.recall.candidates import MeaningBounds, candidate_rows

        plan: list[str] = []

        def explained(execute, sql, params, many, context):
            """Records the plan of the candidate statement, then runs it as usual (``EXPLAIN EXECUTE`` when it is
            prepared: database/prepared_statements.py; not its ``PREPARE``)."""
            if "query_vector" in (written_as(sql) or sql) and not sql.lstrip().startswith("PREPARE"):
                execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + sql, params, many, context)
                plan.extend(line for (line,) in context["cursor"].fetchall())
            return execute(sql, params, many, context)

        with scope.tenant_scope(tenant, made[0]), connection.execute_wrapper(explained):
            candidate_rows(
                space=made[0], vectors=fixed, kinds=None,
                keyword_digests=keyword_digests_of(made[0], ["van", "fleet", "renewal"]),
                topic_digests=set(), bounds=MeaningBounds(alone=0.12, corroborated=0.18),
            )  # fmt: skip
        query_plan = re.sub(r"'\[[-0-9.,e]{200,}\]'", "'[…384 values…]'", "\n".join(plan))

    def row(label, values):
        return f"| {label} | {median(values):.2f} ms | {percentile(values, 95):.2f} ms |"

    ratio = percentile(large["own"], 95) / percentile(small["own"], 95)
    ratio_fixed = percentile(large["without"], 95) / percentile(small["without"], 95)
    body = f"""{total_rows:,} memories over {n_spaces:,} spaces of {per_space} (plus probe spaces of
{", ".join(map(str, PROBE_SIZES))}) in one table; filled in {fill_seconds:.0f} s. Small baseline: the first
{baseline_rows:,} memories ({len(baseline_spaces)} spaces of {per_space}), measured before the rest was added.
{queries} recall requests on random spaces through the API stack (test client), times from the response's
`Server-Timing` header; "server" is `total` less `embed`.

| recall request, server time | p50 | p95 |
|---|---|---|
{row(f"small ({baseline_rows:,} rows), fixed query vector", small["without"])}
{row(f"small ({baseline_rows:,} rows), local engine, embedding excluded", small["own"])}
{row(f"small ({baseline_rows:,} rows), local engine, embedding included", small["whole"])}
{row(f"large ({total_rows:,} rows), fixed query vector", large["without"])}
{row(f"large ({total_rows:,} rows), local engine, embedding excluded", large["own"])}
{row(f"large ({total_rows:,} rows), local engine, embedding included", large["whole"])}

Flat with size: p95 large / small = **{ratio:.2f}×** with the local engine (embedding excluded),
{ratio_fixed:.2f}× with a fixed query vector. Target ≤ 1.5×.

Median server time by space size (fixed query vector): {", ".join(f"{n} rows: {t:.2f} ms" for n, t in probe_times.items())}.

Served vector top-{K} against an exact scan of the same space (mean overlap over 20 random queries):
{", ".join(f"{n} rows: {a:.3f}" for n, a in agreement.items())}. Target ≥ 0.99.

Query plan of the candidate statement (one space of {per_space}; vector, keyword and topic strategies and
the passing filter):

```
{query_plan}
```
"""
    write_section(f"Recall at scale ({total_rows:,} rows)", body)
    return body


def keyword_digests_of(space, words):
    from memory.text.digests import keyword_digests

    return keyword_digests(space.id, words)


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:4]]
    print(main(*args))
