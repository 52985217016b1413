"""``stands_alone_probabilities(texts)``: whether a sentence says whom and what it is about by itself.

"I made a bowl in pottery class." and "My dog hid his bone in my slipper." stand alone; "I made it in class
yesterday.", "He hid his bone in my slipper once!", "It was made for a local church." and "Since I was 17 or
so." do not — what they are about was said before them. Stored alone, such a row means nothing months later
(LoCoMo's junk: "The eagle symbolizes freedom and pride", "She gave it to me when I was young"), so the
offline extractor joins it to the entry of the sentence before it in the same message
(``memory.extraction.offline``).

A logistic regression over the bundled model's embedding of the sentence (as a passage), trained by
``python -m eval.stands_alone train`` on ``eval/data/stands_alone/train*.jsonl`` (en de fr es ru cs) with its
regularisation chosen on folds that each hold out one language; scored on ``heldout.jsonl`` (eight other
languages). The weights are plain arrays in ``stands_alone.npz``: inference needs numpy alone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.understanding.linear_head import passage_probabilities

WEIGHTS = Path(__file__).with_name("stands_alone.npz")
# Below this a sentence is read as leaning on what came before it, and joins the entry of the sentence before it.
# A wrong join costs more than a longer row: two statements become one that a later update of either supersedes
# whole ("We have 15 employees. We run 6 vans."). Chosen out of fold on the training set's language folds: 1 of
# 756 sentences that stand alone reads under it (18 under 0.5), while 610 of 744 that lean do.
THRESHOLD = 0.1


def stands_alone_probabilities(texts: list[str]) -> np.ndarray:
    """The probability that each text says by itself whom and what it is about (one embedding batch)."""
    return passage_probabilities(WEIGHTS, texts)
