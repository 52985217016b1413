"""API keys: issued once in full, stored only as a SHA-256 hash, found by their visible prefix.

A key reads ``eng_<prefix>_<secret>``. The prefix is random and not secret; the secret has 256
bits of entropy, so a fast hash is enough (no password stretching) and the comparison is
constant-time.

Resolving a key costs one round trip once its row is known to this process: the process keeps
what never changes for a key (its id, tenant and secret hash, by prefix), and every request still
reads the key's current row — revoked or not, its scopes — in the same round trip that sets the
tenant scope (``scope.scope_with_next_statement``). A revocation therefore holds at once in every
process, not after a cache lifetime; revoking also drops the entry from this process's cache.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import OrderedDict

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from database.prepared_statements import prepared
from tenants import scope
from tenants.input_rules import AGENT_PATTERN, AGENT_RULE, unstorable_text
from tenants.models import ApiKey, Tenant

NAME_MAX_CHARS = 100  # ApiKey.name
KEY_PATTERN = re.compile(r"\Aeng_([a-z0-9]{12})_([A-Za-z0-9_-]{43})\Z")
LAST_USED_RESOLUTION = datetime.timedelta(minutes=1)
VALID_SCOPES = {choice.value for choice in ApiKey.Scope}
KNOWN_KEYS_MAX_ENTRIES = 4096
KNOWN_KEYS_TTL_SECONDS = 300.0


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
    if agent and not re.match(AGENT_PATTERN, agent):
        raise ValidationError({"agent": [f"Use {AGENT_RULE}."]})
    if len(name) > NAME_MAX_CHARS or unstorable_text(name):
        raise ValidationError({"name": [f"Use at most {NAME_MAX_CHARS} characters of valid Unicode text."]})
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


@dataclasses.dataclass(frozen=True)
class KnownKey:
    """What never changes for an issued key: enough to check a secret and find the row again."""

    id: object
    tenant_id: object
    secret_hash: str
    remembered_at: float


class _KnownKeys:
    """Per-process, bounded, least recently used out; entries expire after ``ttl_seconds``."""

    def __init__(self, max_entries: int, ttl_seconds: float):
        self._entries: OrderedDict[str, KnownKey] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries
        self.ttl_seconds = ttl_seconds

    def get(self, prefix: str) -> KnownKey | None:
        with self._lock:
            known = self._entries.get(prefix)
            if known is None:
                return None
            if time.monotonic() - known.remembered_at > self.ttl_seconds:
                del self._entries[prefix]
                return None
            self._entries.move_to_end(prefix)
            return known

    def remember(self, prefix: str, api_key: ApiKey) -> None:
        known = KnownKey(api_key.pk, api_key.tenant_id, api_key.secret_hash, time.monotonic())
        with self._lock:
            self._entries[prefix] = known
            self._entries.move_to_end(prefix)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def forget(self, prefix: str) -> None:
        with self._lock:
            self._entries.pop(prefix, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


known_keys = _KnownKeys(KNOWN_KEYS_MAX_ENTRIES, KNOWN_KEYS_TTL_SECONDS)


# Every request reads its key's row again (a revocation by another process counts at once); prepared once per
# connection, as the ORM's query it spent ~1 ms building and planning the same SQL (database/prepared_statements.py).
CURRENT_KEY = f"""SELECT {", ".join(f.column for f in ApiKey._meta.concrete_fields)} FROM tenants_apikey
WHERE tenant_id = %s AND id = %s AND secret_hash = %s AND revoked_at IS NULL"""


def _current_row(known: KnownKey) -> ApiKey | None:
    """The key's row as it is now, read in the round trip that scopes the transaction to its tenant."""
    with scope.scope_with_next_statement(known.tenant_id):
        found = list(ApiKey.objects.raw(*prepared(CURRENT_KEY, [known.tenant_id, known.id, known.secret_hash])))
    return found[0] if found else None


def _row_by_prefix(prefix: str) -> ApiKey | None:
    scope.allow_api_key_lookup(prefix)
    api_key = ApiKey.objects.filter(prefix=prefix).first()
    scope.allow_api_key_lookup("")
    return api_key


def resolve_api_key(full_key: str) -> ApiKey | None:
    """The active key matching ``full_key``, with the transaction scoped to its tenant; else None.

    Must run inside the request's transaction: it sets the RLS scope there.
    """
    match = KEY_PATTERN.match(full_key or "")
    if not match:
        return None
    prefix = match.group(1)
    secret_hash = hash_key(full_key)
    known = known_keys.get(prefix)
    if known is not None and hmac.compare_digest(known.secret_hash, secret_hash):
        api_key = _current_row(known)
        if api_key is None:  # revoked, its secret replaced or its tenant deleted since this process learnt it
            known_keys.forget(prefix)
            return None
    else:
        # Not remembered, or remembered with another secret: the row decides (its secret may have been
        # replaced since this process learnt it).
        api_key = _row_by_prefix(prefix)
        if api_key is None or not hmac.compare_digest(api_key.secret_hash, secret_hash):
            return None
        if api_key.revoked_at is not None:
            return None
        scope.enter_scope(api_key.tenant_id)
        known_keys.remember(prefix, api_key)
    now = timezone.now()
    if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now
    return api_key


def revoke_api_key(api_key: ApiKey) -> ApiKey:
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    # Not needed for correctness (every use reads the row), but a revoked key should not stay
    # remembered; again after commit, in case a concurrent request re-learnt it meanwhile.
    known_keys.forget(api_key.prefix)
    transaction.on_commit(lambda: known_keys.forget(api_key.prefix))
    return api_key
