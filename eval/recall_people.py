"""Questions about people, held out: the customer, the people they told about, and people they never described.

Per language (el, fi, da, hr, he, pt, nl, hu: none of them in the relevance gate's training or in any set
read while building recall), an account built from 8 customer messages through the turn pipeline (offline
engine), then three kinds of questions (eval/data/recall_people_heldout.json, written apart from the code by
a helper that saw neither it nor the other sets): about the customer (5) and about people the customer
described (5), whose answering line must be recalled, and about people never described (8: a public figure,
the agent's company's staff, a colleague, a boss's daughter, a relative of someone mentioned), which must get
nothing. Never trained on; decision 0022 names the one choice made after scoring it.

``python -m eval.recall_people`` (part of ``make eval``) writes its section of docs/quality.md; ``--no-write``
only prints it.
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

from eval.report_sections import leak_lines

DATA = Path(__file__).resolve().parent / "data" / "recall_people_heldout.json"
# The same set at the revision before questions about someone else kept only the rows naming them (6156f6d).
BEFORE = "about the customer 35 of 40, about people described 34 of 40, unrelated people empty 21 of 64"
# And at the revision before the function words of languages no dictionary holds stopped counting as keywords.
BEFORE_FUNCTION_WORDS = (
    "revision 50b701f: about the customer 35 of 40, about people described 34 of 40, unrelated people empty 33 of 64"
)


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def answered(hits: list[dict], line: str) -> bool:
    """Whether a recalled statement is the answering line or a sentence of it."""
    return any(h["kind"] != "topic" and (h["content"].strip() in line or line in h["content"]) for h in hits)


def evaluate(accounts: list[dict]) -> dict:
    from bench.customer_history import tell_history
    from memory.recall.search import recall
    from tenants import scope
    from tenants.tenant_admin import create_tenant

    tenant = create_tenant(name="People questions", slug="eval-people")
    sent_at = datetime.datetime(2026, 11, 2, 10, tzinfo=datetime.UTC)
    per_language = {}
    for account in accounts:
        progress(f"recall_people: {account['lang']} …")
        space = tell_history(tenant, f"people-{account['lang']}", account["history"], start=sent_at)
        result = {"customer": [], "described": [], "leaks": []}
        with scope.tenant_scope(tenant, space):
            for kind, questions in (("customer", account["about_customer"]), ("described", account["about_mentioned"])):
                for question in questions:
                    hits = recall(space=space, query=question["q"]).hits
                    result[kind].append(answered(hits, account["history"][question["answer"]]))
            for question in account["unrelated_people"]:
                hits = recall(space=space, query=question).hits
                if hits:
                    result["leaks"].append((question, [h["content"] for h in hits]))
        result["unrelated"] = len(account["unrelated_people"])
        per_language[account["lang"]] = result
    return per_language


def report_lines(per_language: dict, elapsed: float, revision: str, machine: str) -> list[str]:
    def share(found: int, total: int) -> str:
        return f"{found} of {total} ({100 * found / total:.1f} %)" if total else "–"

    lines = [
        "## Questions about people (held out)",
        "",
        f"{machine}, {datetime.date.today().isoformat()}, revision {revision}, {elapsed:.0f} s. "
        "`python -m eval.recall_people` (part of `make eval`).",
        "",
        "Per language never used in building recall (el, fi, da, hr, he, pt, nl, hu), an account of 8 customer "
        "messages through the turn pipeline, then questions about the customer and about the people they "
        "described (the answering line must be recalled) and about people never described (nothing may come "
        "back; eval/data/recall_people_heldout.json, written apart from the code; never trained on, and one choice "
        "was made after scoring it: decision 0022).",
        "",
        "| language | about the customer | about people described | unrelated people: nothing returned |",
        "|---|---|---|---|",
    ]
    totals = [0, 0, 0, 0, 0, 0]
    for language, result in per_language.items():
        customer, described = result["customer"], result["described"]
        empty = result["unrelated"] - len(result["leaks"])
        counts = [sum(customer), len(customer), sum(described), len(described), empty, result["unrelated"]]
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        cells = [share(counts[0], counts[1]), share(counts[2], counts[3]), share(counts[4], counts[5])]
        lines.append(f"| {language} | " + " | ".join(cells) + " |")
    cells = [share(totals[0], totals[1]), share(totals[2], totals[3]), share(totals[4], totals[5])]
    lines += [
        "| all | " + " | ".join(cells) + " |",
        "",
        f"Before (revision 6156f6d, the same set): {BEFORE}; {BEFORE_FUNCTION_WORDS}.",
        "",
        "Unrelated questions that returned something:",
        "",
    ]
    lines += leak_lines(per_language)
    lines.append("")
    return lines


def main() -> None:
    from eval.report_sections import account_section_main

    account_section_main(DATA, "engram_eval_people", evaluate, report_lines)


if __name__ == "__main__":
    main()
