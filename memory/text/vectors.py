"""Embeddings at rest are keyed per space: each space's vectors are stored rotated by a secret
orthogonal matrix derived from the space's data key (docs/decisions/0006-vectors-keyed-per-space.md).

A rotation keeps every dot product, so cosine distances between two vectors of the same space are
what they were without it — recall, de-duplication, episodes and the thresholds preview compare
rotated with rotated and need no change. A stored vector is no longer comparable with the public
model's embedding of a guess, and once the space's data key is erased its vectors mean nothing.

Every vector that goes into a space's column or is compared with one comes from ``embed_for_space``
(or ``into_space`` for vectors that were embedded elsewhere, e.g. an import's).

>>> vectors = embed_for_space(space.id, ["We run four vans."])  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import uuid
from collections import OrderedDict

import numpy as np
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from memory.models import EMBEDDING_DIMENSIONS
from memory.text.embeddings import get_embedder
from tenants.space_keys import data_key_for

ROTATION_INFO = b"engram-vector-rotation|v1"
# One matrix is 384 x 384 float32 (590 kB): 64 busy spaces cost ~38 MB per process. Deriving one
# for a space not in the cache costs ~30 ms (QR of 384 x 384, single-threaded BLAS).
CACHE_MAX_ENTRIES = 64


def rotation_from_key(data_key: bytes, dimensions: int = EMBEDDING_DIMENSIONS) -> np.ndarray:
    """A uniformly random orthogonal matrix, determined by the data key alone.

    The random numbers come from SHAKE-256 of an HKDF of the key, not from numpy's generators, whose
    streams may change between numpy versions: the same key must give the same matrix forever."""
    seed = HKDF(algorithm=SHA256(), length=32, salt=None, info=ROTATION_INFO).derive(data_key)
    words = np.frombuffer(hashlib.shake_256(seed).digest(dimensions * dimensions * 8), dtype="<u4")
    uniform = (words.astype(np.float64) + 0.5) / 2.0**32
    # Box-Muller: two uniforms give one standard normal; a Gaussian matrix's QR factor is Haar-uniform.
    gaussian = np.sqrt(-2.0 * np.log(uniform[0::2])) * np.cos(2.0 * np.pi * uniform[1::2])
    q, r = np.linalg.qr(gaussian.reshape(dimensions, dimensions))
    return (q * np.sign(np.diag(r))).astype(np.float32)


class _RotationCache:
    """Space id → (data key, matrix), bounded, least recently used out. The data key is kept with the
    matrix so an erased or replaced key is never answered from the cache."""

    def __init__(self, max_entries: int):
        self._entries: OrderedDict[uuid.UUID, tuple[bytes, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries

    def rotation(self, space_id) -> np.ndarray:
        space_id = uuid.UUID(str(space_id))
        data_key = data_key_for(space_id)  # raises SpaceKeyUnavailable once the space is erased
        with self._lock:
            entry = self._entries.get(space_id)
            if entry is not None and hmac.compare_digest(entry[0], data_key):
                self._entries.move_to_end(space_id)
                return entry[1]
        matrix = rotation_from_key(data_key)
        with self._lock:
            self._entries[space_id] = (data_key, matrix)
            self._entries.move_to_end(space_id)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return matrix

    def forget(self, space_id) -> None:
        with self._lock:
            self._entries.pop(uuid.UUID(str(space_id)), None)

    def __len__(self) -> int:
        return len(self._entries)


rotation_cache = _RotationCache(CACHE_MAX_ENTRIES)


def into_space(space_id, vectors) -> np.ndarray:
    """Model vectors (rows) → how this space stores and compares them."""
    vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, EMBEDDING_DIMENSIONS)
    return vectors @ rotation_cache.rotation(space_id) if len(vectors) else vectors


def out_of_space(space_id, vectors) -> np.ndarray:
    """This space's stored vectors (rows) → the model's own vectors (the export writes these)."""
    vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, EMBEDDING_DIMENSIONS)
    return vectors @ rotation_cache.rotation(space_id).T if len(vectors) else vectors


def embed_for_space(space_id, texts: list[str], *, query: bool = False) -> np.ndarray:
    """Embed ``texts`` for ``space_id``: the vectors the space stores, or compares with what it stores.

    The embedding cache is keyed by the space too, so its timing tells no tenant what another sent."""
    return into_space(space_id, get_embedder().embed(texts, query=query, cache_scope=str(space_id)))


STORED_VECTOR_TABLES = ("memory_memory", "memory_episodekey")


def rekey_stored_vectors(transform=into_space) -> int:
    """Apply ``transform`` (``into_space`` or ``out_of_space``) to every stored vector of every space,
    one committed transaction per space. For the one-off migration of vectors stored before they were
    keyed (and its reversal); raw SQL, so it does not depend on today's models. Returns the rows changed."""
    from django.db import connection

    from tenants import scope
    from tenants.space_keys import SpaceKeyUnavailable
    from tenants.tenant_admin import all_tenant_ids

    changed = 0
    for tenant_id in all_tenant_ids():
        with scope.tenant_scope(tenant_id), connection.cursor() as cursor:
            cursor.execute("SELECT id FROM tenants_space ORDER BY id")
            space_ids = [row[0] for row in cursor.fetchall()]
        for space_id in space_ids:
            with scope.tenant_scope(tenant_id, space_id), connection.cursor() as cursor:
                for table in STORED_VECTOR_TABLES:
                    cursor.execute(f"SELECT id, embedding::text FROM {table} WHERE space_id = %s", [space_id])
                    rows = cursor.fetchall()
                    if not rows:
                        continue
                    try:
                        vectors = transform(
                            space_id, [np.array(text.strip("[]").split(","), np.float32) for _, text in rows]
                        )
                    except SpaceKeyUnavailable:
                        break  # an erased space: its vectors are already meaningless
                    cursor.executemany(
                        f"UPDATE {table} SET embedding = %s::halfvec WHERE id = %s",
                        [(_literal(v), pk) for (pk, _), v in zip(rows, vectors, strict=True)],
                    )
                    changed += len(rows)
    return changed


def _literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6g}" for x in vector) + "]"
