"""The mem0 half of the recall comparison, run by mem0's own virtualenv (never imported by Engram).

``python bench/mem0_side.py WORKLOAD.json CONFIG.json`` builds a mem0 ``Memory`` (pgvector store, the
OpenAI-compatible embedder pointed at the loopback embeddings server) and answers commands on stdin, one
JSON line on stdout per command, so the caller can alternate mem0 and Engram in blocks:

- ``ingest A B``: add the facts of spaces A..B-1 (``infer=False``: stored as said, no model call) →
  ``{"added": n, "seconds": s, "add_ms": [...]}``;
- ``search A B``: questions A..B-1, top 10 in the question's space → ``{"results": [{"ms", "embed_ms",
  "hit", "returned"}]}``; ``hit`` says whether the fact the question aims at is among them;
- ``quit``.

Only the standard library and mem0 are imported here.
"""

from __future__ import annotations

import json
import os
import sys
import time

TOP_K = 10


def build_memory(config: dict):
    os.environ.setdefault("MEM0_TELEMETRY", "False")  # no events sent anywhere
    from mem0 import Memory

    return Memory.from_config(
        {
            "vector_store": {
                "provider": "pgvector",
                "config": {
                    "connection_string": config["conninfo"],
                    "collection_name": "mem0_compare",
                    "embedding_model_dims": 384,
                },
            },
            "embedder": {
                "provider": "openai",
                "config": {
                    "model": "multilingual-e5-small",
                    "openai_base_url": config["embedding_url"],
                    "api_key": "not-needed",
                    "embedding_dims": 384,
                },
            },
            # Never called with infer=False; configured so that nothing reaches for a real endpoint.
            "llm": {
                "provider": "openai",
                "config": {"model": "unused", "openai_base_url": config["embedding_url"], "api_key": "not-needed"},
            },
            "history_db_path": config["history_db_path"],
        }
    )


class TimedEmbedder:
    """Wraps mem0's embedder: the time of the embedding call (HTTP round trip included) of each search."""

    def __init__(self, inner):
        self.inner = inner
        self.last_ms = 0.0

    def embed(self, text, memory_action=None):
        started = time.perf_counter()
        try:
            return self.inner.embed(text, memory_action)
        finally:
            self.last_ms = (time.perf_counter() - started) * 1000

    def __getattr__(self, name):
        return getattr(self.inner, name)


def main(workload_path: str, config_path: str) -> int:
    with open(workload_path) as handle:
        workload = json.load(handle)
    with open(config_path) as handle:
        config = json.load(handle)
    memory = build_memory(config)
    embedder = TimedEmbedder(memory.embedding_model)
    memory.embedding_model = embedder
    fact_ids: dict[tuple[str, int], str] = {}
    spaces = workload["spaces"]
    questions = workload["questions"]
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        command, *bounds = line.split()
        if command == "quit":
            break
        start, end = (int(b) for b in bounds)
        if command == "ingest":
            add_ms = []
            started = time.perf_counter()
            for space in spaces[start:end]:
                for index, fact in enumerate(space["facts"]):
                    began = time.perf_counter()
                    added = memory.add([{"role": "user", "content": fact}], user_id=space["name"], infer=False)
                    add_ms.append((time.perf_counter() - began) * 1000)
                    fact_ids[(space["name"], index)] = added["results"][0]["id"]
            reply = {"added": len(add_ms), "seconds": time.perf_counter() - started, "add_ms": add_ms}
        elif command == "search":
            results = []
            for question in questions[start:end]:
                began = time.perf_counter()
                found = memory.search(question["question"], top_k=TOP_K, filters={"user_id": question["space"]})
                elapsed = (time.perf_counter() - began) * 1000
                ids = [item["id"] for item in found["results"]]
                results.append(
                    {
                        "ms": elapsed,
                        "embed_ms": embedder.last_ms,
                        "hit": fact_ids.get((question["space"], question["fact"])) in ids,
                        "returned": len(ids),
                    }
                )
            reply = {"results": results}
        else:
            reply = {"error": f"unknown command {command!r}"}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
