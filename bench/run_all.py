"""`make bench`: every benchmark, each writing its section of docs/benchmarks.md."""

from bench import embedding_batch, footprint, ingest_latency, recall_scale, turn_load

if __name__ == "__main__":
    print(embedding_batch.main())
    print(ingest_latency.main())
    print(recall_scale.main(100_000, 1_000))
    print(turn_load.main(30))
    print(footprint.main(60))
