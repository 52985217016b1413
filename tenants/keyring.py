"""The key-encryption keys (KEKs) that wrap each space's data key. They never live in the database.

Configured by ``ENGRAM_MASTER_KEY`` (or a file named by ``ENGRAM_MASTER_KEY_FILE``) as entries
separated by commas or newlines::

    default=<base64 of 32 bytes>
    default@2=<base64 of 32 bytes>        # a newer version of the same key id (rotation)
    customer-acme=<base64 of 32 bytes>    # a customer-managed key id

A space is created under one key id and keeps it; new wrapping always uses the newest version of
that id, and ``rotate_master_key`` re-wraps older ones.

>>> ring = Keyring.parse("default=" + "A" * 43 + "=")
>>> ring.newest("default")[0]
1
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import os
import re
import secrets
import sys
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed

from tenants import input_rules

KEY_ID_PATTERN = re.compile(input_rules.KEY_ID_PATTERN)


class UnknownKeyId(ImproperlyConfigured):
    pass


@dataclasses.dataclass(frozen=True)
class Keyring:
    keys: dict[tuple[str, int], bytes]
    default_key_id: str

    @classmethod
    def parse(cls, text: str, default_key_id: str = "") -> Keyring:
        keys: dict[tuple[str, int], bytes] = {}
        first_id = ""
        for raw in re.split(r"[,\n]", text):
            entry = raw.strip()
            if not entry or entry.startswith("#"):
                continue
            name_part, sep, encoded = entry.partition("=")
            if not sep:
                raise ImproperlyConfigured(
                    "Each master key entry must look like 'key-id=<base64>' or 'key-id@2=<base64>'."
                )
            key_id, _, version_text = name_part.strip().partition("@")
            if not KEY_ID_PATTERN.match(key_id):
                raise ImproperlyConfigured(f"Master key id {key_id!r} may use only A-Z a-z 0-9 . _ : -")
            version = int(version_text) if version_text else 1
            try:
                key = base64.b64decode(encoded.strip(), validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ImproperlyConfigured(f"Master key {key_id}@{version} is not valid base64.") from exc
            if len(key) != 32:
                raise ImproperlyConfigured(f"Master key {key_id}@{version} must be 32 bytes, not {len(key)}.")
            keys[(key_id, version)] = key
            first_id = first_id or key_id
        if not keys:
            raise ImproperlyConfigured("The master key configuration holds no keys.")
        default = default_key_id or first_id
        ring = cls(keys=keys, default_key_id=default)
        if not ring.has(default):
            raise ImproperlyConfigured(f"ENGRAM_DEFAULT_KEY_ID {default!r} is not in the keyring.")
        return ring

    def has(self, key_id: str) -> bool:
        return any(k == key_id for k, _ in self.keys)

    def newest(self, key_id: str) -> tuple[int, bytes]:
        versions = [v for k, v in self.keys if k == key_id]
        if not versions:
            raise UnknownKeyId(f"Key id {key_id!r} is not in the configured keyring.")
        version = max(versions)
        return version, self.keys[(key_id, version)]

    def get(self, key_id: str, version: int) -> bytes:
        try:
            return self.keys[(key_id, version)]
        except KeyError:
            raise UnknownKeyId(
                f"Key {key_id}@{version} is not in the configured keyring; a space wrapped under it cannot be read."
            ) from None

    def key_ids(self) -> list[str]:
        return sorted({k for k, _ in self.keys})


def generate_entry(key_id: str = "default", version: int = 1) -> str:
    suffix = "" if version == 1 else f"@{version}"
    return f"{key_id}{suffix}={base64.b64encode(secrets.token_bytes(32)).decode()}"


def _configured_text() -> str:
    if settings.ENGRAM_MASTER_KEY:
        return settings.ENGRAM_MASTER_KEY
    path = Path(settings.ENGRAM_MASTER_KEY_FILE)
    if not path.exists() and path == Path(settings.ENGRAM_DEV_MASTER_KEY_FILE) and settings.DEBUG:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(generate_entry() + "\n")
        os.chmod(path, 0o600)
        print(f"Engram: generated a development master key at {path} (development only).", file=sys.stderr)
    try:
        return path.read_text()
    except OSError as exc:
        raise ImproperlyConfigured(f"Cannot read ENGRAM_MASTER_KEY_FILE {path}: {exc}") from exc


@lru_cache(maxsize=1)
def get_keyring() -> Keyring:
    return Keyring.parse(_configured_text(), settings.ENGRAM_DEFAULT_KEY_ID)


def reload_keyring() -> Keyring:
    get_keyring.cache_clear()
    return get_keyring()


def _reload_on_setting_change(*, setting, **kwargs):
    if setting in ("ENGRAM_MASTER_KEY", "ENGRAM_MASTER_KEY_FILE", "ENGRAM_DEFAULT_KEY_ID"):
        get_keyring.cache_clear()


setting_changed.connect(_reload_on_setting_change)
