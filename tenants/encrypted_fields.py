"""``EncryptedTextField``: memory text stored as AES-256-GCM ciphertext under the row's space key.

Stored layout: one version byte, a fresh 12-byte nonce, then ciphertext and tag. The associated
data names the table, the field, the space and the row, so a ciphertext copied into another space
or another row fails to decrypt (``CiphertextMismatch``) instead of being read as that row's text.

On the model the attribute is plain text. Values loaded from the database stay sealed until first
read, and decrypting needs the space's data key from the current scope. Writing plaintext through
``QuerySet.update()`` or filtering by plaintext is refused: it would put the text into SQL.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.db import models
from django.db.models.query_utils import DeferredAttribute

from tenants.space_keys import data_key_for

FORMAT_VERSION = 1
NONCE_BYTES = 12


class CiphertextMismatch(ValueError):
    """The ciphertext does not belong to this space and row, or was altered."""


class Sealed(bytes):
    """Ciphertext as loaded from the database, not yet decrypted."""


def associated_data(*, table: str, field: str, space_id, row_id) -> bytes:
    return f"engram|v{FORMAT_VERSION}|{table}|{field}|{space_id}|{row_id}".encode()


def seal(plaintext: str, *, key: bytes, aad: bytes) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    return bytes([FORMAT_VERSION]) + nonce + AESGCM(key).encrypt(nonce, plaintext.encode("utf-8"), aad)


def open_sealed(blob: bytes, *, key: bytes, aad: bytes) -> str:
    blob = bytes(blob)
    if not blob or blob[0] != FORMAT_VERSION:
        raise CiphertextMismatch("Unknown ciphertext format version.")
    nonce, body = blob[1 : 1 + NONCE_BYTES], blob[1 + NONCE_BYTES :]
    try:
        return AESGCM(key).decrypt(nonce, body, aad).decode("utf-8")
    except InvalidTag:
        raise CiphertextMismatch(
            "This ciphertext does not belong to this space and row (copied from elsewhere, or altered)."
        ) from None


class _EncryptedAttribute(DeferredAttribute):
    """Holds plaintext (str) or a Sealed ciphertext in the instance dict; decrypts on first read."""

    def __get__(self, instance, cls=None):
        if instance is None:
            return self
        value = super().__get__(instance, cls)
        if isinstance(value, Sealed):
            value = open_sealed(
                value, key=data_key_for(self.field.space_id_of(instance)), aad=self.field.aad_for(instance)
            )
            instance.__dict__[self.field.attname] = value
        return value

    def __set__(self, instance, value):
        if isinstance(value, memoryview):
            value = Sealed(value.tobytes())
        elif isinstance(value, bytes) and not isinstance(value, Sealed):
            value = Sealed(value)
        instance.__dict__[self.field.attname] = value


def read_without_keeping(instance, attname: str) -> str:
    """The field's plaintext for one decision, leaving the instance holding its ciphertext: what is only
    looked at stays sealed on the row (recall decrypts what it shows, not every candidate it weighs)."""
    value = instance.__dict__.get(attname)
    if not isinstance(value, Sealed):
        return value or ""
    field = instance._meta.get_field(attname)
    return open_sealed(value, key=data_key_for(field.space_id_of(instance)), aad=field.aad_for(instance))


class EncryptedTextField(models.BinaryField):
    descriptor_class = _EncryptedAttribute

    def __init__(self, *args, space_field: str = "space", **kwargs):
        self.space_field = space_field
        kwargs.setdefault("editable", True)
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        if self.space_field != "space":
            kwargs["space_field"] = self.space_field
        kwargs.pop("editable", None)
        return name, path, args, kwargs

    def space_id_of(self, instance):
        return getattr(instance, f"{self.space_field}_id")

    def aad_for(self, instance) -> bytes:
        if instance.pk is None:
            raise ValueError(f"{type(instance).__name__} needs its primary key before {self.name} can be encrypted.")
        return associated_data(
            table=instance._meta.db_table, field=self.name, space_id=self.space_id_of(instance), row_id=instance.pk
        )

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        return Sealed(bytes(value))

    def pre_save(self, model_instance, add):
        value = model_instance.__dict__.get(self.attname)
        if value is None or isinstance(value, Sealed):
            return value
        if not isinstance(value, str):
            raise TypeError(f"{self.name} takes text, not {type(value).__name__}.")
        return Sealed(seal(value, key=data_key_for(self.space_id_of(model_instance)), aad=self.aad_for(model_instance)))

    def get_prep_value(self, value):
        if isinstance(value, str):
            raise TypeError(
                f"{self.name} is encrypted: save it through the model instance; plaintext never goes into SQL."
            )
        return super().get_prep_value(value)

    def to_python(self, value):
        return value
