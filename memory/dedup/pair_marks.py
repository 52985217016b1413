"""Operators' own "same" / "different" marks on pairs of memories, and what they say about the
space's dedup distance: precision and recall of the current rule on the marks, and the largest
distance that keeps wrong merges at zero on them."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from django.core.exceptions import ValidationError

from memory.dedup.merge_rule import is_restatement, values_conflict
from memory.models import Memory, PairMark
from memory.text.embeddings import stored_vector

CANDIDATE_DISTANCE = 0.2
CANDIDATES_SHOWN = 8


def _vector(memory: Memory) -> np.ndarray:
    vector = stored_vector(memory.embedding)
    return vector / (np.linalg.norm(vector) or 1.0)


def distance_between(a: Memory, b: Memory) -> float:
    return float(1.0 - _vector(a) @ _vector(b))


def mark(*, space, first_id, second_id, label: str, actor: str) -> PairMark:
    if label not in PairMark.Label.values:
        raise ValidationError({"label": ["Choose same or different."]})
    first, second = sorted([str(first_id), str(second_id)])
    found = {str(m.pk): m for m in Memory.objects.filter(space=space, pk__in=[first, second])}
    if len(found) != 2:
        raise ValidationError({"pair": ["Both memories must belong to this space."]})
    row, _ = PairMark.objects.update_or_create(
        first=found[first], second=found[second],
        defaults={"tenant_id": space.tenant_id, "space": space, "label": label, "marked_by": actor[:200]},
    )  # fmt: skip
    return row


def unmarked_candidates(space, rows: list[Memory], distances: np.ndarray) -> list[dict]:
    """Close pairs of one kind nobody has marked yet, closest first: the ones worth a judgement."""
    marked = {tuple(sorted([str(a), str(b)])) for a, b in PairMark.objects.filter(space=space).values_list(
        "first_id", "second_id")}  # fmt: skip
    pairs = []
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            key = tuple(sorted([str(rows[i].pk), str(rows[j].pk)]))
            if rows[i].kind == rows[j].kind and distances[i, j] <= CANDIDATE_DISTANCE and key not in marked:
                pairs.append((float(distances[i, j]), i, j))
    pairs.sort()
    return [{"distance": d, "a": rows[i], "b": rows[j]} for d, i, j in pairs[:CANDIDATES_SHOWN]]


@dataclasses.dataclass
class MarkReport:
    marks: list[dict]
    same: int
    different: int
    merged_same: int
    merged_different: int
    precision: float | None
    recall: float | None
    suggested_distance: float | None
    suggested_merges: int
    wrong_merge_ceiling: float | None


def report(space, *, dedup_distance: float, requires_same_terms: bool) -> MarkReport:
    marks = []
    for row in PairMark.objects.filter(space=space).select_related("first", "second").order_by("-marked_at"):
        distance = distance_between(row.first, row.second)
        merges = is_restatement(
            row.first.content, row.second.content, distance,
            dedup_distance=dedup_distance, requires_same_terms=requires_same_terms,
        )  # fmt: skip
        # Would the rule merge this pair at *some* distance (values and terms permitting)?
        mergeable = is_restatement(
            row.first.content, row.second.content, 0.0, dedup_distance=1.0, requires_same_terms=requires_same_terms
        ) and not values_conflict(row.first.content, row.second.content)
        marks.append({"mark": row, "distance": distance, "merges": merges, "mergeable": mergeable})
    same = [m for m in marks if m["mark"].label == PairMark.Label.SAME]
    different = [m for m in marks if m["mark"].label == PairMark.Label.DIFFERENT]
    merged_same = sum(m["merges"] for m in same)
    merged_different = sum(m["merges"] for m in different)
    merged = merged_same + merged_different
    # The largest distance below every mergeable "different" pair: wrong merges stay at zero.
    blocking = [m["distance"] for m in different if m["mergeable"]]
    ceiling = min(blocking) if blocking else None
    candidates = [m["distance"] for m in same if m["mergeable"] and (ceiling is None or m["distance"] < ceiling)]
    suggested = None
    if candidates:
        suggested = max(candidates)
        rounded_up = math.ceil(suggested * 1000) / 1000
        if ceiling is None or rounded_up < ceiling:
            suggested = rounded_up
    return MarkReport(
        marks=marks, same=len(same), different=len(different), merged_same=merged_same,
        merged_different=merged_different,
        precision=merged_same / merged if merged else None,
        recall=merged_same / len(same) if same else None,
        suggested_distance=suggested, suggested_merges=len(candidates), wrong_merge_ceiling=ceiling,
    )  # fmt: skip
