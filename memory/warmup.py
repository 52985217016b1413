"""Load the language data and the embedding model once, before the first request needs them.

simplemma reads its dictionaries lazily (about 2 s per language here), and the first embedding
loads the model: without this, the first requests of each server process wait for both.
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


def warm_up() -> float:
    from memory.text.analysis import content_terms, detect_language
    from memory.text.embeddings import get_embedder

    started = time.perf_counter()
    for language, text in SAMPLES.items():
        detect_language(text)
        content_terms(text, language)
    try:
        get_embedder().embed(list(SAMPLES.values()))
    except Exception:  # an unreachable embedding endpoint must not stop the server from starting
        logger.warning("embedding warm-up failed", exc_info=True)
    elapsed = time.perf_counter() - started
    logger.info("warmed up language data and embeddings in %.1f s", elapsed)
    return elapsed
