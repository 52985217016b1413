"""Train and score the learned decisions of ``memory.understanding``: intent, attribute, polarity, and whom
a question is about.

``python -m eval.understanding train`` fits the three sentence heads on ``eval/data/understanding/train_*.jsonl``
only (the fourth on ``about_train*.jsonl``), choosing the regularisation on folds that each hold out a group of
its languages, and writes ``memory/understanding/weights.npz``; ``train-subject`` refits the fourth alone over
the committed kernel. ``python -m eval.understanding score`` (and
``make eval``) scores the committed weights on the held-out files, which nothing here trains or tunes on:
languages never seen in training, and seen languages in phrasings written separately. Both write their section of
docs/quality.md.
"""

from __future__ import annotations

import collections
import datetime
import json
import sys
from pathlib import Path

import numpy as np

from bench.harness import git_revision, machine_line, setup_django
from eval.report_sections import REPORT, replace_section

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "eval" / "data" / "understanding"
# Written by hands that never saw the training files. The first two were read once, after the first model,
# and the training set grew with phrasing families they showed missing (reminders, password reports,
# denials with a reason); the third was written after that and no error of it was ever read. The fourth was
# written on 2026-12-03, by a hand that saw neither the training files nor the code, in seven languages no file
# here held before, when the third had been scored after four retrainings; no error of it was ever read. The
# fifth, the same way on 2026-12-04 (ga gu si lo ky eo bs), was first scored on weights trained before it
# existed.
HELDOUT = {
    "languages never trained on": "heldout_languages.jsonl",
    "seen languages, new phrasings": "heldout_phrasings.jsonl",
    "untouched: languages never trained on, never read": "heldout_fresh.jsonl",
    "untouched, second: seven more languages never trained on, never read": "heldout_fresh2.jsonl",
    "untouched, third: seven more languages, written after the weights": "heldout_fresh3.jsonl",
}
C_GRID = (1.0, 3.0, 10.0)
# The kernel: this many training sentences as centres (chosen at random with SEED), and a width of
# GAMMA_SCALE / dimensions on standardised features. Both were set on the first two held-out files (1,500
# and 0.5 first; 5,000 and 0.8 read unseen languages' intent 96.8 % against 95.6 % on them); the untouched
# file played no part. The centres are stored in half precision: it changed no reading of those files.
CENTERS = 5000
GAMMA_SCALE = 0.8
LANGUAGE_FOLDS = 4
SEED = 7
# Whom a question is about: its own labelled questions (about_train*.jsonl), over the same kernel, scored on
# about_heldout.jsonl: ten languages none of the training files hold, and English written apart, by a hand that
# saw neither the training questions nor the code (2026-12-04).
SUBJECT_HEAD = "subject"
SUBJECT_HELDOUT = "about_heldout.jsonl"
SENTENCE_HEADS = ("intent", "attribute", "polarity")
SUBJECT_C = 3.0


def load(pattern: str) -> list[dict]:
    rows = []
    for path in sorted(DATA.glob(pattern)):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _features(rows: list[dict]) -> np.ndarray:
    from memory.understanding.features import feature_matrix

    return feature_matrix([r["text"] for r in rows])


def _targets(rows: list[dict], head: str) -> np.ndarray:
    from memory.understanding.readings import LABELS

    return np.asarray([LABELS[head].index(r[head]) for r in rows])


def _kernel_map(x_standardised: np.ndarray):
    from sklearn.kernel_approximation import Nystroem

    gamma = GAMMA_SCALE / x_standardised.shape[1]
    return Nystroem(gamma=gamma, n_components=min(CENTERS, len(x_standardised)), random_state=SEED).fit(x_standardised)


def _fit(features: np.ndarray, y: np.ndarray, n_labels: int, c: float):
    """A multinomial logistic regression over the kernel features; (weights, bias) with a row for every label."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=5000, class_weight="balanced", random_state=SEED)
    model.fit(features, y)
    weights = np.zeros((n_labels, features.shape[1]), dtype=np.float64)
    bias = np.full(n_labels, -30.0, dtype=np.float64)  # a label absent from training is never chosen
    if len(model.classes_) == 2:
        # scikit-learn keeps one row for two classes: the softmax of [0, z] is the same sigmoid.
        weights[model.classes_[1]] = model.coef_[0]
        bias[model.classes_[1]] = model.intercept_[0]
        bias[model.classes_[0]] = 0.0
    else:
        weights[model.classes_] = model.coef_
        bias[model.classes_] = model.intercept_
    return weights, bias


def _standardiser(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    return mean.astype(np.float32), scale.astype(np.float32)


def _language_folds(rows: list[dict]) -> list[np.ndarray]:
    """Masks of the held-out part of each fold: the training languages dealt into LANGUAGE_FOLDS groups, so
    a fold scores languages its model never saw (as the held-out files do)."""
    languages = sorted({r["lang"] for r in rows})
    groups = {lang: index % LANGUAGE_FOLDS for index, lang in enumerate(languages)}
    return [np.asarray([groups[r["lang"]] == fold for r in rows]) for fold in range(LANGUAGE_FOLDS)]


def choose_c(rows: list[dict], x: np.ndarray) -> dict[str, tuple[float, dict[float, float]]]:
    """Per head, the C with the best mean accuracy over folds that each hold out a group of languages."""
    from memory.understanding.readings import LABELS

    scores = {head: {c: [] for c in C_GRID} for head in SENTENCE_HEADS}
    for held in _language_folds(rows):
        mean, scale = _standardiser(x[~held])
        mapping = _kernel_map((x[~held] - mean) / scale)
        train_features = mapping.transform((x[~held] - mean) / scale)
        held_features = mapping.transform((x[held] - mean) / scale)
        for head in SENTENCE_HEADS:
            y = _targets(rows, head)
            for c in C_GRID:
                weights, bias = _fit(train_features, y[~held], len(LABELS[head]), c)
                predicted = np.argmax(held_features @ weights.T + bias, axis=1)
                scores[head][c].append(float((predicted == y[held]).mean()))
    chosen = {}
    for head in SENTENCE_HEADS:
        means = {c: float(np.mean(v)) for c, v in scores[head].items()}
        chosen[head] = (max(means, key=lambda c: (means[c], -c)), means)
    return chosen


def _subject_folds(rows: list[dict], features: np.ndarray, c: float) -> float:
    """The subject head's accuracy on folds that each hold out a group of its languages."""
    from memory.understanding.readings import LABELS

    y = _targets(rows, SUBJECT_HEAD)
    right = 0
    for held in _language_folds(rows):
        weights, bias = _fit(features[~held], y[~held], len(LABELS[SUBJECT_HEAD]), c)
        right += int(((features[held] @ weights.T + bias).argmax(axis=1) == y[held]).sum())
    return right / len(rows)


def _subject_questions() -> list[dict]:
    return [{**r, SUBJECT_HEAD: r["about"]} for r in load("about_train*.jsonl")]


def _subject_head(about: list[dict], features: np.ndarray, normalisation: np.ndarray) -> tuple[float, dict]:
    """The subject head fitted on kernel features (its accuracy on language folds, its arrays for weights.npz),
    the Nyström normalisation folded into its weights as the sentence heads' is."""
    from memory.understanding.readings import LABELS

    folds = _subject_folds(about, features, SUBJECT_C)
    progress(f"understanding: subject: C={SUBJECT_C} (accuracy on held-out language folds {folds:.3f})")
    weights, bias = _fit(features, _targets(about, SUBJECT_HEAD), len(LABELS[SUBJECT_HEAD]), SUBJECT_C)
    return folds, {
        f"{SUBJECT_HEAD}_weights": (weights @ normalisation).astype(np.float32),
        f"{SUBJECT_HEAD}_bias": bias.astype(np.float32),
        f"{SUBJECT_HEAD}_labels": np.asarray(LABELS[SUBJECT_HEAD]),
    }


def train() -> dict:
    from memory.understanding.readings import HEADS, LABELS, WEIGHTS

    rows = load("train_*.jsonl")
    progress(f"understanding: {len(rows)} training sentences, embedding …")
    x = _features(rows)
    progress("understanding: choosing the regularisation on folds of held-out languages …")
    chosen_c = choose_c(rows, x)
    mean, scale = _standardiser(x)
    mapping = _kernel_map((x - mean) / scale)
    features = mapping.transform((x - mean) / scale)
    # The kernel features are k(x, centres) @ normalisation.T, so the normalisation folds into each head.
    normalisation = mapping.normalization_
    arrays = {
        "mean": mean,
        "scale": scale,
        "centers": mapping.components_.astype(np.float16),
        "gamma": np.float64(mapping.gamma),
    }
    chosen = {}
    about = _subject_questions()
    about_features = mapping.transform((_features(about) - mean) / scale)
    for head in HEADS:
        if head == SUBJECT_HEAD:
            folds, subject_arrays = _subject_head(about, about_features, normalisation)
            chosen[head] = {"C": SUBJECT_C, "language_folds": folds}
            arrays.update(subject_arrays)
            continue
        c, scores = chosen_c[head]
        chosen[head] = {"C": c, "language_folds": scores[c]}
        progress(f"understanding: {head}: C={c} (accuracy on held-out language folds {scores[c]:.3f})")
        weights, bias = _fit(features, _targets(rows, head), len(LABELS[head]), c)
        arrays[f"{head}_weights"] = (weights @ normalisation).astype(np.float32)
        arrays[f"{head}_bias"] = bias.astype(np.float32)
        arrays[f"{head}_labels"] = np.asarray(LABELS[head])
    np.savez_compressed(WEIGHTS, **arrays)
    from memory.understanding import readings

    readings.heads.cache_clear()
    return {"sentences": len(rows), "languages": sorted({r["lang"] for r in rows}), "heads": chosen}


def train_subject() -> dict:
    """Fit only the subject head, over the committed kernel (its standardisation and centres), and store it beside
    the three sentence heads, which stay byte for byte: new questions for whom a question is about then change
    nothing else (a full ``train`` embeds again, and the embedding's last digits move the other heads a little)."""
    from memory.understanding.readings import WEIGHTS, heads

    kernel = heads()
    with np.load(WEIGHTS, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    # The Nyström normalisation of the stored centres, as scikit-learn computes it when it fits them.
    centres = kernel.centers.astype(np.float64)
    squared = (centres**2).sum(axis=1)
    gram = np.exp(-kernel.gamma * np.maximum(squared[:, None] + squared[None, :] - 2.0 * centres @ centres.T, 0.0))
    u, singular, vt = np.linalg.svd(gram)
    normalisation = (u / np.sqrt(np.maximum(singular, 1e-12))) @ vt
    about = _subject_questions()
    progress(f"understanding: subject: {len(about)} questions, embedding …")
    features = kernel.kernel(_features(about)).astype(np.float64) @ normalisation.T
    folds, subject_arrays = _subject_head(about, features, normalisation)
    arrays.update(subject_arrays)
    np.savez_compressed(WEIGHTS, **arrays)
    heads.cache_clear()
    return {"questions": len(about), "language_folds": folds}


def _tally(rows: list[dict], predicted: list[str], gold: list[str]) -> dict:
    """Accuracy, per language and per class (recall of each gold label), the confusions and the errors."""
    by_language = collections.defaultdict(list)
    by_class = collections.defaultdict(list)
    confusions = collections.Counter()
    for row, p, g in zip(rows, predicted, gold, strict=True):
        by_language[row["lang"]].append(p == g)
        by_class[g].append(p == g)
        if p != g:
            confusions[(g, p)] += 1
    return {
        "accuracy": float(np.mean([p == g for p, g in zip(predicted, gold, strict=True)])),
        "n": len(rows),
        "by_language": {k: (float(np.mean(v)), len(v)) for k, v in sorted(by_language.items())},
        "by_class": {k: (float(np.mean(v)), len(v)) for k, v in sorted(by_class.items())},
        "confusions": confusions.most_common(6),
        "errors": [(r["lang"], r["text"], g, p) for r, p, g in zip(rows, predicted, gold, strict=True) if p != g],
    }


def score_rows(rows: list[dict]) -> dict:
    """Each sentence head's tally on labelled sentences."""
    from memory.understanding.readings import read

    readings = read([r["text"] for r in rows])
    return {
        head: _tally(rows, [getattr(reading, head) for reading in readings], [r[head] for r in rows])
        for head in SENTENCE_HEADS
    }


def score_subjects(rows: list[dict]) -> dict:
    """The subject head's tally on labelled questions."""
    from memory.understanding.readings import read

    predicted = [max(r.subject_scores, key=r.subject_scores.get) for r in read([row["text"] for row in rows])]
    return {SUBJECT_HEAD: _tally(rows, predicted, [row["about"] for row in rows])}


def _subject_lines() -> list[str]:
    rows = load(SUBJECT_HELDOUT)
    if not rows:
        return []
    scores = score_subjects(rows)
    confusions = ", ".join(f"{g} → {p} ×{n}" for (g, p), n in scores[SUBJECT_HEAD]["confusions"])
    return [
        f"### Held out: whom a question is about ({len(rows)} questions, eval/data/understanding/{SUBJECT_HELDOUT})",
        "",
        f"Accuracy {100 * scores[SUBJECT_HEAD]['accuracy']:.1f} %. Languages none of the training files hold (it pl pt "
        "tr uk ko zh el he) and English written apart, half of the customer's questions naming the customer only by a "
        "pronoun; never trained or tuned on.",
        "",
        "By language:",
        "",
        *_table(scores, SUBJECT_HEAD, "by_language"),
        "",
        "By class:",
        "",
        *_table(scores, SUBJECT_HEAD, "by_class"),
        "",
        f"Most frequent confusions: {confusions or 'none'}.",
        "",
    ]


def _table(scores: dict, head: str, key: str) -> list[str]:
    part = scores[head][key]
    names = list(part)
    return [
        "| " + " | ".join(names) + " |",
        "|" + "---|" * len(names),
        "| " + " | ".join(f"{100 * a:.1f} % ({n})" for a, n in part.values()) + " |",
    ]


def report(training: dict | None = None, training_line: str = "") -> list[str]:
    """``training``: what ``train`` just measured; otherwise ``training_line``, the line the last training
    wrote (scoring the same weights again must not lose how they were trained)."""

    lines = [
        "## Understanding a turn: learned intent, attribute and polarity",
        "",
        f"{machine_line()}, {datetime.date.today().isoformat()}, revision {git_revision()}. "
        "`python -m eval.understanding score` (part of `make eval`); trained by `python -m eval.understanding train`.",
        "",
        f"Logistic-regression heads over a Gaussian kernel (Nyström, {CENTERS:,} training sentences as centres) "
        "on the bundled multilingual embedding of the sentence plus seven script-independent marks "
        "(memory/understanding/). Trained on eval/data/understanding/train_*.jsonl "
        "only. The first two held-out files below were read while choosing the model's form (the kernel, its "
        "width and centres) and the training data's gaps, so their figures are optimistic; the untouched "
        "files were never read, trained or tuned on.",
        "",
    ]
    if training:
        lines += [
            f"Training: {training['sentences']} sentences in {', '.join(training['languages'])}; regularisation "
            f"chosen by accuracy on {LANGUAGE_FOLDS} folds that each hold out a group of training languages: "
            + ", ".join(f"{h} C={v['C']} ({100 * v['language_folds']:.1f} %)" for h, v in training["heads"].items())
            + ".",
            "",
        ]
    elif training_line:
        lines += [training_line, ""]
    for title, name in HELDOUT.items():
        rows = load(name)
        if not rows:
            lines += [f"### Held out: {title}", "", f"(no rows in eval/data/understanding/{name})", ""]
            continue
        scores = score_rows(rows)
        lines += [f"### Held out: {title} ({len(rows)} sentences)", ""]
        lines += [
            "| head | accuracy |",
            "|---|---|",
            *(f"| {h} | {100 * scores[h]['accuracy']:.1f} % |" for h in SENTENCE_HEADS),
            "",
        ]
        for head in ("intent", "attribute"):
            lines += [f"{head.capitalize()} by language:", "", *_table(scores, head, "by_language"), ""]
            lines += [f"{head.capitalize()} by class (share of each gold label read right):", ""]
            lines += [*_table(scores, head, "by_class"), ""]
            confusions = ", ".join(f"{g} → {p} ×{n}" for (g, p), n in scores[head]["confusions"])
            lines += [f"Most frequent {head} confusions: {confusions or 'none'}.", ""]
    return lines + _subject_lines()


def last_training_line(text: str | None = None) -> str:
    """The "Training: …" line of the report's understanding section, or "" when there is none.

    >>> last_training_line("## Understanding a turn: x\\n\\nTraining: 9 sentences.\\n\\n### Held out")
    'Training: 9 sentences.'
    """
    text = (REPORT.read_text() if REPORT.exists() else "") if text is None else text
    section = text.split("## Understanding a turn:", 1)[1:]
    if not section:
        return ""
    own = section[0].split("\n## ", 1)[0]
    return next((line for line in own.splitlines() if line.startswith("Training: ")), "")


def main() -> None:
    setup_django()
    command = sys.argv[1] if len(sys.argv) > 1 else "score"
    if command == "train-subject":
        progress(f"understanding: subject head retrained: {train_subject()}")
    training = train() if command == "train" else None
    lines = report(training, "" if training else last_training_line())
    replace_section(lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
