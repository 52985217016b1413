"""When the client retries and how long it waits: the answers worth asking again, the server's
``Retry-After`` read as seconds, and the backoff between attempts (bounded, whatever the server says)."""

from __future__ import annotations

import email.utils
import time

RETRYABLE_STATUSES = frozenset({429, 503})
MAX_RETRY_AFTER_SECONDS = 60.0


def retry_after_seconds(header: str | None, *, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: a number (``"5"``) or an HTTP date; ``None`` when absent or unreadable."""
    if not header:
        return None
    header = header.strip()
    try:
        seconds = float(header)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)


def backoff_seconds(attempt: int, retry_after: float | None, base: float) -> float:
    """The wait before retry ``attempt`` (1-based): the server's ``Retry-After`` when it gave one, else doubling."""
    if retry_after is not None:
        return retry_after
    return min(base * (2 ** (attempt - 1)), MAX_RETRY_AFTER_SECONDS)
