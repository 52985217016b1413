"""The learned relevance gate (memory/recall/relevance.py): its training and its report.

``python -m eval.recall_gate train`` builds every account of eval/data/recall_gate/train_*.json through the
turn pipeline (offline engine), recalls each question with the gate off to collect every candidate row and
its features, labels a candidate as answering when it was drawn from a history line the question lists,
and fits a logistic regression (C chosen on folds that each hold out whole languages). The operating point
(``relevance_floor``: what a row within the distance bounds still needs; ``relevance_admit``: what one
outside them needs) is chosen on those out-of-fold probabilities: the pair that leaves the most
unanswerable questions empty while finding at least as many answers as the distance bounds did, less
``ANSWERS_GIVEN_UP`` (usefulness first: the gate is there to drop what does not answer). Writes
memory/recall/relevance.npz and the gate's section of docs/quality.md. The two settings' defaults in
tenants/space_settings.py are set by hand: admit as reported, the floor lower where the labelled recall set
(eval/data/recall.jsonl) loses hits at the reported one (docs/decisions/0022-learned-relevance-gate.md).
Questions whose answer was superseded by a later line ("where did she live before?") are left out: recall
shows current values only.

Nothing here reads eval/data/recall_unrelated.json (the unrelated questions of ``eval.recall_unrelated``)
or the labelled recall set of ``eval.run_eval``: they measure the gate, never train it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "eval" / "data" / "recall_gate"
WEIGHTS = ROOT / "memory" / "recall" / "relevance.npz"
FLOOR_GRID = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
ADMIT_GRID = (0.5, 0.6, 0.7, 0.8, 0.9, 1.01)
ANSWERS_GIVEN_UP = 0.01
C_GRID = (0.03, 0.1, 0.3, 1.0, 3.0)
SEED = 27


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_accounts() -> list[dict]:
    accounts = []
    for path in sorted(DATA.glob("train_*.json")):
        for number, account in enumerate(json.loads(path.read_text())["accounts"]):
            accounts.append({**account, "name": f"{path.stem}-{number}-{account['lang']}"})
    return accounts


def build(tenant, account: dict):
    """The account's space, its history through the pipeline, and each current row's history line."""
    from bench.customer_history import tell_history
    from memory.models import Memory
    from tenants import scope

    start = datetime.datetime(2026, 10, 1, 9, tzinfo=datetime.UTC)
    space = tell_history(tenant, account["name"], account["history"], start=start, numbered=True)
    with scope.tenant_scope(tenant, space):
        current = Memory.objects.filter(space=space, superseded_by__isnull=True).prefetch_related("source_message")
        line_of = {
            m.pk: int(m.source_message.caller_message_id[1:])
            for m in current
            if m.source_message_id and m.source_message.caller_message_id
        }
    return space, line_of


def collect(accounts: list[dict]) -> list[dict]:
    """One record per question: its candidates' features and labels."""
    from memory.recall.search import recall
    from tenants import scope
    from tenants.tenant_admin import create_tenant

    tenant = create_tenant(name="Relevance gate training", slug="gate-training")
    records = []
    for account in accounts:
        progress(f"recall_gate: {account['name']} …")
        space, line_of = build(tenant, account)
        current_lines = set(line_of.values())
        for question in account["questions"]:
            answers = set(question["answers"])
            if answers and not answers & current_lines:
                continue  # its answer is history (superseded) or was never stored: not a current-value question
            with scope.tenant_scope(tenant, space):
                result = recall(space=space, query=question["q"], overrides={"relevance_gate": False})
            rows = [c for c in result.candidates if c.gate_features is not None]
            records.append(
                {
                    "lang": account["lang"],
                    "account": account["name"],
                    "question": question["q"],
                    "answerable": bool(answers),
                    "features": [c.gate_features.tolist() for c in rows],
                    "labels": [line_of.get(c.id) in answers for c in rows],
                    "contents": [c.item.content for c in rows],
                    "old_rule": [c.passes for c in rows],
                }
            )
    return records


def _matrix(records: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    x = [f for r in records for f in r["features"]]
    y = [label for r in records for label in r["labels"]]
    return np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.int64)


def _fit(records: list[dict], c: float):
    from sklearn.linear_model import LogisticRegression

    x, y = _matrix(records)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LogisticRegression(C=c, max_iter=5000, random_state=SEED)
    model.fit((x - mean) / scale, y)
    return mean, scale, model.coef_[0], float(model.intercept_[0])


def question_scores(records: list[dict], probabilities: list[np.ndarray], floor: float) -> dict:
    """Answerable questions whose answer passes (and comes first); unanswerable ones that return anything."""
    answerable = [(r, p) for r, p in zip(records, probabilities, strict=True) if r["answerable"]]
    unanswerable = [(r, p) for r, p in zip(records, probabilities, strict=True) if not r["answerable"]]
    found = first = 0
    for r, p in answerable:
        passing = [i for i in range(len(p)) if p[i] >= floor]
        if any(r["labels"][i] for i in passing):
            found += 1
        if passing and r["labels"][max(passing, key=lambda i: p[i])]:
            first += 1
    leaks = sum(1 for _r, p in unanswerable if (p >= floor).any())
    returned = sum(int((p >= floor).sum()) for _r, p in zip(records, probabilities, strict=True))
    right = sum(
        int(sum(1 for i in range(len(p)) if p[i] >= floor and r["labels"][i]))
        for r, p in zip(records, probabilities, strict=True)
    )
    return {
        "answerable": len(answerable),
        "found": found / len(answerable) if answerable else 0.0,
        "first": first / len(answerable) if answerable else 0.0,
        "unanswerable": len(unanswerable),
        "empty": 1 - leaks / len(unanswerable) if unanswerable else 1.0,
        "precision": right / returned if returned else 1.0,
    }


def old_rule_scores(records: list[dict]) -> dict:
    return question_scores(records, [np.asarray(r["old_rule"], dtype=float) for r in records], 0.5)


def decided(records: list[dict], probabilities: list[np.ndarray], floor: float, admit: float) -> list[np.ndarray]:
    """What recall returns with the gate: within the distance bounds from ``floor`` up, outside from ``admit``."""
    return [
        np.where(np.asarray(r["old_rule"], dtype=bool), p >= floor, p >= admit).astype(float)
        for r, p in zip(records, probabilities, strict=True)
    ]


def gate_scores(records, probabilities, floor: float, admit: float) -> dict:
    return question_scores(records, decided(records, probabilities, floor, admit), 0.5)


def out_of_fold(records: list[dict], c: float) -> list[np.ndarray]:
    """Each record's probabilities from a model that never saw its language."""
    from memory.recall.relevance import Gate  # after Django is set up: memory.recall loads the models

    languages = sorted({r["lang"] for r in records})
    folds = [languages[i::4] for i in range(4)]
    probabilities: list = [None] * len(records)
    for fold in folds:
        train = [r for r in records if r["lang"] not in fold]
        mean, scale, weights, bias = _fit(train, c)
        held = [i for i, r in enumerate(records) if r["lang"] in fold]
        model = Gate(mean=mean, scale=scale, weights=weights, bias=bias)  # as recall applies it
        for i in held:
            probabilities[i] = model.probabilities(records[i]["features"])
    return probabilities


def choose_point(records: list[dict], probabilities: list[np.ndarray]) -> tuple[float, float, dict]:
    """The (floor, admit) pair that leaves the most unanswerable questions empty among those finding at
    least the distance bounds' answers less ANSWERS_GIVEN_UP (a tie goes to more answers found)."""
    least = old_rule_scores(records)["found"] - ANSWERS_GIVEN_UP
    best = None
    for floor in FLOOR_GRID:
        for admit in ADMIT_GRID:
            scores = gate_scores(records, probabilities, floor, admit)
            if scores["found"] < least:
                continue
            key = (round(scores["empty"], 4), scores["found"])
            if best is None or key > best[0]:
                best = (key, floor, admit, scores)
    if best is None:
        return 0.0, 1.01, gate_scores(records, probabilities, 0.0, 1.01)
    return best[1], best[2], best[3]


def train(records_path: Path | None = None) -> dict:
    """``records_path``: where the collected candidates are kept between runs (outside the repository); an
    existing file is read instead of building the accounts again."""
    from bench.harness import setup_django, throwaway_database

    setup_django()
    accounts = load_accounts()
    if records_path and records_path.exists():
        records = json.loads(records_path.read_text())
    else:
        with throwaway_database("engram_gate_training"):
            records = collect(accounts)
        if records_path:
            records_path.write_text(json.dumps(records, ensure_ascii=False))
    best = None
    for c in C_GRID:
        probabilities = out_of_fold(records, c)
        floor, admit, scores = choose_point(records, probabilities)
        progress(f"recall_gate: C={c}: floor {floor}, admit {admit}, found {scores['found']:.3f}, "
                 f"empty {scores['empty']:.3f}")  # fmt: skip
        if best is None or (scores["empty"], scores["found"]) > (best[3]["empty"], best[3]["found"]):
            best = (c, floor, admit, scores, probabilities)
    c, floor, admit, scores, probabilities = best
    grid = [
        {"floor": f, "admit": a, **gate_scores(records, probabilities, f, a)} for f in FLOOR_GRID for a in (admit, 1.01)
    ]
    mean, scale, weights, bias = _fit(records, c)
    from memory.recall.relevance import ALL_FEATURES

    np.savez(WEIGHTS, features=np.asarray(ALL_FEATURES), mean=mean, scale=scale, weights=weights, bias=np.asarray(bias))
    return {
        "C": c,
        "floor": floor,
        "admit": admit,
        "out_of_fold": scores,
        "old_rule": old_rule_scores(records),
        "grid": grid,
        "questions": len(records),
        "accounts": len(accounts),
        "languages": sorted({a["lang"] for a in accounts}),
        "weights": dict(zip(ALL_FEATURES[:20], (float(w) for w in weights), strict=False)),
    }


def report_lines(training: dict, elapsed: float, revision: str, machine: str) -> list[str]:
    def pct(v):
        return f"{100 * v:.1f} %"

    oof, old = training["out_of_fold"], training["old_rule"]
    lines = [
        "## Relevance gate: training",
        "",
        f"{machine}, {datetime.date.today().isoformat()}, revision {revision}, {elapsed:.0f} s. "
        "`python -m eval.recall_gate train` (not part of `make eval`: it writes the weights).",
        "",
        f"{training['accounts']} accounts in {len(training['languages'])} languages "
        f"({', '.join(training['languages'])}; eval/data/recall_gate/), {training['questions']} current-value "
        "questions (paraphrased; unanswerable ones include other people's attributes and near misses), each "
        "recalled with the gate off to collect every candidate row. Logistic regression over 20 features and the "
        f"question's and row's vectors multiplied per dimension, C={training['C']} chosen on folds that each "
        "hold out whole languages; figures below are out of fold (each language scored by a model that never "
        f"saw it). Operating point: floor {training['floor']} within the distance bounds, admit "
        f"{training['admit']} outside them (the pair leaving the most unanswerable questions empty while "
        f"finding at least the distance bounds' answers less {100 * ANSWERS_GIVEN_UP:.0f} point). The "
        "`relevance_floor` default is set lower by hand, where the labelled recall set loses no hit "
        "(docs/decisions/0022-learned-relevance-gate.md); see the trade-off below.",
        "",
        "| decision | answer found | answer first | unanswerable empty | precision |",
        "|---|---|---|---|---|",
        f"| distance bounds (before) | {pct(old['found'])} | {pct(old['first'])} | {pct(old['empty'])} | "
        f"{pct(old['precision'])} |",
        f"| learned gate | {pct(oof['found'])} | {pct(oof['first'])} | {pct(oof['empty'])} | {pct(oof['precision'])} |",
        "",
        "Out-of-fold trade-off (admit 1.01: the gate only vetoes):",
        "",
        "| floor | admit | answer found | unanswerable empty | precision |",
        "|---|---|---|---|---|",
        *(
            f"| {p['floor']} | {p['admit']} | {pct(p['found'])} | {pct(p['empty'])} | {pct(p['precision'])} |"
            for p in training["grid"]
        ),
        "",
    ]
    return lines


def main() -> None:
    from bench.harness import git_revision, machine_line
    from eval.report_sections import replace_section

    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["train"])
    parser.add_argument("--no-write", action="store_true", help="print the section, leave docs/quality.md alone")
    parser.add_argument("--records", type=Path, help="keep the collected candidates here between runs")
    args = parser.parse_args()
    started = time.perf_counter()
    training = train(args.records)
    lines = report_lines(training, time.perf_counter() - started, git_revision(), machine_line())
    if not args.no_write:
        replace_section(lines)
    print("\n".join(lines))
    print(json.dumps(training["weights"], indent=1))


if __name__ == "__main__":
    main()
