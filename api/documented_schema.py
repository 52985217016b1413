"""The project's own OpenAPI schema, built once per process: what the request checks read the accepted query
parameters and body fields from, so the checks and the documentation cannot drift apart."""

from __future__ import annotations

import threading

_lock = threading.Lock()
_schema: dict | None = None


def api_schema() -> dict:
    global _schema
    with _lock:
        if _schema is None:
            from drf_spectacular.generators import SchemaGenerator

            _schema = SchemaGenerator().get_schema(request=None, public=True)
        return _schema
