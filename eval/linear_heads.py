"""Fit a learned yes/no reading (``memory.understanding.linear_head``): a logistic regression over embeddings,
its regularisation chosen on folds that each hold out one language, so the choice favours what carries over
to a language it was not fitted on."""

from __future__ import annotations

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


def save(model, path: Path) -> None:
    from memory.understanding.linear_head import head_weights

    np.savez_compressed(path, weights=model.coef_[0].astype(np.float32), bias=np.float32(model.intercept_[0]))
    head_weights.cache_clear()
