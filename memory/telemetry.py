"""OpenTelemetry spans for the memory operations, with the GenAI semantic conventions' names where they exist.

Instrumented code carries one small hook: ``@traced(...)`` on a function, or ``with span(...)`` around a call.
Without an exporter configured the API's no-op tracer makes each hook almost free; with
``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) set, ``configure()`` exports
over OTLP/HTTP. Memory text and queries never reach an attribute unless the operator sets
``ENGRAM_OTEL_CAPTURE_CONTENT`` (then as ``gen_ai.memory.query.text`` / ``gen_ai.memory.records``).

    @traced("search_memory", records=lambda result: len(result.hits))
    def recall(*, space, query, ...): ...
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings
from opentelemetry import propagate, trace
from opentelemetry.context import Context

TRACER_NAME = "engram"
# gen_ai.* names from the GenAI semantic conventions; engram.* where they define none.
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
RECORD_COUNT = "gen_ai.memory.record.count"
QUERY_TEXT = "gen_ai.memory.query.text"
RECORDS = "gen_ai.memory.records"
TENANT_ID = "engram.tenant.id"
SPACE_ID = "engram.space.id"
TURN_ID = "engram.turn.id"
DELETION_CAUSE = "engram.deletion.cause"
DRY_RUN = "engram.dry_run"

_configured = False
_provider: trace.TracerProvider | None = None


def use_tracer_provider(provider: trace.TracerProvider | None) -> None:
    """Send Engram's spans to ``provider`` instead of the global one (an embedding application, or a test)."""
    global _provider
    _provider = provider


def tracer() -> trace.Tracer:
    return (_provider or trace.get_tracer_provider()).get_tracer(TRACER_NAME)


def configure() -> bool:
    """Install an OTLP exporter when the environment names an endpoint; otherwise leave the no-op tracer."""
    global _configured
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if _configured or not endpoint:
        return False
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "engram")}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _configured = True
    return True


def capture_content() -> bool:
    return bool(getattr(settings, "ENGRAM_OTEL_CAPTURE_CONTENT", False))


def _scope_attributes(values: dict[str, Any]) -> dict[str, str]:
    """Tenant, space and turn ids from a hooked function's arguments (``space=``, ``turn=``)."""
    attributes = {}
    turn = values.get("turn")
    space = values.get("space") or getattr(turn, "space", None)
    if turn is not None:
        attributes[TURN_ID] = str(turn.pk)
    if space is not None:
        attributes[SPACE_ID] = str(space.pk)
        attributes[TENANT_ID] = str(space.tenant_id)
    if getattr(values.get("context"), "cause", None):
        attributes[DELETION_CAUSE] = str(values["context"].cause)
    if isinstance(values.get("dry_run"), bool):
        attributes[DRY_RUN] = values["dry_run"]
    return attributes


@contextlib.contextmanager
def span(name: str, *, operation: str | None = None, **attributes: Any) -> Iterator[trace.Span]:
    """A span named ``"<operation> engram"`` (the conventions' form) or ``name``; an error marks it with its type."""
    attributes = {k: v for k, v in attributes.items() if v is not None}
    if operation:
        attributes[OPERATION] = operation
    # An exception's message and stack can quote what the customer or the model said (a schema error
    # names the value it refused): spans record only the exception's type unless content is opted in.
    content = capture_content()
    with tracer().start_as_current_span(
        name, attributes=attributes, record_exception=content, set_status_on_exception=content
    ) as current:
        try:
            yield current
        except BaseException as exc:
            if not content:
                current.set_attribute("error.type", type(exc).__qualname__)
                current.set_status(trace.Status(trace.StatusCode.ERROR, type(exc).__qualname__))
            raise


def traced(
    name: str,
    *,
    operation: str | None = None,
    records: Callable[[Any], int] | None = None,
    query_argument: str | None = None,
    contents: Callable[[Any], list[str]] | None = None,
) -> Callable:
    """Decorate a keyword-argument function: one span per call with its scope ids and, from the result,
    ``gen_ai.memory.record.count``; ``query_argument``'s text and the ``contents`` of the result only when
    content capture is on."""

    def decorate(function: Callable) -> Callable:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = dict(kwargs)
            if args and "turn" not in values and hasattr(args[0], "space_id"):
                values["turn"] = args[0]
            with span(name, operation=operation, **_scope_attributes(values)) as current:
                if query_argument and capture_content() and isinstance(kwargs.get(query_argument), str):
                    current.set_attribute(QUERY_TEXT, kwargs[query_argument])
                result = function(*args, **kwargs)
                if records is not None and current.is_recording():
                    current.set_attribute(RECORD_COUNT, records(result))
                if contents is not None:
                    record_contents(current, contents(result))
                return result

        return wrapper

    return decorate


def record_contents(current: trace.Span, contents: list[str]) -> None:
    """The records' text on the span, only when the operator opted in."""
    if capture_content() and current.is_recording():
        current.set_attribute(RECORDS, json.dumps([{"content": c} for c in contents], ensure_ascii=False))


def chat_call(function: Callable) -> Callable:
    """A ``chat <model>`` span around one chat-model call (the model and provider as attributes, never the text)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        model = settings.ENGRAM_LLM_MODEL
        with span(f"chat {model}", operation="chat", **{REQUEST_MODEL: model, PROVIDER: "openai"}):
            return function(*args, **kwargs)

    return wrapper


def current_trace_context() -> dict[str, str]:
    """The current span's W3C ``traceparent`` (and ``tracestate``) as a plain dict, to hand work to another process
    (the turn's task); empty when nothing is being traced. Ids only, never content."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


@contextlib.contextmanager
def linked_root_span(name: str, trace_context: dict[str, str] | None, **attributes: Any) -> Iterator[trace.Span]:
    """A new trace for work done apart from the request that asked for it (the worker's turn), linked to that
    request's span when ``trace_context`` carries one: the two traces stay separate (the request has answered)
    but a trace viewer follows the link both ways."""
    remote = trace.get_current_span(propagate.extract(trace_context or {})).get_span_context()
    links = [trace.Link(remote)] if remote.is_valid else []
    attributes = {k: v for k, v in attributes.items() if v is not None}
    with tracer().start_as_current_span(name, context=Context(), links=links, attributes=attributes) as current:
        yield current
