"""Retention: tasks, events and kept transcript lines expire as the space's settings say, audited with the cause."""

import datetime

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from memory.forgetting.retention import expire_all, expire_space
from memory.models import DeletionAudit, Memory, Message, Session
from tenants import scope
from tenants.models import Space, Tenant

pytestmark = pytest.mark.django_db

VECTOR = [0.0] * 383 + [1.0]
DAY = datetime.timedelta(days=1)


def session_with_message(space, external_id, *, said_at, keep_text="Call me back tomorrow."):
    with scope.tenant_scope(space.tenant_id, space):
        session = Session.objects.create(
            tenant_id=space.tenant_id, space=space, external_id=external_id, started_at=said_at
        )
        Message.objects.create(
            tenant_id=space.tenant_id, space=space, session=session, digest=f"d-{external_id}", role="customer",
            content=keep_text, sent_at=said_at,
        )  # fmt: skip
        return session


def remember(space, kind, content, **fields):
    with scope.tenant_scope(space.tenant_id, space):
        return Memory.objects.create(
            tenant_id=space.tenant_id, space=space, kind=kind, content=content, embedding=VECTOR, importance=0.5,
            **fields,
        )  # fmt: skip


def alive(space):
    with scope.tenant_scope(space.tenant_id, space):
        return sorted(m.content for m in Memory.objects.filter(space=space))


def expire(space, now=None):
    """Expire as the sweep does: the space read afresh, with its tenant's current defaults."""
    with scope.tenant_scope(space.tenant_id, space):
        return expire_space(Space.objects.select_related("tenant").get(pk=space.pk), now=now)


def set_tenant_defaults(tenant, values):
    with scope.tenant_scope(tenant):
        Tenant.objects.filter(pk=tenant.pk).update(default_space_settings=values)


def test_a_task_from_a_closed_session_expires_and_one_from_a_live_session_stays(space_a):
    now = timezone.now()
    idle = session_with_message(space_a, "yesterday", said_at=now - 2 * DAY)
    live = session_with_message(space_a, "today", said_at=now - datetime.timedelta(hours=1))
    remember(space_a, "task", "Send the invoice copy.", task_session=idle)
    remember(space_a, "task", "Call back about the van.", task_session=live)
    remember(space_a, "fact", "We run a fleet of four vans.")
    report = expire(space_a)
    assert report.tasks == 1
    assert alive(space_a) == ["Call back about the van.", "We run a fleet of four vans."]
    with scope.tenant_scope(space_a.tenant_id):
        [audit] = DeletionAudit.objects.all()
    assert audit.cause == "retention" and audit.memory_kind == "task" and audit.actor == "retention sweep"
    assert audit.limits["task_expires_with_session"] is True and audit.limits["session_idle_hours"] == 24


def test_an_ended_session_closes_at_once_and_the_setting_can_keep_its_tasks(space_a, client_a):
    ended = session_with_message(space_a, "ended", said_at=timezone.now())
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Session.objects.filter(pk=ended.pk).update(ended_at=timezone.now())
    remember(space_a, "task", "Send the invoice copy.", task_session=ended)
    patched = client_a.patch(
        reverse("space-detail", args=[space_a.external_id]), {"settings": {"task_expires_with_session": False}},
        format="json",
    )  # fmt: skip
    assert patched.status_code == 200, patched.content
    assert expire(space_a).tasks == 0
    client_a.patch(
        reverse("space-detail", args=[space_a.external_id]),
        {"settings": {"task_expires_with_session": None}},
        format="json",
    )
    assert expire(space_a).tasks == 1 and alive(space_a) == []


def test_old_tasks_and_events_expire_by_age(space_a):
    remember(space_a, "task", "Renew the contract.")  # no session: only its age counts
    remember(space_a, "event", "The van broke down.", event_at=timezone.now() - 400 * DAY)
    remember(space_a, "event", "The new van arrived.", event_at=timezone.now() - 10 * DAY)
    today = expire(space_a)
    assert (today.tasks, today.events) == (0, 1)
    next_month = expire(space_a, now=timezone.now() + 31 * DAY)
    assert (next_month.tasks, next_month.events) == (1, 0)
    assert alive(space_a) == ["The new van arrived."]


def test_kept_transcript_lines_lose_their_text_after_the_retention(space_a):
    session_with_message(space_a, "old", said_at=timezone.now() - 40 * DAY, keep_text="My PIN is 4711")
    session_with_message(space_a, "new", said_at=timezone.now() - DAY, keep_text="I moved to Lyon")
    assert expire(space_a).transcript_lines == 1
    with scope.tenant_scope(space_a.tenant_id, space_a):
        kept = {m.session.external_id: m.content for m in Message.objects.select_related("session")}
    assert kept == {"old": None, "new": "I moved to Lyon"}


def test_a_tenant_default_applies_and_zero_keeps_forever(space_a, client_a, tenant_a):
    set_tenant_defaults(tenant_a, {"event_retention_days": 0})
    remember(space_a, "event", "The van broke down.", event_at=timezone.now() - 4000 * DAY)
    assert expire(space_a).events == 0


def test_bad_retention_values_are_refused(space_a, client_a):
    url = reverse("space-detail", args=[space_a.external_id])
    for bad in ({"task_retention_days": -1}, {"event_retention_days": "forever"}, {"session_idle_hours": 0}):
        response = client_a.patch(url, {"settings": bad}, format="json")
        assert response.status_code == 400, bad
        assert list(bad)[0] in response.json()["error"]["details"]


def test_the_sweep_expires_every_tenant_by_its_own_settings(space_a, space_b, tenant_b):
    set_tenant_defaults(tenant_b, {"transcript_retention_days": 1})
    session_with_message(space_a, "a", said_at=timezone.now() - 5 * DAY, keep_text="Alice's line")
    session_with_message(space_b, "b", said_at=timezone.now() - 5 * DAY, keep_text="Bob's line")
    call_command("sweep_turns")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert [m.content for m in Message.objects.all()] == ["Alice's line"]
    with scope.tenant_scope(space_b.tenant_id, space_b):
        assert [m.content for m in Message.objects.all()] == [None]
    assert expire_all().transcript_lines == 0  # nothing left to do


def test_the_deletion_audit_can_be_filtered_by_the_retention_cause(space_a, client_a):
    idle = session_with_message(space_a, "idle", said_at=timezone.now() - 3 * DAY)
    remember(space_a, "task", "Send the invoice copy.", task_session=idle)
    expire(space_a)
    rows = client_a.get(reverse("deletion-list"), {"cause": "retention"}).json()["results"]
    assert [(r["memory_kind"], r["cause"]) for r in rows] == [("task", "retention")]


@pytest.mark.parametrize(
    "lasting, to_do",
    [
        ("I have to avoid gluten, I'm celiac.", "I still need to return the blue jacket by Friday."),
        ("Мне нужно избегать глютена, у меня целиакия.", "Напомните мне завтра оплатить счёт за интернет."),
    ],
)
def test_a_lasting_fact_in_a_tasks_words_outlives_its_session_and_the_to_do_does_not(client_a, space_a, lasting, to_do):
    from tests.support.turns import say

    say(client_a, space_a, lasting, session="yesterday")
    say(client_a, space_a, to_do, session="yesterday")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Message.objects.filter(space=space_a).update(sent_at=timezone.now() - 2 * DAY)
    report = expire(space_a)
    with scope.tenant_scope(space_a.tenant_id, space_a):
        kept = [m.content for m in Memory.objects.filter(space=space_a).exclude(kind="topic")]
    assert report.tasks == 1
    assert kept == [lasting]
