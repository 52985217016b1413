"""Train and score ``memory.understanding.stands_alone``: does a sentence say whom and what it is about by
itself ("I made a bowl in pottery class.") or lean on something said before it ("I made it in class.")?

``python -m eval.stands_alone train`` fits a logistic regression on the bundled model's embedding of each
sentence in ``eval/data/stands_alone/train*.jsonl`` (en de fr es ru cs), choosing C on folds that each hold out
one language, and writes ``memory/understanding/stands_alone.npz``. ``python -m eval.stands_alone`` scores the
committed weights on ``heldout.jsonl`` (it pl pt nl uk tr sv ro, written by another hand, never trained or
tuned on), per language, style and label.
"""

from __future__ import annotations

from pathlib import Path

from eval.linear_heads import accuracy_by, accuracy_rows, fit_passage_reading, jsonl_rows, train_or_report

DATA = Path(__file__).resolve().parent / "data" / "stands_alone"
C_GRID = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0)


def load(name: str) -> list[dict]:
    return jsonl_rows(DATA, name)


def training_rows() -> list[dict]:
    return jsonl_rows(DATA, "train*.jsonl")


def train() -> None:
    from memory.understanding import stands_alone

    fit_passage_reading(training_rows(), "stands_alone", stands_alone.WEIGHTS, C_GRID)


def score(name: str = "heldout.jsonl") -> dict[str, tuple[int, int]]:
    """Right and total on a file, by language, style and label."""
    from memory.understanding.stands_alone import THRESHOLD, stands_alone_probabilities

    rows = load(name)
    guesses = stands_alone_probabilities([r["text"] for r in rows]) >= THRESHOLD
    return accuracy_by(
        (
            ("all", row["lang"], row["style"], "stands alone" if row["stands_alone"] else "leans on what came before"),
            guess == bool(row["stands_alone"]),
        )
        for row, guess in zip(rows, guesses, strict=True)
    )


def report_lines() -> list[str]:
    from memory.understanding.stands_alone import THRESHOLD

    rows = training_rows()
    scores = score()
    lines = [
        "## Sentences that stand alone",
        "",
        "`python -m eval.stands_alone` (run by `make eval`): does a sentence say whom and what it is about by "
        'itself ("My dog hid his bone in my slipper.") or lean on something said before it ("He hid his bone in '
        'my slipper once!")? The reading of `memory.understanding.stands_alone`, trained on '
        f"{len(rows):,} sentences in en de fr es ru cs (`eval/data/stands_alone/train*.jsonl`: 900 of every length, "
        "600 short ones). Scored here on "
        "`heldout.jsonl`: sentences in eight languages it never saw (it pl pt nl uk tr sv ro), written by another "
        "hand that saw neither the training file nor the model; never tuned on. Scored twice: 94.7 % with the first "
        "900 sentences, and again after the 600 short ones were added (written because the extractor's own tests "
        'showed "My name is Alice Morgan" read as leaning, not from this file\'s errors). The offline extractor '
        f"joins a statement that opens its sentence and reads under {THRESHOLD} to the entry of the sentence before "
        "it in the same message (decision 0029).",
        "",
        "| held out | right | accuracy |",
        "|---|---|---|",
    ]
    lines += accuracy_rows(scores)
    return lines


def main() -> None:
    train_or_report(train, report_lines)


if __name__ == "__main__":
    main()
