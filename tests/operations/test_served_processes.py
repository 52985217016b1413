"""The processes `make serve` starts: gunicorn's workers forked from a preloaded master, and the task
worker with the sweep on a thread beside it. Real processes on the test database."""

from __future__ import annotations

import datetime
import logging
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest
from django.db import connection
from django.utils import timezone

from bench.harness import free_port, wait_for_server
from bench.process_memory import children_of, memory_kib
from memory.management.commands import run_worker
from memory.models import Memory, Turn
from tenants import scope
from tests.support.processes import stop

ROOT = Path(__file__).resolve().parents[2]
VANS = "We run a fleet of four vans."


def served_env(**extra) -> dict[str, str]:
    return {
        **os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings", "ENGRAM_LOG_LEVEL": "WARNING",
        "ENGRAM_DATABASE_NAME": connection.settings_dict["NAME"], **extra,
    }  # fmt: skip


@pytest.fixture
def gunicorn(transactional_db):
    """gunicorn with config/gunicorn.py (preloaded, 2 workers × 4 threads) on a free loopback port."""
    port = free_port()
    connection.close()  # the server must see what this test committed, on its own connections
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application",
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        env=served_env(), cwd=ROOT,
    )  # fmt: skip
    try:
        wait_for_server(port, seconds=180)
        yield process, f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def test_preloaded_workers_run_the_model_and_share_the_masters_pages(gunicorn, key_a, space_a):
    process, url = gunicorn
    headers = {"Authorization": f"Bearer {key_a.secret}"}
    turn = httpx2.post(
        f"{url}/api/v1/spaces/{space_a.external_id}/turns?wait=true", json={"message": VANS}, headers=headers,
        timeout=120,
    )  # fmt: skip
    assert turn.status_code == 201, turn.text
    assert VANS in [m["content"] for m in turn.json()["created"]]

    def recall(_):
        return httpx2.post(
            f"{url}/api/v1/spaces/{space_a.external_id}/recall", json={"query": "How many vans?"}, headers=headers,
            timeout=120,
        )  # fmt: skip

    # More requests at once than one worker has threads: both workers embed (a model run in the
    # master before the fork would hang them here) and each opens its own database connection.
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(recall, range(8)))
    assert [a.status_code for a in answers] == [200] * 8
    assert all(a.json()["memories"][0]["content"] == VANS for a in answers)

    workers = children_of().get(process.pid, [])
    assert len(workers) == 2
    for worker in workers:
        pss, rss = memory_kib(worker)
        # Without the preload a worker's own copy of everything makes Pss nearly equal to Rss (0.92).
        assert pss < 0.75 * rss, (pss, rss)


def test_the_wsgi_module_leaves_no_database_connection_open_for_the_fork(transactional_db):
    script = (
        "import config.wsgi\n"
        "from django.db import connections\n"
        "print(sum(c.connection is not None for c in connections.all(initialized_only=True)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], env=served_env(ENGRAM_PRELOADED_BY_GUNICORN="1"), cwd=ROOT,
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "0"


@pytest.mark.django_db(transaction=True)
def test_the_task_worker_sweeps_a_turn_whose_worker_died_and_then_processes_it(client_a, space_a):
    url = f"/api/v1/spaces/{space_a.external_id}/turns"
    turn_id = client_a.post(url, {"message": VANS}, format="json").json()["turn_id"]
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Turn.objects.filter(pk=turn_id).update(
            status="processing", attempts=1, updated_at=timezone.now() - datetime.timedelta(hours=1)
        )
    connection.close()
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "run_worker", "--queue-name", "*", "--no-reload", "--sweep-every", "1"],
        env=served_env(ENGRAM_TEST_TASKS="database"), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while True:
            with scope.tenant_scope(space_a.tenant_id, space_a):
                status = Turn.objects.get(pk=turn_id).status
            connection.close()
            if status == "done" or time.monotonic() > deadline or worker.poll() is not None:
                break
            time.sleep(0.5)
    finally:
        stop(worker)
    assert status == "done", worker.stderr.read()[-2000:]
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert [memory.content for memory in Memory.objects.exclude(kind="topic")] == [VANS]
    assert worker.returncode == 0  # SIGTERM stops the worker cleanly, the sweep thread with it


def test_a_failed_sweep_is_logged_and_the_next_one_runs(monkeypatch, caplog):
    passes = []
    stop_sweeping = threading.Event()

    def requeue():
        passes.append(time.monotonic())
        if len(passes) == 1:
            raise ConnectionError("the database is restarting")
        stop_sweeping.set()
        return 0

    monkeypatch.setattr(run_worker, "requeue_due_turns", requeue)
    monkeypatch.setattr(run_worker, "expire_all", lambda: pytest.fail("retention is off in this test"))
    with caplog.at_level(logging.ERROR, logger=run_worker.__name__):
        run_worker.sweep_forever(0.01, 0, stop=stop_sweeping)
    assert len(passes) == 2
    assert "the sweep failed" in caplog.text and "the database is restarting" in caplog.text
