"""An experiment kept reproducible, not a shipped reading: can a learned yes/no reading tell a statement that says
something lasting about its speaker ("I play the cello in a community orchestra.") from passing talk — a feeling,
a thank-you, a maxim, a remark about the listener ("I felt so free and alive.")?

``python -m eval.lasting`` fits a logistic regression on the bundled model's embedding of every sentence in
``eval/data/lasting/train*.jsonl`` (en de fr es ru cs) and of the understanding set's statements, instructions
and small talk in the same languages, choosing C on folds that each hold out one language; prints what each
threshold drops out of fold, and the accuracy on the three held-out files (never trained or tuned on). Nothing is
written: the reading was measured as a filter on the offline extractor's rows and not kept
(eval/data/lasting/LABELS.md has the figures).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from eval.linear_heads import accuracy_by, fit_by_language_folds

DATA = Path(__file__).resolve().parent / "data" / "lasting"
UNDERSTANDING = DATA.parent / "understanding"
TRAINING_LANGUAGES = ("en", "de", "fr", "es", "ru", "cs")
# The understanding set's labels say the same of most of its sentences: a statement or a standing instruction is
# something lasting about the customer ("My name is Alice.", "I live in Leeds."), small talk is not ("Thanks a
# lot."). Its short plain statements are what this set's own files have least of.
LASTING_BY_INTENT = {"statement": True, "instruction": True, "small_talk": False}
C_GRID = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
HELD_OUT = ("heldout.jsonl", "heldout_phrasings.jsonl", "heldout_casual.jsonl")
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def training_rows() -> list[dict]:
    own = [row for path in sorted(DATA.glob("train*.jsonl")) for row in load(path)]
    borrowed = [
        row | {"lasting": LASTING_BY_INTENT[row["intent"]]}
        for path in sorted(UNDERSTANDING.glob("train_*.jsonl"))
        for row in load(path)
        if row["lang"] in TRAINING_LANGUAGES and row["intent"] in LASTING_BY_INTENT
    ]
    return own + borrowed


def main() -> None:
    from sklearn.linear_model import LogisticRegression

    from bench.harness import setup_django

    setup_django()
    from memory.text.embeddings import local_embedder

    embed = local_embedder().embed
    rows = training_rows()
    x = embed([r["text"] for r in rows], query=False).astype(np.float64)
    y = np.asarray([bool(r["lasting"]) for r in rows])
    languages = np.asarray([r["lang"] for r in rows])
    model = fit_by_language_folds(x, y, languages, C_GRID)
    held = np.zeros(len(y))
    for language in sorted(set(languages)):
        fold = languages == language
        held[fold] = LogisticRegression(C=model.C, max_iter=5000).fit(x[~fold], y[~fold]).predict_proba(x[fold])[:, 1]
    for threshold in THRESHOLDS:
        dropped = held < threshold
        print(
            f"threshold {threshold}: out of fold, lasting dropped {int((dropped & y).sum())} of {int(y.sum())}, "
            f"passing dropped {int((dropped & ~y).sum())} of {int((~y).sum())}"
        )
    print(f"trained on {len(rows)} sentences")
    for name in HELD_OUT:
        scored = load(DATA / name)
        guesses = model.predict_proba(embed([r["text"] for r in scored], query=False))[:, 1] >= 0.5
        tally = accuracy_by(
            (("all", r["lang"], "lasting" if r["lasting"] else "passing"), guess == bool(r["lasting"]))
            for r, guess in zip(scored, guesses, strict=True)
        )
        print(name, ", ".join(f"{key} {right}/{total}" for key, (right, total) in tally.items()))


if __name__ == "__main__":
    main()
