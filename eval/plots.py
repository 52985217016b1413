"""Small, dependency-free SVG line charts for docs/quality.md."""

from __future__ import annotations

from html import escape

WIDTH, HEIGHT = 700, 320
LEFT, RIGHT, TOP, BOTTOM = 56, 210, 28, 44
COLOURS = ["#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#57606a"]


def line_chart(
    *,
    title: str,
    x_label: str,
    y_label: str,
    series: dict[str, list[tuple[float, float]]],
    markers: dict[str, float] | None = None,
    y_max: float | None = None,
) -> str:
    points = [p for values in series.values() for p in values]
    x_min, x_max = min(p[0] for p in points), max(p[0] for p in points)
    y_top = y_max if y_max is not None else max(p[1] for p in points) * 1.05 or 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(x):
        return LEFT + (x - x_min) / ((x_max - x_min) or 1) * plot_w

    def sy(y):
        return TOP + plot_h - (y / y_top) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
        f'<text x="{LEFT}" y="16" font-size="13" font-weight="bold">{escape(title)}</text>',
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" y2="{TOP + plot_h}" stroke="#333"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="#333"/>',
    ]
    for i in range(5):
        y = y_top * i / 4
        parts.append(f'<text x="{LEFT - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{_number(y)}</text>')
        parts.append(f'<line x1="{LEFT}" y1="{sy(y):.1f}" x2="{LEFT + plot_w}" y2="{sy(y):.1f}" stroke="#eee"/>')
    for i in range(6):
        x = x_min + (x_max - x_min) * i / 5
        parts.append(f'<text x="{sx(x):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle">{_number(x)}</text>')
    parts.append(
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 6}" text-anchor="middle">{escape(x_label)}</text>'
        f'<text x="14" y="{TOP + plot_h / 2}" text-anchor="middle" transform="rotate(-90 14 {TOP + plot_h / 2})">'
        f"{escape(y_label)}</text>"
    )
    for index, (name, values) in enumerate(series.items()):
        colour = COLOURS[index % len(COLOURS)]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in values)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.append(
            f'<rect x="{WIDTH - RIGHT + 12}" y="{TOP + 14 * index}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{WIDTH - RIGHT + 26}" y="{TOP + 9 + 14 * index}">{escape(name)}</text>'
        )
    for index, (name, x) in enumerate((markers or {}).items()):
        parts.append(
            f'<line x1="{sx(x):.1f}" y1="{TOP}" x2="{sx(x):.1f}" y2="{TOP + plot_h}" stroke="#000" '
            f'stroke-dasharray="4 3"/>'
            f'<text x="{sx(x) + 4:.1f}" y="{TOP + 12 + 12 * index}">{escape(name)} {_number(x)}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"
