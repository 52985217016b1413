"""Language analysis and embeddings: the language data, the per-space memory of detected languages, and the threads an
in-process embedding runs on (memory/text)."""
