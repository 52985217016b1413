"""A process holds at most its configured number of database connections, whatever its threads do.

Against a live server in this process (runserver-like: a thread per connection), with a small pool.
Before, each thread kept connections of its own: sequential turns against `make run` left 38 idle
connections after 120 turns, and a long ingest ran PostgreSQL out of slots (every request a 503).
"""

from __future__ import annotations

import time

import httpx2
import pytest
from django.db import connection, connections

from bench.connections import ConnectionSampler
from tests.support.concurrency import at_once

SMALL_POOL = 3  # requests, tasks, the test's own thread
RATE_LIMIT_POOL = 1
APPLICATION = "engram-pool-test"


@pytest.fixture
def small_pool(settings):
    """This process's pools rebuilt at 3 + 1 connections with a short wait at the ceiling."""
    options = connection.settings_dict["OPTIONS"]
    original = dict(options["pool"])
    settings.ENGRAM_DB_RATE_LIMIT_CONNECTIONS = RATE_LIMIT_POOL
    settings.ENGRAM_DB_POOL_TIMEOUT = 0.5
    connection.close()
    connection.close_pool()
    options["pool"] = {**original, "max_size": SMALL_POOL, "timeout": 0.5}
    # Counted by this name: connections another test left behind (a server process still stopping) are not ours.
    options["application_name"] = APPLICATION
    yield
    connections.close_all()
    connection.close_pool()
    options["pool"] = original
    options.pop("application_name", None)


@pytest.fixture
def live_server(transactional_db, small_pool):
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer("localhost:0")
    yield server
    server.stop()


def connections_counted(superuser_conninfo: str) -> ConnectionSampler:
    """This process's connections (by their application name) on the test database, sampled every 5 ms."""
    settings = connection.settings_dict
    return ConnectionSampler(superuser_conninfo, settings["NAME"], settings["USER"], application=APPLICATION,
                             interval=0.005)  # fmt: skip


def test_sequential_turns_stay_within_the_pool(live_server, key_a, space_a, superuser_conninfo):
    headers = {"Authorization": f"Bearer {key_a.secret}"}
    url = f"{live_server.url}/api/v1/spaces/{space_a.external_id}/turns"
    with connections_counted(superuser_conninfo) as counter, httpx2.Client(headers=headers, timeout=30) as http:
        statuses = [http.post(url, json={"message": f"My locker number is {n}."}).status_code for n in range(30)]
    assert set(statuses) == {201}, sorted(set(statuses))
    assert 0 < counter.highest <= SMALL_POOL + RATE_LIMIT_POOL, counter.highest


def test_concurrent_requests_beyond_the_pool_wait_their_turn_and_stay_within_it(
    live_server, key_a, space_a, superuser_conninfo
):
    headers = {"Authorization": f"Bearer {key_a.secret}"}
    url = f"{live_server.url}/api/v1/spaces/{space_a.external_id}/recall"

    def recall_a_few_times():
        with httpx2.Client(headers=headers, timeout=30) as http:
            return [http.post(url, json={"query": "locker number"}).status_code for _ in range(5)]

    with connections_counted(superuser_conninfo) as counter:
        results = at_once(recall_a_few_times, 8)
    statuses = [status for result in results for status in result]
    assert len(statuses) == 40
    # At the ceiling a request waits up to the pool's timeout; recall is short, so most get through,
    # and any that waited too long is a clean 503 that says when to come back, never a 500.
    assert set(statuses) <= {200, 503}, sorted(set(statuses))
    assert statuses.count(200) >= 30, statuses
    assert counter.highest <= SMALL_POOL + RATE_LIMIT_POOL, counter.highest


def test_at_the_ceiling_a_request_waits_briefly_then_gets_503_with_retry_after(live_server, key_a, space_a):
    connection.close()  # the test's own connection goes back too: the server finds every one taken
    held = [connection.pool.getconn() for _ in range(SMALL_POOL)]
    try:
        started = time.monotonic()
        response = httpx2.get(
            f"{live_server.url}/api/v1/spaces", headers={"Authorization": f"Bearer {key_a.secret}"}, timeout=30
        )
        waited = time.monotonic() - started
    finally:
        for held_connection in held:
            connection.pool.putconn(held_connection)
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "5"
    assert response.json()["error"]["code"] == "service_unavailable"
    assert waited < 10
    # and once connections are free again, the next request is served
    ok = httpx2.get(f"{live_server.url}/api/v1/spaces", headers={"Authorization": f"Bearer {key_a.secret}"}, timeout=30)
    assert ok.status_code == 200
