"""Keyed digests under a space's data key: equality on encrypted text without plaintext in SQL.

HMAC-SHA256 with a key derived from the space's data key per purpose, so a digest from one space
says nothing in another, and nobody with only the database can test a guess.
"""

from __future__ import annotations

import hashlib
import hmac

from memory.text.analysis import normalise
from tenants.space_keys import data_key_for


def _purpose_key(space_id, purpose: str) -> bytes:
    return hmac.new(data_key_for(space_id), f"engram-digest|{purpose}".encode(), hashlib.sha256).digest()


def digest(space_id, purpose: str, *parts: str, length: int = 64) -> str:
    mac = hmac.new(_purpose_key(space_id, purpose), digestmod=hashlib.sha256)
    for part in parts:
        encoded = part.encode("utf-8")
        mac.update(len(encoded).to_bytes(4, "big") + encoded)
    return mac.hexdigest()[:length]


def message_digest(space_id, *, session_external_id: str, role: str, content: str, message_id: str = "") -> str:
    if message_id:
        return digest(space_id, "message-id", message_id)
    return digest(space_id, "message", session_external_id, role, content)


def topic_digest(space_id, topic: str) -> str:
    key = normalise(topic)
    return digest(space_id, "topic", key) if key else ""


def keyword_digests(space_id, tokens) -> list[str]:
    """Blind-index entries: 128-bit keyed digests of normalised tokens."""
    return sorted({digest(space_id, "keyword", normalise(t), length=32) for t in tokens if t})
