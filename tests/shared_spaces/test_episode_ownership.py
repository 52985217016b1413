"""A key bound to an agent changes, merges into or replaces only its own agent's cases; touching
another agent's case needs the admin scope."""

from __future__ import annotations

import pytest

from memory.models import DeletionAudit, Episode
from tenants import scope
from tenants.api_keys import issue_api_key
from tests.conftest import api_client, make_space

pytestmark = pytest.mark.django_db

REFUND = "The customer asks for a refund because the parcel arrived damaged"
ESCALATION = "The courier lost the parcel and the customer wants compensation"
URL = "/api/v1/spaces/support-agents"


@pytest.fixture
def shared_a(tenant_a):
    return make_space(tenant_a, "support-agents", kind="shared")


def agent_client(tenant, agent, scopes=("turns",)):
    return api_client(
        issue_api_key(tenant=tenant, name=f"{agent or 'unbound'} key", scopes=list(scopes), agent=agent).secret
    )


@pytest.fixture
def triage(tenant_a, shared_a):
    return agent_client(tenant_a, "triage")


@pytest.fixture
def billing(tenant_a, shared_a):
    return agent_client(tenant_a, "billing")


def add_episode(client, question=REFUND, expect=201, **extra):
    body = {"inputs": {"question": question}, "output": "Refund issued", "outcome": "resolved", **extra}
    response = client.post(f"{URL}/episodes", body, format="json")
    assert response.status_code == expect, response.json()
    return response.json()


def stored(space):
    with scope.tenant_scope(space.tenant_id, space):
        return {str(e.pk): (e.agent, e.output, e.sentiment, e.feedback_comment) for e in Episode.objects.all()}


def test_an_agent_cannot_patch_another_agents_episode(triage, billing, shared_a):
    episode_id = add_episode(triage)["episode"]["id"]
    before = stored(shared_a)
    for body in ({"output": "Refund refused"}, {"feedback": {"sentiment": "negative", "comment": "bad"}}):
        response = billing.patch(f"{URL}/episodes/{episode_id}", body, format="json")
        assert response.status_code == 403 and "admin scope" in response.json()["error"]["message"]
    assert stored(shared_a) == before
    assert triage.patch(f"{URL}/episodes/{episode_id}", {"output": "Refund sent"}, format="json").status_code == 200


def test_an_agent_cannot_replace_or_merge_into_another_agents_case(triage, billing, shared_a):
    episode_id = add_episode(triage, feedback={"sentiment": "positive", "comment": "kept"})["episode"]["id"]
    before = stored(shared_a)
    for choice in ({"on_duplicate": "replace"}, {"on_duplicate": "replace", "target_id": episode_id},
                   {"on_duplicate": "merge", "feedback": {"sentiment": "negative", "comment": "x"},
                    "sentiment_wins": "new"}):  # fmt: skip
        response = billing.post(f"{URL}/episodes", {"inputs": {"question": REFUND + "."}, "output": "No refund",
                                                    "outcome": "refused", **choice}, format="json")  # fmt: skip
        assert response.status_code == 403, response.json()
    assert stored(shared_a) == before
    with scope.tenant_scope(shared_a.tenant_id):
        assert not DeletionAudit.objects.filter(memory_id=episode_id).exists()
    # Adding beside it is still the agent's own business.
    assert add_episode(billing, question=REFUND + ".", on_duplicate="add")["action"] == "added"


def test_an_agent_replaces_its_own_case(triage, shared_a):
    first = add_episode(triage)["episode"]["id"]
    body = add_episode(triage, question=REFUND + ".", on_duplicate="replace", target_id=first)
    assert body["action"] == "replaced" and body["replaced_id"] == first


def test_an_agent_cannot_replace_another_agents_resolution(triage, billing, shared_a):
    resolve = {"input": ESCALATION, "outcome": "Send a voucher", "resolution_comment": "done"}
    assert triage.post(f"{URL}/escalations/resolve", resolve, format="json").status_code == 201
    before = stored(shared_a)
    again = {**resolve, "input": ESCALATION + ".", "outcome": "Refuse", "on_duplicate": "replace"}
    assert billing.post(f"{URL}/escalations/resolve", again, format="json").status_code == 403
    assert stored(shared_a) == before


def test_a_key_bound_to_no_agent_changes_only_cases_without_one(tenant_a, triage, shared_a):
    unbound = agent_client(tenant_a, "")
    owned = add_episode(triage)["episode"]["id"]
    assert unbound.patch(f"{URL}/episodes/{owned}", {"output": "x"}, format="json").status_code == 403
    mine = add_episode(unbound, question="Where is my parcel? It has not arrived.")["episode"]["id"]
    assert unbound.patch(f"{URL}/episodes/{mine}", {"output": "Tracking sent"}, format="json").status_code == 200


def test_the_admin_scope_changes_and_deletes_any_agents_case(tenant_a, triage, shared_a):
    episode_id = add_episode(triage)["episode"]["id"]
    admin = agent_client(tenant_a, "supervisor", scopes=("turns", "admin"))
    assert admin.patch(f"{URL}/episodes/{episode_id}", {"output": "Checked"}, format="json").status_code == 200
    assert add_episode(admin, question=REFUND + ".", on_duplicate="replace")["action"] == "replaced"
    remaining = next(iter(stored(shared_a)))
    assert admin.delete(f"{URL}/episodes/{remaining}").status_code == 204


def test_a_turns_key_cannot_delete_any_case_even_its_own(triage, shared_a):
    episode_id = add_episode(triage)["episode"]["id"]
    assert triage.delete(f"{URL}/episodes/{episode_id}").status_code == 403
    assert episode_id in stored(shared_a)


def test_another_tenants_admin_key_cannot_touch_the_case(triage, client_b, tenant_b, shared_a):
    make_space(tenant_b, "support-agents", kind="shared")
    episode_id = add_episode(triage)["episode"]["id"]
    assert client_b.patch(f"{URL}/episodes/{episode_id}", {"output": "x"}, format="json").status_code == 404
    assert client_b.delete(f"{URL}/episodes/{episode_id}").status_code == 404
    assert episode_id in stored(shared_a)
