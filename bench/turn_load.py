"""Whole ``POST .../turns`` latency with 8 concurrent clients against gunicorn on loopback.

Each request stores the message, checks it for a forget request, recalls for it and queues the
turn (the worker is not running, so this is the API path an agent waits on). Spaces are
pre-filled with memories through the real pipeline. Also: tokens in the prompt block per turn
against sending the whole transcript so far.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import subprocess
import sys
import threading
import time

from bench.harness import (
    free_port,
    median,
    percentile,
    setup_django,
    throwaway_database,
    wait_for_server,
    write_section,
)

CLIENTS = 8
SPACES = 40
FACTS = [
    "We run a fleet of {n} vans.", "Our renewal is in May.", "Please always call me before a delivery.",
    "We never deliver on Sundays.", "Our depot is in Brno.", "We have {n} drivers.", "Our invoices go to Jana.",
]  # fmt: skip
QUESTIONS = [
    "How many vans do we have again?", "When is our renewal?", "Can you deliver this Sunday?",
    "Where is our depot?", "Who gets our invoices?", "Can you check my last order?", "Thanks, that is all.",
]  # fmt: skip


def main(seconds: float = 30.0) -> str:
    setup_django()
    from django.db import connection

    from memory.recall.prompt_block import estimate_tokens
    from memory.turns.sequence import take_turn
    from tenants import scope, spaces
    from tenants.api_keys import issue_api_key
    from tenants.tenant_admin import create_tenant

    rng = random.Random(5)
    with throwaway_database():
        tenant = create_tenant(name="Load", slug="load")
        key = issue_api_key(tenant=tenant, name="load", scopes=["turns"]).secret
        names = [f"customer-{i}" for i in range(SPACES)]
        for name in names:
            with scope.tenant_scope(tenant):
                space = spaces.create_space(tenant=tenant, external_id=name)
            for index, fact in enumerate(FACTS):
                with scope.tenant_scope(tenant, space):
                    take_turn(
                        space=space,
                        message=fact.format(n=rng.randint(2, 9)),
                        session_id=f"f{index}",
                        actor="bench",
                        wait=True,
                    )
        database = connection.settings_dict["NAME"]
        connection.close()
        port = free_port()
        env = {**os.environ, "ENGRAM_DATABASE_NAME": database, "DJANGO_SETTINGS_MODULE": "config.test_settings",
               "ENGRAM_LOG_LEVEL": "WARNING"}  # fmt: skip
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
             "--workers", "2", "--threads", "4", "--worker-class", "gthread", "--log-level", "warning"],
            env=env,
        )  # fmt: skip
        try:
            wait_for_server(port)
            latencies, errors, prompt_tokens, transcript_tokens = [], [], [], []
            lock = threading.Lock()
            stop_at = time.time() + seconds

            def client(worker: int):
                local = random.Random(worker)
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                transcript = {}
                while time.time() < stop_at:
                    name = local.choice(names)
                    message = local.choice(QUESTIONS)
                    body = json.dumps({"message": f"{message} ({worker}-{time.time_ns()})", "session_id": f"w{worker}"})
                    started = time.perf_counter()
                    conn.request("POST", f"/api/v1/spaces/{name}/turns", body,
                                 {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})  # fmt: skip
                    response = conn.getresponse()
                    payload = response.read()
                    elapsed = (time.perf_counter() - started) * 1000
                    transcript[name] = transcript.get(name, 0) + estimate_tokens(message)
                    with lock:
                        latencies.append(elapsed)
                        if response.status != 201:
                            errors.append(response.status)
                        else:
                            prompt_tokens.append(estimate_tokens(json.loads(payload).get("prompt", "")))
                            transcript_tokens.append(transcript[name] + sum(estimate_tokens(f) for f in FACTS))

            threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
            started = time.time()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.time() - started
        finally:
            server.terminate()
            server.wait(timeout=30)
    body = f"""{CLIENTS} concurrent clients for {seconds:.0f} s against gunicorn (2 workers × 4 threads) on loopback,
{SPACES} spaces pre-filled through the pipeline; `POST .../turns` without `wait` (store, forget check, recall, queue).

| requests | throughput | p50 | p95 | p99 | errors |
|---|---|---|---|---|---|
| {len(latencies)} | {len(latencies) / wall:.1f} req/s | {median(latencies):.0f} ms | {percentile(latencies, 95):.0f} ms | {percentile(latencies, 99):.0f} ms | {len(errors)} |

Tokens in the prompt block per turn: median {median(prompt_tokens):.0f}, p95 {percentile(prompt_tokens, 95):.0f};
the whole transcript so far would have been median {median(transcript_tokens):.0f}, p95 {percentile(transcript_tokens, 95):.0f}
(it grows with every turn; the prompt block is bounded by the space's token budget).
"""
    write_section("Turn latency under concurrency", body)
    return body


if __name__ == "__main__":
    print(main(float(sys.argv[1]) if len(sys.argv) > 1 else 30.0))
