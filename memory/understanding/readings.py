"""``read(texts)``: each sentence's intent, attribute and polarity, with the model's confidence.

Three softmax heads over the same features (``features.feature_matrix``): standardised, compared with a
fixed sample of training sentences by a Gaussian kernel (a Nyström approximation of a kernel machine: the
linear heads over the raw embedding confused a negated statement with a correction and a reminder with a
question on languages never trained on), then linear. The weights are plain arrays in ``weights.npz``,
written by ``python -m eval.understanding train`` with the labels, so inference needs numpy alone.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path

import numpy as np

from memory.text.analysis import read_in_block, remembered_space_key
from memory.understanding.features import feature_matrix

WEIGHTS = Path(__file__).with_name("weights.npz")
HEADS = ("intent", "attribute", "polarity", "subject")
INTENTS = ("statement", "question", "instruction", "forget", "correction", "small_talk")
ATTRIBUTES = ("name", "residence", "contact", "family", "pets", "vehicle", "job", "company", "plan", "payment",
              "schedule", "health", "education", "hobby", "preference", "order", "other", "none")  # fmt: skip
# The attributes that name a subject (a topic, a key to search by); "other" and "none" name nothing.
SUBJECT_ATTRIBUTES = frozenset(ATTRIBUTES) - {"other", "none"}
POLARITIES = ("positive", "negative")
# Whom a question is about: the customer (their own life, family and pets as theirs), someone else, the
# company the agent speaks for, or nobody (general knowledge, small talk). Trained on its own labelled
# questions (eval/data/understanding/about_train.jsonl) over the same kernel.
SUBJECTS = ("customer", "other_person", "company", "nothing")
LABELS = {"intent": INTENTS, "attribute": ATTRIBUTES, "polarity": POLARITIES, "subject": SUBJECTS}


@dataclasses.dataclass(frozen=True)
class Reading:
    intent: str
    intent_confidence: float
    attribute: str
    attribute_confidence: float
    polarity: str
    polarity_confidence: float
    intent_scores: dict[str, float]
    attribute_scores: dict[str, float] = dataclasses.field(default_factory=dict)
    subject_scores: dict[str, float] = dataclasses.field(default_factory=dict)

    @property
    def says_something_lasting(self) -> bool:
        """A statement, a standing instruction or a correction: what memory may keep."""
        return self.intent in ("statement", "instruction", "correction")

    @property
    def negative(self) -> bool:
        return self.polarity == "negative"


@dataclasses.dataclass(frozen=True)
class Heads:
    mean: np.ndarray
    scale: np.ndarray
    centers: np.ndarray  # standardised training sentences the kernel compares with
    gamma: float
    weights: dict[str, np.ndarray]  # per head: labels × centers (the Nyström normalisation folded in)
    biases: dict[str, np.ndarray]
    center_norms: np.ndarray = dataclasses.field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "center_norms", (self.centers**2).sum(axis=1)[None, :])

    def kernel(self, features: np.ndarray) -> np.ndarray:
        standardised = (features - self.mean) / self.scale
        squared = (standardised**2).sum(axis=1, keepdims=True) + self.center_norms - 2.0 * standardised @ self.centers.T
        return np.exp(-self.gamma * np.maximum(squared, 0.0))

    def probabilities(self, features: np.ndarray) -> dict[str, np.ndarray]:
        kernel = self.kernel(features)
        out = {}
        for head in HEADS:
            logits = kernel @ self.weights[head].T + self.biases[head]
            logits -= logits.max(axis=1, keepdims=True)
            exp = np.exp(logits)
            out[head] = exp / exp.sum(axis=1, keepdims=True)
        return out


@lru_cache(maxsize=1)
def heads() -> Heads:
    with np.load(WEIGHTS, allow_pickle=False) as data:
        for head in HEADS:
            stored = tuple(str(x) for x in data[f"{head}_labels"])
            if stored != LABELS[head]:
                raise RuntimeError(f"{WEIGHTS.name}: {head} labels {stored} differ from the code's {LABELS[head]}")
        return Heads(
            mean=data["mean"].astype(np.float32),
            scale=data["scale"].astype(np.float32),
            centers=data["centers"].astype(np.float32),
            gamma=float(data["gamma"]),
            weights={h: data[f"{h}_weights"].astype(np.float32) for h in HEADS},
            biases={h: data[f"{h}_bias"].astype(np.float32) for h in HEADS},
        )


def readings_of(features: np.ndarray) -> list[Reading]:
    probabilities = heads().probabilities(features)
    readings = []
    for row in range(features.shape[0]):
        picked = {h: int(np.argmax(probabilities[h][row])) for h in HEADS}
        readings.append(
            Reading(
                intent=INTENTS[picked["intent"]],
                intent_confidence=float(probabilities["intent"][row, picked["intent"]]),
                attribute=ATTRIBUTES[picked["attribute"]],
                attribute_confidence=float(probabilities["attribute"][row, picked["attribute"]]),
                polarity=POLARITIES[picked["polarity"]],
                polarity_confidence=float(probabilities["polarity"][row, picked["polarity"]]),
                intent_scores={i: float(p) for i, p in zip(INTENTS, probabilities["intent"][row], strict=True)},
                attribute_scores={
                    a: float(p) for a, p in zip(ATTRIBUTES, probabilities["attribute"][row], strict=True)
                },
                subject_scores={s: float(p) for s, p in zip(SUBJECTS, probabilities["subject"][row], strict=True)},
            )
        )
    return readings


def read(texts: list[str], *, cache_scope: str | None = None) -> list[Reading]:
    """One reading per text, in order (one embedding batch for them all).

    The vectors are cached under ``cache_scope``, by default the space whose turn or recall is running
    (``memory.text.analysis.languages_remembered``): a text read twice in one space — a message, then its
    sentence as an entry to ground — is embedded once, and nothing is shared across spaces."""
    if not texts:
        return []
    scope = cache_scope or remembered_space_key()
    memo = read_in_block("reading") if scope == remembered_space_key() else None
    if memo is None:
        return readings_of(feature_matrix(list(texts), cache_scope=scope))
    unread = list(dict.fromkeys(t for t in texts if ("reading", t) not in memo))
    if unread:
        for text, reading in zip(unread, readings_of(feature_matrix(unread, cache_scope=scope)), strict=True):
            memo[("reading", text)] = reading
    return [memo[("reading", t)] for t in texts]


def read_one(text: str, *, cache_scope: str | None = None) -> Reading:
    return read([text], cache_scope=cache_scope)[0]
