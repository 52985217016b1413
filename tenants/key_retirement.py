"""Retiring one key-encryption key version, so what erased spaces left behind becomes unreadable.

Erasing a space deletes its rows and its wrapped data key, but PostgreSQL keeps dead copies in
table pages and the WAL (and backups keep theirs) until they are vacuumed, recycled or expired.
Those copies are ciphertext under the space's data key, and the data key is wrapped under a KEK
version (``default@1``). Re-wrapping every *live* space key under a newer version and then
destroying the old one leaves the residue with a wrapped key nothing can unwrap.

>>> KekVersion.parse("default@2")
KekVersion(key_id='default', version=2)
>>> str(KekVersion.parse("customer-acme"))
'customer-acme@1'
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from django.core.exceptions import ValidationError

from tenants import scope
from tenants.keyring import KEY_ID_PATTERN, get_keyring
from tenants.models import SpaceKey
from tenants.space_keys import rewrap_to_newest
from tenants.tenant_admin import all_tenant_ids

BATCH_SIZE = 200


@dataclasses.dataclass(frozen=True)
class KekVersion:
    key_id: str
    version: int

    @classmethod
    def parse(cls, text: str) -> KekVersion:
        key_id, at, version_text = text.strip().partition("@")
        if not KEY_ID_PATTERN.match(key_id) or not re.fullmatch(r"[0-9]{1,9}", version_text if at else "1"):
            raise ValidationError(f"{text!r} is not a key version; write it as key-id@version, e.g. default@1.")
        return cls(key_id=key_id, version=int(version_text or "1"))

    def __str__(self) -> str:
        return f"{self.key_id}@{self.version}"


def residue_key(space) -> KekVersion | None:
    """The KEK version the space's data key is wrapped under: once that version is retired, the
    residue an erasure of the space leaves in table pages, WAL and backups cannot be decrypted."""
    row = SpaceKey.objects.filter(space_id=space.pk).only("kek_id", "kek_version").first()
    return KekVersion(row.kek_id, row.kek_version) if row else None


def _wrapped_under(retired: KekVersion):
    return SpaceKey.objects.filter(kek_id=retired.key_id, kek_version__lte=retired.version)


def count_live_keys_under(retired: KekVersion) -> int:
    total = 0
    for tenant_id in all_tenant_ids():
        with scope.tenant_scope(tenant_id):
            total += _wrapped_under(retired).count()
    return total


def retire(retired: KekVersion, progress: Callable[[int, int], None] = lambda done, total: None) -> int:
    """Re-wrap every live space key wrapped under ``retired`` (or an older version of its id) under
    the newest version; returns how many were re-wrapped. Each batch commits on its own, so an
    interrupted run keeps its progress and a rerun continues."""
    newest, _ = get_keyring().newest(retired.key_id)
    if newest <= retired.version:
        raise ValidationError(
            f"The keyring has no version of {retired.key_id!r} newer than {retired.version}: add "
            f"{retired.key_id}@{retired.version + 1} (generate_master_key --key-id {retired.key_id} "
            f"--key-version {retired.version + 1}) and deploy it first."
        )
    total = count_live_keys_under(retired)
    done = 0
    progress(done, total)
    for tenant_id in all_tenant_ids():
        while True:
            with scope.tenant_scope(tenant_id):
                # Locked: a space erased or rotated meanwhile is neither resurrected nor wrapped twice.
                batch = list(_wrapped_under(retired).select_for_update()[:BATCH_SIZE])
                for row in batch:
                    done += rewrap_to_newest(row)
            if not batch:
                break
            progress(done, total)
    return done
