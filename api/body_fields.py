"""Unknown fields in a JSON request body are a 400, as unknown query parameters are (``api.query_parameters``).

``{"message": "...", "metadata": {...}}`` on a turn or ``{"query": "...", "filters": {...}}`` on recall used to be
accepted and the extra field dropped: the caller believed it had been stored or applied. The fields each
operation accepts at the top level of its JSON body are read from the project's own OpenAPI schema.
"""

from __future__ import annotations

from django.urls import Resolver404, resolve

from api.documented_schema import api_schema
from api.query_parameters import template_of

_documented: dict[tuple[str, str], frozenset[str]] | None = None


def documented_body_fields() -> dict[tuple[str, str], frozenset[str]]:
    """(path template, method) → the top-level fields its JSON body may hold (operations whose body is an
    object with named properties only)."""
    global _documented
    if _documented is None:
        schema = api_schema()
        components = schema.get("components", {}).get("schemas", {})
        documented = {}
        for path, operations in schema["paths"].items():
            for method, operation in operations.items():
                body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
                if body and "$ref" in body:
                    body = components.get(body["$ref"].rsplit("/", 1)[-1])
                if body and body.get("properties") and not body.get("additionalProperties"):
                    documented[(path, method.upper())] = frozenset(body["properties"])
        _documented = documented
    return _documented


def unknown_body_fields(path_info: str, method: str, data: object) -> list[str]:
    if not isinstance(data, dict):
        return []
    try:
        match = resolve(path_info)
    except Resolver404:
        return []
    known = documented_body_fields().get((template_of(match.route), method))
    return [] if known is None else sorted(set(data) - known)
