"""An API key's rate limit: counted exactly across concurrent requests and processes, never holding a
lock for the rest of a request, not spent by someone who only knows the key's visible prefix."""

from __future__ import annotations

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from tenants.request_budget import Rate, spend
from tests.conftest import api_client
from tests.support.concurrency import at_once

pytestmark = pytest.mark.django_db

SPACES = "/api/v1/spaces"


def other_connection() -> psycopg.Connection:
    """A connection outside the test's transaction (another server process, as far as the database knows)."""
    return psycopg.connect(**connection.get_connection_params(), autocommit=True)


def test_the_count_is_committed_at_once_and_the_row_is_not_held_while_the_request_runs(key_a):
    """The request's own transaction stays open for the whole test, as a slow request's would: another
    process must already see the count and be able to take the row without waiting."""
    assert api_client(key_a.secret).get(SPACES).status_code == 200
    assert connection.in_atomic_block  # the test's (the request's) transaction is still open
    with other_connection() as other:
        other.execute("SET lock_timeout = '1s'")
        row = other.execute(
            "SELECT key_prefix FROM tenants_apikeyrequestbudget WHERE key_prefix = %s FOR UPDATE NOWAIT",
            [key_a.api_key.prefix],
        ).fetchone()
    assert row == (key_a.api_key.prefix,)


def test_concurrent_requests_of_one_key_are_counted_exactly():
    rate = Rate.parse("5/minute")
    waits = at_once(lambda: spend("concurrent01", rate), 12)
    assert sorted(w == 0.0 for w in waits) == [False] * 7 + [True] * 5


def test_a_refused_request_is_told_when_the_next_one_may_go(settings, key_a):
    settings.ENGRAM_API_RATE_LIMIT = "3/minute"
    client = api_client(key_a.secret)
    assert [client.get(SPACES).status_code for _ in range(3)] == [200, 200, 200]
    refused = client.get(SPACES)
    assert refused.status_code == 429
    assert refused["Retry-After"] == "20"  # one request's share of the minute
    assert refused.json()["error"]["code"] == "rate_limited"
    # A refused request spends nothing: once that share has passed, exactly one more goes through.
    with other_connection() as other:
        other.execute(
            "UPDATE tenants_apikeyrequestbudget SET theoretical_arrival = theoretical_arrival - interval '20 seconds'"
            " WHERE key_prefix = %s",
            [key_a.api_key.prefix],
        )
    assert client.get(SPACES).status_code == 200
    assert client.get(SPACES).status_code == 429


def test_someone_who_knows_only_the_prefix_cannot_spend_the_keys_budget(settings, key_a):
    settings.ENGRAM_API_RATE_LIMIT = "2/minute"
    forged = api_client(f"eng_{key_a.api_key.prefix}_{'x' * 43}")
    assert [forged.get(SPACES).status_code for _ in range(5)] == [401] * 5
    owner = api_client(key_a.secret)
    assert [owner.get(SPACES).status_code for _ in range(3)] == [200, 200, 429]


def test_a_counter_connection_killed_while_idle_is_replaced_without_an_error(key_a):
    client = api_client(key_a.secret)
    assert client.get(SPACES).status_code == 200
    with connection.autocommit_side_connection() as side:
        side_pid = side.info.backend_pid
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [side_pid])
    # every connection of the process's rate-limit pool is handed out at least once
    assert [client.get(SPACES).status_code for _ in range(settings.ENGRAM_DB_RATE_LIMIT_CONNECTIONS + 1)] == [200] * (
        settings.ENGRAM_DB_RATE_LIMIT_CONNECTIONS + 1
    )


@pytest.mark.parametrize("text", ["", "many/minute", "0/minute", "5 per minute", "5/fortnight"])
def test_a_rate_that_does_not_read_as_one_is_refused(text):
    with pytest.raises(ValueError):
        Rate.parse(text)


def test_rates_read_as_drf_writes_them():
    assert Rate.parse("1200/minute") == Rate(1200, 60)
    assert Rate.parse("10/s") == Rate(10, 1)
    assert Rate.parse("5/hour").interval == 720


def test_the_server_refuses_to_start_with_a_rate_limit_it_cannot_read(settings):
    from tenants.checks import check_api_rate_limit

    settings.ENGRAM_API_RATE_LIMIT = "lots/minute"
    [error] = check_api_rate_limit()
    assert error.id == "engram.E003" and "1200/minute" in error.msg
    settings.ENGRAM_API_RATE_LIMIT = "60/minute"
    assert check_api_rate_limit() == []
