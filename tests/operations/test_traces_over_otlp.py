"""One turn's traces as a collector receives them over OTLP: the API server and the worker are real processes,
each exporting to a local receiver that decodes what arrives."""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest
from django.db import connection
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.support.processes import stop

PROJECT = Path(__file__).resolve().parents[2]
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
TURN_ROUTE = "POST /api/v1/spaces/{external_id}/turns"


class Receiver(http.server.BaseHTTPRequestHandler):
    spans: list = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        exported = ExportTraceServiceRequest.FromString(body)
        for resource in exported.resource_spans:
            for scope in resource.scope_spans:
                Receiver.spans.extend(scope.spans)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver():
    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Receiver.spans = []
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def environment(endpoint: str) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "ENGRAM_DATABASE_NAME": connection.settings_dict["NAME"],
        "ENGRAM_TEST_TASKS": "database",  # the turn is queued for a real worker
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }


def hex_id(raw: bytes) -> str:
    return raw.hex()


def wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_one_turn_arrives_as_the_callers_trace_and_a_linked_worker_trace(transactional_db, key_a, space_a, receiver):
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--skip-checks"],
        cwd=PROJECT, env=environment(receiver), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/api/v1/spaces/{space_a.external_id}/turns"
        headers = {"Authorization": f"Bearer {key_a.secret}", "traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"}

        def answered():
            try:
                return httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
            except httpx2.TransportError:
                return server.poll() is not None

        wait_for(answered, 60, "the API server did not start")
        assert server.poll() is None, server.stderr.read().decode()[-2000:]
        response = httpx2.post(url, json={"message": "We run a fleet of four vans."}, headers=headers, timeout=60)
        assert response.status_code == 201 and response.json()["status"] == "queued", response.text
        wait_for(lambda: any(s.name == TURN_ROUTE for s in Receiver.spans), 20, "the request span never arrived")
    finally:
        stop(server, signal.SIGINT)  # Ctrl-C, as a user stops it
    worker = subprocess.run(
        [sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay", "--queue-name", "*"],
        cwd=PROJECT, env=environment(receiver), capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert worker.returncode == 0, worker.stderr[-2000:]
    wait_for(lambda: any(s.name == "engram.turn.process" for s in Receiver.spans), 20, "no worker span arrived")

    spans = list(Receiver.spans)
    caller = [s for s in spans if hex_id(s.trace_id) == CALLER_TRACE]
    [request] = [s for s in caller if s.name == TURN_ROUTE]
    assert hex_id(request.parent_span_id) == CALLER_SPAN  # under the caller's span: the root of what Engram did
    parents = {s.span_id: s.parent_span_id for s in caller}

    def descends(span_id):
        while span_id in parents and span_id != request.span_id:
            span_id = parents[span_id]
        return span_id == request.span_id

    assert len(caller) > 1 and all(descends(s.span_id) for s in caller)

    [processing] = [s for s in spans if s.name == "engram.turn.process"]
    assert not processing.parent_span_id and hex_id(processing.trace_id) != CALLER_TRACE
    [link] = processing.links
    assert hex_id(link.trace_id) == CALLER_TRACE and link.span_id in parents
    worker_spans = [s for s in spans if s.trace_id == processing.trace_id]
    assert len(worker_spans) > 1  # the worker's own work (extraction, embedding, writing) under its span
    assert {hex_id(s.trace_id) for s in spans} == {CALLER_TRACE, hex_id(processing.trace_id)}
    assert not any(space_a.external_id in s.name for s in spans)
