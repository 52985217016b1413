"""Whether a candidate row answers the question: a learned decision over what recall already knows of the pair.

A fixed cosine cut-off on the small bundled model cannot tell a paraphrase from an unrelated question — the
same distances hold both ("What car does the customer own?" against "I drive a Skoda Octavia." sits where
"Where does the president live?" against "I live in Leeds." does). The gate reads more than the distance:
where the row stands among this question's candidates, the words they share, whether the attribute the
question asks about (the learned reading, ``memory.understanding``) is the one the row states (its topic,
read when it was written), and what kind of sentence the question is. Logistic regression over those
features, trained by ``python -m eval.recall_gate train`` on eval/data/recall_gate/ (questions and the
history lines that answer them, or none); its weights are plain arrays in ``relevance.npz``.

A row the distance bounds pass is recalled only if its probability reaches the space's ``relevance_floor``;
one they do not pass is recalled when it reaches ``relevance_admit`` (a paraphrase: "What car does the
customer own?" for "I drive a Skoda Octavia."). The gate reads the bundled model's vectors; with another
embedding engine, or with the gate turned off (``relevance_gate``), the distance bounds decide alone.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path

import numpy as np

from memory.understanding.readings import ATTRIBUTES, Reading

WEIGHTS = Path(__file__).with_name("relevance.npz")
ROW_KINDS = ("fact", "event", "instruction", "task")
FEATURES = (
    "distance",
    "distance_above_nearest",
    "nearest_position",
    "first_nearest",
    "keyword_share",
    "keyword_any",
    "topic_named",
    "row_attribute_known",
    "attribute_agreement",
    "attribute_agreement_near",
    "question_attribute_confidence",
    "question_about_nothing",
    "question_intent",
    "small_talk_intent",
    "question_about_customer",
    "question_about_customer_agreeing",
    *(f"kind_{k}" for k in ROW_KINDS),
)
# The question's and the row's vectors multiplied dimension by dimension: a similarity whose weights are
# learned, where the cosine weighs every dimension alike.
SIMILARITY_DIMENSIONS = 384
ALL_FEATURES = (*FEATURES, *(f"similarity_{d}" for d in range(SIMILARITY_DIMENSIONS)))


@dataclasses.dataclass(frozen=True)
class Pair:
    """What recall knows of one candidate row for one question."""

    distance: float | None
    nearest_distance: float | None
    nearest_position: int | None
    matched_tokens: int
    query_keywords: int
    topic_named: bool
    row_topic: str
    row_kind: str


@dataclasses.dataclass(frozen=True)
class QuestionReading:
    attribute_scores: dict[str, float]
    intent_scores: dict[str, float]
    subject_scores: dict[str, float] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, reading: Reading | None) -> QuestionReading:
        """``None`` when the question could not be read (no embedding): its features are then neutral."""
        if reading is None:
            return cls(attribute_scores={}, intent_scores={})
        return cls(
            attribute_scores=reading.attribute_scores,
            intent_scores=reading.intent_scores,
            subject_scores=reading.subject_scores,
        )


def features(pair: Pair, question: QuestionReading, similarity: np.ndarray) -> np.ndarray:
    """``similarity``: the question's vector times the row's, both the bundled model's own (unrotated). An
    array, not a list: the similarity's 384 numbers stay numpy's (a list of them cost recall ~1 ms)."""
    distance = 0.5 if pair.distance is None else float(pair.distance)
    nearest = distance if pair.nearest_distance is None else float(pair.nearest_distance)
    position = pair.nearest_position
    known = pair.row_topic in ATTRIBUTES and pair.row_topic not in ("other", "none")
    agreement = question.attribute_scores.get(pair.row_topic, 0.0) if known else 0.0
    attribute_confidence = max(question.attribute_scores.values(), default=0.0)
    about_nothing = question.attribute_scores.get("none", 0.0) + question.attribute_scores.get("other", 0.0)
    # "Where does the president live?" asks the attribute the customer's residence row states, of someone else.
    about_customer = question.subject_scores.get("customer", 0.5)
    described = [
        distance,
        max(0.0, distance - nearest),
        0.0 if position is None else 1.0 / position,
        1.0 if position == 1 else 0.0,
        min(1.0, pair.matched_tokens / max(1, pair.query_keywords)),
        1.0 if pair.matched_tokens else 0.0,
        1.0 if pair.topic_named else 0.0,
        1.0 if known else 0.0,
        agreement,
        agreement * max(0.0, 0.3 - distance) / 0.3,
        attribute_confidence,
        about_nothing,
        question.intent_scores.get("question", 0.0),
        question.intent_scores.get("small_talk", 0.0),
        about_customer,
        about_customer * agreement,
        *(1.0 if pair.row_kind == k else 0.0 for k in ROW_KINDS),
    ]
    return np.concatenate([np.asarray(described, dtype=np.float64), np.asarray(similarity, dtype=np.float64)])


@dataclasses.dataclass(frozen=True)
class Gate:
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float

    def probabilities(self, rows) -> np.ndarray:
        """``rows``: one feature row per candidate (``features``), as arrays or lists."""
        if len(rows) == 0:
            return np.zeros(0)
        x = (np.asarray(rows, dtype=np.float64) - self.mean) / self.scale
        logits = x @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30)))


@lru_cache(maxsize=1)
def gate() -> Gate:
    with np.load(WEIGHTS, allow_pickle=False) as data:
        stored = tuple(str(x) for x in data["features"])
        if stored != ALL_FEATURES:
            raise RuntimeError(f"{WEIGHTS.name}: its features differ from the code's")
        return Gate(
            mean=data["mean"],
            scale=data["scale"],
            weights=data["weights"],
            bias=float(data["bias"]),
        )
