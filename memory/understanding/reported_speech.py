"""``reported_probabilities(texts)``: whether a sentence gives a claim, opinion or advice as someone else's.

"My doctor says I might have a vitamin D deficiency", "Laut meiner Frau schnarche ich", "Selon mon coach,
je suis prêt" report what another person holds; "I think I might have a vitamin D deficiency", "My wife
snores", "I told my landlord I'm moving out" are the speaker's own statements. Grounding refuses an entry
that states as the customer's own what the sentence it draws on only reports (``memory.extraction.grounding``):
the frames are too many, in too many languages, with or without "that", for a list of verbs to hold.

A logistic regression over the bundled model's embedding of the sentence (as a passage, the vector the turn
already computed for it), trained by ``python -m eval.reported_speech train`` on
``eval/data/reported_speech/train.jsonl`` (six languages, customers' messages and third-person memory
entries) with its regularisation chosen on folds that each hold out one language; scored on
``heldout.jsonl`` (six other languages). The weights are plain arrays in ``reported_speech.npz``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.understanding.linear_head import passage_probabilities

WEIGHTS = Path(__file__).with_name("reported_speech.npz")
THRESHOLD = 0.5


def reported_probabilities(texts: list[str]) -> np.ndarray:
    """The probability that each text gives what it says as someone else's (one embedding batch for them all)."""
    return passage_probabilities(WEIGHTS, texts)
