"""Train and score ``memory.understanding.value_words``: does a word name a value (a thing, kind, activity,
person) or reword (a verb of doing or feeling, an evaluation, an abstract noun)?

``python -m eval.value_words train`` fits a logistic regression on the bundled model's embedding of each
word in ``eval/data/grounding/words_train.jsonl`` (en de ru cs es fr), choosing C on folds that each hold
out one language, and writes ``memory/understanding/value_words.npz``. ``python -m eval.value_words score``
scores the committed weights on ``words_heldout.jsonl`` (pl it pt nl sv, written separately, never trained
or tuned on).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from bench.harness import setup_django
from eval.linear_heads import fit_by_language_folds, save

DATA = Path(__file__).resolve().parent / "data" / "grounding"
C_GRID = (1.0, 3.0, 10.0, 30.0)


def load(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def _embedded(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    from memory.text.embeddings import local_embedder

    x = local_embedder().embed([r["word"] for r in rows], query=True)
    return x.astype(np.float64), np.asarray([r["label"] == "value" for r in rows])


def train() -> None:
    from memory.understanding import value_words

    rows = load("words_train.jsonl")
    x, y = _embedded(rows)
    model = fit_by_language_folds(x, y, np.asarray([r["lang"] for r in rows]), C_GRID)
    save(model, value_words.WEIGHTS)
    print(f"wrote {value_words.WEIGHTS.name} from {len(rows)} words")


def score() -> dict[str, tuple[int, int]]:
    from memory.understanding.value_words import value_probabilities

    rows = load("words_heldout.jsonl")
    predicted = value_probabilities([r["word"] for r in rows]) >= 0.5
    per_language: dict[str, tuple[int, int]] = {}
    for row, guess in zip(rows, predicted, strict=True):
        right, total = per_language.get(row["lang"], (0, 0))
        per_language[row["lang"]] = (right + int(guess == (row["label"] == "value")), total + 1)
    return per_language


def main() -> None:
    setup_django()
    if sys.argv[1:] == ["train"]:
        train()
        return
    for language, (right, total) in sorted(score().items()):
        print(f"{language}: {right}/{total} ({right / total:.1%})")


if __name__ == "__main__":
    main()
