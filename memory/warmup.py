"""Load the language data and the embedding model once, before the first request needs them.

simplemma reads its dictionaries lazily (a few seconds per language here), and the first embedding
loads the model: without this, the first requests of each server process wait for both.

A server that forks its workers from a preloaded parent (gunicorn ``--preload``, config/gunicorn.py)
warms in two steps. The parent loads what its children can share copy-on-write: the language data
and the model (its weights are a mapped file) — ``warm_up(run_model=False)``. It must not *run* the
model: the engine's OpenMP thread pool does not survive ``fork()``; a child of a parent that embedded on
several threads would hang on its first embedding on several, so it embeds on one thread for good
(memory/text/compute_threads.py). Each child then runs the model once itself (``warm_up_embeddings``).
"""

from __future__ import annotations

import logging
import time

logger = logging.getLogger(__name__)

SAMPLES = {
    "en": "We run a fleet of four vans.",
    "ru": "У нас четыре фургона.",
    "cs": "Máme čtyři dodávky.",
    "de": "Wir haben vier Lieferwagen.",
    "es": "Tenemos cuatro furgonetas.",
    "fr": "Nous avons quatre camionnettes.",
    "ja": "私たちは4台のバンを持っています。",
}


def warm_up(*, run_model: bool = True) -> float:
    from memory.text.analysis import content_terms, detect_language
    from memory.text.embeddings import get_embedder

    started = time.perf_counter()
    for language, text in SAMPLES.items():
        detect_language(text)
        content_terms(text, language)
    try:
        get_embedder()  # loads the local model (or builds the endpoint's client)
    except Exception:  # a broken embedding configuration must not stop the server from starting
        logger.warning("embedding engine failed to load", exc_info=True)
    if run_model:
        warm_up_embeddings()
    elapsed = time.perf_counter() - started
    logger.info("warmed up language data and embeddings in %.1f s", elapsed)
    return elapsed


def warm_up_embeddings() -> None:
    """One batch through the embedding engine, in the process that will serve with it."""
    from memory.text.embeddings import get_embedder

    try:
        get_embedder().embed(list(SAMPLES.values()))
    except Exception:  # an unreachable embedding endpoint must not stop the server from starting
        logger.warning("embedding warm-up failed", exc_info=True)
