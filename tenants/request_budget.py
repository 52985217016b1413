"""An API key's request budget: at most N requests per period, counted by every server process alike.

The generic cell rate algorithm (GCRA): one row per key holds a "theoretical arrival time" that each
request moves forward by period / N; a request is refused while that time is more than one period
ahead of now, and the refusal says how long until it is not. Up to N requests may come at once, then
one per period / N. One statement decides and counts (after a refusal a second one reads how long to
wait), on a connection beside the request's, in autocommit, from a small pool the process's threads
share: the row is locked for that statement only, never for the rest of a request. (Django's cache,
counted inside the request's transaction, made every request of the same key wait for the one before
it to finish, and lost counts when two read the same value.)
"""

from __future__ import annotations

import dataclasses
import re

import psycopg
import psycopg_pool
from django.db import OperationalError, connection

# A time further ahead than one period (the limit was changed to a shorter period since) counts as
# one period ahead: a key must never wait longer than the period it is now limited over.
SPEND_SQL = """
INSERT INTO tenants_apikeyrequestbudget AS budget (key_prefix, theoretical_arrival)
VALUES (%(prefix)s, statement_timestamp() + %(interval)s * interval '1 second')
ON CONFLICT (key_prefix) DO UPDATE
    SET theoretical_arrival = greatest(least(budget.theoretical_arrival,
                                             statement_timestamp() + %(period)s * interval '1 second'),
                                       statement_timestamp())
                              + %(interval)s * interval '1 second'
    WHERE greatest(least(budget.theoretical_arrival, statement_timestamp() + %(period)s * interval '1 second'),
                   statement_timestamp()) - statement_timestamp()
          <= %(tolerance)s * interval '1 second'
RETURNING true
"""
# Only after a refusal, in a statement of its own: it must read the row as the refusing one left it
# (a statement's snapshot may predate a row another process just created or moved).
WAIT_SQL = """
SELECT extract(epoch FROM least(theoretical_arrival, statement_timestamp() + %(period)s * interval '1 second')
                          - statement_timestamp())::float8 - %(tolerance)s
FROM tenants_apikeyrequestbudget WHERE key_prefix = %(prefix)s
"""
# A refused request waits at least this long, even if the budget frees up between the two statements.
SHORTEST_WAIT_SECONDS = 0.001

PERIOD_SECONDS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600,
                  "d": 86400, "day": 86400}  # fmt: skip
RATE_PATTERN = re.compile(r"^\s*(\d+)\s*/\s*([a-z]+)\s*$")


@dataclasses.dataclass(frozen=True)
class Rate:
    requests: int
    period_seconds: float

    @classmethod
    def parse(cls, text: str) -> Rate:
        """DRF's notation: ``"<count>/<second|minute|hour|day>"``."""
        match = RATE_PATTERN.match(text or "")
        # DRF reads only the period's first letter ("5/months" is 5 a minute): a word that is not a
        # period is refused here, so the server does not start with a limit it reads otherwise.
        period = match.group(2) if match else ""
        if len(period) > 2 and period.endswith("s") and period[:-1] in PERIOD_SECONDS:
            period = period[:-1]  # "minutes", "days"; but "ms" is not "m"
        if not match or int(match.group(1)) < 1 or period not in PERIOD_SECONDS:
            raise ValueError(f"a rate limit reads like '1200/minute' (second, minute, hour or day), not {text!r}")
        return cls(int(match.group(1)), PERIOD_SECONDS[period])

    @property
    def interval(self) -> float:
        return self.period_seconds / self.requests


def spend(key_prefix: str, rate: Rate) -> float:
    """Take one request from the key's budget: 0.0 when it may go ahead, else the seconds to wait (> 0).

    A pooled connection that has died since its last use (the server restarted) is dropped and the
    statement sent once more on another; a second failure is the database being down (or every
    connection of the process busy past the pool's timeout): a 503."""
    parameters = {
        "prefix": key_prefix,
        "interval": rate.interval,
        "tolerance": rate.period_seconds - rate.interval,
        "period": rate.period_seconds,
    }
    attempts_left = 2
    while True:
        try:
            with connection.autocommit_side_connection() as side, side.cursor() as cursor:
                cursor.execute(SPEND_SQL, parameters)
                if cursor.fetchone() is not None:
                    return 0.0
                cursor.execute(WAIT_SQL, parameters)
                return max(SHORTEST_WAIT_SECONDS, float(cursor.fetchone()[0]))
        except psycopg.OperationalError as exc:
            attempts_left -= 1
            if not attempts_left or isinstance(exc, psycopg_pool.PoolTimeout):
                raise OperationalError(str(exc)) from exc
