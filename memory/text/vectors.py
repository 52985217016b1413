"""Embeddings at rest are keyed per space: each space's vectors are stored rotated by a secret
orthogonal transform derived from the space's data key (docs/decisions/0006-vectors-keyed-per-space.md).

A rotation keeps every dot product, so cosine distances between two vectors of the same space are
what they were without it — recall, de-duplication, episodes and the thresholds preview compare
rotated with rotated and need no change. A stored vector is no longer comparable with the public
model's embedding of a guess, and once the space's data key is erased its vectors mean nothing.

The transform is structured so that a space nobody asked about for a while costs microseconds, not a
QR decomposition: keyed sign flips and a keyed permutation of the coordinates, then a fixed public
orthogonal mixing matrix, three rounds, and a last keyed signed permutation. Only the signs and
permutations are secret (9 KB a space); the mixing matrix is one per process.

Every vector that goes into a space's column or is compared with one comes from ``embed_for_space``
(or ``into_space`` for vectors that were embedded elsewhere, e.g. an import's).

>>> vectors = embed_for_space(space.id, ["We run four vans."])  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from memory.models import EMBEDDING_DIMENSIONS
from memory.text.embeddings import get_embedder
from tenants.space_keys import data_key_for

ROTATION_INFO = b"engram-vector-rotation|v2"
# The first version's dense Haar rotation per space; kept only so migrations can undo it.
DENSE_ROTATION_INFO_V1 = b"engram-vector-rotation|v1"
# Public on purpose: the mixer is the same for every space and every installation; the secret is in
# the signs and permutations around it.
MIXER_SEED = hashlib.sha256(b"engram-vector-mixer|v2").digest()
MIXING_ROUNDS = 3
# One entry is 4 x 384 int16 permutations + 4 x 384 float32 signs (9 KB, ~10 KB with the data key
# and bookkeeping): 1,024 spaces cost ~10 MB per process. A miss costs ~0.1 ms (HKDF, SHAKE-256, argsort).
CACHE_MAX_ENTRIES = 1024


def haar_matrix(seed: bytes, dimensions: int = EMBEDDING_DIMENSIONS) -> np.ndarray:
    """A uniformly random orthogonal matrix, determined by the 32-byte ``seed`` alone (~15–30 ms).

    The random numbers come from SHAKE-256 of the seed, not from numpy's generators, whose streams
    may change between numpy versions: the same seed must give the same matrix forever."""
    words = np.frombuffer(hashlib.shake_256(seed).digest(dimensions * dimensions * 8), dtype="<u4")
    uniform = (words.astype(np.float64) + 0.5) / 2.0**32
    # Box-Muller: two uniforms give one standard normal; a Gaussian matrix's QR factor is Haar-uniform.
    gaussian = np.sqrt(-2.0 * np.log(uniform[0::2])) * np.cos(2.0 * np.pi * uniform[1::2])
    q, r = np.linalg.qr(gaussian.reshape(dimensions, dimensions))
    return (q * np.sign(np.diag(r))).astype(np.float32)


@functools.cache
def public_mixer(dimensions: int = EMBEDDING_DIMENSIONS) -> np.ndarray:
    """The fixed orthogonal matrix between the keyed rounds (0.6 MB, derived once per process)."""
    mixer = haar_matrix(MIXER_SEED, dimensions)
    mixer.flags.writeable = False
    return mixer


@functools.cache
def public_unmixer(dimensions: int = EMBEDDING_DIMENSIONS) -> np.ndarray:
    """The mixer's inverse (its transpose), laid out row by row: a product with the transposed view took
    twice as long as with a contiguous matrix, and recall inverts its candidates' vectors every time."""
    unmixer = np.ascontiguousarray(public_mixer(dimensions).T)
    unmixer.flags.writeable = False
    return unmixer


@dataclass(frozen=True, eq=False)
class SpaceRotation:
    """One space's transform: x → S₃P₃·G·S₂P₂·G·S₁P₁·G·S₀P₀·x, with P keyed permutations, S keyed
    sign flips and G the public mixer. A product of orthogonal maps, so exactly orthogonal (up to
    float32 rounding, ~1e-6)."""

    permutations: np.ndarray  # (MIXING_ROUNDS + 1, dimensions) int16
    signs: np.ndarray  # (MIXING_ROUNDS + 1, dimensions) float32, each ±1

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """Rows of model space → rows of this space."""
        mixer = public_mixer(vectors.shape[1])
        out = vectors[:, self.permutations[0]] * self.signs[0]
        for permutation, signs in zip(self.permutations[1:], self.signs[1:], strict=True):
            out = (out @ mixer)[:, permutation] * signs
        return out

    def invert(self, vectors: np.ndarray) -> np.ndarray:
        """Rows of this space → rows of model space (the transpose, undone step by step)."""
        unmixer = public_unmixer(vectors.shape[1])
        out = vectors
        for permutation, signs in zip(self.permutations[:0:-1], self.signs[:0:-1], strict=True):
            out = _unpermute(out * signs, permutation) @ unmixer
        return _unpermute(out * self.signs[0], self.permutations[0])

    @property
    def nbytes(self) -> int:
        return self.permutations.nbytes + self.signs.nbytes


def _unpermute(vectors: np.ndarray, permutation: np.ndarray) -> np.ndarray:
    undone = np.empty_like(vectors)
    undone[:, permutation] = vectors
    return undone


def rotation_from_key(data_key: bytes, dimensions: int = EMBEDDING_DIMENSIONS) -> SpaceRotation:
    """The space's transform, determined by its data key alone (~0.1 ms).

    Permutations are the stable argsort of 64-bit words of SHAKE-256 (a uniformly random
    permutation; a tie, at odds of ~4·10⁻¹⁵, falls back to index order, still deterministic); signs are
    its bits. The same key must give the same transform forever, so nothing here comes from numpy's
    generators."""
    seed = HKDF(algorithm=SHA256(), length=32, salt=None, info=ROTATION_INFO).derive(data_key)
    steps = MIXING_ROUNDS + 1
    order_bytes, sign_bytes = steps * dimensions * 8, (steps * dimensions + 7) // 8
    stream = hashlib.shake_256(seed).digest(order_bytes + sign_bytes)
    order = np.frombuffer(stream[:order_bytes], dtype="<u8").reshape(steps, dimensions)
    bits = np.unpackbits(np.frombuffer(stream[order_bytes:], dtype=np.uint8))[: steps * dimensions]
    return SpaceRotation(
        permutations=np.argsort(order, axis=1, kind="stable").astype(np.int16),
        signs=(1.0 - 2.0 * bits.astype(np.float32)).reshape(steps, dimensions),
    )


def dense_rotation_v1(data_key: bytes, dimensions: int = EMBEDDING_DIMENSIONS) -> np.ndarray:
    """The first version's transform (a dense Haar rotation per space, ~30 ms to derive): only the
    migrations that key vectors under it, or move them from it to today's, still need it."""
    seed = HKDF(algorithm=SHA256(), length=32, salt=None, info=DENSE_ROTATION_INFO_V1).derive(data_key)
    return haar_matrix(seed, dimensions)


class _RotationCache:
    """Space id → (data key, transform), bounded, least recently used out. The data key is kept with
    the transform so an erased or replaced key is never answered from the cache."""

    def __init__(self, max_entries: int):
        self._entries: OrderedDict[uuid.UUID, tuple[bytes, SpaceRotation]] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries

    def rotation(self, space_id) -> SpaceRotation:
        space_id = uuid.UUID(str(space_id))
        data_key = data_key_for(space_id)  # raises SpaceKeyUnavailable once the space is erased
        with self._lock:
            entry = self._entries.get(space_id)
            if entry is not None and hmac.compare_digest(entry[0], data_key):
                self._entries.move_to_end(space_id)
                return entry[1]
        rotation = rotation_from_key(data_key)
        with self._lock:
            self._entries[space_id] = (data_key, rotation)
            self._entries.move_to_end(space_id)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return rotation

    def forget(self, space_id) -> None:
        with self._lock:
            self._entries.pop(uuid.UUID(str(space_id)), None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


rotation_cache = _RotationCache(CACHE_MAX_ENTRIES)


def _rows(vectors) -> np.ndarray:
    return np.asarray(vectors, dtype=np.float32).reshape(-1, EMBEDDING_DIMENSIONS)


def into_space(space_id, vectors) -> np.ndarray:
    """Model vectors (rows) → how this space stores and compares them."""
    vectors = _rows(vectors)
    return rotation_cache.rotation(space_id).apply(vectors) if len(vectors) else vectors


def out_of_space(space_id, vectors) -> np.ndarray:
    """This space's stored vectors (rows) → the model's own vectors (the export writes these)."""
    vectors = _rows(vectors)
    return rotation_cache.rotation(space_id).invert(vectors) if len(vectors) else vectors


def engine_name() -> str:
    """The embedding engine this process uses (vectors from another one are not comparable)."""
    return get_embedder().name


def embed_for_space(space_id, texts: list[str], *, query: bool = False) -> np.ndarray:
    """Embed ``texts`` for ``space_id``: the vectors the space stores, or compares with what it stores.

    The embedding cache is keyed by the space too, so its timing tells no tenant what another sent.
    Every engine's reply is checked before the cache keeps it (``embeddings.finite_unit_vectors``): numbers
    that are not finite are the engine failing, never a value to store."""
    return into_space(space_id, get_embedder().embed(texts, query=query, cache_scope=str(space_id)))


def vectors_by_text(space_id, texts: list[str], known: Mapping[str, np.ndarray] | None = None) -> dict:
    """Each text's vector for this space: ``known`` ones (texts the caller already embedded for this space)
    reused, the rest embedded in one call, each distinct text once."""
    known = known or {}
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    fresh = dict(zip(missing, embed_for_space(space_id, missing), strict=True)) if missing else {}
    return {t: known[t] if t in known else fresh[t] for t in texts}


# Model vectors of the public vocabulary's words, by (engine, word): see ``vocabulary_vectors``.
VOCABULARY_VECTORS: dict[tuple[str, str], np.ndarray] = {}
_VOCABULARY_LOCK = threading.Lock()


def vocabulary_vectors(space_id, texts: list[str], vocabulary: frozenset[str]) -> dict[str, np.ndarray]:
    """This space's vectors of those ``texts`` that are words of a public ``vocabulary`` (the attribute names a
    topic row is named by: "company", "health"), the other texts left out. Such a word is no one's content, so
    the process embeds it once for every space, and only the space's transform is applied per space: most
    one-sentence turns otherwise spent a third of their worker time embedding their topic's name again."""
    wanted = [t for t in dict.fromkeys(texts) if t in vocabulary]
    if not wanted:
        return {}
    engine = get_embedder()
    missing = [t for t in wanted if (engine.name, t) not in VOCABULARY_VECTORS]
    if missing:
        fresh = engine.embed(missing)
        with _VOCABULARY_LOCK:
            VOCABULARY_VECTORS.update({(engine.name, t): v for t, v in zip(missing, fresh, strict=True)})
    model = np.stack([VOCABULARY_VECTORS[(engine.name, t)] for t in wanted])
    return dict(zip(wanted, into_space(space_id, model), strict=True))


def into_space_v1(space_id, vectors) -> np.ndarray:
    """Model vectors → the first version's keyed vectors (migrations only; not cached)."""
    vectors = _rows(vectors)
    return vectors @ dense_rotation_v1(data_key_for(uuid.UUID(str(space_id)))) if len(vectors) else vectors


def out_of_space_v1(space_id, vectors) -> np.ndarray:
    """The first version's keyed vectors → model vectors (migrations only; not cached)."""
    vectors = _rows(vectors)
    return vectors @ dense_rotation_v1(data_key_for(uuid.UUID(str(space_id)))).T if len(vectors) else vectors


def v1_to_current(space_id, vectors) -> np.ndarray:
    """Vectors keyed by the first version's dense rotation → keyed by today's transform."""
    return into_space(space_id, out_of_space_v1(space_id, vectors))


def current_to_v1(space_id, vectors) -> np.ndarray:
    """The reverse of ``v1_to_current``."""
    return into_space_v1(space_id, out_of_space(space_id, vectors))


STORED_VECTOR_TABLES = ("memory_memory", "memory_episodekey")


def rekey_stored_vectors(transform=into_space) -> int:
    """Apply ``transform`` (e.g. ``into_space``, ``out_of_space``, ``v1_to_current``) to every stored
    vector of every space, one transaction per space (a savepoint when a migration runs it, so the
    migration is all or nothing: the transforms are not idempotent). Raw SQL, so it does not depend on
    today's models. Returns the rows changed."""
    from django.db import connection

    from tenants import scope
    from tenants.space_keys import SpaceKeyUnavailable
    from tenants.tenant_admin import all_tenant_ids

    changed = 0
    for tenant_id in all_tenant_ids():
        with scope.tenant_scope(tenant_id), connection.cursor() as cursor:
            cursor.execute("SELECT id FROM tenants_space WHERE tenant_id = %s ORDER BY id", [tenant_id])
            space_ids = [row[0] for row in cursor.fetchall()]
        for space_id in space_ids:
            with scope.tenant_scope(tenant_id, space_id), connection.cursor() as cursor:
                for table in STORED_VECTOR_TABLES:
                    # Naming the tenant (decision 0030): on a distributed PostgreSQL each statement goes to one shard.
                    cursor.execute(
                        f"SELECT id, embedding::text FROM {table} WHERE tenant_id = %s AND space_id = %s",
                        [tenant_id, space_id],
                    )
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
                        f"UPDATE {table} SET embedding = %s::halfvec WHERE tenant_id = %s AND id = %s",
                        [(_literal(v), tenant_id, pk) for (pk, _), v in zip(rows, vectors, strict=True)],
                    )
                    changed += len(rows)
    return changed


def _literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6g}" for x in vector) + "]"
