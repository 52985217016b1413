"""When the database is down or restarting: a clean 503 with ``Retry-After``, never a 500.

DRF views already answer an ``OperationalError`` raised inside them with 503 (api.errors);
this middleware covers the rest of the view call — opening the request's transaction (ATOMIC_REQUESTS
wraps the view), the console's views and their session and user lookups.
"""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse

from api.errors import error_body

logger = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = "5"


def unavailable_response(request):
    if request.path.startswith("/api/"):
        response = JsonResponse(error_body("service_unavailable", "The database is unavailable; retry shortly."),
                                status=503)  # fmt: skip
    else:
        response = HttpResponse(
            "<!doctype html><title>Unavailable</title><h1>Engram is briefly unavailable</h1>"
            "<p>The database cannot be reached. Please retry in a few seconds.</p>",
            status=503,
        )
    response["Retry-After"] = RETRY_AFTER_SECONDS
    return response


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, (OperationalError, InterfaceError)):
            logger.warning("database unavailable for %s", request.path)
            return unavailable_response(request)
        return None
