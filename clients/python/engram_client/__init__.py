"""Typed Python client for the Engram memory API (sync ``Engram`` and async ``AsyncEngram``)."""

from engram_client.client import AsyncEngram, Engram
from engram_client.errors import (
    AuthenticationFailed,
    Conflict,
    EngramError,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    RateLimited,
    ServiceUnavailable,
)

__all__ = [
    "AsyncEngram",
    "AuthenticationFailed",
    "Conflict",
    "Engram",
    "EngramError",
    "InvalidRequest",
    "NotFound",
    "PermissionDenied",
    "RateLimited",
    "ServiceUnavailable",
]
