"""Domain errors: refusals a caller can act on, raised by services that know nothing of HTTP.

``api.errors`` turns each into the API's error shape with its status and code; the console shows
its message.
"""

from __future__ import annotations


class DomainError(Exception):
    """A refusal the caller can act on. Subclasses set the HTTP status and a stable code."""

    status_code = 400
    code = "invalid_request"

    def __init__(self, message: str, *, details=None):
        super().__init__(message)
        self.message = message
        self.details = details


class Conflict(DomainError):
    status_code = 409
    code = "conflict"


class PayloadTooLarge(DomainError):
    status_code = 413
    code = "request_too_large"
