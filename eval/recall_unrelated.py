"""Unrelated questions get nothing: per language, questions an agent might ask whose answer is not in the
customer's history (general knowledge, other people, attributes the customer never mentioned, the company's
own policies, small talk, near misses), each recalled against an account built from that history through
the turn pipeline (offline engine). #27's bar: no row returned for ≥ 99 % of them.

``python -m eval.recall_unrelated`` (part of ``make eval``) writes its section of docs/quality.md;
``--no-write`` only prints it. Data: eval/data/recall_unrelated.json (written apart from the code it
measures; see the section for what was read while building).
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

from eval.report_sections import leak_lines

DATA = Path(__file__).resolve().parent / "data" / "recall_unrelated.json"
TARGET = 0.99


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def evaluate(accounts: list[dict]) -> dict:
    from bench.customer_history import tell_history
    from memory.recall.search import recall
    from tenants import scope
    from tenants.tenant_admin import create_tenant

    tenant = create_tenant(name="Unrelated questions", slug="eval-unrelated")
    sent_at = datetime.datetime(2026, 11, 2, 10, tzinfo=datetime.UTC)
    per_language = {}
    for account in accounts:
        progress(f"recall_unrelated: {account['lang']} …")
        space = tell_history(tenant, f"unrelated-{account['lang']}", account["history"], start=sent_at)
        leaks = []
        with scope.tenant_scope(tenant, space):
            for question in account["unrelated"]:
                hits = recall(space=space, query=question).hits
                if hits:
                    leaks.append((question, [h["content"] for h in hits]))
        per_language[account["lang"]] = {"questions": len(account["unrelated"]), "leaks": leaks}
    return per_language


def report_lines(per_language: dict, elapsed: float, revision: str, machine: str) -> list[str]:
    total = sum(v["questions"] for v in per_language.values())
    leaked = sum(len(v["leaks"]) for v in per_language.values())
    empty = (total - leaked) / total if total else 0.0
    lines = [
        "## Unrelated questions get nothing",
        "",
        f"{machine}, {datetime.date.today().isoformat()}, revision {revision}, {elapsed:.0f} s. "
        "`python -m eval.recall_unrelated` (part of `make eval`).",
        "",
        "Per language, an account built from 6–8 customer messages through the turn pipeline (offline engine), "
        "then 30 questions whose answer is not in them: general knowledge, other people, attributes never "
        "mentioned, the company's own policies, small talk, near misses (eval/data/recall_unrelated.json). "
        f"Bar (#27): nothing returned for ≥ {100 * TARGET:.0f} %.",
        "",
        "| " + " | ".join(per_language) + " | all |",
        "|" + "---|" * (len(per_language) + 1),
        "| "
        + " | ".join(
            f"{100 * (v['questions'] - len(v['leaks'])) / v['questions']:.1f} % ({v['questions']})"
            for v in per_language.values()
        )
        + f" | {100 * empty:.1f} % ({total}) |",
        "",
        "Questions that returned something:",
        "",
    ]
    lines += leak_lines(per_language)
    lines.append("")
    return lines


def main() -> None:
    from eval.report_sections import account_section_main

    account_section_main(DATA, "engram_eval_unrelated", evaluate, report_lines)


if __name__ == "__main__":
    main()
