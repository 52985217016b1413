"""``manage.py mcp``: Engram's MCP server over stdio (key in ENGRAM_API_KEY), or ``--http`` on its own port."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from mcp_server.tools import build_server


class Command(BaseCommand):
    help = "Serve Engram's MCP tools over stdio, or over streamable HTTP with --http."

    def add_arguments(self, parser):
        parser.add_argument("--http", action="store_true", help="Serve streamable HTTP at http://HOST:PORT/mcp.")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8001)

    def handle(self, *args, http: bool, host: str, port: int, **options):
        server = build_server()
        if not http:
            server.run("stdio")
            return
        import uvicorn

        from mcp_server.http_app import http_app

        uvicorn.run(http_app(server, host=host), host=host, port=port, log_level="info")
