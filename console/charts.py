"""Small charts drawn on the server as inline SVG (nothing loaded from a CDN).

>>> "<svg" in bar_chart([("Mon", 3), ("Tue", 0)])
True
"""

from __future__ import annotations

from django.utils.html import escape


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
