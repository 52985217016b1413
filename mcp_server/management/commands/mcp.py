"""``manage.py mcp``: Engram's MCP server over stdio (key in ENGRAM_API_KEY), or ``--http`` on its own port."""

from __future__ import annotations

import anyio
from django.core.management.base import BaseCommand

from mcp_server.stdio import DRAIN_SECONDS, serve_stdio
from mcp_server.tools import build_server


class Command(BaseCommand):
    help = "Serve Engram's MCP tools over stdio, or over streamable HTTP with --http."

    def add_arguments(self, parser):
        parser.add_argument("--http", action="store_true", help="Serve streamable HTTP at http://HOST:PORT/mcp.")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8001)
        parser.add_argument(
            "--drain-seconds",
            type=float,
            default=DRAIN_SECONDS,
            help="stdio: once the input closes, how long requests still running may take to be answered; "
            "past it they are answered as not completed.",
        )

    def handle(self, *args, http: bool, host: str, port: int, drain_seconds: float, **options):
        server = build_server()
        if not http:
            anyio.run(serve_stdio, server, drain_seconds)
            return
        import uvicorn

        from mcp_server.http_app import http_app

        uvicorn.run(http_app(server, host=host), host=host, port=port, log_level="info")
