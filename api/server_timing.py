"""The ``Server-Timing`` response header (W3C Server Timing): where a request's time went.

A view puts milliseconds per phase into ``request.server_timing`` (e.g. ``{"embed": 9.4, "db": 0.8}``);
``total`` is the time from before authentication to the response, so ``total - embed`` is the
server's own time. Browsers' developer tools and the benchmarks read it; it names phases, never data.
"""

from __future__ import annotations

import time


def header_value(phases: dict[str, float], total: float) -> str:
    """``embed;dur=9.4, db;dur=0.8, total;dur=12.1`` (milliseconds, one decimal)."""
    return ", ".join(f"{name};dur={milliseconds:.1f}" for name, milliseconds in {**phases, "total": total}.items())


class ServerTimingMixin:
    """For an ``APIView``: times the request from before authentication and writes the header."""

    def initial(self, request, *args, **kwargs):
        request.server_timing_started = time.perf_counter()
        request.server_timing = {}
        super().initial(request, *args, **kwargs)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        started = getattr(request, "server_timing_started", None)
        if started is not None:
            total = (time.perf_counter() - started) * 1000
            response["Server-Timing"] = header_value(getattr(request, "server_timing", {}), total)
        return response
