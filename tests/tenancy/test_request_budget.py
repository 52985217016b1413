"""An API key's rate limit: counted exactly across concurrent requests, threads and processes, refusals
spending nothing, a limit changed at run time taking effect at once, never holding a lock for the rest of
a request, not spent by someone who only knows the key's visible prefix. The count runs on a pooled side
connection, as the runtime role (or the one the URL assumes) with no scope; a database that fails under
it is a clean JSON error, never a raw 500 (tenants/request_budget.py)."""

from __future__ import annotations

import threading

import psycopg
import pytest
from django.conf import settings as django_settings
from django.db import connection, connections

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
    handed_out = django_settings.ENGRAM_DB_RATE_LIMIT_CONNECTIONS + 1
    assert [client.get(SPACES).status_code for _ in range(handed_out)] == [200] * handed_out


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


def spent_at_once(prefix: str, rate: Rate, n: int) -> list[float]:
    return at_once(lambda: spend(prefix, rate), n)


def test_one_per_minute_under_16_concurrent_threads_lets_exactly_one_through():
    waits = spent_at_once("one-per-minute", Rate.parse("1/minute"), 16)
    assert sum(w == 0.0 for w in waits) == 1
    assert all(w > 0 and w <= 60 for w in waits if w)


def test_refusals_spend_nothing_under_concurrency():
    rate = Rate.parse("3/hour")
    assert spent_at_once("refused", rate, 10).count(0.0) == 3
    # a burst of 10 refused requests must not push the wait beyond one share (1200 s)
    more = spent_at_once("refused", rate, 10)
    assert more.count(0.0) == 0 and max(more) <= 1200.5


def test_retry_after_is_never_zero_or_negative(settings, key_a):
    settings.ENGRAM_API_RATE_LIMIT = "1/second"
    client = api_client(key_a.secret)
    assert client.get(SPACES).status_code == 200
    refused = client.get(SPACES)
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1


def test_raising_the_limit_at_run_time_takes_effect():
    assert spend("raised", Rate.parse("1/minute")) == 0.0
    assert spend("raised", Rate.parse("1/minute")) > 0
    # 1/minute -> 120/minute: the spent share (60 s ahead) is within the new tolerance (59.5 s)? nearly.
    assert spend("raised", Rate.parse("120/minute")) <= 0.5 + 0.01


def test_shortening_the_period_at_run_time_never_blocks_a_key_for_longer_than_the_new_period():
    """An operator moves from a daily budget to a per-second one: a key that had spent its day's burst
    was refused for up to a day, far beyond the new period (found and fixed)."""
    day = Rate.parse("2/day")
    assert spend("shortened", day) == 0.0
    assert spend("shortened", day) == 0.0
    wait = spend("shortened", Rate.parse("10/second"))
    assert wait <= 1.0, f"refused for {wait:.0f} s under a 10/second limit"


def test_rate_texts_that_mean_something_else_are_refused():
    """DRF reads only the first letter of the period: '5/months' would be 5/minute, '5/ms' too."""
    for text in ("5/months", "5/ms", "5/decade", "5/hundredyears"):
        with pytest.raises(ValueError):
            Rate.parse(text)


def test_side_connection_runs_as_the_runtime_role_without_rls_bypass_or_scope():
    with connection.autocommit_side_connection() as side:
        user, superuser, bypass = side.execute(
            "SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        settings_rows = side.execute(
            "SELECT name, setting FROM pg_settings WHERE name LIKE 'engram.%' OR name LIKE 'app.%'"
        ).fetchall()
    assert user == django_settings.ENGRAM_RUNTIME_DATABASE_ROLE
    assert not superuser and not bypass
    assert all(not value for _, value in settings_rows), settings_rows


def test_the_count_does_not_wait_for_the_disk_and_the_requests_own_statements_still_do():
    # A lost fraction of a second of counts after a database crash costs nothing; a turn's rows must be durable.
    with connection.autocommit_side_connection() as side:
        assert side.execute("SHOW synchronous_commit").fetchone() == ("off",)
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone() == ("on",)


def test_side_connections_are_shared_by_the_process_threads_and_never_exceed_their_pool():
    """Each thread used to keep a side connection of its own for as long as it lived: runserver starts a
    thread per request, and the server ran out of connection slots."""
    with connection.autocommit_side_connection() as first:
        first_pid = first.info.backend_pid
    seen = []

    def other():
        with connections["default"].autocommit_side_connection() as side:
            seen.append(side.info.backend_pid)
        connections.close_all()

    threads = [threading.Thread(target=other) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(seen) == 8
    assert len(set(seen) | {first_pid}) <= django_settings.ENGRAM_DB_RATE_LIMIT_CONNECTIONS


def test_database_down_for_the_counter_is_a_clean_503(monkeypatch, settings, key_a):
    client = api_client(key_a.secret)
    settings.ENGRAM_DB_POOL_TIMEOUT = 0.5
    connection.close_side_connection()

    def refuse(*args, **kwargs):
        raise psycopg.OperationalError("connection refused")

    monkeypatch.setattr(psycopg.Connection, "connect", refuse)
    response = client.get(SPACES)
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["error"]["code"] == "service_unavailable"


def test_a_read_only_database_under_the_counter_is_a_json_error_not_a_raw_500(key_a):
    """A psycopg error other than OperationalError from the side connection (held: JSON internal_error)."""
    client = api_client(key_a.secret)
    assert client.get(SPACES).status_code == 200
    connection.close_side_connection()
    with connection.autocommit_side_connection() as side:  # the process's only idle one, handed out next
        side.execute("SET default_transaction_read_only = on")
    client.raise_request_exception = False
    response = client.get(SPACES)
    connection.close_side_connection()
    assert response.status_code in (500, 503)
    assert response["Content-Type"].startswith("application/json"), response.status_code


def test_a_killed_counter_connection_twice_in_a_row_is_still_clean(key_a):
    client = api_client(key_a.secret)
    for _ in range(2):
        assert client.get(SPACES).status_code == 200
        with connection.autocommit_side_connection() as side:
            pid = side.info.backend_pid
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    assert client.get(SPACES).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_concurrent_http_requests_of_one_key_are_limited_exactly(settings, key_a):
    """Through the whole stack (authentication, ATOMIC_REQUESTS, the throttle), each thread with its own
    request connection and side connection, the first requests of a key racing to create its row."""
    settings.ENGRAM_API_RATE_LIMIT = "4/hour"

    def one():
        response = api_client(key_a.secret).get(SPACES)
        return response.status_code, response.get("Retry-After")

    codes = at_once(one, 12)
    assert sorted(c for c, _ in codes) == [200] * 4 + [429] * 8
    assert all(0 < int(ra) <= 900 for c, ra in codes if c == 429)


@pytest.mark.django_db(transaction=True)
def test_the_side_connection_sees_no_tenant_rows_without_a_scope(key_a, space_a, space_b):
    """It carries no row-level-security scope: every tenant table must read as empty on it (fail closed)."""
    with connection.autocommit_side_connection() as side:
        tables = [
            row[0]
            for row in side.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE c.relkind = 'r' AND c.relrowsecurity AND n.nspname = current_schema()"
            ).fetchall()
        ]
        visible = {t: side.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
        # and the budget table holds nothing a tenant wrote: a prefix and a time
        columns = [r[0] for r in side.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'tenants_apikeyrequestbudget'"
        ).fetchall()]  # fmt: skip
    assert "tenants_space" in tables and "memory_message" in tables
    assert not any(visible.values()), visible
    assert sorted(columns) == ["key_prefix", "theoretical_arrival"]


def test_the_side_connection_takes_the_role_the_main_one_assumes(superuser_conninfo):
    """DATABASE_URL's query string becomes OPTIONS (database/url.py), so `?assume_role=...` is a
    supported setting: Django's main connection runs `SET ROLE` on connect; the side connection must too
    (found and fixed)."""
    runtime = django_settings.ENGRAM_RUNTIME_DATABASE_ROLE
    with psycopg.connect(superuser_conninfo, autocommit=True) as su:
        su.execute("DROP ROLE IF EXISTS assumed_by_the_url")
        su.execute("CREATE ROLE assumed_by_the_url NOLOGIN")
        su.execute(f'GRANT assumed_by_the_url TO "{runtime}"')
    options = connection.settings_dict["OPTIONS"]
    try:
        options["assume_role"] = "assumed_by_the_url"
        connection.close_side_connection()
        with connection.cursor() as cursor:
            cursor.execute("SET ROLE assumed_by_the_url")  # what init_connection_state does on a new connection
            cursor.execute("SELECT current_user")
            main_role = cursor.fetchone()[0]
            cursor.execute("RESET ROLE")
        with connection.autocommit_side_connection() as side:
            side_role = side.execute("SELECT current_user").fetchone()[0]
    finally:
        options.pop("assume_role", None)
        connection.close_side_connection()
    assert main_role == "assumed_by_the_url"
    assert side_role == main_role, f"side connection runs as {side_role}"
