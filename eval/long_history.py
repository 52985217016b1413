"""`make eval-long`: derived memory against raw transcript search on long casual histories.

The generated set (eval/long_history_data.py) is ingested session by session through the turn
pipeline the API runs (``take_transcript`` with one inline attempt, offline engine by
default). For each question, what Engram's recall returns (its prompt lines: kind, resolved event
date, content) and what dense retrieval over the customer's raw turns returns (each turn with its
session date, nearest first, same embedding model) are both cut to the same character budget; the
score is the share of the gold answer's words found in that text.

Also runs the month-of-conversations scenario (eval/month_scenario.py) and writes both sections of
docs/quality.md. ``--customers N`` runs fewer customers (a quicker look; the report says so).
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
import time

import numpy as np

from eval.long_history_data import generate
from eval.report_sections import replace_section

BUDGETS = (500, 1000)
RECALL_ROWS = 40


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def answer_share(answer: str, text: str) -> float:
    """Share of the answer's words that occur in ``text`` as whole words (case-insensitive).

    >>> answer_share("charity fun run", "- [event, 2026-05-09] I ran a charity fun run!")
    1.0
    >>> answer_share("2026-03", "- [event, 2026-03-01] We went to Crete.")
    1.0
    >>> answer_share("12", "In 2012 we were 4.")
    0.0
    """
    words = answer.lower().split()
    lowered = text.lower()
    found = sum(bool(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w])", lowered)) for w in words)
    return found / len(words) if words else 0.0


def ingest(tenant, customer: dict):
    from memory.turns import intake
    from memory.turns.sequence import take_transcript
    from tenants import scope, spaces

    with scope.tenant_scope(tenant):
        space = spaces.create_space(tenant=tenant, external_id=customer["customer"])
    for session in customer["sessions"]:
        started = datetime.datetime.fromisoformat(session["date"]).replace(hour=18, tzinfo=datetime.UTC)
        with scope.tenant_scope(tenant, space):
            take_transcript(
                wait=True,
                space=space,
                session_id=f"session-{session['number']:03d}",
                messages=[
                    intake.IncomingMessage(
                        role=t["role"], content=t["content"], sent_at=started + datetime.timedelta(minutes=i)
                    )
                    for i, t in enumerate(session["turns"])
                ],
            )
    return space


def raw_lines(customer: dict) -> list[str]:
    return [
        f"- [{session['date']}] {turn['content']}"
        for session in customer["sessions"]
        for turn in session["turns"]
        if turn["role"] == "customer"
    ]


def evaluate_customer(tenant, customer: dict) -> list[dict]:
    from memory.models import Memory
    from memory.recall import search
    from memory.recall.prompt_block import pack_hits, pack_lines
    from memory.text.embeddings import get_embedder
    from tenants import scope

    space = ingest(tenant, customer)
    embedder = get_embedder()
    lines = raw_lines(customer)
    # The raw turns as the embedding model sees them (without the date label), embedded once.
    turn_texts = [line.split("] ", 1)[1] for line in lines]
    turn_vectors = embedder.embed(turn_texts)
    questions = customer["questions"]
    question_vectors = embedder.embed([q["question"] for q in questions])
    with scope.tenant_scope(tenant, space):
        active = Memory.objects.filter(space=space, superseded_by__isnull=True).exclude(kind="topic").count()
    rows = []
    for question, vector in zip(questions, question_vectors, strict=True):
        with scope.tenant_scope(tenant, space):
            result = search.recall(space=space, query=question["question"], limit=RECALL_ROWS, max_chars=max(BUDGETS))
        nearest = np.argsort(-(turn_vectors @ vector))[:RECALL_ROWS]
        raw = [lines[i] for i in nearest]
        row = {**question, "customer": customer["customer"], "recalled_rows": len(result.hits), "active": active}
        # Diagnostic only (not what recall returns): when nothing passes, the nearest derived statements
        # anyway, as raw search always does. It shows what the relevance gate costs on this set.
        ungated = result.hits or sorted(
            (c.as_hit() for c in result.candidates if c.kind != "topic" and c.distance is not None),
            key=lambda hit: hit["score"]["distance"],
        )
        for budget in BUDGETS:
            row[f"ungated_{budget}"] = answer_share(question["answer"], pack_hits(ungated, budget))
            engram_text = pack_hits(result.hits, budget)
            raw_text = pack_lines(raw, budget)
            row[f"engram_{budget}"] = answer_share(question["answer"], engram_text)
            row[f"raw_{budget}"] = answer_share(question["answer"], raw_text)
            row[f"engram_chars_{budget}"] = len(engram_text)
        rows.append(row)
    return rows


def summarise(rows: list[dict]) -> dict:
    def mean(key, selected):
        return sum(r[key] for r in selected) / len(selected) if selected else None

    types = sorted({r["type"] for r in rows})
    out = {"all": {}, "by_type": {}}
    for budget in BUDGETS:
        out["all"][budget] = (mean(f"engram_{budget}", rows), mean(f"raw_{budget}", rows))
    out["ungated"] = {budget: mean(f"ungated_{budget}", rows) for budget in BUDGETS}
    for t in types:
        selected = [r for r in rows if r["type"] == t]
        out["by_type"][t] = {
            "questions": len(selected),
            **{b: (mean(f"engram_{b}", selected), mean(f"raw_{b}", selected)) for b in BUDGETS},
        }
    out["questions"] = len(rows)
    out["empty_recall"] = sum(r["recalled_rows"] == 0 for r in rows)
    out["chars_used"] = {b: mean(f"engram_chars_{b}", rows) for b in BUDGETS}
    return out


def report_lines(summary: dict, customers: list[dict], elapsed: float) -> list[str]:
    from eval.report_sections import pct

    turns = sum(len(s["turns"]) for c in customers for s in c["sessions"])
    sessions = sum(len(c["sessions"]) for c in customers)
    lines = [
        "## Long histories: recall against raw transcript search",
        "",
        f"A generated set (eval/long_history_data.py, seeded; `make eval-long` regenerates and runs it): "
        f"{len(customers)} customers, {sessions} dated sessions, {turns} messages (half of them the customer's), "
        f"casual talk with facts said in several wordings, changes (a move, a new job, a growing team) and events "
        f"told relative to the session; {summary['questions']} questions with short gold answers. Each history "
        "goes through the turn pipeline (offline engine). Score: the share of the answer's words contained in "
        "what is returned, cut to the same character budget — Engram's recall as its prompt lines (kind, "
        "resolved event date, content) against dense retrieval with the same embedding model over the "
        "customer's raw turns, each prefixed with its session date. A “when” answer is an ISO date (a year-month "
        "for “last month”).",
        "",
        "| Questions | Engram, 500 chars | Raw turns, 500 chars | Engram, 1,000 chars | Raw turns, 1,000 chars |",
        "| --- | --- | --- | --- | --- |",
        f"| all ({summary['questions']}) | {pct(summary['all'][500][0])} | {pct(summary['all'][500][1])} | "
        f"{pct(summary['all'][1000][0])} | {pct(summary['all'][1000][1])} |",
        *[
            f"| {t} ({s['questions']}) | {pct(s[500][0])} | {pct(s[500][1])} | {pct(s[1000][0])} | {pct(s[1000][1])} |"
            for t, s in summary["by_type"].items()
        ],
        "",
        f"Recall returned nothing for {summary['empty_recall']} of {summary['questions']} questions; its text "
        f"filled {summary['chars_used'][500]:.0f} of 500 and {summary['chars_used'][1000]:.0f} of 1,000 "
        f"characters on average. Types: current = the value after a change, earlier = the value before it, "
        f"fact = said once or restated, event = what happened, when = its date. ({elapsed:.0f} s)",
        "",
        f"What the relevance gate costs here: given the nearest derived statements when nothing passes (as raw "
        f"search always returns something), Engram would score {pct(summary['ungated'][500])} at 500 and "
        f"{pct(summary['ungated'][1000])} at 1,000 characters — a diagnostic, not what recall returns: the gate is "
        "what keeps unrelated questions empty (docs/quality.md, Recall).",
        "",
        *[
            f"At {budget:,} characters Engram is {'ahead' if e > r else 'behind'} ({pct(e)} against {pct(r)})."
            for budget, (e, r) in summary["all"].items()
        ],
        "Where it falls behind, and why: questions whose answering statement sits just outside the strict bounds "
        "return nothing (the gate above; in English the answering row is often at 0.14–0.17, where unrelated "
        "Japanese or Czech questions also sit); “earlier” values are history once superseded and recall shows only "
        "current rows; raw search wins on plain facts because it always returns the nearest turns. Engram wins on "
        "“when”: the event dates are resolved from the session date, raw turns only carry the session date.",
        "",
    ]
    return lines


def main() -> None:
    from bench.harness import setup_django, throwaway_database

    parser = argparse.ArgumentParser()
    parser.add_argument("--customers", type=int, default=10)
    parser.add_argument("--no-write", action="store_true", help="print the sections, leave docs/quality.md alone")
    parser.add_argument("--skip-month", action="store_true")
    args = parser.parse_args()
    setup_django()
    from tenants.tenant_admin import create_tenant

    started = time.perf_counter()
    customers = generate(customers=args.customers)
    rows = []
    with throwaway_database("engram_eval_long"):
        tenant = create_tenant(name="Evaluation", slug="eval-long")
        for customer in customers:
            progress(f"long history: {customer['customer']}…")
            rows.extend(evaluate_customer(tenant, customer))
        long_lines = report_lines(summarise(rows), customers, time.perf_counter() - started) if rows else None
        month_lines = None
        if not args.skip_month:
            from eval import month_scenario

            month_lines = month_scenario.report_lines(month_scenario.run(tenant))
    for lines in (long_lines, month_lines):
        if lines is None:
            continue
        if args.no_write:
            print("\n".join(lines))
        else:
            replace_section(lines)
    misses = [r for r in rows if r["engram_1000"] < 1]
    for r in misses[:40]:
        progress(f"  miss [{r['type']}] {r['question']} → {r['answer']} (raw {r['raw_1000']:.1f})")


if __name__ == "__main__":
    main()
