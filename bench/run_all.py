"""`make bench`: every benchmark, each writing its section of docs/benchmarks.md."""

from bench import connections, embedding_batch, footprint, ingest_latency, recall_scale, relevance_gate, turn_load

if __name__ == "__main__":
    print(embedding_batch.main())
    print(ingest_latency.main())
    print(recall_scale.main(1_000_000, 10_000))
    print(turn_load.main(30))
    print(relevance_gate.main())
    print(footprint.main(60))
    print(connections.main(60))
