"""The turn queue: Turn rows hold the state (queued, processing, done, failed, next attempt);
django-tasks only wakes a worker. A lost wake-up is harmless: ``requeue_due_turns`` (run by the
worker loop and by ``manage.py process_turns``) picks up every turn that is due, including turns
whose worker died mid-way.
"""

from __future__ import annotations

import datetime

from django.db import transaction
from django.utils import timezone
from django_tasks import task

from memory.models import Turn

# A turn left "processing" longer than this is taken to have lost its worker.
PROCESSING_LEASE = datetime.timedelta(minutes=10)


def enqueue_turn(turn: Turn, *, run_after: datetime.datetime | None = None) -> None:
    """Queue the pipeline for ``turn``, in the caller's transaction (committed with the turn)."""
    task_ = process_turn_task.using(run_after=run_after) if run_after else process_turn_task
    task_.enqueue(str(turn.tenant_id), str(turn.space_id), str(turn.id))


@task()
def process_turn_task(tenant_id: str, space_id: str, turn_id: str) -> str:
    from memory.turn_processing import run_turn

    return run_turn(tenant_id=tenant_id, space_id=space_id, turn_id=turn_id)


def requeue_due_turns() -> int:
    """Queue every turn that is due: waiting for a retry, or stuck 'processing' past its lease."""
    from tenants import scope
    from tenants.tenant_admin import all_tenant_ids

    now = timezone.now()
    count = 0
    for tenant_id in all_tenant_ids():
        with scope.tenant_scope(tenant_id), transaction.atomic():
            stale = Turn.objects.filter(status=Turn.Status.PROCESSING, updated_at__lt=now - PROCESSING_LEASE)
            stale.update(status=Turn.Status.QUEUED, next_attempt_at=now)
            due = Turn.objects.filter(status=Turn.Status.QUEUED, next_attempt_at__lte=now)
            for turn in due.select_for_update(skip_locked=True):
                turn.next_attempt_at = None
                turn.save(update_fields=["next_attempt_at", "updated_at"])
                enqueue_turn(turn)
                count += 1
    return count
