"""What a process remembers about a text (its vector, its language) is kept under a keyed digest of the
text, not the text: a cache then holds no customer text — nothing of a memory deleted at the customer's
request stays readable in a process that embedded or read it — and the digest is under a key that exists
only in this process's memory, so nobody can test a guess against a dump of the cache."""

from __future__ import annotations

import hashlib
import secrets

_PROCESS_KEY = secrets.token_bytes(32)


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), key=_PROCESS_KEY, digest_size=16).digest()
