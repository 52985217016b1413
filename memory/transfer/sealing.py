"""The envelope of a space export: its format name and version, and the passphrase sealing of its lines.

With a passphrase every line after the header is ``{"sealed": base64(nonce ‖ AES-256-GCM)}`` under a
key derived from the passphrase by scrypt, bound to the export id and the line number, so lines
cannot be swapped, dropped or replayed from another export. The scrypt cost is the server's choice,
never the file's (``ALLOWED_SCRYPT``).
"""

from __future__ import annotations

import base64
import json
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
from django.core.exceptions import ValidationError

from core.errors import DomainError

FORMAT = "engram.space-export"
VERSION = 1
SCRYPT = {"n": 2**15, "r": 8, "p": 1}


class TransferError(ValidationError):
    """The file cannot be imported; the message names the line."""


class KeyDerivationBusy(DomainError):
    """Deriving a sealed file's key ran out of memory: the server's state, not the file's (a 503)."""

    status_code = 503
    code = "temporarily_unavailable"


# The key-derivation cost is the server's choice, never the file's: a header naming any other
# parameters is refused before any work (a huge n would pin a worker or exhaust its memory).
ALLOWED_SCRYPT = (SCRYPT,)
SALT_BYTES = 16


def derive_key(passphrase: str, salt: bytes, parameters: dict = SCRYPT) -> bytes:
    return Scrypt(salt=salt, length=32, **parameters).derive(passphrase.encode("utf-8"))


def sealing_parameters(encryption) -> tuple[bytes, dict]:
    """The salt and scrypt parameters of an encrypted file's header, if they are ones the server allows;
    anything else (another cost, a float, a boolean, a missing or odd-sized salt) is a TransferError.

    >>> sealing_parameters({"cipher": "AES-256-GCM", "kdf": "scrypt", "salt": "A" * 22 + "==", **SCRYPT})[1]
    {'n': 32768, 'r': 8, 'p': 1}
    """
    if (
        not isinstance(encryption, dict)
        or encryption.get("cipher") != "AES-256-GCM"
        or encryption.get("kdf") != "scrypt"
    ):
        raise TransferError("Line 1: the file is sealed with an unsupported cipher or key derivation.")
    # type() rather than isinstance: JSON true and 32768.0 must not pass for 1 and 32768.
    parameters = {name: encryption.get(name) for name in ("n", "r", "p")}
    if not all(type(v) is int for v in parameters.values()) or parameters not in ALLOWED_SCRYPT:
        allowed = "; ".join(", ".join(f"{k}={v}" for k, v in option.items()) for option in ALLOWED_SCRYPT)
        raise TransferError(f"Line 1: unsupported key-derivation parameters; Engram writes {allowed}.")
    raw_salt = encryption.get("salt")
    try:
        salt = base64.b64decode(raw_salt, validate=True) if isinstance(raw_salt, str) and len(raw_salt) < 64 else b""
    except ValueError:
        salt = b""
    if len(salt) != SALT_BYTES:
        raise TransferError(f"Line 1: the encryption salt must be {SALT_BYTES} bytes in base64.")
    return salt, parameters


def _additional_data(export_id: str, line: int) -> bytes:
    return f"{FORMAT}|{export_id}|{line}".encode()


def seal(key: bytes, export_id: str, line: int, record: dict) -> dict:
    nonce = os.urandom(12)
    plaintext = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
    ciphertext = AESGCM(key).encrypt(nonce, plaintext, _additional_data(export_id, line))
    return {"sealed": base64.b64encode(nonce + ciphertext).decode()}


def open_sealed(key: bytes, export_id: str, line: int, sealed) -> dict:
    try:
        blob = base64.b64decode(sealed, validate=True)
        plaintext = AESGCM(key).decrypt(blob[:12], blob[12:], _additional_data(export_id, line))
    except (InvalidTag, ValueError, TypeError):
        raise TransferError(f"Line {line}: cannot be decrypted — wrong passphrase, or the file was altered.") from None
    return json.loads(plaintext)


def new_sealing(passphrase: str) -> tuple[bytes, dict]:
    """A fresh salt, the key it derives and the header's ``encryption`` object that names them."""
    salt = os.urandom(SALT_BYTES)
    encryption = {"cipher": "AES-256-GCM", "kdf": "scrypt", "salt": base64.b64encode(salt).decode(), **SCRYPT}
    return derive_key(passphrase, salt), encryption


def key_of_header(encryption, passphrase: str | None) -> bytes:
    """The key that opens a sealed file's lines. The header is checked first, so a hostile one is refused
    before any work and even without a passphrase."""
    salt, parameters = sealing_parameters(encryption)
    if not passphrase:
        raise TransferError("The export is encrypted; give its passphrase.")
    try:
        return derive_key(passphrase, salt, parameters)
    except MemoryError:
        raise KeyDerivationBusy("The server is short of memory to open this file now; try again shortly.") from None
