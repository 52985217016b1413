"""What a threshold would do on a space's own memories, for the live preview while a slider moves.

Reads only: pairs that would merge at a dedup distance, what a sample query would recall at a
recall distance, and each memory's distance to its nearest neighbour (the console draws it as a
histogram with the thresholds as lines).
"""

from __future__ import annotations

import numpy as np

from memory.dedup import is_restatement
from memory.models import Memory
from memory.recall import recall
from memory.text.embeddings import stored_vector

PREVIEW_ROWS = 500


def space_vectors(space) -> tuple[list[Memory], np.ndarray]:
    rows = list(
        Memory.objects.filter(space=space, superseded_by__isnull=True)
        .exclude(kind="topic")
        .order_by("-updated_at")[:PREVIEW_ROWS]
    )
    if not rows:
        return [], np.zeros((0, 0), np.float32)
    matrix = np.stack([stored_vector(m.embedding) for m in rows])
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return rows, matrix


def pairwise_distances(matrix) -> np.ndarray:
    return 1.0 - matrix @ matrix.T


def merge_pairs(
    rows, distances, dedup_distance: float, requires_same_terms: bool = True, limit: int = 20
) -> list[dict]:
    """Pairs of the same kind the writer would merge (memory.dedup.merge_rule), closest first."""
    if len(rows) < 2:
        return []
    pairs = []
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            if rows[i].kind == rows[j].kind and is_restatement(
                rows[i].content, rows[j].content, float(distances[i, j]),
                dedup_distance=dedup_distance, requires_same_terms=requires_same_terms,
            ):  # fmt: skip
                pairs.append((float(distances[i, j]), i, j))
    pairs.sort()
    return [{"distance": d, "a": rows[i], "b": rows[j]} for d, i, j in pairs[:limit]]


def nearest_distances(distances) -> np.ndarray:
    if len(distances) < 2:
        return np.zeros(0)
    others = distances.copy()
    np.fill_diagonal(others, np.inf)
    return others.min(axis=1)


def threshold_preview(*, space, values: dict, sample_query: str = "", vectors=None) -> dict:
    """``vectors``: the result of ``space_vectors(space)`` when the caller already has it."""
    rows, matrix = vectors if vectors is not None else space_vectors(space)
    distances = pairwise_distances(matrix) if rows else np.zeros((0, 0))
    result = {
        "pairs": merge_pairs(rows, distances, values["dedup_distance"], values["dedup_requires_same_terms"]),
        "nearest": nearest_distances(distances),
        "memory_count": len(rows),
        "recalled": None,
    }
    if sample_query.strip():
        result["recalled"] = recall(space=space, query=sample_query, overrides=values)
    return result
