"""Faults, injected for real: the database going away under concurrent requests, and a worker
process killed (SIGKILL) in the middle of a turn."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from django.urls import reverse

from memory.models import Memory, Message, Turn
from tenants import scope
from tests.conftest import api_client

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def database_switch(superuser_conninfo):
    """Turn the test database off (existing sessions killed, new ones refused) and on again — what
    clients see while PostgreSQL restarts."""
    name = connection.settings_dict["NAME"]
    admin = psycopg.connect(superuser_conninfo.replace(f"dbname={name}", "dbname=postgres"), autocommit=True)

    def off():
        admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [name],
        )

    def on():
        admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')

    yield off, on
    on()
    admin.close()
    connection.close()


@pytest.mark.django_db(transaction=True)
def test_requests_during_a_database_outage_get_503_and_nothing_half_written(space_a, key_a, database_switch):
    off, on = database_switch
    statuses: list[int] = []
    created: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    url = reverse("turn-create", args=[space_a.external_id])

    def agent(number: int):
        client = api_client(key_a.secret)
        sent = 0
        while not stop.is_set():
            sent += 1
            response = client.post(url, {"message": f"We run {number}{sent} vans.", "session_id": f"a{number}"},
                                   format="json")  # fmt: skip
            with lock:
                statuses.append(response.status_code)
                if response.status_code == 201:
                    created.append(response.json()["turn_id"])
                else:
                    assert response.status_code == 503, response.content
                    assert response["Retry-After"] and response.json()["error"]["code"] == "service_unavailable"
            connection.close()

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(1.5)
    off()
    time.sleep(1.5)
    during_outage = len(statuses)
    on()
    time.sleep(1.5)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    connection.close()
    assert 503 in statuses, "the outage was not observed"
    assert statuses[-1] == 201 and len(statuses) > during_outage, "requests did not recover"
    with scope.tenant_scope(space_a.tenant_id, space_a):
        turns = set(Turn.objects.values_list("id", flat=True))
        messages = Message.objects.count()
    assert {str(t) for t in turns} == set(created)  # every acknowledged turn is stored, no others
    assert messages == len(turns)  # no message without its turn


@pytest.mark.django_db(transaction=True)
def test_healthz_reports_the_outage_and_the_recovery(client, database_switch):
    off, on = database_switch
    assert client.get("/healthz").status_code == 200
    off()
    connection.close()
    response = client.get("/healthz")
    assert response.status_code == 503 and response.json()["database"].startswith("unreachable")
    on()
    connection.close()
    assert client.get("/healthz").status_code == 200


WORKER = """
import django, os, sys
django.setup()
from memory.turns.pipeline import run_turn
print(run_turn(tenant_id=sys.argv[1], space_id=sys.argv[2], turn_id=sys.argv[3]), flush=True)
"""


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_turn_leaves_it_for_the_sweep_and_it_completes_exactly_once(
    settings, client_a, space_a, scripted_chat
):
    settings.ENGRAM_EXTRACTION_ENGINE = "openai"
    settings.OPENAI_BASE_URL = scripted_chat.url
    settings.OPENAI_API_KEY = "test-key"
    url = reverse("turn-create", args=[space_a.external_id])
    turn_id = client_a.post(url, {"message": "We run a fleet of four vans."}, format="json").json()["turn_id"]
    connection.close()
    scripted_chat.requests.clear()  # the API's own calls (query analysis) are not the worker's
    release = threading.Event()
    scripted_chat.hold = release  # the model "thinks" until released: the worker is mid-turn
    env = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "ENGRAM_DATABASE_NAME": connection.settings_dict["NAME"], "ENGRAM_EXTRACTION_ENGINE": "openai",
        "OPENAI_BASE_URL": scripted_chat.url, "OPENAI_API_KEY": "test-key", "ENGRAM_MODEL_MAX_RETRIES": "0",
    }  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(space_a.tenant_id), str(space_a.id), turn_id], env=env, cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.time() + 60
    while not scripted_chat.requests and time.time() < deadline and worker.poll() is None:
        time.sleep(0.1)
    assert scripted_chat.requests, worker.communicate(timeout=5)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=10)
    release.set()
    scripted_chat.hold = None

    def state():
        with scope.tenant_scope(space_a.tenant_id, space_a):
            turn = Turn.objects.get(pk=turn_id)
            return (
                turn.status,
                turn.attempts,
                [memory.content for memory in Memory.objects.exclude(kind="topic")],
            )

    assert state() == ("processing", 1, [])  # claimed, nothing written: the pipeline's transaction died with it
    from memory.turns.pipeline import PROCESSING_LEASE, requeue_due_turns

    assert requeue_due_turns() == 0  # within its lease nobody steals it
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Turn.objects.filter(pk=turn_id).update(updated_at=Turn.objects.get(pk=turn_id).updated_at - PROCESSING_LEASE)
    assert requeue_due_turns() == 1
    fact = "We run a fleet of four vans."
    entry = {"kind": "fact", "content": fact, "topic": "fleet", "importance": 0.7, "keywords": ["vans"],
             "quote": fact, "event_days_ago": None}  # fmt: skip
    scripted_chat.replies = [{"entries": [entry]}]
    restarted = subprocess.run(
        [sys.executable, "-c", WORKER, str(space_a.tenant_id), str(space_a.id), turn_id], env=env, cwd=ROOT,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert restarted.stdout.strip() == "done", restarted.stderr[-2000:]
    again = subprocess.run(
        [sys.executable, "-c", WORKER, str(space_a.tenant_id), str(space_a.id), turn_id], env=env, cwd=ROOT,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert again.stdout.strip() == "done"  # a second delivery of the task changes nothing
    assert state() == ("done", 2, ["We run a fleet of four vans."])


@pytest.mark.django_db
def test_a_model_that_times_out_is_retried_later_and_nothing_is_half_written(
    settings, client_a, space_a, scripted_chat
):
    settings.ENGRAM_EXTRACTION_ENGINE = "openai"
    settings.OPENAI_BASE_URL = scripted_chat.url
    settings.OPENAI_API_KEY = "test-key"
    settings.ENGRAM_MODEL_TIMEOUT_SECONDS = 1
    settings.ENGRAM_MODEL_MAX_RETRIES = 0
    release = threading.Event()
    scripted_chat.hold = release
    try:
        url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
        body = client_a.post(url, {"message": "We run a fleet of four vans."}, format="json").json()
    finally:
        release.set()
        scripted_chat.hold = None
    assert body["status"] == "queued" and "timed out" in body["error"].lower()
    with scope.tenant_scope(space_a.tenant_id, space_a):
        turn = Turn.objects.get(pk=body["turn_id"])
        assert turn.attempts == 1 and turn.next_attempt_at is not None
        assert not Memory.objects.exists()
