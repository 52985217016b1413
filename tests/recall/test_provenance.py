"""Provenance: every memory says where it came from, and recall shows it when asked."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

pytestmark = pytest.mark.django_db

VANS = "We run a fleet of four vans."


def post_turn(client, space, message, **extra):
    url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
    response = client.post(url, {"message": message, **extra}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def memories(client, space, **params):
    response = client.get(reverse("memory-list", args=[space.external_id]), params)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_a_memory_shows_the_session_message_id_turn_and_time_it_came_from(client_a, space_a):
    turn = post_turn(
        client_a, space_a, "Hi! We run a fleet of four vans.", session_id="chat-1", message_id="msg-77",
        at="2026-03-01T09:30:00Z",
    )  # fmt: skip
    [fact] = memories(client_a, space_a, kind="fact")
    assert fact["content"] == VANS
    assert fact["source"] == {
        "session_id": "chat-1",
        "message_id": "msg-77",
        "turn_id": turn["turn_id"],
        "said_at": "2026-03-01T09:30:00Z",
    }
    detail = client_a.get(reverse("memory-detail", args=[space_a.external_id, fact["id"]])).json()
    assert detail["source"] == fact["source"]
    assert detail["session_id"] == "chat-1"  # the older field stays


def test_a_transcript_lines_id_is_the_source_of_what_it_taught(client_a, space_a):
    url = reverse("transcript-ingest", args=[space_a.external_id]) + "?wait=true"
    body = {
        "session_id": "import-9",
        "messages": [
            {"role": "agent", "content": "How can I help?", "id": "line-1"},
            {"role": "customer", "content": "We run a fleet of four vans.", "id": "line-2"},
        ],
    }
    turn = client_a.post(url, body, format="json").json()
    [fact] = memories(client_a, space_a, kind="fact")
    assert fact["source"]["message_id"] == "line-2"
    assert fact["source"]["turn_id"] == turn["turn_id"] and fact["source"]["session_id"] == "import-9"


def test_a_message_without_an_id_has_a_null_message_id(client_a, space_a):
    post_turn(client_a, space_a, "Hi! We run a fleet of four vans.")
    [fact] = memories(client_a, space_a, kind="fact")
    assert fact["source"]["message_id"] is None and fact["source"]["turn_id"] is not None


def test_recall_returns_sources_only_when_asked(client_a, space_a):
    turn = post_turn(client_a, space_a, "Hi! We run a fleet of four vans.", message_id="m-1")
    url = reverse("recall", args=[space_a.external_id])
    plain = client_a.post(url, {"query": "How many vans?"}, format="json").json()
    assert plain["memories"] and all("source" not in m for m in plain["memories"])
    with_sources = client_a.post(url, {"query": "How many vans?", "provenance": True}, format="json").json()
    vans = next(m for m in with_sources["memories"] if m["content"] == VANS)
    assert vans["source"]["message_id"] == "m-1" and vans["source"]["turn_id"] == turn["turn_id"]
    refused = client_a.post(url, {"query": "vans", "provenance": "perhaps"}, format="json")
    assert refused.status_code == 400 and "provenance" in refused.json()["error"]["details"]


def test_a_turn_returns_the_sources_of_what_it_recalls_when_asked(client_a, space_a):
    first = post_turn(client_a, space_a, "Hi! We run a fleet of four vans.", message_id="m-1")
    plain = post_turn(client_a, space_a, "How many vans do we have?")
    assert plain["memories"] and all("source" not in m for m in plain["memories"])
    asked = post_turn(client_a, space_a, "Remind me how many vans we run?", provenance=True)
    vans = next(m for m in asked["memories"] if m["content"] == VANS)
    assert vans["source"]["turn_id"] == first["turn_id"] and vans["source"]["message_id"] == "m-1"


def test_listing_costs_the_same_queries_for_one_memory_or_many(client_a, space_a):
    post_turn(client_a, space_a, "Hi! We run a fleet of four vans.")
    with CaptureQueriesContext(connection) as one:
        assert len(memories(client_a, space_a)) == 2
    for text in ("Our office is in Lyon.", "We deliver furniture to hotels.", "Our accountant is called Marie."):
        post_turn(client_a, space_a, text)
    with CaptureQueriesContext(connection) as many:
        assert len(memories(client_a, space_a)) > 4
    assert len(many.captured_queries) == len(one.captured_queries)


def test_another_tenant_cannot_read_a_memorys_source(client_a, client_b, space_a, space_b):
    post_turn(client_a, space_a, "Hi! We run a fleet of four vans.", message_id="secret-id")
    [fact] = memories(client_a, space_a, kind="fact")
    response = client_b.get(reverse("memory-detail", args=[space_a.external_id, fact["id"]]))
    assert response.status_code == 404 and b"secret-id" not in response.content
    assert memories(client_b, space_b) == []


def test_the_console_shows_where_a_memory_came_from_even_to_support(client, client_a, tenant_a, space_a):
    from tenants.tenant_admin import create_operator

    turn = post_turn(client_a, space_a, "Hi! We run a fleet of four vans.", session_id="chat-1", message_id="msg-77")
    support = create_operator(tenant=tenant_a, username="sam", password="a-long-password", role="support")
    client.force_login(support.user)
    page = client.get(f"/console/spaces/{space_a.external_id}/").content.decode()
    assert "message msg-77" in page and f"turn {turn['turn_id'][:8]}" in page and "chat-1" in page
    assert "four vans" not in page  # support sees where it came from, never what it says
