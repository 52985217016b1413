"""OpenTelemetry spans: what the turn loop, recall, forgetting and deletion emit, and what they never carry."""

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.urls import reverse
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memory import telemetry

pytestmark = pytest.mark.django_db
PROJECT = Path(__file__).resolve().parents[2]
SECRET_WORDS = ("vans", "Lyon", "fleet")


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.use_tracer_provider(provider)
    yield exporter
    telemetry.use_tracer_provider(None)
    provider.shutdown()


def by_name(exporter):
    found = {}
    for span in exporter.get_finished_spans():
        found.setdefault(span.name, []).append(span)
    return found


def post_turn(client, space, message):
    url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
    response = client.post(url, {"message": message}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_turn_emits_intake_forget_recall_processing_and_embedding_spans(client_a, space_a, spans):
    post_turn(client_a, space_a, "Hi! We run a fleet of four vans and our office is in Lyon.")
    found = by_name(spans)
    assert {"engram.turn.intake", "engram.forget", "search_memory engram", "update_memory engram"} <= set(found)
    assert any(name.startswith("embeddings ") for name in found)
    [search] = found["search_memory engram"]
    assert search.attributes["gen_ai.operation.name"] == "search_memory"
    assert search.attributes["engram.space.id"] == str(space_a.id)
    assert search.attributes["engram.tenant.id"] == str(space_a.tenant_id)
    assert search.attributes["gen_ai.memory.record.count"] == 0  # nothing known before the first turn
    [update] = found["update_memory engram"]
    assert update.attributes["gen_ai.operation.name"] == "update_memory"
    assert update.attributes["gen_ai.memory.record.count"] >= 2
    embedding = next(s for name, group in found.items() if name.startswith("embeddings ") for s in group)
    assert embedding.attributes["gen_ai.operation.name"] == "embeddings"
    assert embedding.attributes["gen_ai.request.model"]


def test_no_span_carries_memory_text_or_the_query_by_default(client_a, space_a, spans):
    post_turn(client_a, space_a, "Hi! We run a fleet of four vans and our office is in Lyon.")
    client_a.post(reverse("recall", args=[space_a.external_id]), {"query": "Where is the Lyon office?"}, format="json")
    values = [str(v) for span in spans.get_finished_spans() for v in span.attributes.values()]
    assert values and not [v for v in values if any(word in v for word in SECRET_WORDS)]


def test_an_operator_can_opt_in_to_the_query_and_records(client_a, space_a, spans, settings):
    settings.ENGRAM_OTEL_CAPTURE_CONTENT = True
    post_turn(client_a, space_a, "Hi! We run a fleet of four vans.")
    spans.clear()
    client_a.post(reverse("recall", args=[space_a.external_id]), {"query": "How many vans?"}, format="json")
    [search] = by_name(spans)["search_memory engram"]
    assert search.attributes["gen_ai.memory.query.text"] == "How many vans?"
    assert search.attributes["gen_ai.memory.record.count"] >= 1
    records = json.loads(search.attributes["gen_ai.memory.records"])
    assert {"content": "We run a fleet of four vans."} in records


def test_a_deletion_span_counts_the_rows_and_names_the_cause(client_a, space_a, spans):
    post_turn(client_a, space_a, "Hi! We run a fleet of four vans.")
    spans.clear()
    url = reverse("forget", args=[space_a.external_id])
    client_a.post(url, {"utterance": "Please forget that we have four vans.", "dry_run": True}, format="json")
    assert "delete_memory engram" not in by_name(spans)  # a dry run deletes nothing
    [dry] = by_name(spans)["engram.forget"]
    assert dry.attributes["engram.dry_run"] is True
    client_a.post(url, {"utterance": "Please forget that we have four vans."}, format="json")
    [deletion] = by_name(spans)["delete_memory engram"]
    assert deletion.attributes["gen_ai.operation.name"] == "delete_memory"
    assert deletion.attributes["gen_ai.memory.record.count"] == 2  # the statement and its topic tag (#25)
    assert deletion.attributes["engram.deletion.cause"] == "customer_request"


def test_a_chat_model_call_has_its_span(client_a, space_a, spans, openai_engines):
    openai_engines.replies = [{"entries": []}]
    post_turn(client_a, space_a, "Hello there, I have a question.")
    chats = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    assert chats and chats[0].attributes["gen_ai.operation.name"] == "chat"
    assert chats[0].attributes["gen_ai.provider.name"] == "openai"


def every_string_of(span) -> list[str]:
    """Attributes, the status description and every event's attributes (an exception event's message
    and stack trace included)."""
    texts = [str(v) for v in span.attributes.values()] + [span.status.description or ""]
    texts += [str(v) for event in span.events for v in (event.attributes or {}).values()]
    return texts


def test_a_model_failure_puts_no_customer_words_in_any_span(client_a, space_a, spans, openai_engines):
    """A wrongly shaped reply makes the schema check quote the value it refused: not into a span."""
    openai_engines.replies = [{"entries": "four vans 4711"}]
    response = client_a.post(
        reverse("turn-create", args=[space_a.external_id]) + "?wait=true",
        {"message": "We run four vans, my PIN is 4711."},
        format="json",
    )
    assert response.status_code == 201 and response.json()["status"] == "queued"
    error = response.json()["error"]  # kept on the turn, shown to support staff in the console
    assert "entries: fails 'type'" in error and "4711" not in error and "vans" not in error
    failed = [s for s in spans.get_finished_spans() if not s.status.is_ok]
    assert failed, "the model failure marks its spans"
    texts = [t for span in spans.get_finished_spans() for t in every_string_of(span)]
    assert not [t for t in texts if "4711" in t or "vans" in t]


class OtlpCollector(http.server.BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        OtlpCollector.received.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args):
        pass


SCRIPT = """
import django
django.setup()
from opentelemetry import trace
from memory import telemetry
with telemetry.span("search_memory engram", operation="search_memory"):
    pass
provider = trace.get_tracer_provider()
if hasattr(provider, "force_flush"):  # the SDK provider, present only with an endpoint
    provider.force_flush()
"""


def run_with_environment(extra):
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    environment = {**inherited, "DJANGO_SETTINGS_MODULE": "config.test_settings", **extra}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=PROJECT, env=environment, capture_output=True, timeout=120, check=True
    )


def test_spans_go_to_the_otlp_endpoint_when_one_is_configured_and_nowhere_otherwise():
    server = http.server.HTTPServer(("127.0.0.1", 0), OtlpCollector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        OtlpCollector.received.clear()
        run_with_environment({})
        assert OtlpCollector.received == []
        run_with_environment({"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_port}"})
    finally:
        server.shutdown()
    [(path, content_type, body)] = OtlpCollector.received
    assert path == "/v1/traces" and content_type == "application/x-protobuf"
    assert b"search_memory engram" in body


CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


def test_one_request_is_one_trace_under_the_callers_traceparent(client_a, space_a, spans):
    url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    response = client_a.post(url, {"message": "We run a fleet of four vans."}, format="json",
                             HTTP_TRACEPARENT=f"00-{CALLER_TRACE}-{CALLER_SPAN}-01")  # fmt: skip
    assert response.status_code == 201
    finished = spans.get_finished_spans()
    assert {format(s.context.trace_id, "032x") for s in finished} == {CALLER_TRACE}
    [request] = [s for s in finished if s.name == "POST /api/v1/spaces/{external_id}/turns"]
    assert format(request.parent.span_id, "016x") == CALLER_SPAN and request.parent.is_remote
    assert request.attributes["http.route"] == "/api/v1/spaces/{external_id}/turns"
    assert request.attributes["http.response.status_code"] == 201
    # Every other span of the turn descends from the request's.
    parents = {s.context.span_id: s.parent.span_id if s.parent else None for s in finished}

    def descends(span_id):
        while span_id is not None and span_id != request.context.span_id:
            span_id = parents.get(span_id)
        return span_id == request.context.span_id

    assert all(descends(s.context.span_id) for s in finished)
    # The route template, never the path: the external id is the deployment's customer identifier.
    assert not any(space_a.external_id in str(v) for s in finished for v in [s.name, *s.attributes.values()])


def test_without_a_traceparent_a_request_starts_its_own_single_trace(client_a, space_a, spans):
    post_turn(client_a, space_a, "We run a fleet of four vans.")
    assert len({s.context.trace_id for s in spans.get_finished_spans()}) == 1


def test_the_workers_processing_is_linked_to_the_request_that_stored_the_turn(client_a, space_a, spans):
    from django_tasks import default_task_backend

    from memory.turns.pipeline import process_turn_task

    url = reverse("turn-create", args=[space_a.external_id])
    response = client_a.post(url, {"message": "We run a fleet of four vans."}, format="json",
                             HTTP_TRACEPARENT=f"00-{CALLER_TRACE}-{CALLER_SPAN}-01")  # fmt: skip
    assert response.status_code == 201 and response.json()["status"] == "queued"
    [queued] = [r for r in default_task_backend.results if r.args[2] == response.json()["turn_id"]]
    stored = {s.context.span_id for s in spans.get_finished_spans()}
    spans.clear()
    assert process_turn_task.call(*queued.args, **queued.kwargs) == "done"  # what the worker runs
    finished = spans.get_finished_spans()
    [processing] = [s for s in finished if s.name == "engram.turn.process"]
    assert processing.parent is None and format(processing.context.trace_id, "032x") != CALLER_TRACE
    # Linked to the span of the request that queued it (the intake's), in the caller's trace.
    [link] = processing.links
    assert format(link.context.trace_id, "032x") == CALLER_TRACE and link.context.span_id in stored
    assert processing.attributes["engram.turn.id"] == response.json()["turn_id"]
    assert {s.context.trace_id for s in finished} == {processing.context.trace_id}
