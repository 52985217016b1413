"""A tenant's numbers at a glance: spaces, memories by kind, turns today, queued and failed, deletions per day
(reads only, in the request's tenant scope)."""

from __future__ import annotations

import datetime
import json

from django.db.models import Count
from django.utils import timezone

from memory.models import DeletionAudit, Memory, Turn
from tenants.models import Space

RECENT_TURNS_FOR_REJECTIONS = 1000


def tenant_overview(tenant_id) -> dict:
    now = timezone.now()
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    week_ago = today - datetime.timedelta(days=6)
    by_kind = dict(
        Memory.objects.filter(superseded_by__isnull=True).values_list("kind").annotate(n=Count("id")).order_by()
    )
    turns = Turn.objects.all()
    rejected = 0
    # Rejected entries live encrypted in each turn record: count them over the most recent turns.
    for turn in turns.exclude(rejected=None).order_by("-created_at")[:RECENT_TURNS_FOR_REJECTIONS]:
        rejected += len(json.loads(turn.rejected or "[]"))
    deletions = DeletionAudit.objects.filter(tenant_id=tenant_id, occurred_at__gte=week_ago)
    per_day = {(week_ago + datetime.timedelta(days=i)).date(): 0 for i in range(7)}
    for occurred in deletions.values_list("occurred_at", flat=True):
        per_day[occurred.date()] = per_day.get(occurred.date(), 0) + 1
    return {
        "spaces": Space.objects.count(),
        "memories_by_kind": [(kind, by_kind.get(kind, 0)) for kind in Memory.Kind.values],
        "turns_today": turns.filter(created_at__gte=today).count(),
        "turns_queued": turns.filter(status=Turn.Status.QUEUED).count(),
        "oldest_queued": _age(turns.filter(status=Turn.Status.QUEUED).order_by("created_at").first(), now),
        "turns_failed": turns.filter(status=Turn.Status.FAILED).count(),
        "rejected_recent": rejected,
        "deletions_7_days": deletions.count(),
        "deletions_per_day": [(day.strftime("%a"), count) for day, count in sorted(per_day.items())],
    }


def _age(turn, now) -> str:
    """How long the oldest queued turn has waited, in the largest whole unit ("", "40 s", "12 min", "3 h")."""
    if turn is None:
        return ""
    seconds = int((now - turn.created_at).total_seconds())
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"
