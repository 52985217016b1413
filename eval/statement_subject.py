"""Train and score ``memory.understanding.statement_subject``: does a statement give something of someone other
than the customer ("My wife is called Lucía.", "Our dog is called Biscuit.") or of the customer, their household
or their business ("My name is Javier.", "I live with my sister.", "Our warehouse is in Zlín.")?

``python -m eval.statement_subject train`` fits a logistic regression on the bundled model's embedding of each
statement in ``eval/data/understanding/subject_train*.jsonl`` (en de fr es ru cs ja pl it), choosing C on folds
that each hold out one language, and writes ``memory/understanding/statement_subject.npz``. ``python -m
eval.statement_subject`` scores the committed weights on ``subject_heldout.jsonl`` (pt nl sv tr uk ko zh ro,
written by another hand, never trained or tuned on), per language and label.
"""

from __future__ import annotations

from pathlib import Path

from eval.linear_heads import accuracy_by, accuracy_rows, fit_passage_reading, jsonl_rows, train_or_report

DATA = Path(__file__).resolve().parent / "data" / "understanding"
C_GRID = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
SOMEONE_ELSE_LABELS = ("other_person", "pet")


def rows_of(name: str) -> list[dict]:
    return [
        {**row, "someone_else": row["subject"] in SOMEONE_ELSE_LABELS, "company": row["subject"] == "company"}
        for row in jsonl_rows(DATA, name)
    ]


def train() -> None:
    from memory.understanding import statement_subject

    rows = [{**row, "text": statement_subject.as_read(row["text"])} for row in rows_of("subject_train*.jsonl")]
    fit_passage_reading(rows, "someone_else", statement_subject.WEIGHTS, C_GRID)
    fit_passage_reading(rows, "company", statement_subject.COMPANY_WEIGHTS, C_GRID)


def _truth(row: dict) -> str:
    from memory.understanding.statement_subject import SOMEONE_ELSE, THE_BUSINESS, THE_CUSTOMER

    return SOMEONE_ELSE if row["someone_else"] else THE_BUSINESS if row["company"] else THE_CUSTOMER


def score(name: str = "subject_heldout.jsonl") -> tuple[dict, dict]:
    """Right and total by language and label at even odds (someone else or not); and as the writer reads both
    readings at their thresholds, how often each label is decided right, decided wrong, or left unsure."""
    from memory.understanding.statement_subject import UNSURE, someone_else_probabilities, whose

    rows = rows_of(name)
    texts = [r["text"] for r in rows]
    even = accuracy_by(
        (("all", row["lang"], row["subject"]), (p >= 0.5) == row["someone_else"])
        for row, p in zip(rows, someone_else_probabilities(texts), strict=True)
    )
    decided: dict[str, dict[str, int]] = {}
    for row, verdict in zip(rows, whose(texts), strict=True):
        outcome = "unsure" if verdict == UNSURE else ("right" if verdict == _truth(row) else "wrong")
        for key in ("all", row["subject"]):
            decided.setdefault(key, {"right": 0, "wrong": 0, "unsure": 0})[outcome] += 1
    return even, decided


def report_lines() -> list[str]:
    from memory.understanding.statement_subject import SURE, SURE_NOT

    trained = rows_of("subject_train*.jsonl")
    even, decided = score()
    lines = [
        "## Whose attribute a statement gives",
        "",
        "`python -m eval.statement_subject` (run by `make eval`): whose attribute does a statement give — someone "
        'other than the customer ("My wife is called Lucía.", "Our dog is called Biscuit."), the customer\'s '
        'business ("Our warehouse is in Zlín."), or the customer\'s own ("My name is Javier.", "I live with my '
        'sister.")? The two readings of `memory.understanding.statement_subject` (someone else or not; the business '
        f"or not), trained on {len(trained):,} statements in en de fr es ru cs ja pl it "
        "(`eval/data/understanding/subject_train.jsonl`, written by a helper that never saw the code, and "
        "`subject_train_names.jsonl` and `subject_train_named.jsonl`, written here: the customer's own name and "
        "contact against a relative's, added after \"My name is Emma Clarke.\" read as someone else's; people "
        'named by their first name alone, "Marta\'s number is …", against a customer introducing themselves). '
        "Scored here on `subject_heldout.jsonl`: statements in "
        "eight languages they never saw (pt nl sv tr uk ko zh ro), written by another helper, never trained or tuned "
        "on. The writer lets them tell two subjects apart only where the relation-word lists name nobody, and only "
        f"when both readings are sure (yes at {SURE} or more, no at {SURE_NOT} or less): "
        "`memory.dedup.merge_rule.same_subject`.",
        "",
        "Someone else or not, at even odds:",
        "",
        "| held out | right | accuracy |",
        "|---|---|---|",
        *accuracy_rows(even),
        "",
        "As the writer reads them (a company statement is right when read as the business; a customer's or "
        "someone else's, when read as theirs):",
        "",
        "| held out | decided right | decided wrong | unsure |",
        "|---|---|---|---|",
        *[f"| {key} | {d['right']} | {d['wrong']} | {d['unsure']} |" for key, d in decided.items()],
    ]
    return lines


def main() -> None:
    train_or_report(train, report_lines)


if __name__ == "__main__":
    main()
