"""The MCP tools reach Engram through its own API, in process: the Python client over a WSGI transport.

Every tool call is then an API request handled by the same views, with the same authentication, scopes,
row-level security, rate limits, validation, error codes and deletion audit, and no network hop. See
docs/decisions/0010-mcp-server.md.
"""

from __future__ import annotations

import functools

import httpx2
from django.conf import settings
from django.core.wsgi import get_wsgi_application
from engram_client import Engram


def _internal_base_url() -> str:
    """A URL Django accepts as its own: a host from ALLOWED_HOSTS, https when the site redirects to it."""
    host = next((h.lstrip(".") for h in settings.ALLOWED_HOSTS if h and "*" not in h), "localhost")
    scheme = "https" if getattr(settings, "SECURE_SSL_REDIRECT", False) else "http"
    return f"{scheme}://{host}"


@functools.cache
def _django_app():
    return get_wsgi_application()


def engram_for(api_key: str) -> Engram:
    """A client speaking for ``api_key``; no retries, so a rate-limited tool call says so at once."""
    transport = httpx2.WSGITransport(app=_django_app())
    return Engram(_internal_base_url(), api_key=api_key, transport=transport, max_retries=0)
