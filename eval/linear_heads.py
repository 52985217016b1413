"""Fit a learned yes/no reading (``memory.understanding.linear_head``): a logistic regression over embeddings,
its regularisation chosen on folds that each hold out one language, so the choice favours what carries over
to a language it was not fitted on."""

from __future__ import annotations

import collections
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np


def fit_by_language_folds(x: np.ndarray, y: np.ndarray, languages: np.ndarray, c_grid: tuple[float, ...]):
    from sklearn.linear_model import LogisticRegression

    fold_accuracy = {}
    for c in c_grid:
        scores = []
        for language in sorted(set(languages)):
            held = languages == language
            model = LogisticRegression(C=c, max_iter=5000).fit(x[~held], y[~held])
            scores.append(float((model.predict(x[held]) == y[held]).mean()))
        fold_accuracy[c] = float(np.mean(scores))
        print(f"C={c}: accuracy on held-out language folds {fold_accuracy[c]:.3f}")
    chosen = max(c_grid, key=lambda c: fold_accuracy[c])
    print(f"chose C={chosen}")
    return LogisticRegression(C=chosen, max_iter=5000).fit(x, y)


def jsonl_rows(folder: Path, pattern: str) -> list[dict]:
    """The rows of the JSON-lines files in ``folder`` whose names match ``pattern``, file by file in name order."""
    return [
        json.loads(line)
        for path in sorted(folder.glob(pattern))
        for line in path.read_text().splitlines()
        if line.strip()
    ]


def fit_passage_reading(rows: list[dict], label: str, weights: Path, c_grid: tuple[float, ...]):
    """A yes/no reading of ``row["text"]`` embedded as a passage, ``row[label]`` its answer: fitted with C chosen on
    language folds and written to ``weights``. Returns the model and what it was fitted on (x, y, languages)."""
    from memory.text.embeddings import local_embedder

    x = local_embedder().embed([r["text"] for r in rows], query=False).astype(np.float64)
    y = np.asarray([bool(r[label]) for r in rows])
    languages = np.asarray([r["lang"] for r in rows])
    model = fit_by_language_folds(x, y, languages, c_grid)
    save(model, weights)
    print(f"wrote {weights.name} from {len(rows)} sentences")
    return model, x, y, languages


def save(model, path: Path) -> None:
    from memory.understanding.linear_head import head_weights

    np.savez_compressed(path, weights=model.coef_[0].astype(np.float32), bias=np.float32(model.intercept_[0]))
    head_weights.cache_clear()


def accuracy_by(results: Iterable[tuple[Iterable[str], bool]]) -> dict[str, tuple[int, int]]:
    """Right and total per key, from each scored row's keys ("all", its language, its label …) and whether the
    reading got it right; keys in the order they first appear."""
    tally: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for keys, right in results:
        for key in keys:
            tally[key][0] += int(right)
            tally[key][1] += 1
    return {key: (right, total) for key, (right, total) in tally.items()}


def accuracy_rows(scores: dict[str, tuple[int, int]]) -> list[str]:
    """``accuracy_by``'s tally as the rows of a markdown table: key, right of total, accuracy."""
    return [f"| {key} | {right} / {total} | {right / total:.1%} |" for key, (right, total) in scores.items()]


def train_or_report(train: Callable[[], None], report_lines: Callable[[], list[str]]) -> None:
    """``python -m eval.<reading> train`` fits and writes the weights; without arguments the held-out report is
    printed and written into docs/quality.md."""
    from bench.harness import setup_django
    from eval.report_sections import replace_section

    setup_django()
    if sys.argv[1:] == ["train"]:
        train()
        return
    lines = report_lines()
    print("\n".join(lines))
    replace_section(lines)
