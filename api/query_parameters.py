"""Unknown query parameters are a 400 under /api/, not silently ignored.

A typo such as ``?limt=5`` or ``?include_superceded=true`` would otherwise return a different
answer than the caller asked for without telling them. The parameters each operation accepts are
read once from the project's own OpenAPI schema, so the check and the documentation cannot drift.
"""

from __future__ import annotations

import re

from django.http import JsonResponse
from django.urls import Resolver404, resolve

from api.documented_schema import api_schema
from api.errors import error_body

_documented: dict[tuple[str, str], frozenset[str]] | None = None
EXEMPT_PREFIXES = ("/api/v1/schema", "/api/docs")


def documented_parameters() -> dict[tuple[str, str], frozenset[str]]:
    """(path template, method) → the query parameters the schema documents for it."""
    global _documented
    if _documented is None:
        _documented = {
            (path, method.upper()): frozenset(
                p["name"] for p in operation.get("parameters", []) if p.get("in") == "query"
            )
            for path, operations in api_schema()["paths"].items()
            for method, operation in operations.items()
        }
    return _documented


def template_of(route: str) -> str:
    """Django's ``api/v1/spaces/<str:external_id>`` → the schema's ``/api/v1/spaces/{external_id}``."""
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


class UnknownQueryParametersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/api/") and request.GET and not request.path.startswith(EXEMPT_PREFIXES):
            unknown = self.unknown(request)
            if unknown:
                return JsonResponse(
                    error_body(
                        "invalid_request",
                        "Unknown query parameter(s): " + ", ".join(sorted(unknown))[:500] + ".",
                        {"unknown_parameters": sorted(unknown)[:20]},
                    ),
                    status=400,
                )
        return self.get_response(request)

    def unknown(self, request) -> set[str]:
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return set()
        known = documented_parameters().get((template_of(match.route), request.method))
        if known is None:
            return set()
        return set(request.GET) - known - {"format"}
