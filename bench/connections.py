"""Database connections under sustained traffic: they stay within each process's configured ceiling.

Two runs on a throw-away database, connections counted from outside every 20 ms (pg_stat_activity):
- 2,000 sequential turns against the server `make run` starts (runserver, a thread per connection)
  with the task worker deriving them beside it;
- eight gunicorn worker processes under eight concurrent clients (turns and recalls) with the task
  worker beside them.
Before the pool, runserver's threads each kept a connection (and a second one for the rate limit):
120 sequential turns left 38 idle connections, and a 2,000-turn ingest ran PostgreSQL out of slots.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time

import psycopg

from bench.harness import (
    free_port,
    median,
    percentile,
    setup_django,
    throwaway_database,
    wait_for_server,
    write_section,
)

CONNECTIONS_PER_PROCESS = 6  # the production default of ENGRAM_DB_CONNECTIONS
SEQUENTIAL_TURNS = 2_000
GUNICORN_WORKERS = 8
CLIENTS = 8
SPACES = 20


class ConnectionSampler:
    """The highest number of a role's connections to a database (with ``application``, only those that name
    themselves so), sampled from outside every ``interval`` seconds."""

    def __init__(self, conninfo: str, database: str, role: str, *, application: str | None = None,
                 interval: float = 0.02):  # fmt: skip
        self.conninfo, self.database, self.role = conninfo, database, role
        self.application, self.interval = application, interval
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        with psycopg.connect(self.conninfo, autocommit=True) as watcher:
            while not self._stop.is_set():
                row = watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND usename = %s"
                    " AND (%s::text IS NULL OR application_name = %s)",
                    [self.database, self.role, self.application, self.application],
                ).fetchone()
                self.samples.append(row[0])
                time.sleep(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(10)

    @property
    def highest(self) -> int:
        return max(self.samples, default=0)


def _post(conn: http.client.HTTPConnection, key: str, path: str, body: dict) -> int:
    conn.request("POST", path, json.dumps(body), {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    response = conn.getresponse()
    response.read()
    return response.status


def _sequential_turns(port: int, key: str, names: list[str]) -> tuple[list[float], dict[int, int]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    latencies, statuses = [], {}
    for index in range(SEQUENTIAL_TURNS):
        started = time.perf_counter()
        status = _post(conn, key, f"/api/v1/spaces/{names[index % len(names)]}/turns",
                       {"message": f"My locker number is {index}.", "session_id": f"s{index // 50}"})  # fmt: skip
        latencies.append((time.perf_counter() - started) * 1000)
        statuses[status] = statuses.get(status, 0) + 1
    return latencies, statuses


def _concurrent_clients(port: int, key: str, names: list[str], seconds: float) -> tuple[list[float], dict[int, int]]:
    latencies, statuses, lock = [], {}, threading.Lock()
    stop_at = time.time() + seconds

    def client(worker: int):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        count = 0
        while time.time() < stop_at:
            name = names[(worker + count) % len(names)]
            started = time.perf_counter()
            if count % 2:
                status = _post(conn, key, f"/api/v1/spaces/{name}/recall", {"query": "What is my locker number?"})
            else:
                status = _post(conn, key, f"/api/v1/spaces/{name}/turns",
                               {"message": f"Our depot number is {worker}-{count}.", "session_id": f"w{worker}"})  # fmt: skip
            elapsed = (time.perf_counter() - started) * 1000
            count += 1
            with lock:
                latencies.append(elapsed)
                statuses[status] = statuses.get(status, 0) + 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, statuses


def main(seconds: float = 60.0) -> str:
    setup_django()
    from django.db import connection

    from database import embedded_postgres
    from tenants import scope, spaces
    from tenants.api_keys import issue_api_key
    from tenants.tenant_admin import create_tenant

    rows = []
    with throwaway_database("engram_bench_connections"):
        tenant = create_tenant(name="Connections", slug="connections")
        key = issue_api_key(tenant=tenant, name="connections", scopes=["turns"]).secret
        names = [f"customer-{i}" for i in range(SPACES)]
        with scope.tenant_scope(tenant):
            for name in names:
                spaces.create_space(tenant=tenant, external_id=name)
        database, role = connection.settings_dict["NAME"], connection.settings_dict["USER"]
        connection.close()
        connection.close_pool()
        server = embedded_postgres.ensure_running()
        watcher = server.conninfo(user=embedded_postgres.OWNER_ROLE, dbname=database)
        env = {**os.environ, "ENGRAM_DATABASE_NAME": database, "DJANGO_SETTINGS_MODULE": "config.test_settings",
               "ENGRAM_TEST_TASKS": "database", "ENGRAM_DB_CONNECTIONS": str(CONNECTIONS_PER_PROCESS),
               "ENGRAM_API_RATE_LIMIT": "1000000/minute",
               "ENGRAM_LOG_LEVEL": "WARNING"}  # fmt: skip
        worker = subprocess.Popen([sys.executable, "manage.py", "db_worker", "--queue-name", "*", "--no-reload"],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            for label, processes, serve, drive in (
                (f"{SEQUENTIAL_TURNS:,} sequential turns, runserver (`make run`)", 1,
                 lambda port: [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                 lambda port: _sequential_turns(port, key, names)),
                (f"{CLIENTS} concurrent clients for {seconds:.0f} s, gunicorn {GUNICORN_WORKERS} workers × 4 threads",
                 GUNICORN_WORKERS,
                 lambda port: [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind",
                               f"127.0.0.1:{port}", "--workers", str(GUNICORN_WORKERS), "--threads", "4",
                               "--worker-class", "gthread", "--log-level", "warning"],
                 lambda port: _concurrent_clients(port, key, names, seconds)),
            ):  # fmt: skip
                port = free_port()
                web = subprocess.Popen(serve(port), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                try:
                    wait_for_server(port)
                    with ConnectionSampler(watcher, database, role) as sampler:
                        latencies, statuses = drive(port)
                finally:
                    web.terminate()
                    web.wait(timeout=30)
                bound = (processes + 1) * CONNECTIONS_PER_PROCESS  # the servers and the task worker
                errors = sum(count for status, count in statuses.items() if status >= 400)
                rows.append(
                    f"| {label} | {len(latencies):,} | {errors} | {median(latencies):.0f} / "
                    f"{percentile(latencies, 95):.0f} ms | {sampler.highest} | {bound} |"
                )
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    body = (
        f"Each process keeps at most `ENGRAM_DB_CONNECTIONS` ({CONNECTIONS_PER_PROCESS}) database connections; "
        "the task worker runs beside the servers. Connections are the runtime role's on the benchmark's "
        "database, sampled every 20 ms from outside; the bound is the processes × the ceiling.\n\n"
        "| run | requests | errors (4xx/5xx) | p50 / p95 | most connections seen | bound |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )
    write_section("Database connections", body)
    return body


if __name__ == "__main__":
    print(main(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0))
