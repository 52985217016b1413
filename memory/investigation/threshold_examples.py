"""A distance threshold in words: built-in sentence pairs, how far apart the bundled model puts them, and which of
them the threshold's value lets through — so "0.08" reads as "'Where do I live?' finds 'I live in Leeds.' only
with a keyword or topic match". The pairs are fixed sentences, never a customer's: any role may read them."""

from __future__ import annotations

from functools import cache

import numpy as np

# (what passing means, what failing means, pairs). The pairs straddle the defaults on purpose: one pair each side
# of a threshold shows where it cuts, and "four vans" against "six vans" shows why merging also asks for the same
# terms (a changed number sits as close as a restatement).
EXAMPLES = {
    "dedup_distance": (
        "close enough to merge (if their terms match too, when that is required)",
        "too far apart to merge",
        [
            ("We run four delivery vans.", "We have four delivery vans."),
            ("We run four delivery vans.", "We run four delivery vans in Brno."),
            ("We run four delivery vans.", "We run six delivery vans."),
            ("We run four delivery vans.", "We sell garden furniture."),
        ],
    ),
    "recall_distance": (
        "is recalled on meaning alone",
        "needs a keyword or topic match, or the gate",
        [
            ("Where do I live?", "I live in Leeds."),
            ("How many vans do you have?", "We run four delivery vans."),
            ("What is the weather like?", "I live in Leeds."),
        ],
    ),
    "corroborated_recall_distance": (
        "is recalled with a keyword or topic match",
        "is not recalled by the distances (the gate may still admit a paraphrase)",
        [
            ("Where do I live?", "I live in Leeds."),
            ("What car does the customer drive?", "I drive a Skoda Octavia."),
            ("Do you have a dog?", "I have a cat called Miso."),
            ("What is the weather like?", "I live in Leeds."),
        ],
    ),
}


@cache
def _distances() -> dict[tuple[str, str], float]:
    from memory.text.embeddings import local_embedder

    texts = sorted({text for _pass, _fail, pairs in EXAMPLES.values() for pair in pairs for text in pair})
    vectors = local_embedder().embed(texts, query=False)  # as recall and de-duplication embed them
    vector_of = {t: v / np.linalg.norm(v) for t, v in zip(texts, vectors, strict=True)}
    return {
        pair: round(1.0 - float(vector_of[pair[0]] @ vector_of[pair[1]]), 3)
        for _pass, _fail, pairs in EXAMPLES.values()
        for pair in pairs
    }


def examples_at(name: str, value: float) -> list[dict]:
    """The setting's example pairs, nearest first, each with its distance and what ``value`` does with it."""
    if name not in EXAMPLES:
        return []
    passing, failing, pairs = EXAMPLES[name]
    distances = _distances()
    return sorted(
        (
            {"first": a, "second": b, "distance": distances[(a, b)],
             "outcome": passing if distances[(a, b)] <= value else failing}
            for a, b in pairs
        ),
        key=lambda example: example["distance"],
    )  # fmt: skip
