"""One error shape for the whole API: ``{"error": {"code", "message", "details"}}``.

Services raise Django's own exceptions (ValidationError, PermissionDenied, Http404) or the domain
errors of ``core.errors``; this handler is the only place that turns them into HTTP responses, so service
modules never import DRF.
"""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DatabaseError, DataError, OperationalError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from core.errors import DomainError

logger = logging.getLogger(__name__)


CODES_BY_EXCEPTION = [
    (exceptions.NotAuthenticated, "not_authenticated"),
    (exceptions.AuthenticationFailed, "authentication_failed"),
    (exceptions.PermissionDenied, "permission_denied"),
    (exceptions.NotFound, "not_found"),
    (exceptions.MethodNotAllowed, "method_not_allowed"),
    (exceptions.NotAcceptable, "not_acceptable"),
    (exceptions.UnsupportedMediaType, "unsupported_media_type"),
    (exceptions.Throttled, "rate_limited"),
    (exceptions.ParseError, "malformed_request"),
    (exceptions.ValidationError, "invalid_request"),
]


def error_body(code: str, message: str, details=None) -> dict:
    return {"error": {"code": code, "message": message, "details": details}}


def _django_validation_details(exc: DjangoValidationError):
    if hasattr(exc, "error_dict"):
        return {field: [m for e in errors for m in e.messages] for field, errors in exc.error_dict.items()}
    return {"non_field_errors": exc.messages}


def api_exception_handler(exc, context):
    # An error answer writes nothing: whatever the request did before the refusal is rolled back
    # (DRF's own handler does this only for its exceptions, not for ours or Django's).
    set_rollback()
    if isinstance(exc, DomainError):
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status_code)
    if isinstance(exc, DjangoValidationError):
        details = _django_validation_details(exc)
        return Response(error_body("invalid_request", "The request is not valid.", details), status=400)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, OperationalError):
        logger.exception("database unavailable")
        return Response(
            error_body("service_unavailable", "The database is unavailable; retry shortly."),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": "5"},
        )
    elif isinstance(exc, DataError):
        # A value the database cannot hold (out of range, invalid for its type) that validation let by.
        logger.warning("database refused a value: %s", exc)
        return Response(error_body("invalid_request", "A value in the request is out of range."), status=400)
    elif isinstance(exc, DatabaseError):
        logger.exception("database error")
        return Response(error_body("internal_error", "The request could not be completed."), status=500)

    response = exception_handler(exc, context)
    if response is None:
        return None
    code = next((c for cls, c in CODES_BY_EXCEPTION if isinstance(exc, cls)), "error")
    if isinstance(exc, exceptions.ValidationError):
        message, details = "The request is not valid.", response.data
    else:
        message, details = str(exc.detail), None
    response.data = error_body(code, message, details)
    return response
