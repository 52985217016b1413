"""The deletion audit: record that a memory was deleted — never what it said — and let support check a text.

Content is kept only as an HMAC of its normalised text under the audit key, bound to the tenant
and the space, so "was this text deleted from this space?" can be answered without the text.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from django.conf import settings

from memory.models import DeletionAudit
from memory.text.analysis import normalise


def _audit_key() -> bytes:
    if settings.ENGRAM_AUDIT_KEY:
        return base64.b64decode(settings.ENGRAM_AUDIT_KEY)
    return hmac.new(settings.SECRET_KEY.encode(), b"engram-deletion-audit", hashlib.sha256).digest()


def content_digest(*, tenant_id, space_uuid, text: str) -> str:
    message = f"{tenant_id}|{space_uuid}|{normalise(text)}".encode()
    return hmac.new(_audit_key(), message, hashlib.sha256).hexdigest()


def record_deletion(
    *, memory, space, cause: str, actor: str = "", turn_id=None, matched_distance=None, limits=None
) -> DeletionAudit:
    return DeletionAudit.objects.create(
        tenant_id=space.tenant_id,
        space_uuid=space.id,
        space_external_id=space.external_id,
        memory_id=memory.id,
        memory_kind=memory.kind,
        cause=cause,
        actor=actor[:200],
        turn_id=turn_id,
        matched_distance=matched_distance,
        limits=limits or {},
        content_digest=content_digest(tenant_id=space.tenant_id, space_uuid=space.id, text=memory.content),
    )


def was_deleted(*, tenant_id, space_external_id: str, text: str) -> list[DeletionAudit]:
    """The audit rows whose deleted content was exactly this text (after normalisation) in that space."""
    rows = DeletionAudit.objects.filter(tenant_id=tenant_id, space_external_id=space_external_id)
    space_uuids = set(rows.values_list("space_uuid", flat=True))
    digests = [content_digest(tenant_id=tenant_id, space_uuid=u, text=text) for u in space_uuids]
    return list(rows.filter(content_digest__in=digests).order_by("-occurred_at"))


def deletions(*, tenant_id, space_external_id=None, cause=None, since=None, until=None):
    rows = DeletionAudit.objects.filter(tenant_id=tenant_id)
    if space_external_id:
        rows = rows.filter(space_external_id=space_external_id)
    if cause:
        rows = rows.filter(cause=cause)
    if since:
        rows = rows.filter(occurred_at__gte=since)
    if until:
        rows = rows.filter(occurred_at__lt=until)
    return rows.order_by("-occurred_at", "id")
