"""Cross-language recall: a question in one language about a fact stated in another.

The items (eval/data/recall_cross_language.jsonl) ask the labelled accounts of eval/data/accounts.json
in another language than the account's; a quarter ask about something the account never said and
must return nothing. Alternate items form a "tune" half and a "held-out" half: the concept table of
memory/text/cross_language.py was not edited after looking at held-out misses, so the held-out half says
what to expect on new questions. Each item is run at the space defaults, with the translated
keywords (what ships) and without them (recall before them), so the gain is visible per pair.

``python -m eval.cross_language`` prints the figures without touching docs/quality.md.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from unittest import mock

DATA = Path(__file__).resolve().parent / "data"
ITEMS = "recall_cross_language.jsonl"


def load_items() -> list[dict]:
    return [json.loads(line) for line in (DATA / ITEMS).read_text().splitlines() if line.strip()]


def _run(tenant, accounts: dict, items: list[dict]) -> list[dict]:
    from memory.recall import search
    from tenants import scope

    rows = []
    for item in items:
        account = accounts[item["account"]]
        with scope.tenant_scope(tenant, account["space"]):
            result = search.recall(space=account["space"], query=item["query"])
        rows.append({**item, "returned": [account["keys_by_id"].get(str(h["id"])) for h in result.hits]})
    return rows


def scores(rows: list[dict]) -> dict:
    relevant = [r for r in rows if r["expected"]]
    unrelated = [r for r in rows if not r["expected"]]
    return {
        "queries": len(relevant),
        "unrelated_queries": len(unrelated),
        "hit_rate": sum(bool(set(r["expected"]) & set(r["returned"])) for r in relevant) / len(relevant)
        if relevant
        else None,
        "empty_when_unrelated": sum(not r["returned"] for r in unrelated) / len(unrelated) if unrelated else None,
    }


def evaluate_cross_language(tenant, accounts: dict) -> dict:
    items = load_items()
    shipped = _run(tenant, accounts, items)
    with mock.patch("memory.recall.search.translated_tokens", return_value=set()):
        without = _run(tenant, accounts, items)
    account_language = {name: name.split("-")[0] for name in accounts}
    by_pair = collections.defaultdict(list)
    for row in shipped:
        by_pair[f"{row['query_lang']} → {account_language[row['account']]}"].append(row)
    return {
        "overall": scores(shipped),
        "without_translation": scores(without),
        "halves": {half: scores([r for r in shipped if r["half"] == half]) for half in ("tune", "held-out")},
        "halves_without": {half: scores([r for r in without if r["half"] == half]) for half in ("tune", "held-out")},
        "per_pair": {pair: scores(rows) for pair, rows in sorted(by_pair.items())},
        "misses": [r for r in shipped if r["expected"] and not set(r["expected"]) & set(r["returned"])],
        "leaks": [r for r in shipped if not r["expected"] and r["returned"]],
    }


def report_lines(result: dict) -> list[str]:
    from eval.report_sections import pct

    def row(label, s, before=None):
        gain = f" (without translated keywords: {pct(before['hit_rate'])})" if before else ""
        return (
            f"| {label} | {s['queries']} + {s['unrelated_queries']} unrelated | {pct(s['hit_rate'])}{gain} | "
            f"{pct(s['empty_when_unrelated'])} |"
        )

    lines = [
        "## Cross-language recall",
        "",
        f"{result['overall']['queries']} questions in one language about a fact stated in another (en, ru, ja, cs, "
        f"es, both directions) and {result['overall']['unrelated_queries']} that the account has nothing for "
        f"(eval/data/{ITEMS}), at the space defaults. Recall adds the query's words in the other languages as "
        "keywords (a table of everyday concepts, memory/text/cross_language.py); the table was not edited after "
        "looking at held-out misses.",
        "",
        "| Items | Queries | Hit rate | Empty when unrelated |",
        "| --- | --- | --- | --- |",
        row("all", result["overall"], result["without_translation"]),
        *[row(half, s, result["halves_without"][half]) for half, s in result["halves"].items()],
        "",
        "Per language pair (question → account):",
        "",
        "| Pair | Queries | Hit rate | Empty when unrelated |",
        "| --- | --- | --- | --- |",
        *[row(pair, s) for pair, s in result["per_pair"].items()],
        "",
        "Misses:",
        "",
        *(
            [f"- `{r['id']}` “{r['query']}” → expected {r['expected']}, got {r['returned']}" for r in result["misses"]]
            or ["- none"]
        ),
        "",
        "Unrelated questions that returned something:",
        "",
        *([f"- `{r['id']}` “{r['query']}” → {r['returned']}" for r in result["leaks"]] or ["- none"]),
        "",
    ]
    return lines


def main() -> None:
    from bench.harness import setup_django, throwaway_database

    setup_django()
    from eval.labelled_accounts import build_accounts
    from tenants.tenant_admin import create_tenant

    with throwaway_database("engram_eval_cross"):
        tenant = create_tenant(name="Evaluation", slug="eval")
        result = evaluate_cross_language(tenant, build_accounts(tenant))
    print("\n".join(report_lines(result)))


if __name__ == "__main__":
    main()
