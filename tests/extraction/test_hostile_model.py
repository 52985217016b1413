"""Real turns through the API against a chat model that lies on purpose (``HostileChat`` in
tests/support/model_servers.py).

Per attack class: what the model tried, and that nothing the customer never said is stored, no
5xx, no lost turn; the honest mode's entries still get through. docs/reliability.md ("Hostile
model") summarises these tests.
"""

from __future__ import annotations

import time

import pytest
from django.urls import reverse
from django.utils import timezone

from memory.models import Memory, Turn
from tenants import scope

pytestmark = pytest.mark.django_db

FLEET = "We run a fleet of four vans. Our warehouse is in Leeds."


def turn(client, space, message, wait=True):
    url = reverse("turn-create", args=[space.external_id]) + ("?wait=true" if wait else "")
    response = client.post(url, {"message": message}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def stored(space) -> list[str]:
    with scope.tenant_scope(space.tenant_id, space):
        return [m.content for m in Memory.objects.filter(space=space).exclude(kind="topic")]


def said_by_customer(content: str, *messages: str) -> bool:
    return any(content.rstrip(".") in m for m in messages)


def test_the_honest_model_still_gets_its_entries_stored(client_a, space_a, hostile):
    body = turn(client_a, space_a, FLEET)
    assert body["status"] == "done"
    assert sorted(stored(space_a)) == ["Our warehouse is in Leeds.", "We run a fleet of four vans."]


@pytest.mark.parametrize(
    "mode, reason",
    [
        ("invented", "adds a number"),
        ("altered_number", "adds a number"),
        ("negation", "its polarity differs"),
        ("appended_clause", "adds a number"),
        ("injected", "addresses the agent"),
    ],
)
def test_a_crafted_entry_is_rejected_with_its_reason_and_nothing_is_stored(client_a, space_a, hostile, mode, reason):
    hostile.modes["memory_entries"] = mode
    body = turn(client_a, space_a, FLEET)
    assert body["status"] == "done" and body["created"] == []
    assert stored(space_a) == []
    assert body["rejected"] and all(r["reason"] for r in body["rejected"])
    assert any(r["reason"].startswith(reason) for r in body["rejected"]), body["rejected"]


def test_a_detail_only_the_agent_gave_is_not_pinned_on_the_customers_question(client_a, space_a, hostile):
    hostile.modes["memory_entries"] = "agent_detail"
    body = turn(client_a, space_a, "When is my renewal? Can you check the plan too?")
    assert body["created"] == [] and stored(space_a) == []
    assert body["rejected"][0]["reason"].startswith("adds a number")


def test_crafted_entries_cannot_supersede_the_customers_true_memories(client_a, space_a, hostile):
    turn(client_a, space_a, FLEET)
    before = sorted(stored(space_a))
    for mode, greeting in (("altered_number", "Hello!"), ("negation", "Hi!"), ("appended_clause", "Hey!")):
        hostile.modes["memory_entries"] = mode
        turn(client_a, space_a, f"{greeting} {FLEET}")
    assert sorted(stored(space_a)) == before


def test_a_flood_of_entries_is_capped_per_message_and_the_rest_recorded(client_a, space_a, hostile):
    with scope.tenant_scope(space_a.tenant_id, space_a):
        space_a.settings = {"max_entries_per_message": 3}
        space_a.save(update_fields=["settings"])
    hostile.modes["memory_entries"] = "flood"
    sentences = [f"Our depot number {n} is in a different town called Town{chr(65 + n)}." for n in range(6)]
    body = turn(client_a, space_a, " ".join(sentences))
    assert body["status"] == "done"
    assert len(stored(space_a)) <= 3
    assert any("over the limit of 3 entries per message" in r["reason"] for r in body["rejected"])
    assert all(said_by_customer(c, " ".join(sentences)) for c in stored(space_a))


@pytest.mark.parametrize("mode", ["broken", "huge", "mistyped"])
def test_a_broken_huge_or_mistyped_reply_keeps_the_turn_queued_and_loses_nothing(client_a, space_a, hostile, mode):
    hostile.modes["memory_entries"] = mode
    body = turn(client_a, space_a, FLEET)
    assert body["status"] == "queued" and body["error"]
    assert stored(space_a) == []
    hostile.modes["memory_entries"] = "honest"  # the model recovers: the retry stores the true entries
    from memory.turns.pipeline import attempt_turn

    with scope.tenant_scope(space_a.tenant_id, space_a):
        again = attempt_turn(Turn.objects.get())
    assert again.status == Turn.Status.DONE
    assert sorted(stored(space_a)) == ["Our warehouse is in Leeds.", "We run a fleet of four vans."]


def test_a_slow_model_cannot_hold_a_waiting_turn_past_the_request_bound(client_a, space_a, hostile, monkeypatch):
    from memory.llm import budget
    from memory.turns.pipeline import run_turn

    turn(client_a, space_a, FLEET)  # memories to recall and judge: this turn asks the model three times
    monkeypatch.setattr(budget, "REQUEST_MODEL_SECONDS", 1.5)
    hostile.delay = 6  # without the bound: three calls, each cut only by the 5 s client timeout (15 s)
    started = time.monotonic()
    body = turn(client_a, space_a, "Our office is in York.")
    assert time.monotonic() - started < 8  # the 1.5 s of model time plus the local work
    assert body["status"] == "queued"  # left to the worker, the message kept
    with scope.tenant_scope(space_a.tenant_id, space_a):
        queued = Turn.objects.get(status=Turn.Status.QUEUED)
        assert queued.message_ids and queued.next_attempt_at <= timezone.now()  # due for the worker at once
    hostile.delay = 0
    assert run_turn(tenant_id=str(space_a.tenant_id), space_id=str(space_a.id), turn_id=str(queued.id)) == "done"
    assert "Our office is in York." in stored(space_a)


def test_a_mistyped_query_analysis_falls_back_to_the_rule_set(client_a, space_a, hostile):
    turn(client_a, space_a, FLEET)
    hostile.modes["query_analysis"] = "mistyped"
    response = client_a.post(
        reverse("recall", args=[space_a.external_id]), {"query": "How many vans do you run?"}, format="json"
    )
    assert response.status_code == 200
    assert "We run a fleet of four vans." in [m["content"] for m in response.json()["memories"]]


@pytest.mark.parametrize(
    "mode, answer, status",
    [
        ("honest", "We run a fleet of four vans.", "model"),
        ("ungrounded", None, "unsupported"),
        ("half_grounded", "We run a fleet of four vans.", "model, 1 unsupported"),
        ("mistyped", None, "unavailable"),
    ],
)
def test_a_synthesized_answer_keeps_only_what_the_memories_say(client_a, space_a, hostile, mode, answer, status):
    turn(client_a, space_a, FLEET)
    hostile.modes["answer"] = mode
    response = client_a.post(
        reverse("recall", args=[space_a.external_id]),
        {"query": "How many vans do you run?", "synthesize": True},
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert body["answer"] == answer and body["synthesis"].startswith(status), body


def test_a_mistyped_forget_verdict_deletes_nothing_on_a_plain_statement(client_a, space_a, hostile):
    turn(client_a, space_a, FLEET)
    hostile.modes["memory_entries"] = "invented"  # rejected: only the forget judgement can change anything
    for mode in ("mistyped", "false_string", "not_offered"):
        hostile.modes["forget_judgement"] = mode
        body = turn(client_a, space_a, f"Our warehouse is in Leeds, as I said ({mode}).")
        assert body.get("forgotten", []) == [], mode
    assert sorted(stored(space_a)) == ["Our warehouse is in Leeds.", "We run a fleet of four vans."]


PHONE_ROWS = [
    "My phone number is +420 777 123 456.",
    "I prefer email over phone.",
    "Call me on weekends, my phone is always on.",
]


def test_an_over_eager_forget_verdict_never_deletes_beyond_the_rule(client_a, space_a, hostile):
    for row in PHONE_ROWS:
        turn(client_a, space_a, row)
    assert sorted(stored(space_a)) == sorted(PHONE_ROWS)
    hostile.modes["forget_judgement"] = "over_eager"  # every offered id, quoting the whole message
    hostile.modes["memory_entries"] = "invented"  # rejected: only the forget judgement can change anything
    for message in (
        "Our warehouse is in Leeds, as I said.",
        "How do I make you forget my phone number?",
        "Would you forget my phone number if I asked?",
        "My colleague said: forget my phone number, but we keep it.",
        "Forget my old phone number.",
    ):
        assert turn(client_a, space_a, message).get("forgotten", []) == [], message
    assert sorted(stored(space_a)) == sorted(PHONE_ROWS)
    body = turn(client_a, space_a, "Please forget my phone number.")
    assert [f["content"] for f in body["forgotten"] if f["kind"] != "topic"] == [PHONE_ROWS[0]]
    judged = [r for r in hostile.requests if r["response_format"]["json_schema"]["name"] == "forget_judgement"]
    shown = next(m["content"] for m in judged[-1]["messages"] if m["role"] == "user")
    assert PHONE_ROWS[0] in shown and PHONE_ROWS[1] not in shown  # offered only what the attribute rule admits
    assert sorted(stored(space_a)) == sorted(PHONE_ROWS[1:])


def test_a_forget_verdict_with_ids_that_were_not_offered_deletes_nothing(client_a, space_a, hostile):
    for row in PHONE_ROWS:
        turn(client_a, space_a, row)
    hostile.modes["forget_judgement"] = "not_offered"  # a real request, quoted, with an id never offered
    body = turn(client_a, space_a, "Please forget my phone number.")
    assert body["forgotten"] == []
    assert sorted(stored(space_a)) == sorted(PHONE_ROWS)


@pytest.mark.parametrize(
    "mode, expected_how, expected_key",
    [
        ("honest", "summary", "The invoice export fails every Monday. The Leeds warehouse reported it."),
        ("ungrounded", "extractive", None),
        ("half_grounded", "summary", "The invoice export fails every Monday."),
        ("mistyped", "extractive", None),
    ],
)
def test_a_model_summary_becomes_a_search_key_only_where_the_text_supports_it(
    hostile, mode, expected_how, expected_key
):
    from memory.shared.search_keys import compress

    text = "The invoice export fails every Monday. The Leeds warehouse reported it. " + "Log line ok. " * 100
    hostile.modes["summary"] = mode
    key, how = compress(text)
    assert how == expected_how
    if expected_key is not None:
        assert key == expected_key
    assert "9000" not in key and "refund" not in key


def test_a_model_that_calls_a_lasting_fact_a_task_cannot_make_it_expire(client_a, space_a, hostile):
    # A task expires with its session; the model's kind alone would delete the customer's diet with it.
    hostile.modes["memory_entries"] = "all_tasks"
    turn(client_a, space_a, "I have to avoid gluten, I'm celiac. I still need to return the blue jacket by Friday.")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        kinds = {m.content: m.kind for m in Memory.objects.filter(space=space_a).exclude(kind="topic")}
    assert kinds == {
        "I have to avoid gluten, I'm celiac.": "fact",
        "I still need to return the blue jacket by Friday.": "task",
    }
