"""Recall's candidates in one SQL statement: the vector, keyword and topic strategies and the passing filter.

One round trip instead of one per strategy: the nearest statements per query vector (exact per-space
scans, decision 0004), the blind-index keyword matches (a digest carried by more than half of the
space's statements is too common to count), the topic-key matches and, for the vector candidates,
whether they pass on meaning — all as CTEs of a single ``SELECT``. Only the columns recall shows are
fetched; memory text stays sealed on the returned rows until something reads it (only the rows shown
are ever decrypted, see ``tenants.encrypted_fields``).

Each returned ``Memory`` carries: ``distance`` (to the nearest query vector for a vector candidate,
else to the query itself), ``nearest_position`` (the order a vector candidate was first found in,
None for the others), ``vector_rank`` (its rank among the vector candidates that pass, else None),
``keyword_rank`` with ``matched_tokens``, and ``topic_rank``.

Example::

    rows = candidate_rows(space=space, vectors=vectors, kinds=None, keyword_digests=["9f…"],
                          topic_digests=set(), bounds=MeaningBounds(alone=0.12, corroborated=0.18))
"""

from __future__ import annotations

import dataclasses

import numpy as np
from pgvector import Vector

from memory.models import Memory

VECTOR_CANDIDATES = 50
COMMON_TOKEN_SHARE = 0.5
COMMON_TOKEN_MIN_ROWS = 4
STANDOUT_MARGIN = 0.03

# The columns recall shows or sorts by; never the stored vector (distances are computed in SQL).
SHOWN_COLUMNS = (
    "m.id, m.space_id, m.kind, m.content, m.topic, m.importance, m.event_at, m.updated_at, m.task_session_id"
)


@dataclasses.dataclass(frozen=True)
class MeaningBounds:
    """A statement passes on meaning alone within ``alone``; up to ``corroborated`` it needs a second
    signal: the keyword or topic strategy found it too, or it stands out (it is the nearest statement
    and the next one is at least STANDOUT_MARGIN farther).

    Distances from this embedding model are compressed and shift by language (a relevant Russian or
    Japanese statement often sits at 0.05–0.10, an English one at 0.12–0.15, unrelated ones from 0.13
    up), so one absolute cut either drops relevant memories or returns unrelated ones (docs/quality.md)."""

    alone: float
    corroborated: float


def candidate_rows(
    *,
    space,
    vectors: np.ndarray | None,
    kinds: list[str] | None,
    keyword_digests: list[str],
    topic_digests: set[str],
    bounds: MeaningBounds,
) -> list[Memory]:
    """The candidate memories of ``space`` for these query vectors and digests (one statement)."""
    statement = _Statement(space_id=space.id, kinds=kinds)
    ctes = []
    if vectors is not None:
        ctes += statement.nearest(vectors)
    if keyword_digests:
        ctes += statement.keyword(keyword_digests)
    if topic_digests:
        ctes += statement.topical(sorted(topic_digests))
    if not ctes:
        return []
    if vectors is not None:
        ctes += statement.judged(bounds, keyword=bool(keyword_digests), topical=bool(topic_digests))
    sources = [name for name, present in (("nearest", vectors is not None), ("keyword", bool(keyword_digests)),
               ("topical", bool(topic_digests))) if present]  # fmt: skip
    sql = "WITH " + ",\n".join(ctes) + "\n" + statement.select(sources)
    return list(Memory.objects.raw(sql, statement.params))


class _Statement:
    """Builds the statement's parts in order; ``params`` follows the placeholders as they are written."""

    def __init__(self, *, space_id, kinds: list[str] | None):
        self.space_id = space_id
        self.kinds = kinds
        self.params: list = []

    def _active(self, *, statements_only: bool, with_kinds: bool = True) -> str:
        """This space's current (not superseded) rows; topic rows are only names, never statements."""
        self.params.append(self.space_id)
        clause = "m.space_id = %s AND m.superseded_by_id IS NULL"
        if statements_only:
            clause += " AND m.kind <> 'topic'"
        if with_kinds and self.kinds:
            self.params.append(list(self.kinds))
            clause += " AND m.kind = ANY(%s::varchar[])"
        return clause

    def nearest(self, vectors: np.ndarray) -> list[str]:
        # Text literals parsed as halfvec: the same value the ORM's CosineDistance sends.
        values = ", ".join(f"({n}, %s::halfvec)" for n in range(len(vectors)))
        self.params += [Vector(vector).to_text() for vector in vectors]
        query_vector = f"query_vector(n, v) AS (VALUES {values})"
        # Per query vector the nearest statements (also those too far to pass: the gap to the
        # runner-up matters), then per row the nearest of its distances.
        per_vector = f"""nearest_per_vector AS (
    SELECT q.n, hit.id, hit.distance, hit.position
    FROM query_vector q CROSS JOIN LATERAL (
        SELECT scan.id, scan.distance, row_number() OVER (ORDER BY scan.distance) AS position
        FROM (
            SELECT m.id, m.embedding <=> q.v AS distance FROM memory_memory m
            WHERE {self._active(statements_only=True)}
            ORDER BY m.embedding <=> q.v LIMIT {VECTOR_CANDIDATES}
        ) scan
    ) hit
)"""
        nearest = """nearest AS (
    SELECT DISTINCT ON (id) id, distance, min(n * 1000 + position) OVER (PARTITION BY id) AS first_seen
    FROM nearest_per_vector ORDER BY id, distance, n
)"""
        return [query_vector, per_vector, nearest]

    def keyword(self, digests: list[str]) -> list[str]:
        # How many of the space's statements carry each digest (whatever kinds were asked for).
        frequency = f"""digest_frequency AS (
    SELECT d, count(*) AS carried_by FROM memory_memory m, unnest(m.keyword_digests) AS d
    WHERE {self._active(statements_only=True, with_kinds=False)} AND d = ANY(%s::varchar[])
    GROUP BY d
)"""
        self.params.append(digests)
        total = f"""statement_count AS (
    SELECT count(*) AS total FROM memory_memory m WHERE {self._active(statements_only=True, with_kinds=False)}
)"""
        useful = """useful_digests AS (
    SELECT coalesce(array_agg(f.d), '{}')::varchar[] AS digests FROM digest_frequency f, statement_count c
    WHERE c.total < %s OR f.carried_by::float8 / nullif(c.total, 0) <= %s::float8
)"""
        self.params += [COMMON_TOKEN_MIN_ROWS, COMMON_TOKEN_SHARE]
        keyword = f"""keyword AS (
    SELECT id, matched, row_number() OVER (ORDER BY matched DESC, importance DESC) AS rank FROM (
        SELECT m.id, m.importance,
               cardinality(ARRAY(SELECT unnest(m.keyword_digests) INTERSECT SELECT unnest(u.digests))) AS matched
        FROM memory_memory m, useful_digests u
        WHERE {self._active(statements_only=False)} AND m.keyword_digests && u.digests
        ORDER BY matched DESC, m.importance DESC LIMIT {VECTOR_CANDIDATES}
    ) matches
)"""
        return [frequency, total, useful, keyword]

    def topical(self, digests: list[str]) -> list[str]:
        topical = f"""topical AS (
    SELECT id, row_number() OVER (ORDER BY importance DESC) AS rank FROM (
        SELECT m.id, m.importance FROM memory_memory m
        WHERE {self._active(statements_only=False)} AND m.topic_digest = ANY(%s::varchar[])
        ORDER BY m.importance DESC LIMIT {VECTOR_CANDIDATES}
    ) matches
)"""
        self.params.append(digests)
        return [topical]

    def judged(self, bounds: MeaningBounds, *, keyword: bool, topical: bool) -> list[str]:
        corroborating = [*(["k.id IS NOT NULL"] if keyword else []), *(["t.id IS NOT NULL"] if topical else [])]
        stands_out = "(n.nearest_position = 1 AND coalesce(n.runner_up - n.distance >= %s::float8, false))"
        joins = ("LEFT JOIN keyword k ON k.id = n.id " if keyword else "") + (
            "LEFT JOIN topical t ON t.id = n.id" if topical else ""
        )
        judged = f"""judged AS (
    SELECT n.id, n.distance, n.first_seen,
           n.distance <= %s::float8
           OR (n.distance <= %s::float8 AND ({" OR ".join([*corroborating, stands_out])})) AS passes
    FROM (
        SELECT id, distance, first_seen, row_number() OVER w AS nearest_position, lead(distance) OVER w AS runner_up
        FROM nearest WINDOW w AS (ORDER BY distance, first_seen)
    ) n {joins}
)"""
        self.params += [bounds.alone, max(bounds.corroborated, bounds.alone), STANDOUT_MARGIN]
        vector = """vector_passing AS (
    SELECT id, row_number() OVER (ORDER BY distance, first_seen) AS rank FROM judged WHERE passes
)"""
        return [judged, vector]

    def select(self, sources: list[str]) -> str:
        has = set(sources)
        candidates = " UNION ".join(f"SELECT id FROM {name}" for name in sources)
        if "nearest" in has:
            distance = "coalesce(n.distance, m.embedding <=> (SELECT v FROM query_vector WHERE n = 0))"
        else:
            distance = "NULL::float8"
        columns = [
            f"{distance} AS distance",
            "n.first_seen AS nearest_position" if "nearest" in has else "NULL::bigint AS nearest_position",
            "vp.rank AS vector_rank" if "nearest" in has else "NULL::bigint AS vector_rank",
            "k.rank AS keyword_rank" if "keyword" in has else "NULL::bigint AS keyword_rank",
            "k.matched AS matched_tokens" if "keyword" in has else "0 AS matched_tokens",
            "t.rank AS topic_rank" if "topical" in has else "NULL::bigint AS topic_rank",
        ]
        joins = []
        if "nearest" in has:
            joins += ["LEFT JOIN nearest n ON n.id = m.id", "LEFT JOIN vector_passing vp ON vp.id = m.id"]
        if "keyword" in has:
            joins.append("LEFT JOIN keyword k ON k.id = m.id")
        if "topical" in has:
            joins.append("LEFT JOIN topical t ON t.id = m.id")
        self.params.append(self.space_id)
        return (
            f"SELECT {SHOWN_COLUMNS}, {', '.join(columns)}\n"
            f"FROM ({candidates}) candidate JOIN memory_memory m ON m.id = candidate.id\n"
            + "\n".join(joins)
            + "\nWHERE m.space_id = %s"
        )
