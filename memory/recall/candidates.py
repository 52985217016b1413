"""Recall's candidates in one SQL statement: the vector, keyword and topic strategies and the passing filter.

One round trip instead of one per strategy: the nearest statements per query vector (exact per-space
scans, decision 0004), the blind-index keyword matches (a digest carried by more than half of the
space's statements is too common to count), the topic-key matches and, for the vector candidates,
whether they pass on meaning — all as CTEs of a single ``SELECT``. Only the columns recall shows are
fetched; memory text stays sealed on the returned rows until something reads it (only the rows shown
are ever decrypted, see ``tenants.encrypted_fields``).

Each returned ``Memory`` carries: ``said_at`` (when the customer said what it was drawn from, None when
it came from elsewhere), ``distance`` (to the nearest query vector for a vector candidate,
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

from database.prepared_statements import prepared
from memory.models import Memory

VECTOR_CANDIDATES = 50
# Of the nearest statements, how many come back to Python when nothing else names them: each one returned is
# a model instance, its gate features and its vector's inversion (about 0.1 ms a row). The gate's features
# and the passing filter still read all VECTOR_CANDIDATES in SQL (the runner-up, the nearest distance).
NEAREST_SHOWN = 20
COMMON_TOKEN_SHARE = 0.5
COMMON_TOKEN_MIN_ROWS = 4
STANDOUT_MARGIN = 0.03

# The columns recall shows or sorts by; the stored vector only beside a query vector, for the relevance
# gate's learned similarity (distances themselves are computed in SQL).
SHOWN_COLUMNS = (
    "m.id, m.space_id, m.kind, m.content, m.topic, m.importance, m.event_at, m.updated_at, m.task_session_id, "
    "m.created_at, m.source_message_id, said.sent_at AS said_at"
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
    nearest_shown: int = VECTOR_CANDIDATES,
) -> list[Memory]:
    """The candidate memories of ``space`` for these query vectors and digests (one statement). Of the
    statements found only by being near a query vector and not passing on meaning, those beyond the
    ``nearest_shown`` nearest of every vector are left in the database."""
    statement = _Statement(tenant_id=space.tenant_id, space_id=space.id, kinds=kinds)
    parts: dict[str, str] = {}
    if vectors is not None:
        parts.update(statement.nearest(vectors))
    if keyword_digests:
        parts.update(statement.keyword(keyword_digests))
    if topic_digests:
        parts.update(statement.topical(sorted(topic_digests)))
    if not parts:
        return []
    if vectors is not None:
        parts.update(statement.judged(bounds, keyword="keyword" in parts, topical="topical" in parts))
    # Every part MATERIALIZED, so each is computed once: inlined, a part read for every row of
    # another (the passing filter's window, the useful digests) was re-run per row.
    ctes = ",\n".join(f"{name} AS MATERIALIZED (\n{body}\n)" for name, body in parts.items())
    select = statement.select(set(parts), nearest_shown=nearest_shown)
    # Prepared once per connection and shape (``database.prepared_statements``): parsing, row-level
    # security's rewrite and planning were half of the statement's time.
    return list(Memory.objects.raw(*prepared(f"WITH {ctes}\n{select}", statement.params)))


class _Statement:
    """Builds the statement's parts in order; ``params`` follows the placeholders as they are written."""

    def __init__(self, *, tenant_id, space_id, kinds: list[str] | None):
        # The tenant is written beside the space (row-level security filters the same rows) so that a
        # distributed PostgreSQL routes the statement to the tenant's shard (decision 0030).
        self.tenant_id = tenant_id
        self.space_id = space_id
        self.kinds = kinds
        self.params: list = []

    def _active(self, *, statements_only: bool, with_kinds: bool = True) -> str:
        """This space's current (not superseded) rows; topic rows are only names, never statements."""
        self.params += [self.tenant_id, self.space_id]
        clause = "m.tenant_id = %s AND m.space_id = %s AND m.superseded_by_id IS NULL"
        if statements_only:
            clause += " AND m.kind <> 'topic'"
        if with_kinds and self.kinds:
            self.params.append(list(self.kinds))
            clause += " AND m.kind = ANY(%s::varchar[])"
        return clause

    def nearest(self, vectors: np.ndarray) -> dict[str, str]:
        # Text literals parsed as halfvec: the same value the ORM's CosineDistance sends.
        values = ", ".join(f"({n}, %s::halfvec)" for n in range(len(vectors)))
        self.params += [Vector(vector).to_text() for vector in vectors]
        # Per query vector the nearest statements (also those too far to pass: the gap to the
        # runner-up matters), then per row the nearest of its distances and where it was first met.
        nearest = f"""    SELECT DISTINCT ON (id) id, distance,
           min(n * 1000 + position) OVER (PARTITION BY id) AS first_seen,
           min(position) OVER (PARTITION BY id) AS best_position
    FROM (
        SELECT q.n, hit.id, hit.distance, hit.position FROM query_vector q CROSS JOIN LATERAL (
            SELECT scan.id, scan.distance, row_number() OVER (ORDER BY scan.distance) AS position FROM (
                SELECT m.id, m.embedding <=> q.v AS distance FROM memory_memory m
                WHERE {self._active(statements_only=True)}
                ORDER BY m.embedding <=> q.v LIMIT {VECTOR_CANDIDATES}
            ) scan
        ) hit
    ) per_vector
    ORDER BY id, distance, n"""
        return {"query_vector(n, v)": f"    VALUES {values}", "nearest": nearest}

    def keyword(self, digests: list[str]) -> dict[str, str]:
        # Which query digests are useful: carried by some of the space's statements (whatever kinds
        # were asked for), and by at most half of them once there are a few.
        useful = f"""    SELECT coalesce(array_agg(d), '{{}}')::varchar[] AS digests FROM (
        SELECT d, count(*) AS carried_by, max(statements.total) AS total
        FROM (
            SELECT m.keyword_digests, count(*) OVER () AS total FROM memory_memory m
            WHERE {self._active(statements_only=True, with_kinds=False)}
        ) statements, unnest(statements.keyword_digests) AS d
        WHERE d = ANY(%s::varchar[])
        GROUP BY d
    ) frequency
    WHERE total < %s OR carried_by::float8 / total <= %s::float8"""
        self.params += [digests, COMMON_TOKEN_MIN_ROWS, COMMON_TOKEN_SHARE]
        keyword = f"""    SELECT id, matched, row_number() OVER (ORDER BY matched DESC, importance DESC) AS rank FROM (
        SELECT m.id, m.importance,
               cardinality(ARRAY(SELECT unnest(m.keyword_digests) INTERSECT SELECT unnest(u.digests))) AS matched
        FROM memory_memory m, useful_digests u
        WHERE {self._active(statements_only=False)} AND m.keyword_digests && u.digests
        ORDER BY matched DESC, m.importance DESC LIMIT {VECTOR_CANDIDATES}
    ) matches"""
        return {"useful_digests": useful, "keyword": keyword}

    def topical(self, digests: list[str]) -> dict[str, str]:
        topical = f"""    SELECT id, row_number() OVER (ORDER BY importance DESC) AS rank FROM (
        SELECT m.id, m.importance FROM memory_memory m
        WHERE {self._active(statements_only=False)} AND m.topic_digest = ANY(%s::varchar[])
        ORDER BY m.importance DESC LIMIT {VECTOR_CANDIDATES}
    ) matches"""
        self.params.append(digests)
        return {"topical": topical}

    def judged(self, bounds: MeaningBounds, *, keyword: bool, topical: bool) -> dict[str, str]:
        """The vector candidates that pass on meaning, with their rank among those that pass."""
        corroborating = [*(["k.id IS NOT NULL"] if keyword else []), *(["t.id IS NOT NULL"] if topical else [])]
        stands_out = "(n.nearest_position = 1 AND coalesce(n.runner_up - n.distance >= %s::float8, false))"
        joins = ("LEFT JOIN keyword k ON k.id = n.id " if keyword else "") + (
            "LEFT JOIN topical t ON t.id = n.id" if topical else ""
        )
        judged = f"""    SELECT id,
           CASE WHEN passes THEN row_number() OVER (PARTITION BY passes ORDER BY distance, first_seen) END
           AS vector_rank
    FROM (
        SELECT n.id, n.distance, n.first_seen,
               n.distance <= %s::float8
               OR (n.distance <= %s::float8 AND ({" OR ".join([*corroborating, stands_out])})) AS passes
        FROM (
            SELECT id, distance, first_seen,
                   row_number() OVER w AS nearest_position, lead(distance) OVER w AS runner_up
            FROM nearest WINDOW w AS (ORDER BY distance, first_seen)
        ) n {joins}
    ) verdicts"""
        self.params += [bounds.alone, max(bounds.corroborated, bounds.alone), STANDOUT_MARGIN]
        return {"judged": judged}

    def select(self, parts: set[str], *, nearest_shown: int) -> str:
        """One row per candidate: its shown columns and what each strategy said about it."""
        tagged = []
        if "nearest" in parts:
            tagged += [
                "SELECT id, distance, first_seen, NULL::bigint, NULL::bigint, NULL::int, NULL::bigint, best_position"
                " FROM nearest",
                "SELECT id, NULL, NULL, vector_rank, NULL, NULL, NULL, NULL FROM judged",
            ]
        if "keyword" in parts:
            tagged.append("SELECT id, NULL, NULL, NULL, rank, matched, NULL, NULL FROM keyword")
        if "topical" in parts:
            tagged.append("SELECT id, NULL, NULL, NULL, NULL, NULL, rank, NULL FROM topical")
        if "nearest" in parts:  # a keyword or topic match's distance is to the query itself
            distance = "coalesce(c.distance, m.embedding <=> (SELECT v FROM query_vector WHERE n = 0))"
        else:
            distance = "c.distance"
        self.params += [self.tenant_id, self.space_id]
        shown = ""
        if "nearest" in parts and nearest_shown < VECTOR_CANDIDATES:
            # Its best place in any query vector's list (``nearest``).
            shown = (
                "\n  AND (c.best_position IS NULL OR c.best_position <= %s OR c.vector_rank IS NOT NULL"
                " OR c.keyword_rank IS NOT NULL OR c.topic_rank IS NOT NULL)"
            )
            self.params.append(nearest_shown)
        # The stored vector for the relevance gate, in its binary form (``embeddings.sent_vector``).
        # And how many statements the vectors found, read or not (the gate ranks what it admits after them).
        vector = (
            ", halfvec_send(m.embedding) AS embedding_sent, (SELECT count(*) FROM nearest) AS nearest_found"
            if "nearest" in parts
            else ""
        )
        return f"""SELECT {SHOWN_COLUMNS}{vector}, {distance} AS distance, c.nearest_position, c.vector_rank,
       c.keyword_rank, coalesce(c.matched_tokens, 0) AS matched_tokens, c.topic_rank
FROM (
    SELECT id, max(distance) AS distance, max(nearest_position) AS nearest_position,
           max(vector_rank) AS vector_rank, max(keyword_rank) AS keyword_rank,
           max(matched_tokens) AS matched_tokens, max(topic_rank) AS topic_rank, max(best_position) AS best_position
    FROM (
        {" UNION ALL ".join(tagged)}
    ) AS tagged (id, distance, nearest_position, vector_rank, keyword_rank, matched_tokens, topic_rank, best_position)
    GROUP BY id
) c JOIN memory_memory m ON m.id = c.id
LEFT JOIN memory_message said
    ON said.id = m.source_message_id AND said.tenant_id = m.tenant_id AND said.space_id = m.space_id
WHERE m.tenant_id = %s AND m.space_id = %s{shown}"""
