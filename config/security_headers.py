"""Content-Security-Policy without inline script on every page but the bundled Swagger UI."""

from __future__ import annotations

CONSOLE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
)
# drf-spectacular's Swagger UI page boots from an inline script; it gets its own, looser policy.
DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; frame-ancestors 'none'"
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        policy = DOCS_POLICY if request.path.startswith("/api/docs/") else CONSOLE_POLICY
        response.headers.setdefault("Content-Security-Policy", policy)
        return response
