"""Train and score ``memory.understanding.topic_words``: could a word name what a sentence is about (a subject)
or is it a filler (a verb, an evaluation, an adverb, a chat word, a vague noun)?

``python -m eval.topic_words train`` fits a logistic regression on the bundled model's embedding of each word
in ``eval/data/understanding/topic_words_train.jsonl`` (en de fr es ru cs ja), choosing C on folds that each
hold out one language, and writes ``memory/understanding/topic_words.npz``. ``python -m eval.topic_words``
(and ``make eval``) scores the committed weights on ``topic_words_heldout.jsonl`` (it pt nl sv pl tr uk,
written separately, never trained or tuned on) and writes its section of docs/quality.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from eval.linear_heads import accuracy_by, accuracy_rows, fit_by_language_folds, save, train_or_report

DATA = Path(__file__).resolve().parent / "data" / "understanding"
C_GRID = (0.3, 1.0, 3.0, 10.0, 30.0)


def load(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def train() -> None:
    from memory.understanding import topic_words
    from memory.understanding.value_words import word_vectors

    rows = load("topic_words_train.jsonl")
    x = word_vectors([r["word"] for r in rows]).astype(np.float64)
    y = np.asarray([r["label"] == "subject" for r in rows])
    model = fit_by_language_folds(x, y, np.asarray([r["lang"] for r in rows]), C_GRID)
    save(model, topic_words.WEIGHTS)
    print(f"wrote {topic_words.WEIGHTS.name} from {len(rows)} words")


def score() -> dict[str, tuple[int, int]]:
    """Right and total on the held-out file: all, by language and by label."""
    from memory.understanding.topic_words import THRESHOLD, subject_probabilities

    rows = load("topic_words_heldout.jsonl")
    guesses = subject_probabilities([r["word"] for r in rows]) >= THRESHOLD
    return accuracy_by(
        (("all", row["lang"], row["label"]), guess == (row["label"] == "subject"))
        for row, guess in zip(rows, guesses, strict=True)
    )


def report_lines() -> list[str]:
    rows = load("topic_words_train.jsonl")
    languages = " ".join(sorted({r["lang"] for r in rows}))
    lines = [
        "## Topic words: a subject, never a filler",
        "",
        "`python -m eval.topic_words` (run by `make eval`): can a word of a statement name what it is about "
        '("adoption", "studio", "family") or is it a filler ("symbolize", "special", "kinda")? A statement '
        "whose attribute the reading does not name takes its topic from its words the reading of "
        f"`memory.understanding.topic_words` calls a subject. Trained on {len(rows)} words in {languages} "
        "(`topic_words_train.jsonl`); scored here on `topic_words_heldout.jsonl`, words in seven languages it "
        "never saw, written separately and never tuned on.",
        "",
        "| held out (it pt nl sv pl tr uk) | right | accuracy |",
        "|---|---|---|",
    ]
    lines += accuracy_rows(score())
    return lines


def main() -> None:
    train_or_report(train, report_lines)


if __name__ == "__main__":
    main()
