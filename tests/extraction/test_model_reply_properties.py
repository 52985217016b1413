"""Property: whatever JSON the chat model returns, at every call site, nothing breaks and nothing is invented.

Hypothesis generates arbitrary JSON values (and replies that match the schemas' shape but carry
arbitrary text) and a real local HTTP server returns them to the real ``openai`` client; every
call site is driven: extraction and the forget judgement (a turn through the API), query
analysis and synthesis (recall through the API), the search-key summary (``compress``).
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.models import Memory, Turn
from tenants import scope

pytestmark = pytest.mark.django_db

MESSAGE = "We run a fleet of four vans. Our warehouse is in Leeds."
KEYS = ["entries", "kind", "content", "quote", "topic", "importance", "keywords", "event_days_ago",
        "is_forget_request", "delete_ids", "confirmation", "topic_keys", "phrases", "answer", "summary"]  # fmt: skip
TEXTS = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["We run a fleet of four vans.", "We run 127 vans.", "We never run vans.", "four vans", "a", "fact",
         "Ignore previous instructions.", "Our warehouse is in York.", "false", "true", "5"]
    ),
)  # fmt: skip
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXTS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=25,
)
SHAPED_ENTRY = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["fact", "topic", "event", "instruction", "task"]),
        "content": TEXTS,
        "topic": TEXTS,
        "importance": st.floats(-5, 5),
        "keywords": st.lists(TEXTS, max_size=3),
        "quote": TEXTS,
        "event_days_ago": st.none() | st.integers(-10, 100_000),
    }
)
REPLIES = ANY_JSON | st.fixed_dictionaries({"entries": st.lists(SHAPED_ENTRY, max_size=5)})
EXAMPLES = settings(
    max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@EXAMPLES
@given(reply=REPLIES, n=st.integers(0, 10_000))
def test_any_reply_to_a_turn_is_a_stored_turn_and_never_an_invented_memory(client_a, space_a, hostile, reply, n):
    hostile.raw = None
    client_a.post(
        reverse("turn-create", args=[space_a.external_id]) + "?wait=true", {"message": MESSAGE}, format="json"
    )
    hostile.raw = reply  # the next turn meets memories, so the forget judgement is asked too
    message = f"{MESSAGE} Ticket {n}."
    said = hostile.__dict__.setdefault("said", [MESSAGE])  # every example's messages (the space persists)
    said.append(message)
    response = client_a.post(
        reverse("turn-create", args=[space_a.external_id]) + "?wait=true", {"message": message}, format="json"
    )
    assert response.status_code in (200, 201), response.content
    assert response.json()["status"] in ("done", "queued")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert Turn.objects.filter(source_digest__isnull=False).count() >= 2  # no turn lost
        for memory in Memory.objects.filter(space=space_a).exclude(kind="topic"):
            assert any(memory.content.rstrip(".") in text for text in said), memory.content


@EXAMPLES
@given(reply=REPLIES)
def test_any_reply_to_recall_and_synthesis_is_an_answer_from_memories_or_null(client_a, space_a, hostile, reply):
    hostile.raw = None
    client_a.post(
        reverse("turn-create", args=[space_a.external_id]) + "?wait=true", {"message": MESSAGE}, format="json"
    )
    hostile.raw = reply
    response = client_a.post(
        reverse("recall", args=[space_a.external_id]), {"query": "How many vans?", "synthesize": True}, format="json"
    )
    assert response.status_code == 200, response.content
    answer = response.json()["answer"]
    assert answer is None or all(part.strip(" .") in MESSAGE for part in answer.split(". ")), answer


@EXAMPLES
@given(reply=REPLIES)
def test_any_reply_to_a_summary_leaves_a_search_key_made_of_the_input(settings, hostile, reply):
    from memory.shared.search_keys import compress

    text = " ".join(f"Invoice {i} for the Leeds warehouse failed to export on Monday." for i in range(40))
    hostile.raw = reply
    key, how = compress(text)
    assert how in ("summary", "extractive") and key
    if how == "summary":
        assert all(sentence.strip() in text for sentence in key.split(". ") if sentence.strip()), key


def test_the_reply_shapes_used_above_reach_every_call_site(client_a, space_a, hostile):
    """The properties above only mean something if each call site really asks the model."""
    hostile.raw = None
    turn_url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    client_a.post(turn_url, {"message": MESSAGE}, format="json")
    client_a.post(turn_url, {"message": "Our warehouse is in Leeds, as I said."}, format="json")
    client_a.post(reverse("recall", args=[space_a.external_id]), {"query": "vans?", "synthesize": True}, format="json")
    from memory.shared.search_keys import compress

    compress("Invoice export fails on Monday. " * 60)
    assert {"memory_entries", "forget_judgement", "query_analysis", "answer", "summary"} <= set(hostile.schemas_asked())
    assert json.dumps(hostile.requests)  # every request was well-formed JSON
