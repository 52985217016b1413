"""The features the learned decisions read: the bundled multilingual embedding of the sentence, and a
few marks that mean the same in every script (a question mark, a number, an e-mail address).

Always the bundled model, whatever engine embeds memories: the weights were trained on its vectors.
"""

from __future__ import annotations

import math
import re

import numpy as np

from memory.text.analysis import bounded

_QUESTION_END = re.compile(r"[?？]\s*[\"'»”)]*\s*$")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_LONG_NUMBER = re.compile(r"\d[\d\s\-/]{4,}\d")
SURFACE_FEATURES = ("question_mark", "opens_with_inverted_mark", "exclamation", "digits", "long_number", "email",
                    "length")  # fmt: skip


def ends_as_question(text: str) -> bool:
    """Whether the text ends as a question does in every script ("?", "？"), closing quotes aside."""
    return bool(_QUESTION_END.search(text.strip()))


def surface(text: str) -> list[float]:
    """The script-independent marks of one sentence.

    >>> surface("Where do I live?")[:2]
    [1.0, 0.0]
    """
    stripped = bounded(text).strip()  # the patterns backtrack for seconds over a 30,000-character word
    return [
        1.0 if _QUESTION_END.search(stripped) or "?" in stripped[-3:] else 0.0,
        1.0 if stripped[:1] in "¿¡" else 0.0,
        1.0 if "!" in stripped or "！" in stripped else 0.0,
        1.0 if any(c.isdigit() for c in stripped) else 0.0,
        1.0 if _LONG_NUMBER.search(stripped) else 0.0,
        1.0 if _EMAIL.search(stripped) else 0.0,
        min(1.0, math.log1p(len(stripped)) / 6.0),
    ]


def feature_matrix(texts: list[str], *, cache_scope: str | None = None) -> np.ndarray:
    """One row per text: the embedding, then the surface marks. Embedded as a passage under the space's
    cache scope, as a turn's message and a memory's content already are: with the bundled engine the
    reading costs no embedding of its own."""
    from memory.text.embeddings import local_embedder

    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    vectors = local_embedder().embed(list(texts), query=False, cache_scope=cache_scope)
    marks = np.asarray([surface(t) for t in texts], dtype=np.float32)
    return np.hstack([vectors.astype(np.float32), marks])
