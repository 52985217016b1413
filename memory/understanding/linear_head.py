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


def passage_probabilities(path: Path, texts: list[str]) -> np.ndarray:
    """The reading at ``path`` of each text, embedded as a passage by the bundled model under the space's cache
    scope (the vector a turn already computed for the sentence): one embedding batch for them all."""
    if not texts:
        return np.zeros(0, dtype=np.float32)
    from memory.text.analysis import remembered_space_key
    from memory.text.embeddings import local_embedder

    vectors = local_embedder().embed(list(texts), query=False, cache_scope=remembered_space_key())
    return head_probabilities(path, vectors)
