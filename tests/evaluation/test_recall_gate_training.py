"""How the relevance gate's operating point is scored and chosen (eval/recall_gate.py), on records small enough
to count by hand: a row within the distance bounds is vetoed under the floor, one outside them is admitted
from the admit probability, and the point chosen never finds fewer answers than the bounds did (less the
allowance)."""

from __future__ import annotations

import numpy as np

from eval.recall_gate import ANSWERS_GIVEN_UP, choose_point, decided, gate_scores, old_rule_scores


def record(*, answerable, labels, old_rule):
    return {"answerable": answerable, "labels": labels, "old_rule": old_rule, "features": [[0.0]] * len(labels)}


RECORDS = [
    # The bounds pass the answer (gate 0.6) and a near miss (gate 0.1).
    record(answerable=True, labels=[True, False], old_rule=[True, True]),
    # A paraphrase: the bounds miss the answer, the gate gives it 0.7.
    record(answerable=True, labels=[True], old_rule=[False]),
    # Unanswerable: the bounds pass a row the gate gives 0.2.
    record(answerable=False, labels=[False], old_rule=[True]),
]
PROBABILITIES = [np.array([0.6, 0.1]), np.array([0.7]), np.array([0.2])]


def test_within_the_bounds_the_gate_vetoes_and_outside_it_admits():
    kept = decided(RECORDS, PROBABILITIES, floor=0.15, admit=0.65)
    assert [k.tolist() for k in kept] == [[1.0, 0.0], [1.0], [1.0]]
    kept = decided(RECORDS, PROBABILITIES, floor=0.3, admit=1.01)
    assert [k.tolist() for k in kept] == [[1.0, 0.0], [0.0], [0.0]]


def test_questions_are_counted_found_empty_and_precise():
    bounds = old_rule_scores(RECORDS)
    assert (bounds["found"], bounds["empty"], bounds["precision"]) == (0.5, 0.0, 1 / 3)
    gated = gate_scores(RECORDS, PROBABILITIES, 0.3, 0.65)
    assert (gated["found"], gated["empty"], gated["precision"]) == (1.0, 1.0, 1.0)


def test_the_chosen_point_finds_at_least_the_bounds_answers():
    floor, admit, scores = choose_point(RECORDS, PROBABILITIES)
    assert scores["found"] >= old_rule_scores(RECORDS)["found"] - ANSWERS_GIVEN_UP
    assert scores["empty"] == 1.0
    assert floor > 0.2 and admit <= 0.7
