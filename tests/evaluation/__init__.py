"""The evaluation's own machinery: the labelled sets, the generated long-history set, the workloads and the scoring
that docs/quality.md and the benchmarks report (eval/, bench/)."""
