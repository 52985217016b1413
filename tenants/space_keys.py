"""Each space's data key: created at random, stored wrapped by a KEK, unwrapped into a small cache.

The wrap binds the data key to its space and KEK (AES-GCM associated data), so a wrapped key
copied onto another space does not unwrap. Unwrapped keys stay in process memory for a short,
bounded time so a turn does not unwrap once per row.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections import OrderedDict

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.utils import timezone

from tenants.keyring import get_keyring
from tenants.models import Space, SpaceKey

NONCE_BYTES = 12
# ~330 B an entry: 16,384 spaces cost ~5 MB. A miss is a SELECT (~0.5–3 ms), more than the rest of a
# cold space's vector transform; the TTL, not the count, bounds how long a key stays unwrapped.
CACHE_MAX_ENTRIES = 16384
CACHE_TTL_SECONDS = 300.0


class SpaceKeyUnavailable(LookupError):
    """The space has no data key (erased, or not visible in this scope) or it cannot be unwrapped."""


def _wrap_aad(space_id: uuid.UUID, kek_id: str, kek_version: int) -> bytes:
    return f"engram-space-key|v1|{space_id}|{kek_id}@{kek_version}".encode()


def wrap(data_key: bytes, *, space_id: uuid.UUID, kek_id: str, kek_version: int, kek: bytes) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(kek).encrypt(nonce, data_key, _wrap_aad(space_id, kek_id, kek_version))


def unwrap(wrapped: bytes, *, space_id: uuid.UUID, kek_id: str, kek_version: int) -> bytes:
    kek = get_keyring().get(kek_id, kek_version)
    wrapped = bytes(wrapped)
    try:
        return AESGCM(kek).decrypt(
            wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:], _wrap_aad(space_id, kek_id, kek_version)
        )
    except InvalidTag:
        raise SpaceKeyUnavailable(
            f"The data key of space {space_id} does not unwrap under {kek_id}@{kek_version}."
        ) from None


class DataKeyCache:
    """The unwrapped data keys of the spaces used lately, by space id: bounded, each for ``ttl_seconds``."""

    def __init__(self, max_entries: int, ttl_seconds: float):
        self._entries: OrderedDict[uuid.UUID, tuple[float, bytes]] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries
        self.ttl_seconds = ttl_seconds

    def get(self, space_id: uuid.UUID) -> bytes | None:
        with self._lock:
            entry = self._entries.get(space_id)
            if entry is None:
                return None
            expires_at, key = entry
            if expires_at < time.monotonic():
                del self._entries[space_id]
                return None
            self._entries.move_to_end(space_id)
            return key

    def put(self, space_id: uuid.UUID, key: bytes) -> None:
        with self._lock:
            self._entries[space_id] = (time.monotonic() + self.ttl_seconds, key)
            self._entries.move_to_end(space_id)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def forget(self, space_id: uuid.UUID) -> None:
        with self._lock:
            self._entries.pop(space_id, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


data_key_cache = DataKeyCache(CACHE_MAX_ENTRIES, CACHE_TTL_SECONDS)


def create_space_key(space: Space) -> SpaceKey:
    """Generate the space's data key and store it wrapped under the newest version of ``space.key_id``."""
    version, kek = get_keyring().newest(space.key_id)
    data_key = AESGCM.generate_key(bit_length=256)
    row = SpaceKey.objects.create(
        space=space,
        tenant_id=space.tenant_id,
        kek_id=space.key_id,
        kek_version=version,
        wrapped_key=wrap(data_key, space_id=space.id, kek_id=space.key_id, kek_version=version, kek=kek),
    )
    data_key_cache.put(space.id, data_key)
    return row


def data_key_for(space_id: uuid.UUID) -> bytes:
    """The unwrapped data key of a space visible in the current scope."""
    key = data_key_cache.get(space_id)
    if key is not None:
        return key
    row = SpaceKey.objects.filter(space_id=space_id).first()
    if row is None:
        raise SpaceKeyUnavailable(f"Space {space_id} has no data key in this scope (erased or not visible).")
    key = unwrap(row.wrapped_key, space_id=space_id, kek_id=row.kek_id, kek_version=row.kek_version)
    data_key_cache.put(space_id, key)
    return key


def rewrap_to_newest(row: SpaceKey) -> bool:
    """Re-wrap one space key under the newest version of its KEK id. Returns False when already there."""
    version, kek = get_keyring().newest(row.kek_id)
    if row.kek_version == version:
        return False
    data_key = unwrap(row.wrapped_key, space_id=row.space_id, kek_id=row.kek_id, kek_version=row.kek_version)
    row.wrapped_key = wrap(data_key, space_id=row.space_id, kek_id=row.kek_id, kek_version=version, kek=kek)
    row.kek_version = version
    row.rotated_at = timezone.now()
    row.save(update_fields=["wrapped_key", "kek_version", "rotated_at"])
    return True
