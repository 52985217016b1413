"""The write half of the turn loop through the API: extract from the customer only, ground, merge, supersede."""

import pytest
from django.urls import reverse

from memory.models import Memory
from tenants import scope

pytestmark = pytest.mark.django_db


def post_turn(client, space, message, *, wait=True, **extra):
    url = reverse("turn-create", args=[space.external_id]) + ("?wait=true" if wait else "")
    return client.post(url, {"message": message, **extra}, format="json")


def active_memories(space, kind=None):
    with scope.tenant_scope(space.tenant_id, space):
        rows = Memory.objects.filter(space=space, superseded_by__isnull=True)
        if kind:
            rows = rows.filter(kind=kind)
        return [(m.kind, m.content, m.mention_count, m.importance) for m in rows.order_by("created_at")]


def test_a_turn_derives_facts_and_topics_from_the_customer(client_a, space_a):
    response = post_turn(client_a, space_a, "Hi! We run a fleet of four vans. Can you check my invoice?")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "done"
    assert [(m["kind"], m["content"]) for m in body["created"]] == [
        ("fact", "We run a fleet of four vans."),
        ("topic", "fleet"),
    ]
    assert active_memories(space_a, "fact") == [("fact", "We run a fleet of four vans.", 1, 0.6)]
