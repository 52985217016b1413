"""The write half of the turn loop through the API: extract from the customer only, ground, merge, supersede."""

import pytest
from django.urls import reverse

from memory.models import Memory, Message, Turn
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
        ("topic", "vehicle"),
    ]
    assert active_memories(space_a, "fact") == [("fact", "We run a fleet of four vans.", 1, 0.6)]


def reply_url(space, turn_id):
    return reverse("turn-reply", args=[space.external_id, turn_id])


def test_the_agents_speculation_never_becomes_a_fact(client_a, space_a):
    first = post_turn(client_a, space_a, "I need help with an order for my shop.").json()
    client_a.post(reply_url(space_a, first["turn_id"]), {"content": "So your company makes furniture?"}, format="json")
    post_turn(client_a, space_a, "Yes, that's right.", session_id=first["session_id"])
    contents = " ".join(content for _, content, _, _ in active_memories(space_a))
    assert "furniture" not in contents.lower()
    with scope.tenant_scope(space_a.tenant_id, space_a):
        reply = Message.objects.get(role="agent")
        assert reply.session.external_id == first["session_id"]


def test_the_agents_speculation_returned_by_the_model_as_a_fact_is_rejected(client_a, space_a, openai_engines):
    openai_engines.replies = [
        {
            "entries": [
                {
                    "kind": "fact",
                    "content": "The customer's company makes furniture.",
                    "topic": "business",
                    "importance": 0.8,
                    "keywords": ["furniture"],
                    "quote": "makes furniture",
                    "event_days_ago": None,
                },
                {
                    "kind": "fact",
                    "content": "The company makes furniture.",
                    "topic": "business",
                    "importance": 0.8,
                    "keywords": ["furniture"],
                    "quote": "Yes, that's right",
                    "event_days_ago": None,
                },
            ]
        }
    ]
    body = post_turn(client_a, space_a, "Yes, that's right.").json()
    assert body["status"] == "done"
    assert body["created"] == []
    assert [r["content"] for r in body["rejected"]] == [
        "The customer's company makes furniture.",
        "The company makes furniture.",
    ]
    assert "quote is not in the customer's message" in body["rejected"][0]["reason"]
    assert "words are in the customer's message" in body["rejected"][1]["reason"]
    # The model was only ever shown the customer's words.
    assert all("furniture" not in text for text in openai_engines.user_messages())


def test_the_openai_engines_write_grounded_entries(client_a, space_a, openai_engines):
    openai_engines.replies = [
        {
            "entries": [
                {
                    "kind": "fact",
                    "content": "We run a fleet of four vans.",
                    "topic": "fleet",
                    "importance": 0.7,
                    "keywords": ["fleet", "vans"],
                    "quote": "We run a fleet of four vans",
                    "event_days_ago": None,
                },
                {
                    "kind": "event",
                    "content": "Our van broke down yesterday.",
                    "topic": "breakdown",
                    "importance": 0.6,
                    "keywords": ["van"],
                    "quote": "Our van broke down yesterday",
                    "event_days_ago": 1,
                },
            ]
        }
    ]
    body = post_turn(
        client_a, space_a, "We run a fleet of four vans. Our van broke down yesterday.", at="2026-03-10T10:00:00Z"
    ).json()
    assert [(m["kind"], m["content"]) for m in body["created"]] == [
        ("fact", "We run a fleet of four vans."),
        ("event", "Our van broke down yesterday."),
    ]
    listed = client_a.get(reverse("memory-list", args=[space_a.external_id]), {"kind": "event"}).json()
    assert listed["results"][0]["event_at"].startswith("2026-03-09")


def test_a_message_sent_twice_is_one_message_and_one_set_of_entries(client_a, space_a):
    first = post_turn(client_a, space_a, "We run a fleet of four vans.", session_id="s1")
    second = post_turn(client_a, space_a, "We run a fleet of four vans.", session_id="s1")
    assert first.status_code == 201 and second.status_code == 200
    assert first.json()["turn_id"] == second.json()["turn_id"]
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert Message.objects.count() == 1
        assert Turn.objects.count() == 1
    assert len(active_memories(space_a)) == 2
    assert active_memories(space_a, "fact")[0][2] == 1


def test_a_callers_message_id_makes_a_replay_idempotent(client_a, space_a):
    one = post_turn(client_a, space_a, "We run four vans.", message_id="m-1", wait=False).json()
    two = post_turn(client_a, space_a, "We run four vans (resent).", message_id="m-1", wait=False).json()
    assert one["turn_id"] == two["turn_id"]


def test_one_fact_restated_in_five_sessions_is_one_row(client_a, space_a):
    phrasings = [
        ("We run a fleet of four vans.", "2026-01-01T10:00:00Z"),
        ("We run a fleet of four vans!", "2026-02-01T10:00:00Z"),
        ("We always run a fleet of four vans.", "2026-03-01T10:00:00Z"),
        ("Just so you know, we run a fleet of four vans.", "2026-04-01T10:00:00Z"),
        ("We run a fleet of four vans, by the way.", "2026-05-01T10:00:00Z"),
    ]
    for index, (text, at) in enumerate(phrasings):
        post_turn(client_a, space_a, text, session_id=f"session-{index}", at=at)
    with scope.tenant_scope(space_a.tenant_id, space_a):
        facts = list(Memory.objects.filter(kind="fact"))
        assert len(facts) == 1
        fact = facts[0]
        assert fact.mention_count == 5
        assert fact.source_session.external_id == "session-4"
        # A restatement that adds nothing keeps the established wording (a merge never rewrites silently).
        assert fact.content == "We run a fleet of four vans."
        assert fact.importance == 0.85  # the highest seen: "always" marked it a hard constraint once
        topic = Memory.objects.get(kind="topic")
        assert topic.mention_count == 5


def test_importance_only_goes_up_on_merge(client_a, space_a):
    post_turn(client_a, space_a, "We never deliver on Sundays.", session_id="a")
    post_turn(client_a, space_a, "We don't deliver on Sundays.", session_id="b")
    [(kind, content, mentions, importance)] = active_memories(space_a, "fact")
    assert (content, mentions) == ("We never deliver on Sundays.", 2)
    assert importance == 0.85


def test_a_newer_statement_supersedes_the_old_one_and_keeps_it_as_history(client_a, space_a):
    post_turn(client_a, space_a, "Our renewal is in May.", session_id="s1")
    body = post_turn(client_a, space_a, "The renewal moved to June.", session_id="s2").json()
    assert len(body["superseded"]) == 1
    facts = client_a.get(reverse("memory-list", args=[space_a.external_id]), {"kind": "fact"}).json()["results"]
    assert [f["content"] for f in facts] == ["The renewal moved to June."]
    history = client_a.get(reverse("memory-history", args=[space_a.external_id, facts[0]["id"]])).json()
    assert [h["content"] for h in history] == ["The renewal moved to June.", "Our renewal is in May."]
    assert history[1]["superseded_by"] == facts[0]["id"]
    everything = client_a.get(
        reverse("memory-list", args=[space_a.external_id]), {"kind": "fact", "include_superseded": "true"}
    ).json()
    assert everything["count"] == 2


def test_the_turn_record_says_what_happened(client_a, space_a):
    turn = post_turn(client_a, space_a, "We run four vans. The weather is nice.", wait=False).json()
    assert turn["status"] == "queued"
    from memory.turns.pipeline import run_turn

    assert run_turn(tenant_id=space_a.tenant_id, space_id=space_a.id, turn_id=turn["turn_id"]) == "done"
    detail = client_a.get(reverse("turn-detail", args=[turn["turn_id"]])).json()
    assert detail["status"] == "done"
    assert [m["content"] for m in detail["created"]] == ["We run four vans.", "vehicle"]
    assert detail["error"] == ""


def test_customer_text_is_not_kept_after_the_turn_unless_transcripts_are_kept(client_a, space_a):
    post_turn(client_a, space_a, "We run four vans.")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert Message.objects.get().content is None
    client_a.patch(
        reverse("space-detail", args=[space_a.external_id]), {"settings": {"keep_transcripts": True}}, format="json"
    )
    post_turn(client_a, space_a, "We also have two trucks.")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert Message.objects.exclude(content=None).count() == 1


def test_an_unknown_space_is_a_404_unless_asked_to_create_it(client_a, tenant_a):
    from tenants.models import Space

    url = reverse("turn-create", args=["new-customer"])
    assert client_a.post(url, {"message": "We run four vans."}, format="json").status_code == 404
    response = client_a.post(url, {"message": "We run four vans.", "create_space": True}, format="json")
    assert response.status_code == 201
    with scope.tenant_scope(tenant_a):
        assert Space.objects.filter(external_id="new-customer").exists()


@pytest.mark.parametrize(
    "body, status, field",
    [
        ({"message": ""}, 400, "message"),
        ({"message": "   "}, 400, "message"),
        ({}, 400, "message"),
        ({"message": 42}, 400, "message"),
        ({"message": ["a list"]}, 400, "message"),
        ({"message": "x" * (33 * 1024)}, 413, None),
        ({"message": "ok", "session_id": "bad id"}, 400, "session_id"),
        ({"message": "ok", "at": "yesterday"}, 400, "at"),
    ],
)
def test_bad_turn_input_is_a_clear_error_and_writes_nothing(client_a, space_a, body, status, field):
    response = client_a.post(reverse("turn-create", args=[space_a.external_id]), body, format="json")
    assert response.status_code == status, response.content
    if field:
        assert field in response.json()["error"]["details"]
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert not Message.objects.exists() and not Turn.objects.exists()


def test_a_transcript_is_ingested_idempotently_and_agent_lines_are_never_mined(client_a, space_a):
    url = reverse("transcript-ingest", args=[space_a.external_id]) + "?wait=true"
    transcript = {
        "session_id": "chat-7",
        "messages": [
            {"role": "customer", "content": "Hello! We run a fleet of four vans."},
            {"role": "agent", "content": "Great, so you make furniture deliveries?"},
            {"role": "customer", "content": "Our renewal is in May."},
        ],
    }
    first = client_a.post(url, transcript, format="json")
    assert first.status_code == 201, first.content
    assert [m["content"] for m in first.json()["created"] if m["kind"] == "fact"] == [
        "We run a fleet of four vans.",
        "Our renewal is in May.",
    ]
    again = client_a.post(url, transcript, format="json")
    assert again.status_code == 200 and again.json()["turn_id"] == first.json()["turn_id"]
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert Message.objects.count() == 3
    assert "furniture" not in str(active_memories(space_a))


def test_a_long_transcript_keeps_every_entry_each_message_gave_and_lists_what_is_over_the_limit(client_a, space_a):
    """The bound is per customer message: a transcript of 30 messages keeps all 30 statements (a bound per
    turn once kept 20 and dropped the rest); one message over the bound lists what it held back."""
    url = reverse("transcript-ingest", args=[space_a.external_id]) + "?wait=true"
    towns = ["Brno", "Olomouc", "Zlín", "Jihlava", "Opava", "Kladno", "Most", "Cheb", "Tábor", "Písek"]
    statements = [f"Our depot number {n} is in {towns[n % 10]} and has {n + 2} vans." for n in range(30)]
    transcript = {"messages": [{"role": "customer", "content": s} for s in statements]}
    body = client_a.post(url, transcript, format="json").json()
    assert body["status"] == "done", body
    assert not [r for r in body["rejected"] if "over the limit" in r["reason"]], body["rejected"]
    facts = {m["content"] for m in body["created"] if m["kind"] == "fact"}
    assert facts == set(statements)

    with scope.tenant_scope(space_a.tenant_id, space_a):
        space_a.settings = {"max_entries_per_message": 2}
        space_a.save(update_fields=["settings"])
    crowded = "I live in Graz. My daughter is called Mia. We have a grey cat."
    body = client_a.post(url, {"messages": [{"role": "customer", "content": crowded}]}, format="json").json()
    assert len([m for m in body["created"] if m["kind"] != "topic"]) <= 2
    over = [r for r in body["rejected"] if r["reason"] == "over the limit of 2 entries per message"]
    assert over, body["rejected"]


def test_a_transcript_with_an_unknown_role_is_a_400(client_a, space_a):
    url = reverse("transcript-ingest", args=[space_a.external_id])
    response = client_a.post(url, {"messages": [{"role": "narrator", "content": "x"}]}, format="json")
    assert response.status_code == 400
    assert "messages" in response.json()["error"]["details"]


def test_memories_can_be_edited_and_deleted_by_an_admin_key(client_a, space_a):
    post_turn(client_a, space_a, "We run a fleet of four vans.")
    fact = client_a.get(reverse("memory-list", args=[space_a.external_id]), {"kind": "fact"}).json()["results"][0]
    url = reverse("memory-detail", args=[space_a.external_id, fact["id"]])
    edited = client_a.patch(url, {"content": "We run a fleet of five vans.", "importance": 0.9}, format="json").json()
    assert (edited["content"], edited["importance"]) == ("We run a fleet of five vans.", 0.9)
    history = client_a.get(url + "/history").json()  # the memory itself first, then earlier versions
    earlier = [(v["content"], v["superseded_reason"]) for v in history[1:]]
    assert earlier == [("We run a fleet of four vans.", "edited")]
    client_a.patch(url, {"importance": 0.4}, format="json")  # importance alone is no new version
    assert len(client_a.get(url + "/history").json()) == len(history)
    assert client_a.delete(url).status_code == 204
    assert client_a.get(url).status_code == 404


def test_another_tenant_reaches_no_turn_or_memory(client_a, client_b, space_a):
    turn = post_turn(client_a, space_a, "We run a fleet of four vans.").json()
    memory_id = turn["created"][0]["id"]
    assert client_b.get(reverse("turn-detail", args=[turn["turn_id"]])).status_code == 404
    assert client_b.get(reverse("memory-list", args=[space_a.external_id])).status_code == 404
    assert client_b.get(reverse("memory-detail", args=[space_a.external_id, memory_id])).status_code == 404
    assert client_b.post(reply_url(space_a, turn["turn_id"]), {"content": "x"}, format="json").status_code == 404


def test_take_turn_is_the_sequence_the_api_runs_forget_check_before_recall_then_the_inline_attempt(space_a):
    """Benchmarks and `make eval` call this function; the turn endpoint is a thin wrapper around it."""
    from memory.turns.sequence import take_turn

    with scope.tenant_scope(space_a.tenant_id, space_a):
        first = take_turn(space=space_a, message="We have four vans.", session_id="a", actor="test", wait=True)
        assert first.turn.status == Turn.Status.DONE and first.receipt.is_new
        assert [m.content for m in Memory.objects.filter(kind="fact")] == ["We have four vans."]

        forgetting = take_turn(
            space=space_a, message="Forget that we have four vans.", session_id="b", actor="test", wait=True
        )
        # Forgotten first, so the same turn's recall cannot hand the forgotten memory back.
        assert [f.content for f in forgetting.forgot.forgotten] == ["We have four vans.", "vehicle"]
        assert forgetting.recalled.hits == []
        assert forgetting.turn.created_ids == []
        assert not Memory.objects.filter(kind="fact").exists()

        retried = take_turn(
            space=space_a, message="Forget that we have four vans.", session_id="b", actor="test", wait=True
        )
        # The same message again is a retry: not judged again, not processed twice.
        assert not retried.receipt.is_new and retried.forgot is None
        assert retried.turn.pk == forgetting.turn.pk
