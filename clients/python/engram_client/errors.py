"""The API's error answers as exceptions: ``{"error": {"code", "message", "details"}}`` becomes ``EngramError``."""

from __future__ import annotations

from typing import Any


class EngramError(Exception):
    """An error answer from the API. ``code`` is the API's error code (``not_found``, ``rate_limited``, …)."""

    def __init__(
        self,
        *,
        status: int,
        code: str,
        message: str,
        details: Any = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.retry_after = retry_after


class InvalidRequest(EngramError):
    """400: the request was refused; ``details`` names each field."""


class AuthenticationFailed(EngramError):
    """401: missing, wrong or revoked API key."""


class PermissionDenied(EngramError):
    """403: the key lacks the scope, or speaks for another agent."""


class NotFound(EngramError):
    """404: no such space, memory, turn or episode in this tenant (another tenant's ids are not found too)."""


class Conflict(EngramError):
    """409: a duplicate space, ``duplicate_found`` or ``conflicting_feedback``."""


class RateLimited(EngramError):
    """429 after the client's retries were used up; ``retry_after`` is the server's advice in seconds."""


class ServiceUnavailable(EngramError):
    """503 after the client's retries were used up."""


_BY_STATUS: dict[int, type[EngramError]] = {
    400: InvalidRequest,
    401: AuthenticationFailed,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    429: RateLimited,
    503: ServiceUnavailable,
}


def error_from_response(status: int, body: Any, retry_after: float | None) -> EngramError:
    """The exception for an error answer; a body that is not the API's error shape still raises, with code ``error``."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        error = {"code": "error", "message": str(body)[:500] if body else f"HTTP {status}"}
    cls = _BY_STATUS.get(status, EngramError)
    return cls(
        status=status,
        code=str(error.get("code", "error")),
        message=str(error.get("message", "")),
        details=error.get("details"),
        retry_after=retry_after,
    )
