"""`make bench`: every benchmark, each writing its section of docs/benchmarks.md."""

from bench import embedding_batch, ingest_latency

if __name__ == "__main__":
    for module in (embedding_batch, ingest_latency):
        print(module.main())
