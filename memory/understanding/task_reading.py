"""``task_probabilities(texts)``: whether a customer's statement is a task — a pending, one-off action that is over
once done ("I need to return the blue sweater by Friday.", "Remind me to renew the contract next week.") — or
something lasting that only shares a task's words ("I have to avoid gluten, I'm celiac.", "These photos always
remind me of my grandmother.", "I'm going to study medicine.").

The kind decides how long a row lives: a task expires with its session or after ``task_retention_days``, so a
lasting fact read as a task is deleted by the retention sweep. Phrase lists ("need to", "going to", "remind me",
"tomorrow") made that call in seven languages and called many lasting facts tasks; this reads the sentence's
meaning in any language the bundled model knows.

A logistic regression over the bundled model's embedding of the entry (as a passage: the vector the turn already
computed for it), trained by ``python -m eval.task_reading train`` on ``eval/data/task_reading/train.jsonl``
(en de fr es ru cs) with its regularisation chosen on folds that each hold out one language; scored on
``heldout.jsonl`` (eight other languages, another hand; ``make eval``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.understanding.linear_head import passage_probabilities

WEIGHTS = Path(__file__).with_name("task_reading.npz")
# A task is deleted when its session ends: a lasting fact read as a task is lost, a task read as a fact only
# stays longer than it needed to. So the bar sits above the even odds (chosen out of fold: see eval/task_reading.py).
THRESHOLD = 0.7


def task_probabilities(texts: list[str]) -> np.ndarray:
    """The probability that each text states a pending one-off task (one embedding batch)."""
    return passage_probabilities(WEIGHTS, texts)
