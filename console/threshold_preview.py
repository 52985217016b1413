"""What a threshold would do on a space's own memories, for the live preview while a slider moves.

Reads only: pairs that would merge at a dedup distance, what a sample query would recall at a
recall distance, and a histogram of each memory's nearest-neighbour distance with the thresholds
drawn as lines (server-rendered SVG).
"""

from __future__ import annotations

import numpy as np
from django.utils.html import escape

from memory.dedup.merge_rule import is_restatement
from memory.models import Memory
from memory.recall.search import recall
from memory.text.embeddings import stored_vector

PREVIEW_ROWS = 500
BIN_WIDTH = 0.01
BIN_COUNT = 40


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


def histogram_svg(values: np.ndarray, lines: dict[str, float], *, width: int = 520, height: int = 160) -> str:
    counts = np.zeros(BIN_COUNT, dtype=int)
    for value in values:
        counts[min(BIN_COUNT - 1, max(0, int(value / BIN_WIDTH)))] += 1
    top = max(int(counts.max()) if len(counts) else 0, 1)
    plot_height = height - 42  # below the plot: the axis ticks, then the legend
    bar_width = width / BIN_COUNT
    parts = []
    for index, count in enumerate(counts):
        bar = plot_height * count / top
        parts.append(
            f'<rect class="bar" x="{index * bar_width:.1f}" y="{plot_height - bar:.1f}" '
            f'width="{bar_width - 1:.1f}" height="{bar:.1f}"><title>{index * BIN_WIDTH:.2f}–'
            f"{(index + 1) * BIN_WIDTH:.2f}: {count}</title></rect>"
        )
    colours = {"dedup": "#b3261e", "recall": "#2f5fd0", "forget": "#1e7a3c"}
    # Thresholds are often close together: their labels go in a legend row, each in its own slot,
    # rather than beside the lines where they would overlap.
    slot = width / max(len(lines), 1)
    for offset, (name, value) in enumerate(lines.items()):
        x = min(width - 1, value / (BIN_WIDTH * BIN_COUNT) * width)
        colour = colours.get(name, "#333")
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{plot_height}" stroke="{colour}" '
            f'stroke-width="2" data-threshold="{escape(name)}" data-value="{value:.3f}"/>'
            f'<rect x="{offset * slot:.1f}" y="{height - 14}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{offset * slot + 14:.1f}" y="{height - 5}" class="axis legend">{escape(name)} {value:.3f}</text>'
        )
    for tick in range(0, BIN_COUNT + 1, 10):
        anchor = "start" if tick == 0 else "end" if tick == BIN_COUNT else "middle"
        parts.append(
            f'<text x="{tick * bar_width:.1f}" y="{plot_height + 13}" text-anchor="{anchor}" class="axis">'
            f"{tick * BIN_WIDTH:.1f}</text>"
        )
    return (
        f'<svg role="img" aria-label="Nearest-neighbour distances with thresholds" class="chart histogram" '
        f'viewBox="0 0 {width} {height}" width="100%">{"".join(parts)}</svg>'
    )


def preview(*, space, values: dict, sample_query: str = "", vectors=None) -> dict:
    """``vectors``: the result of ``space_vectors(space)`` when the caller already has it."""
    rows, matrix = vectors if vectors is not None else space_vectors(space)
    distances = pairwise_distances(matrix) if rows else np.zeros((0, 0))
    pairs = merge_pairs(rows, distances, values["dedup_distance"], values["dedup_requires_same_terms"])
    lines = {"dedup": values["dedup_distance"], "recall": values["recall_distance"], "forget": values["forget_floor"]}
    result = {
        "pairs": pairs,
        "histogram": histogram_svg(nearest_distances(distances), lines),
        "memory_count": len(rows),
        "recalled": None,
    }
    if sample_query.strip():
        result["recalled"] = recall(space=space, query=sample_query, overrides=values)
    return result
