"""Console query parameters and form fields that are not text the user meant: refused with a 400
and a message, before a view reads them (a NUL byte would otherwise reach PostgreSQL as a 500).

>>> nul_field({"q": "ok", "space": "a\\x00b"})
'space'
>>> parse_filter_time("2026-11-29", "until")
datetime.datetime(2026, 11, 29, 0, 0, tzinfo=datetime.timezone.utc)
>>> parse_filter_time("2026-02-30T00:00:00Z", "since")
Traceback (most recent call last):
...
console.form_input.BadInput: since: use an ISO 8601 date-time, e.g. 2026-11-29T12:00:00Z, or a date.
"""

from __future__ import annotations

import datetime

from django.http import HttpResponse
from django.utils.dateparse import parse_date, parse_datetime


class BadInput(ValueError):
    """A console parameter the view cannot use; the message names it."""


def nul_field(*query_dicts) -> str | None:
    """The name of the first parameter whose name or value holds a NUL character, if any."""
    for data in query_dicts:
        for name, values in data.lists() if hasattr(data, "lists") else ((k, [v]) for k, v in data.items()):
            if "\x00" in name or any("\x00" in value for value in values if isinstance(value, str)):
                return name.replace("\x00", "\\0")
    return None


def parse_filter_time(value: str, field: str) -> datetime.datetime | None:
    """An optional ISO 8601 filter bound (a date-time, or a date meaning its midnight), in UTC; empty is no bound."""
    if not value.strip():
        return None
    try:
        parsed = parse_datetime(value.strip())
        if parsed is None and (day := parse_date(value.strip())) is not None:  # what <input type=date> sends
            parsed = datetime.datetime.combine(day, datetime.time())
    except ValueError:  # well-formed but impossible, e.g. February 30th
        parsed = None
    if parsed is None:
        raise BadInput(f"{field}: use an ISO 8601 date-time, e.g. 2026-11-29T12:00:00Z, or a date.")
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=datetime.UTC)
    try:
        # In UTC: PostgreSQL refuses offsets beyond ±15:59 that Python accepts.
        return parsed.astimezone(datetime.UTC)
    except OverflowError:
        raise BadInput(f"{field}: out of range.") from None


def error_status(request, has_errors) -> int:
    """400 for a form with errors; but htmx (and hx-boost) swap only a 2xx answer into the page, so
    there the page with its error messages comes back as 200."""
    return 400 if has_errors and not getattr(request, "htmx", False) else 200


def bad_request(message: str) -> HttpResponse:
    return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
