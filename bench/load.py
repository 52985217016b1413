"""`make load`: locust (headless) against the production server on loopback for five minutes.

gunicorn (config/gunicorn.py: 2 workers × 4 threads, preloaded) with the task worker and its sweep
beside it, as `make serve` runs them; 1,000 end-user spaces, each with a few memories; agents send
turns and recalls (3:2). Every 15 s the queue depth (turns queued or processing) and the memory of
the server processes (Pss: shared pages split among the processes sharing them) are sampled. Results go to docs/benchmarks.md ("Load").
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
import time

from bench.harness import free_port, setup_django, throwaway_database, wait_for_server, write_section
from bench.process_memory import totals_kib

SPACES = 1000
USERS = 12
SAMPLE_SECONDS = 15
FACTS = [
    "We run a fleet of {n} vans.", "Our renewal is in May.", "Please always call me before a delivery.",
    "We never deliver on Sundays.", "Our depot is in Brno.", "We have {n} drivers.", "Our invoices go to Jana.",
]  # fmt: skip


def fill_spaces(tenant, count: int = SPACES) -> list[str]:
    """``count`` spaces (1,000) with 5 memories each; texts embedded once and reused (the vectors are real)."""
    import random

    from memory.models import Memory
    from memory.text.analysis import search_tokens
    from memory.text.digests import keyword_digests, topic_digest
    from memory.text.embeddings import get_embedder
    from memory.text.vectors import into_space
    from tenants import scope, spaces

    rng = random.Random(11)
    texts = sorted({f.format(n=n) for f in FACTS for n in range(2, 8)})
    vectors = dict(zip(texts, get_embedder().embed(texts), strict=True))
    names = []
    for index in range(count):
        name = f"customer-{index:04d}"
        with scope.tenant_scope(tenant):
            space = spaces.create_space(tenant=tenant, external_id=name)
        with scope.tenant_scope(tenant, space):
            chosen = rng.sample(texts, 5)
            keyed = dict(zip(chosen, into_space(space.id, [vectors[t] for t in chosen]), strict=True))
            Memory.objects.bulk_create(
                [
                    Memory(tenant_id=tenant.id, space=space, kind="fact", content=text, topic="load",
                           topic_digest=topic_digest(space.id, "load"), importance=0.5, embedding=keyed[text],
                           keyword_digests=keyword_digests(space.id, search_tokens(text)))
                    for text in chosen
                ]
            )  # fmt: skip
        names.append(name)
    return names


def growth_note(samples: list[tuple]) -> str:
    """Memory growth per minute in the first and the second half of the run (after the first sample)."""
    if len(samples) < 5:
        return ""
    middle = len(samples) // 2

    def rate(first, last):
        minutes = (last[0] - first[0]) / 60 or 1
        return (last[3] - first[3]) / 1024 / minutes

    return (
        f"Growth: {rate(samples[1], samples[middle]):.1f} MiB/min in the first half, "
        f"{rate(samples[middle], samples[-1]):.1f} MiB/min in the second (bounded caches filling: the "
        "embedding cache holds 1,024 texts per process, the key cache 2,048 spaces)."
    )


def main(seconds: int = 300) -> str:
    setup_django()
    from django.db import connection

    from memory.models import Turn
    from tenants import scope
    from tenants.api_keys import issue_api_key
    from tenants.tenant_admin import create_tenant

    with throwaway_database("engram_load"):
        tenant = create_tenant(name="Load", slug="load")
        key = issue_api_key(tenant=tenant, name="load", scopes=["turns"]).secret
        print(f"filling {SPACES} spaces…", file=sys.stderr, flush=True)
        names = fill_spaces(tenant)
        database = connection.settings_dict["NAME"]
        port = free_port()
        env = {
            **os.environ, "ENGRAM_DATABASE_NAME": database, "DJANGO_SETTINGS_MODULE": "config.test_settings",
            "ENGRAM_TEST_TASKS": "database", "ENGRAM_LOG_LEVEL": "WARNING", "ENGRAM_API_RATE_LIMIT": "1000000/minute",
        }  # fmt: skip
        python = sys.executable
        server = subprocess.Popen(
            [python, "-m", "gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application", "--bind",
             f"127.0.0.1:{port}", "--log-level", "warning"], env=env,
        )  # fmt: skip
        worker = subprocess.Popen(
            [python, "manage.py", "run_worker", "--queue-name", "*", "--no-reload", "--sweep-every", "30"], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        processes = {"gunicorn": server.pid, "task worker": worker.pid}
        samples = []
        try:
            wait_for_server(port)
            with tempfile.TemporaryDirectory() as folder:
                prefix = os.path.join(folder, "load")
                locust_env = {**os.environ, "ENGRAM_LOAD_SPACES": ",".join(names), "ENGRAM_LOAD_KEY": key}
                load = subprocess.Popen(
                    [python, "-m", "locust", "-f", "bench/locustfile.py", "--headless", "-u", str(USERS), "-r", "4",
                     "-t", f"{seconds}s", "--host", f"http://127.0.0.1:{port}", "--csv", prefix, "--only-summary",
                     "--loglevel", "WARNING"],
                    env=locust_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
                started = time.time()
                while load.poll() is None:
                    with scope.tenant_scope(tenant):
                        depth = Turn.objects.filter(status__in=["queued", "processing"]).count()
                        done = Turn.objects.filter(status="done").count()
                    connection.close()
                    samples.append((round(time.time() - started), depth, done, totals_kib(processes)[0]))
                    print(f"  t={samples[-1][0]}s queue={depth} done={done} pss={samples[-1][3] // 1024} MiB",
                          file=sys.stderr, flush=True)  # fmt: skip
                    time.sleep(SAMPLE_SECONDS)
                with open(f"{prefix}_stats.csv") as handle:
                    rows = {row["Name"]: row for row in csv.DictReader(handle)}
            time.sleep(5)
            with scope.tenant_scope(tenant):
                failed = Turn.objects.filter(status="failed").count()
                left = Turn.objects.filter(status__in=["queued", "processing"]).count()
                total_turns = Turn.objects.count()
            connection.close()
        finally:
            for process in (server, worker):
                process.terminate()
            for process in (server, worker):
                process.wait(timeout=30)
    lines = [
        f"locust headless, {USERS} users (0.05–0.25 s think time), {seconds} s, against gunicorn (2 workers × 4 "
        f"threads, preloaded) with the task worker and its sweep, on loopback; {SPACES} spaces with 5 memories each; "
        "turns (without `wait`: store, forget check, recall, queue) and recalls 3:2.",
        "",
        "| request | count | failures | throughput | p50 | p95 | p99 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in ("POST /turns", "POST /recall", "Aggregated"):
        row = rows[name]
        lines.append(
            f"| {name} | {row['Request Count']} | {row['Failure Count']} | {float(row['Requests/s']):.1f} req/s | "
            f"{row['50%']} ms | {row['95%']} ms | {row['99%']} ms |"
        )
    lines += [
        "",
        f"Turns stored: {total_turns}; processed by the worker by the end: {total_turns - left - failed}; "
        f"failed: {failed}; still queued 5 s after the load stopped: {left}.",
        "",
        "| t (s) | queue depth | turns done | server + worker memory (Pss, MiB) |",
        "|---|---|---|---|",
        *[
            f"| {t} | {depth} | {done} | {pss / 1024:.0f} |"
            for t, depth, done, pss in samples[:: max(1, len(samples) // 12)]
        ],
        "",
        f"Memory at start {samples[0][3] / 1024:.0f} MiB, at the end {samples[-1][3] / 1024:.0f} MiB "
        f"(after warm-up at {samples[min(2, len(samples) - 1)][3] / 1024:.0f} MiB). {growth_note(samples)}",
    ]
    body = "\n".join(lines) + "\n"
    write_section("Load (make load)", body)
    return body


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
