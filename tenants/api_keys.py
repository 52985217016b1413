"""API keys: issued once in full, stored only as a SHA-256 hash, found by their visible prefix.

A key reads ``eng_<prefix>_<secret>``. The prefix is random and not secret; the secret has 256
bits of entropy, so a fast hash is enough (no password stretching) and the comparison is
constant-time.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import hmac
import re
import secrets

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from tenants import scope
from tenants.models import ApiKey, Tenant

KEY_PATTERN = re.compile(r"^eng_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$")
LAST_USED_RESOLUTION = datetime.timedelta(minutes=1)
VALID_SCOPES = {choice.value for choice in ApiKey.Scope}


@dataclasses.dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    secret: str  # shown once, never stored


def hash_key(full_key: str) -> str:
    return hashlib.sha256(full_key.encode()).hexdigest()


@transaction.atomic
def issue_api_key(*, tenant: Tenant, name: str, scopes: list[str], agent: str = "") -> IssuedKey:
    unknown = set(scopes) - VALID_SCOPES
    if not scopes or unknown:
        raise ValidationError({"scopes": [f"Choose from {sorted(VALID_SCOPES)}; unknown: {sorted(unknown)}."]})
    prefix = secrets.token_hex(6)
    full_key = f"eng_{prefix}_{secrets.token_urlsafe(32)}"
    with scope.tenant_scope(tenant):
        api_key = ApiKey.objects.create(
            tenant=tenant,
            name=name,
            prefix=prefix,
            secret_hash=hash_key(full_key),
            scopes=sorted(set(scopes)),
            agent=agent,
        )
    return IssuedKey(api_key=api_key, secret=full_key)


def resolve_api_key(full_key: str) -> ApiKey | None:
    """The active key matching ``full_key``, with the transaction scoped to its tenant; else None.

    Must run inside the request's transaction: it sets the RLS scope there.
    """
    match = KEY_PATTERN.match(full_key or "")
    if not match:
        return None
    prefix = match.group(1)
    scope.allow_api_key_lookup(prefix)
    api_key = ApiKey.objects.filter(prefix=prefix).first()
    scope.allow_api_key_lookup("")
    if api_key is None or not hmac.compare_digest(api_key.secret_hash, hash_key(full_key)):
        return None
    if api_key.revoked_at is not None:
        return None
    scope.enter_scope(api_key.tenant_id)
    now = timezone.now()
    if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now
    return api_key


def revoke_api_key(api_key: ApiKey) -> ApiKey:
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    return api_key
