"""Retention: tasks, events and kept transcript lines live only as long as the space's settings say.

Run by the sweep (``manage.py sweep_turns``, every ``--retention-every`` seconds) for every space:

    report = expire_space(space)   # RetentionReport(tasks=2, events=0, transcript_lines=14)

Expired memories go through ``memory.forgetting.deletion`` like any other deletion: their history goes with them and
each row gets a deletion-audit record with cause ``retention`` and the rule that expired it in ``limits``.
A kept transcript line loses its text and keyword index (the row stays as the turn's record, like the lines
of a space that does not keep transcripts).
"""

from __future__ import annotations

import dataclasses
import datetime

from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from memory.forgetting.deletion import DeletionContext, delete_memories
from memory.models import DeletionAudit, Memory, Message, Session
from memory.store.lock import lock_space
from tenants.space_settings import effective_settings

ACTOR = "retention sweep"


@dataclasses.dataclass(frozen=True)
class RetentionReport:
    tasks: int = 0
    events: int = 0
    transcript_lines: int = 0

    def __add__(self, other: RetentionReport) -> RetentionReport:
        mine, theirs = dataclasses.astuple(self), dataclasses.astuple(other)
        return RetentionReport(*(a + b for a, b in zip(mine, theirs, strict=True)))


def _expired_tasks(space, settings: dict, now: datetime.datetime) -> tuple[list[Memory], dict]:
    expired = Q(pk__in=[])
    if settings["task_retention_days"]:
        expired |= Q(updated_at__lt=now - datetime.timedelta(days=settings["task_retention_days"]))
    if settings["task_expires_with_session"]:
        idle_since = now - datetime.timedelta(hours=settings["session_idle_hours"])
        recent = Message.objects.filter(session=OuterRef("task_session"), sent_at__gte=idle_since)
        # Subqueries, not a join on the session's id: each names the tenant (decision 0030).
        ended = Session.objects.filter(pk=OuterRef("task_session"), ended_at__isnull=False)
        expired |= Q(task_session__isnull=False) & (Exists(ended) | ~Exists(recent))
    rows = Memory.objects.filter(expired, space=space, kind=Memory.Kind.TASK, superseded_by__isnull=True)
    rule = {name: settings[name] for name in ("task_retention_days", "task_expires_with_session", "session_idle_hours")}
    return list(rows), rule


def _expired_events(space, settings: dict, now: datetime.datetime) -> tuple[list[Memory], dict]:
    days = settings["event_retention_days"]
    if not days:
        return [], {}
    rows = (
        Memory.objects.filter(space=space, kind=Memory.Kind.EVENT, superseded_by__isnull=True)
        .annotate(happened_at=Coalesce("event_at", "created_at"))
        .filter(happened_at__lt=now - datetime.timedelta(days=days))
    )
    return list(rows), {"event_retention_days": days}


@transaction.atomic
def expire_space(space, *, now: datetime.datetime | None = None) -> RetentionReport:
    """Delete this space's expired tasks and events (audited) and blank its expired transcript lines."""
    now = now or timezone.now()
    settings = effective_settings(space)
    # Under the writer's lock: a turn merging into a task as it expires must not resurrect it.
    lock_space(space.id)
    counts = {}
    for name, finder in (("tasks", _expired_tasks), ("events", _expired_events)):
        rows, rule = finder(space, settings, now)
        if rows:
            context = DeletionContext(cause=DeletionAudit.Cause.RETENTION, actor=ACTOR, limits=rule)
            delete_memories(space=space, memories=rows, context=context)
        counts[name] = len(rows)
    lines = 0
    if settings["transcript_retention_days"]:
        cutoff = now - datetime.timedelta(days=settings["transcript_retention_days"])
        lines = Message.objects.filter(space=space, content__isnull=False, sent_at__lt=cutoff).update(
            **Message.TEXT_DROPPED
        )
    return RetentionReport(tasks=counts["tasks"], events=counts["events"], transcript_lines=lines)


def expire_all(*, now: datetime.datetime | None = None) -> RetentionReport:
    """Every tenant's every space, one transaction per space (a failure in one leaves the others done)."""
    from tenants import scope
    from tenants.models import Space
    from tenants.tenant_admin import all_tenant_ids

    total = RetentionReport()
    for tenant_id in all_tenant_ids():
        with scope.tenant_scope(tenant_id):
            space_ids = list(Space.objects.values_list("id", flat=True))
        for space_id in space_ids:
            with scope.tenant_scope(tenant_id):
                space = Space.objects.select_related("tenant").get(pk=space_id)
                scope.enter_scope(tenant_id, space)
                total += expire_space(space, now=now)
    return total
