"""What each API operation sends, independent of sync or async: one place that knows the paths."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal
from urllib.parse import quote


@dataclasses.dataclass(frozen=True)
class ApiRequest:
    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    content: bytes | None = None
    content_type: str | None = None
    headers: dict[str, str] | None = None
    expect: Literal["json", "bytes", "none"] = "json"
    # Safe to resend after a dropped connection: reads, deletes, and writes the server de-duplicates.
    idempotent: bool = False


def segment(value: object) -> str:
    """One path segment: ``segment("customer 42") == "customer%2042"``.

    An id that could name another path (``..``, or with a slash, which servers decode even when quoted) is
    refused before anything is sent: ``segment("a/b")`` raises ``ValueError``.
    """
    text = str(value)
    if text in ("", ".", "..") or "/" in text or "\\" in text:
        raise ValueError(f"Not a valid id for a URL path: {text!r}")
    return quote(text, safe="")


def space_path(space: str, *rest: object) -> str:
    return "/".join(["/api/v1/spaces", segment(space), *(segment(r) for r in rest)])


def without_none(**values: Any) -> dict[str, Any]:
    """Only the values given: ``without_none(a=1, b=None) == {"a": 1}``."""
    return {k: v for k, v in values.items() if v is not None}


def query_flags(**values: Any) -> dict[str, Any]:
    """Query parameters with booleans spelled the way the API reads them (``true``/``false``)."""
    return {k: ("true" if v else "false") if isinstance(v, bool) else v for k, v in without_none(**values).items()}
