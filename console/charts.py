"""Small charts drawn on the server as inline SVG (nothing loaded from a CDN).

>>> "<svg" in bar_chart([("Mon", 3), ("Tue", 0)])
True
"""

from __future__ import annotations

import numpy as np
from django.utils.html import escape

HISTOGRAM_BIN_WIDTH = 0.01
HISTOGRAM_BINS = 40


def bar_chart(points: list[tuple[str, int]], *, width: int = 420, height: int = 120, title: str = "") -> str:
    if not points:
        return ""
    top = max(value for _, value in points) or 1
    slot = width / len(points)
    bars = []
    for index, (label, value) in enumerate(points):
        bar_height = (height - 30) * value / top
        x = index * slot + slot * 0.15
        y = height - 20 - bar_height
        middle = x + slot * 0.35
        bars.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" height="{bar_height:.1f}" class="bar">'
            f"<title>{escape(label)}: {value}</title></rect>"
            f'<text x="{middle:.1f}" y="{height - 5}" text-anchor="middle" class="axis">{escape(label)}</text>'
            f'<text x="{middle:.1f}" y="{max(y - 3, 10):.1f}" text-anchor="middle" class="value">{value}</text>'
        )
    return (
        f'<svg role="img" aria-label="{escape(title)}" viewBox="0 0 {width} {height}" width="100%" '
        f'class="chart">{"".join(bars)}</svg>'
    )


def histogram_svg(values: np.ndarray, lines: dict[str, float], *, width: int = 520, height: int = 160) -> str:
    counts = np.zeros(HISTOGRAM_BINS, dtype=int)
    for value in values:
        counts[min(HISTOGRAM_BINS - 1, max(0, int(value / HISTOGRAM_BIN_WIDTH)))] += 1
    top = max(int(counts.max()) if len(counts) else 0, 1)
    plot_height = height - 42  # below the plot: the axis ticks, then the legend
    bar_width = width / HISTOGRAM_BINS
    parts = []
    for index, count in enumerate(counts):
        bar = plot_height * count / top
        parts.append(
            f'<rect class="bar" x="{index * bar_width:.1f}" y="{plot_height - bar:.1f}" '
            f'width="{bar_width - 1:.1f}" height="{bar:.1f}"><title>{index * HISTOGRAM_BIN_WIDTH:.2f}–'
            f"{(index + 1) * HISTOGRAM_BIN_WIDTH:.2f}: {count}</title></rect>"
        )
    colours = {"dedup": "#b3261e", "recall": "#2f5fd0", "forget": "#1e7a3c"}
    # Thresholds are often close together: their labels go in a legend row, each in its own slot,
    # rather than beside the lines where they would overlap.
    slot = width / max(len(lines), 1)
    for offset, (name, value) in enumerate(lines.items()):
        x = min(width - 1, value / (HISTOGRAM_BIN_WIDTH * HISTOGRAM_BINS) * width)
        colour = colours.get(name, "#333")
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{plot_height}" stroke="{colour}" '
            f'stroke-width="2" data-threshold="{escape(name)}" data-value="{value:.3f}"/>'
            f'<rect x="{offset * slot:.1f}" y="{height - 14}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{offset * slot + 14:.1f}" y="{height - 5}" class="axis legend">{escape(name)} {value:.3f}</text>'
        )
    for tick in range(0, HISTOGRAM_BINS + 1, 10):
        anchor = "start" if tick == 0 else "end" if tick == HISTOGRAM_BINS else "middle"
        parts.append(
            f'<text x="{tick * bar_width:.1f}" y="{plot_height + 13}" text-anchor="{anchor}" class="axis">'
            f"{tick * HISTOGRAM_BIN_WIDTH:.1f}</text>"
        )
    return (
        f'<svg role="img" aria-label="Nearest-neighbour distances with thresholds" class="chart histogram" '
        f'viewBox="0 0 {width} {height}" width="100%">{"".join(parts)}</svg>'
    )
