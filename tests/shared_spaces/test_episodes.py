"""Episodic and escalation memory in shared spaces, through the API, against the real database."""

from __future__ import annotations

import base64

import pytest

from memory.models import DeletionAudit, Episode, EpisodeKey
from tenants import scope
from tenants.api_keys import issue_api_key
from tests.conftest import api_client, make_space

pytestmark = pytest.mark.django_db(transaction=False)

REFUND = "The customer asks for a refund because the parcel arrived damaged"
ADDRESS = "The customer wants to change the delivery address of an order"
WEATHER = "What will the weather be like in Lisbon this weekend?"


@pytest.fixture
def shared_a(tenant_a):
    return make_space(tenant_a, "support-agents", kind="shared")


def episodes_url(space="support-agents", suffix=""):
    return f"/api/v1/spaces/{space}/episodes{suffix}"


def add_episode(client, inputs, *, output="ok", outcome="resolved", feedback=None, expect=201, **extra):
    body = {"inputs": inputs, "output": output, "outcome": outcome, **extra}
    if feedback:
        body["feedback"] = feedback
    response = client.post(episodes_url(), body, format="json")
    assert response.status_code == expect, response.json()
    return response.json()


def stored_episodes(space):
    with scope.tenant_scope(space.tenant_id, space):
        return list(Episode.objects.filter(space=space).order_by("created_at"))


def test_an_episode_is_stored_encrypted_with_its_search_keys(client_a, shared_a):
    body = add_episode(client_a, {"question": REFUND, "order_total": 129}, output="Refund issued", agent="triage")
    assert body["action"] == "created"
    episode = body["episode"]
    assert episode["inputs"] == {"question": REFUND, "order_total": 129}
    assert episode["search_keys"] == {"question": REFUND, "order_total": "129"}
    assert episode["agent"] == "triage"
    [row] = stored_episodes(shared_a)
    with scope.tenant_scope(shared_a.tenant_id, shared_a):
        assert EpisodeKey.objects.filter(episode=row).count() == 2
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memory_episode WHERE position(%s in encode(inputs, 'escape')) > 0", ["parcel"]
        )
        # RLS hides the rows outside a scope, so look with the tenant's scope set.
    with scope.tenant_scope(shared_a.tenant_id, shared_a), connection.cursor() as cursor:
        cursor.execute("SELECT inputs, output FROM memory_episode")
        raw_inputs, raw_output = cursor.fetchone()
        assert b"parcel" not in bytes(raw_inputs) and b"Refund" not in bytes(raw_output)


def test_episodic_recall_ranks_by_the_weighted_arguments(client_a, shared_a):
    # Two past cases: one shares the question, the other the product.
    add_episode(client_a, {"question": REFUND, "product": "garden chair"}, output="A")
    add_episode(client_a, {"question": ADDRESS, "product": "espresso machine"}, output="B")
    query = {"question": "The customer asks for a refund: the parcel arrived broken", "product": "espresso machine"}

    def ranked(weights):
        client_a.patch("/api/v1/spaces/support-agents", {"settings": {"episode_search_keys": weights,
                       "episode_min_score": 0.0}}, format="json")  # fmt: skip
        response = client_a.post(episodes_url(suffix="/recall"), {"inputs": query}, format="json")
        assert response.status_code == 200, response.json()
        return response.json()

    by_question = ranked({"question": 5, "product": 1})
    assert [e["output"] for e in by_question["episodes"]] == ["A", "B"]
    assert by_question["search_keys"] == {"question": 5.0, "product": 1.0}
    by_product = ranked({"question": 1, "product": 5})
    assert [e["output"] for e in by_product["episodes"]] == ["B", "A"]
    first = by_product["episodes"][0]
    assert set(first["arguments"]) == {"question", "product"}
    assert first["score"] > by_product["episodes"][1]["score"]


def test_an_agent_can_override_the_search_keys_for_itself(client_a, shared_a):
    add_episode(client_a, {"question": REFUND, "product": "garden chair"}, output="A")
    add_episode(client_a, {"question": ADDRESS, "product": "espresso machine"}, output="B")
    client_a.patch("/api/v1/spaces/support-agents", {"settings": {
        "episode_search_keys": {"question": 1}, "agent_search_keys": {"shop-bot": {"product": 1}},
        "episode_min_score": 0.0}}, format="json")  # fmt: skip
    query = {"question": "The customer asks for a refund: the parcel arrived broken", "product": "espresso machine"}
    default = client_a.post(episodes_url(suffix="/recall"), {"inputs": query}, format="json").json()
    shop_bot = client_a.post(
        episodes_url(suffix="/recall"), {"inputs": query, "agent": "shop-bot"}, format="json"
    ).json()
    assert default["search_keys"] == {"question": 1.0} and default["episodes"][0]["output"] == "A"
    assert shop_bot["search_keys"] == {"product": 1.0} and shop_bot["episodes"][0]["output"] == "B"


def test_recall_is_empty_when_nothing_clears_the_threshold(client_a, shared_a):
    add_episode(client_a, {"question": REFUND})
    response = client_a.post(episodes_url(suffix="/recall"), {"inputs": {"question": WEATHER}}, format="json")
    assert response.status_code == 200
    assert response.json()["episodes"] == []
    assert response.json()["threshold"] == 0.70


def test_an_escalation_with_a_near_identical_past_case_applies_it(client_a, shared_a):
    resolved = client_a.post(
        "/api/v1/spaces/support-agents/escalations/resolve",
        {"input": REFUND, "resolution_comment": "Refund without asking for photos under 50 EUR", "outcome": "refund"},
        format="json",
    )
    assert resolved.status_code == 201, resolved.json()
    match = client_a.post(
        "/api/v1/spaces/support-agents/escalations/match",
        {"input": "The customer asks for a refund because the parcel arrived damaged."},
        format="json",
    ).json()
    assert match["apply"] is True
    assert match["outcome"] == "refund"
    assert match["resolution_comment"] == "Refund without asking for photos under 50 EUR"
    assert match["episode_id"] == resolved.json()["episode"]["id"]
    assert match["score"] >= match["threshold"]
    assert "episodes" not in match and "candidates" not in match


def test_an_unrelated_escalation_does_not_apply_a_past_case(client_a, shared_a):
    client_a.post(
        "/api/v1/spaces/support-agents/escalations/resolve",
        {"input": REFUND, "resolution_comment": "Refund", "outcome": "refund"},
        format="json",
    )
    match = client_a.post("/api/v1/spaces/support-agents/escalations/match", {"input": ADDRESS}, format="json").json()
    assert match == {"apply": False, "best_score": match["best_score"], "threshold": 0.9}
    assert match["best_score"] < 0.9
    empty = make_space(shared_a.tenant, "empty-shared", kind="shared")
    none = client_a.post(f"/api/v1/spaces/{empty.external_id}/escalations/match", {"input": REFUND}, format="json")
    assert none.json() == {"apply": False, "best_score": None, "threshold": 0.9}


def test_a_near_duplicate_is_answered_409_with_the_duplicates_and_nothing_is_stored(client_a, shared_a):
    first = add_episode(client_a, {"question": REFUND}, output="Refund issued")
    conflict = client_a.post(episodes_url(), {"inputs": {"question": REFUND + "."}, "output": "x", "outcome": "y"},
                             format="json")  # fmt: skip
    assert conflict.status_code == 409
    error = conflict.json()["error"]
    assert error["code"] == "duplicate_found"
    assert [d["id"] for d in error["details"]["duplicates"]] == [first["episode"]["id"]]
    assert error["details"]["choices"] == ["replace", "merge", "add"]
    assert len(stored_episodes(shared_a)) == 1


def test_on_duplicate_replace_deletes_the_chosen_item_and_stores_the_new_one(client_a, shared_a):
    first = add_episode(client_a, {"question": REFUND}, output="old")
    body = add_episode(client_a, {"question": REFUND + "."}, output="new", on_duplicate="replace",
                       target_id=first["episode"]["id"])  # fmt: skip
    assert body["action"] == "replaced" and body["replaced_id"] == first["episode"]["id"]
    assert [e.output for e in stored_episodes(shared_a)] == ["new"]
    with scope.tenant_scope(shared_a.tenant_id):
        audit = DeletionAudit.objects.get(memory_id=first["episode"]["id"])
    assert audit.memory_kind == "episode"


def test_on_duplicate_merge_combines_feedback_comments(client_a, shared_a):
    first = add_episode(client_a, {"question": REFUND}, feedback={"sentiment": "positive", "comment": "Fast."})
    body = add_episode(client_a, {"question": REFUND + "."}, feedback={"sentiment": "positive", "comment": "Polite."},
                       on_duplicate="merge", expect=200)  # fmt: skip
    assert body["action"] == "merged" and body["episode"]["id"] == first["episode"]["id"]
    assert body["episode"]["feedback"] == {"sentiment": "positive", "comment": "Fast.\n\nPolite."}
    assert len(stored_episodes(shared_a)) == 1


def test_merge_with_conflicting_sentiments_needs_the_request_to_say_which_wins(client_a, shared_a):
    add_episode(client_a, {"question": REFUND}, feedback={"sentiment": "positive", "comment": "Worked."})
    refused = client_a.post(episodes_url(), {"inputs": {"question": REFUND + "."}, "output": "x", "outcome": "y",
                            "feedback": {"sentiment": "negative", "comment": "Customer complained."},
                            "on_duplicate": "merge"}, format="json")  # fmt: skip
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "conflicting_feedback"
    [unchanged] = stored_episodes(shared_a)
    assert unchanged.sentiment == "positive" and unchanged.feedback_comment == "Worked."
    body = add_episode(client_a, {"question": REFUND + "."},
                       feedback={"sentiment": "negative", "comment": "Customer complained."},
                       on_duplicate="merge", sentiment_wins="new", expect=200)  # fmt: skip
    assert body["episode"]["feedback"] == {"sentiment": "negative", "comment": "Worked.\n\nCustomer complained."}
    kept = add_episode(client_a, {"question": REFUND + "!"}, feedback={"sentiment": "positive"},
                       on_duplicate="merge", sentiment_wins="existing", expect=200)  # fmt: skip
    assert kept["episode"]["feedback"]["sentiment"] == "negative"


def test_on_duplicate_add_stores_beside_them(client_a, shared_a):
    add_episode(client_a, {"question": REFUND})
    body = add_episode(client_a, {"question": REFUND + "."}, on_duplicate="add")
    assert body["action"] == "added" and len(body["duplicates"]) == 1
    assert len(stored_episodes(shared_a)) == 2


def test_resolution_duplicates_merge_their_comments_and_outcome_conflicts_need_a_winner(client_a, shared_a):
    url = "/api/v1/spaces/support-agents/escalations/resolve"
    client_a.post(url, {"input": REFUND, "resolution_comment": "Refund it.", "outcome": "refund"}, format="json")
    again = {"input": REFUND + ".", "resolution_comment": "Offer a voucher.", "outcome": "voucher"}
    assert client_a.post(url, again, format="json").status_code == 409
    assert client_a.post(url, {**again, "on_duplicate": "merge"}, format="json").json()["error"]["code"] == (
        "conflicting_feedback"
    )
    merged = client_a.post(url, {**again, "on_duplicate": "merge", "sentiment_wins": "new"}, format="json")
    assert merged.status_code == 200
    assert merged.json()["episode"]["outcome"] == "voucher"
    assert merged.json()["episode"]["resolution_comment"] == "Refund it.\n\nOffer a voucher."


def test_inputs_cannot_be_edited_but_feedback_can(client_a, shared_a):
    episode_id = add_episode(client_a, {"question": REFUND})["episode"]["id"]
    url = episodes_url(suffix=f"/{episode_id}")
    refused = client_a.patch(url, {"inputs": {"question": "changed"}}, format="json")
    assert refused.status_code == 400 and "delete it and add a new one" in str(refused.json())
    changed = client_a.patch(url, {"feedback": {"sentiment": "negative", "comment": "Wrong call"}}, format="json")
    assert changed.status_code == 200
    assert changed.json()["feedback"] == {"sentiment": "negative", "comment": "Wrong call"}
    assert changed.json()["inputs"] == {"question": REFUND}
    assert client_a.delete(url).status_code == 204
    assert client_a.get(url).status_code == 404


def test_a_long_text_input_is_compressed_to_key_sentences_and_the_key_is_shown(client_a, shared_a):
    filler = " ".join(f"Line {i} of the log says the nightly job finished without anything unusual." for i in range(40))
    long_text = (
        f"The invoice export to the accounting system fails with a timeout every Monday. {filler} "
        "The invoice export timeout started after the accounting system upgrade."
    )
    episode = add_episode(client_a, {"report": long_text})["episode"]
    key = episode["search_keys"]["report"]
    assert len(key) <= 600 < len(long_text)
    assert "invoice export" in key
    assert episode["inputs"]["report"] == long_text


def test_a_file_input_becomes_a_text_summary_key(client_a, shared_a):
    text = "Ticket export\nThe customer cannot download the March invoice as PDF."
    file_input = {"filename": "ticket.txt", "content_type": "text/plain",
                  "data_base64": base64.b64encode(text.encode()).decode()}  # fmt: skip
    episode = add_episode(client_a, {"ticket": file_input})["episode"]
    assert episode["inputs"]["ticket"]["file"] == "ticket.txt"
    assert "data_base64" not in episode["inputs"]["ticket"]
    assert "March invoice" in episode["search_keys"]["ticket"]
    unreadable = client_a.post(episodes_url(), {"inputs": {"ticket": {**file_input, "content_type": "image/png"}},
                               "output": "x", "outcome": "y"}, format="json")  # fmt: skip
    assert unreadable.status_code == 400 and "cannot be read" in str(unreadable.json())


def test_a_file_can_be_uploaded_as_multipart(client_a, shared_a):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("notes.md", b"# Notes\nThe driver could not find the loading dock.", "text/markdown")
    response = client_a.post(
        episodes_url(),
        {"inputs": '{"channel": "email"}', "inputs.notes": upload, "output": "Sent a map", "outcome": "resolved"},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    assert "loading dock" in response.json()["episode"]["search_keys"]["notes"]
    assert response.json()["episode"]["inputs"]["channel"] == "email"


def test_episodes_need_a_shared_space(client_a, space_a):
    response = client_a.post("/api/v1/spaces/customer-1/episodes", {"inputs": {"q": "x"}, "output": "", "outcome": ""},
                             format="json")  # fmt: skip
    assert response.status_code == 400 and response.json()["error"]["code"] == "wrong_space_kind"


def test_a_key_bound_to_an_agent_cannot_speak_for_another(tenant_a, shared_a):
    key = issue_api_key(tenant=tenant_a, name="bot", scopes=["turns"], agent="triage")
    client = api_client(key.secret)
    assert add_episode(client, {"question": REFUND})["episode"]["agent"] == "triage"
    response = client.post(episodes_url(suffix="/recall"), {"inputs": {"question": REFUND}, "agent": "other"},
                           format="json")  # fmt: skip
    assert response.status_code == 403


def test_another_tenant_cannot_reach_a_shared_space(client_a, client_b, shared_a, tenant_b):
    episode_id = add_episode(client_a, {"question": REFUND})["episode"]["id"]
    client_a.post("/api/v1/spaces/support-agents/escalations/resolve",
                  {"input": REFUND, "resolution_comment": "r", "outcome": "o"}, format="json")  # fmt: skip
    for method, suffix, body in [
        ("get", "", None),
        ("post", "", {"inputs": {"question": REFUND}, "output": "x", "outcome": "y"}),
        ("post", "/recall", {"inputs": {"question": REFUND}}),
        ("get", f"/{episode_id}", None),
        ("patch", f"/{episode_id}", {"outcome": "hijacked"}),
        ("delete", f"/{episode_id}", None),
    ]:
        response = getattr(client_b, method)(episodes_url(suffix=suffix), body, format="json")
        assert response.status_code == 404, (method, suffix, response.status_code)
    for path in ("escalations/match", "escalations/resolve"):
        body = {"input": REFUND, "resolution_comment": "r", "outcome": "o"}
        response = client_b.post(f"/api/v1/spaces/support-agents/{path}", body, format="json")
        assert response.status_code == 404
    # Bob's own shared space with the same external id sees none of Alice's cases.
    make_space(tenant_b, "support-agents", kind="shared")
    match = client_b.post("/api/v1/spaces/support-agents/escalations/match", {"input": REFUND}, format="json").json()
    assert match["apply"] is False and match["best_score"] is None
    assert client_b.get(episodes_url()).json()["count"] == 0
    [kept] = [e for e in stored_episodes(shared_a) if e.kind == "episode"]
    assert kept.outcome == "resolved"


def test_reembed_also_rewrites_episode_search_keys(client_a, shared_a, capsys):
    from django.core.management import call_command

    add_episode(client_a, {"question": REFUND, "product": "chair"})
    with scope.tenant_scope(shared_a.tenant_id, shared_a):
        EpisodeKey.objects.update(embedding=[0.0] * 383 + [1.0])
    call_command("reembed", "--tenant", "alice")
    assert "re-embedded 2/2" in capsys.readouterr().out
    with scope.tenant_scope(shared_a.tenant_id, shared_a):
        assert all(abs(float(k.embedding[-1]) - 1.0) > 0.01 for k in EpisodeKey.objects.all())
    match = client_a.post(episodes_url(suffix="/recall"), {"inputs": {"question": REFUND}}, format="json").json()
    assert match["episodes"][0]["score"] > 0.95


def test_with_a_chat_model_a_long_input_is_summarised_and_a_model_outage_falls_back(client_a, shared_a, openai_engines):
    long_text = "The invoice export fails every Monday. " + "The nightly job log is unremarkable. " * 60
    openai_engines.scripts["summary"] = [{"summary": "Invoice export fails on Mondays."}]
    episode = add_episode(client_a, {"report": long_text})["episode"]
    assert episode["search_keys"]["report"] == "Invoice export fails on Mondays."
    assert long_text[:200] in openai_engines.user_messages()[-1]
    openai_engines.down = True
    fallback = add_episode(client_a, {"report": "A different case entirely. " + long_text})["episode"]
    assert "invoice export" in fallback["search_keys"]["report"].lower()
    assert len(fallback["search_keys"]["report"]) <= 600
