"""Train and score ``memory.understanding.reported_speech``: does a sentence give a claim, opinion or advice as
someone else's ("My doctor says I …", "Selon mon coach, …") or as the speaker's own?

``python -m eval.reported_speech train`` fits a logistic regression on the bundled model's embedding of each
sentence in ``eval/data/reported_speech/train.jsonl`` (en de fr es ru cs), choosing C on folds that each hold
out one language, and writes ``memory/understanding/reported_speech.npz``. ``python -m eval.reported_speech``
scores the committed weights on ``heldout.jsonl`` (it pl nl pt uk tr, written separately, never trained or
tuned on), per language and per form (a customer's message, a third-person memory entry).
"""

from __future__ import annotations

from pathlib import Path

from eval.linear_heads import accuracy_by, accuracy_rows, fit_passage_reading, jsonl_rows, train_or_report

DATA = Path(__file__).resolve().parent / "data" / "reported_speech"
C_GRID = (0.3, 1.0, 3.0, 10.0, 30.0)


def load(name: str) -> list[dict]:
    return jsonl_rows(DATA, name)


def train() -> None:
    from memory.understanding import reported_speech

    fit_passage_reading(load("train.jsonl"), "reported", reported_speech.WEIGHTS, C_GRID)


def score() -> dict[str, tuple[int, int]]:
    """Right and total on the held-out file, by language, by form and by label."""
    from memory.understanding.reported_speech import THRESHOLD, reported_probabilities

    rows = load("heldout.jsonl")
    guesses = reported_probabilities([r["text"] for r in rows]) >= THRESHOLD
    return accuracy_by(
        (
            ("all", row["lang"], row["form"], "reported" if row["reported"] else "own statement"),
            guess == bool(row["reported"]),
        )
        for row, guess in zip(rows, guesses, strict=True)
    )


def report_lines() -> list[str]:
    from memory.extraction.reported import CLEARLY_REPORTED

    rows = load("train.jsonl")
    scores = score()
    lines = [
        "## Reported speech: whose view a sentence gives",
        "",
        "`python -m eval.reported_speech` (run by `make eval`): does a sentence give a claim, opinion or advice as "
        'someone else\'s ("Mein Hausarzt meint, ich hätte …", "Selon mon coach, …") or as the speaker\'s own? '
        f"The reading of `memory.understanding.reported_speech`, trained on {len(rows)} sentences in en de fr es ru "
        "cs (`eval/data/reported_speech/train.jsonl`; the English and German extras, and some of the Russian, "
        "Czech, French and Spanish ones, were written after reading the near misses of the grounding files "
        "tune.jsonl and heldout.jsonl, so their figures for this check are development figures). Scored here on "
        "`heldout.jsonl`: 120 sentences in six languages it never saw (it pl nl pt uk tr), written by a hand that "
        "saw neither the training file nor the model; never tuned on. Grounding refuses an entry only where the "
        f"sentence it draws on reads as reported at {CLEARLY_REPORTED} or more and the entry does not "
        "(decision 0026).",
        "",
        "| held out (it pl nl pt uk tr) | right | accuracy |",
        "|---|---|---|",
    ]
    lines += accuracy_rows(scores)
    return lines


def main() -> None:
    train_or_report(train, report_lines)


if __name__ == "__main__":
    main()
