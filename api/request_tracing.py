"""One trace per API request: a server span around the whole request, so the turn's own spans (intake, forget,
recall, the pipeline when it runs inline, embeddings, model calls) are its children instead of a trace each; and
a caller's W3C ``traceparent`` is honoured, so Engram's work appears inside the agent's own trace.

The span names the route template (``POST /api/v1/spaces/{external_id}/turns``), never the path: an
``external_id`` is the deployment's own customer identifier and may be an e-mail address.
"""

from __future__ import annotations

from opentelemetry import propagate, trace

from api.query_parameters import template_of
from memory import telemetry


class RequestSpanMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not request.path.startswith("/api/"):
            return self.get_response(request)
        carrier = {name: request.headers[name] for name in ("traceparent", "tracestate") if name in request.headers}
        with telemetry.tracer().start_as_current_span(
            f"{request.method}",
            context=propagate.extract(carrier),
            kind=trace.SpanKind.SERVER,
            attributes={"http.request.method": request.method},
        ) as current:
            response = self.get_response(request)
            match = getattr(request, "resolver_match", None)
            if match is not None and current.is_recording():
                route = template_of(match.route)
                current.update_name(f"{request.method} {route}")
                current.set_attribute("http.route", route)
            current.set_attribute("http.response.status_code", response.status_code)
            if response.status_code >= 500:
                current.set_status(trace.Status(trace.StatusCode.ERROR))
            return response
