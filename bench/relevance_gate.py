"""What the learned relevance gate costs and finds: recall in process on the mem0 comparison's workload (a
slice of it), the gate off and on, alternating, in one run.

``python -m bench.relevance_gate [spaces] [questions]`` (part of ``make bench``) writes its section of
docs/benchmarks.md. Recall@10 counts a question found when a returned row is, holds or is held by the fact
it aims at (the offline engine may store a fact's sentence whole or in parts).
"""

from __future__ import annotations

import datetime
import statistics
import sys
import time

from bench.harness import setup_django, throwaway_database, write_section

ROUNDS = 2  # off, on, off, on: the second pair is the one compared (the first warms caches)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(share * len(ordered)) - 1)]


def measure(spaces: int, questions: int) -> list[dict]:
    from bench.customer_history import tell_history
    from bench.recall_workload import build_workload
    from memory.recall.search import recall
    from tenants import scope
    from tenants.tenant_admin import create_tenant

    workload = build_workload(spaces=spaces, facts_per_space=40, questions=questions)
    tenant = create_tenant(name="Gate bench", slug="gate-bench")
    start = datetime.datetime(2026, 10, 1, tzinfo=datetime.UTC)
    built = {
        s["name"]: (tell_history(tenant, s["name"], s["facts"], start=start), s["facts"]) for s in workload["spaces"]
    }
    runs = []
    for _round in range(ROUNDS):
        for gate in (False, True):
            found, times = 0, []
            for question in workload["questions"]:
                space, facts = built[question["space"]]
                fact = facts[question["fact"]]
                with scope.tenant_scope(tenant, space):
                    started = time.perf_counter()
                    hits = recall(
                        space=space, query=question["question"], limit=10, overrides={"relevance_gate": gate}
                    ).hits
                    times.append((time.perf_counter() - started) * 1000)
                found += any(h["content"] in fact or fact in h["content"] for h in hits)
            runs.append(
                {"gate": gate, "found": found, "p50": statistics.median(times), "p95": _percentile(times, 0.95)}
            )
    return runs


def main(spaces: int = 10, questions: int = 60) -> str:
    setup_django()
    with throwaway_database("engram_bench_gate"):
        runs = measure(spaces, questions)
    off, on = runs[-2], runs[-1]
    body = "\n".join(
        [
            f"In process, {spaces} spaces × 40 facts of the mem0 comparison's workload (bench/recall_workload.py), "
            f"{questions} of its questions, top 10; the gate off then on, twice, the second pair compared. "
            "`python -m bench.relevance_gate`.",
            "",
            "| gate | recall@10 | recall p50 | recall p95 |",
            "| --- | ---: | ---: | ---: |",
            *(
                f"| {'on' if r['gate'] else 'off'} | {r['found']} of {questions} | {r['p50']:.1f} ms | {r['p95']:.1f} ms |"
                for r in (off, on)
            ),
            "",
            f"p95 with the gate / without: {on['p95'] / off['p95']:.2f}× (#27 allows 1.3×).",
        ]
    )
    write_section("Relevance gate", body)
    return body


if __name__ == "__main__":
    print(main(*(int(a) for a in sys.argv[1:])))
