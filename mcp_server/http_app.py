"""The streamable-HTTP face of the MCP server: an ASGI app that refuses requests without a bearer key."""

from __future__ import annotations

import json

from mcp.server.mcpserver import MCPServer


def http_app(server: MCPServer, *, host: str = "127.0.0.1"):
    """The SDK's Starlette app at ``/mcp``, behind a check that every request carries ``Authorization: Bearer``.

    The key itself is checked by the API on each tool call (so scopes and revocation apply at once).
    """
    app = server.streamable_http_app(host=host)

    async def require_bearer(scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            scheme, _, key = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
            if scheme.lower() != "bearer" or not key.strip():
                body = json.dumps(
                    {"error": {"code": "not_authenticated", "message": "Send 'Authorization: Bearer <API key>'."}}
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return require_bearer
