"""Shared spaces in the console (test client): cases on the space page, the duplicate dialog, the
playground's episodic and escalation modes, and confirmation of changes that affect agents."""

import pytest

from memory.models import DeletionAudit, Episode, SpaceAgent
from tenants import scope
from tenants.models import SettingsChange
from tests.conftest import make_space
from tests.support.console import login

pytestmark = pytest.mark.django_db
CASE = "Customer was charged twice for the same order"
FIX = "Refund the second charge at once, no approval needed"


@pytest.fixture
def shared(tenant_a):
    return make_space(tenant_a, "agents", kind="shared")


@pytest.fixture
def resolved(client_a, shared):
    body = {"input": CASE, "resolution_comment": FIX, "outcome": "refund", "agent": "billing-bot"}
    assert client_a.post("/api/v1/spaces/agents/escalations/resolve", body, format="json").status_code == 201
    body = {"inputs": {"question": "Where is my parcel?"}, "output": "Sent tracking link", "outcome": "ok",
            "feedback": {"sentiment": "positive", "comment": "quick"}, "agent": "billing-bot"}  # fmt: skip
    assert client_a.post("/api/v1/spaces/agents/episodes", body, format="json").status_code == 201


def cases(shared):
    with scope.tenant_scope(shared.tenant_id, shared):
        return list(Episode.objects.filter(space=shared).order_by("created_at"))


def test_the_space_page_shows_episodes_and_resolutions_and_support_sees_no_text(client, tenant_a, shared, resolved):
    login(client, tenant_a, "operator")
    page = client.get("/console/spaces/agents/").content.decode()
    assert CASE in page and FIX in page and "Sent tracking link" in page and "Where is my parcel?" in page
    assert "Escalation resolutions" in page and "Add a case" in page
    client.logout()
    login(client, tenant_a, "support")
    page = client.get("/console/spaces/agents/").content.decode()
    assert "Escalation resolutions" in page and "billing-bot" in page
    assert CASE not in page and FIX not in page and "Sent tracking link" not in page and "Add a case" not in page


def test_adding_a_duplicate_shows_the_dialog_and_each_choice_works(client, tenant_a, shared, resolved):
    login(client, tenant_a, "operator")
    url = "/console/spaces/agents/episodes/add/"
    form = {"kind": "resolution", "input": CASE + ".", "resolution_comment": "Refund it", "outcome": "refund"}
    dialog = client.post(url, form, HTTP_HX_REQUEST="true")
    assert dialog.status_code == 200
    text = dialog.content.decode()
    assert "Near-duplicates already stored" in text and FIX in text
    assert 'value="replace"' in text and 'value="merge"' in text and 'value="add"' in text
    assert len(cases(shared)) == 2  # nothing stored yet
    [existing] = [c for c in cases(shared) if c.kind == "resolution"]

    merged = client.post(url, {**form, "on_duplicate": "merge", "target_id": existing.pk}, HTTP_HX_REQUEST="true")
    assert merged.status_code == 204 and merged["HX-Refresh"] == "true"
    [resolution] = [c for c in cases(shared) if c.kind == "resolution"]
    assert resolution.resolution_comment == f"{FIX}\n\nRefund it"

    conflict = client.post(url, {**form, "outcome": "voucher", "on_duplicate": "merge"}, HTTP_HX_REQUEST="true")
    assert (
        "The feedback disagrees" in conflict.content.decode() and 'name="sentiment_wins"' in conflict.content.decode()
    )
    client.post(url, {**form, "outcome": "voucher", "on_duplicate": "merge", "sentiment_wins": "new"},
                HTTP_HX_REQUEST="true")  # fmt: skip
    [resolution] = [c for c in cases(shared) if c.kind == "resolution"]
    assert resolution.outcome == "voucher"

    assert client.post(url, {**form, "on_duplicate": "add"}, HTTP_HX_REQUEST="true").status_code == 204
    assert len([c for c in cases(shared) if c.kind == "resolution"]) == 2
    replaced = client.post(url, {**form, "on_duplicate": "replace", "target_id": resolution.pk}, HTTP_HX_REQUEST="true")
    assert replaced.status_code == 204
    assert resolution.pk not in {c.pk for c in cases(shared)}
    with scope.tenant_scope(tenant_a):
        row = DeletionAudit.objects.get(memory_id=resolution.pk)
    assert (row.cause, row.actor) == ("operator", "operator operator")


def test_support_cannot_add_or_delete_cases(client, tenant_a, shared, resolved):
    login(client, tenant_a, "support")
    form = {"kind": "resolution", "input": "x", "resolution_comment": "y", "outcome": "z"}
    assert client.post("/console/spaces/agents/episodes/add/", form).status_code == 403
    episode = cases(shared)[0]
    assert client.post(f"/console/spaces/agents/episodes/{episode.pk}/delete/").status_code == 403
    assert len(cases(shared)) == 2


def test_an_operator_deletes_a_case_through_the_audit(client, tenant_a, shared, resolved):
    login(client, tenant_a, "operator")
    episode = cases(shared)[0]
    assert client.post(f"/console/spaces/agents/episodes/{episode.pk}/delete/").status_code == 302
    assert episode.pk not in {c.pk for c in cases(shared)}
    with scope.tenant_scope(tenant_a):
        row = DeletionAudit.objects.get(memory_id=episode.pk)
    assert row.cause == "operator" and row.actor == "operator operator"


def test_the_playground_matches_episodes_and_escalations_with_scores(client, tenant_a, shared, resolved):
    login(client, tenant_a, "operator")
    page = client.get("/console/playground/", {"space": "agents", "mode": "escalation", "message": CASE + "."})
    text = page.content.decode()
    assert "A past resolution applies" in text and FIX in text and "threshold 0.9" in text
    page = client.get("/console/playground/", {"space": "agents", "mode": "escalation",
                                               "message": "How do I reset my password?"})  # fmt: skip
    assert "No past resolution applies" in page.content.decode()
    page = client.get("/console/playground/", {"space": "agents", "mode": "episodes",
                                               "message": "question: Where is my parcel now?"})  # fmt: skip
    text = page.content.decode()
    assert 'id="episode-candidates"' in text and "Sent tracking link" in text and "question×1.0" in text
    with scope.tenant_scope(tenant_a, shared):
        assert not SpaceAgent.objects.exclude(agent="billing-bot").exists()  # the playground never writes
    bad = client.get("/console/playground/", {"space": "agents", "mode": "episodes", "message": "no colon here"})
    assert "name: value" in bad.content.decode()


def test_a_matching_change_lists_the_affected_agents_and_waits_for_confirmation(client, tenant_a, shared, resolved):
    login(client, tenant_a, "operator")
    url = "/console/spaces/agents/thresholds/"
    page = client.get(url).content.decode()
    assert 'name="escalation_min_score"' in page and 'name="episode_search_keys"' in page
    form = {"flags_present": "1", "shared_present": "1", "hybrid": "on", "episode_hybrid": "on",
            "escalation_min_score": "0.95", "episode_search_keys": "", "agent_search_keys": ""}  # fmt: skip
    pending = client.post(url, form)
    text = pending.content.decode()
    assert pending.status_code == 200 and "This change affects 1 agent" in text and "billing-bot" in text
    with scope.tenant_scope(tenant_a):
        shared.refresh_from_db()
    assert "escalation_min_score" not in shared.settings
    saved = client.post(url, {**form, "confirmed": "1"})
    assert saved.status_code == 302
    with scope.tenant_scope(tenant_a):
        shared.refresh_from_db()
    assert shared.settings["escalation_min_score"] == 0.95
    with scope.tenant_scope(tenant_a):
        change = SettingsChange.objects.get(setting="escalation_min_score")
    assert (change.old_value, change.new_value, change.actor) == (0.9, 0.95, "operator operator")
    bad = client.post(url, {**form, "episode_search_keys": "{not json"})
    assert "Must be a JSON object" in bad.content.decode()


def test_another_tenants_operator_cannot_reach_the_shared_space(client, tenant_b, shared, resolved):
    login(client, tenant_b, "operator")
    assert client.get("/console/spaces/agents/").status_code == 404
    form = {"kind": "resolution", "input": CASE, "resolution_comment": "y", "outcome": "z"}
    assert client.post("/console/spaces/agents/episodes/add/", form).status_code == 404
    page = client.get("/console/playground/", {"space": "agents", "mode": "escalation", "message": CASE})
    assert page.status_code == 404
