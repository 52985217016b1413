"""A learned yes/no reading over the bundled model's embedding: a logistic regression's weights, stored as
plain arrays (``weights``, ``bias``) beside the module that reads them, so inference needs numpy alone.
``eval.linear_heads`` fits and writes them."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np


@cache
def head_weights(path: Path) -> tuple[np.ndarray, float]:
    with np.load(path) as arrays:
        return arrays["weights"].astype(np.float32), float(arrays["bias"])


def head_probabilities(path: Path, vectors: np.ndarray) -> np.ndarray:
    weights, bias = head_weights(path)
    return 1.0 / (1.0 + np.exp(-(vectors.astype(np.float32) @ weights + bias)))
