"""How recall candidates are laid out for people: what passed in recall's order, then the nearest
rows below the threshold by distance, and only a count of rows that matched nothing at all.

>>> from types import SimpleNamespace as C
>>> rows = [C(passes=True, distance=0.2, ranks={"vector": 1}), C(passes=False, distance=0.5, ranks={}),
...         C(passes=False, distance=0.3, ranks={}), C(passes=False, distance=None, ranks={})]
>>> view = arrange(rows)
>>> [c.distance for c in view["below"]], view["unmatched"]
([0.3, 0.5], 1)
"""

from __future__ import annotations

BELOW_SHOWN = 10


def arrange(candidates, *, below_shown: int = BELOW_SHOWN) -> dict:
    passing = [c for c in candidates if c.passes]
    failing = [c for c in candidates if not c.passes]
    # A failing row with no distance matched by no strategy at all: a line of zeros says nothing.
    near = sorted((c for c in failing if c.distance is not None), key=lambda c: c.distance)
    return {
        "passing": passing,
        "below": near[:below_shown],
        "more_below": max(0, len(near) - below_shown),
        "unmatched": sum(1 for c in failing if c.distance is None),
    }
