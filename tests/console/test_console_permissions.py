"""The console through Django's test client: who sees what, and deletions that go through the audit."""

import re

import pytest
from django.urls import reverse

from memory.models import DeletionAudit, Memory
from tenants import scope
from tenants.models import Space
from tenants.space_settings import defaults
from tenants.tenant_admin import create_operator
from tests.support.console import login

pytestmark = pytest.mark.django_db
SECRET_FACT = "Our warehouse code is Zephyr-42."


@pytest.fixture
def remembered(client_a, space_a):
    url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    client_a.post(url, {"message": SECRET_FACT}, format="json")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        return Memory.objects.get(kind="fact")


def test_an_anonymous_visitor_is_sent_to_login(client, space_a):
    for url in ["/console/", "/console/spaces/", f"/console/spaces/{space_a.external_id}/", "/console/deletions/"]:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/console/login/")


def test_the_login_page_logs_a_user_in(client, tenant_a):
    create_operator(tenant=tenant_a, username="olga", password="a-long-password", role="operator")
    page = client.get("/console/login/")
    assert b'name="csrfmiddlewaretoken"' in page.content and b'for="id_username"' in page.content
    response = client.post("/console/login/", {"username": "olga", "password": "a-long-password"})
    assert response.status_code == 302 and response["Location"] == "/console/"
    assert b"Overview" in client.get("/console/").content


def test_an_operator_sees_memory_text_and_can_delete_through_the_audit(client, tenant_a, space_a, remembered):
    login(client, tenant_a, "operator")
    page = client.get(f"/console/spaces/{space_a.external_id}/")
    assert SECRET_FACT.encode() in page.content
    delete_url = f"/console/spaces/{space_a.external_id}/memories/{remembered.id}/delete/"
    assert b"Delete permanently" in client.get(delete_url).content
    assert client.post(delete_url).status_code == 302
    with scope.tenant_scope(tenant_a, space_a):
        assert not Memory.objects.filter(pk=remembered.pk).exists()
    with scope.tenant_scope(tenant_a):
        [row] = DeletionAudit.objects.filter(memory_id=remembered.pk)
    assert row.cause == "operator" and row.actor == "operator operator"


def test_support_sees_metadata_but_no_memory_text_and_cannot_delete(client, tenant_a, space_a, remembered):
    login(client, tenant_a, "support")
    page = client.get(f"/console/spaces/{space_a.external_id}/")
    assert page.status_code == 200
    assert SECRET_FACT.encode() not in page.content and b"Zephyr" not in page.content
    assert b"hidden" in page.content
    delete_url = f"/console/spaces/{space_a.external_id}/memories/{remembered.id}/delete/"
    assert client.get(delete_url).status_code == 403
    assert client.post(delete_url).status_code == 403
    with scope.tenant_scope(tenant_a, space_a):
        assert Memory.objects.filter(pk=remembered.pk).exists()


def test_support_reads_the_deletion_audit_and_checks_a_text(client, client_a, tenant_a, space_a, remembered):
    client_a.delete(reverse("memory-detail", args=[space_a.external_id, remembered.id]))
    login(client, tenant_a, "support")
    page = client.get("/console/deletions/")
    assert page.status_code == 200 and b"api_key" in page.content and b"Zephyr" not in page.content
    checked = client.post("/console/deletions/check/", {"space": space_a.external_id, "text": SECRET_FACT})
    assert b"Yes: deleted" in checked.content
    unknown = client.post("/console/deletions/check/", {"space": space_a.external_id, "text": "Something else."})
    assert b"No deletion of that exact text" in unknown.content


def test_an_operator_cannot_open_the_deletion_audit(client, tenant_a):
    login(client, tenant_a, "operator")
    assert client.get("/console/deletions/").status_code == 403


def test_an_operator_of_another_tenant_gets_404_for_this_tenants_space(client, tenant_b, space_a, remembered):
    login(client, tenant_b, "operator", username="bob")
    assert client.get(f"/console/spaces/{space_a.external_id}/").status_code == 404
    delete_url = f"/console/spaces/{space_a.external_id}/memories/{remembered.id}/delete/"
    assert client.post(delete_url).status_code == 404
    assert space_a.external_id.encode() not in client.get("/console/spaces/").content


def test_the_overview_counts_and_draws_its_chart_on_the_server(client, tenant_a, space_a, remembered):
    login(client, tenant_a, "admin")
    page = client.get("/console/")
    assert page.status_code == 200
    assert b"<svg" in page.content and b"cdn" not in page.content.lower()
    assert b"turns today" in page.content


def test_the_spaces_list_searches_and_paginates(client, tenant_a):
    from tests.conftest import make_space

    for i in range(30):
        make_space(tenant_a, f"cust-{i:02d}")
    login(client, tenant_a, "operator")
    first = client.get("/console/spaces/").content
    assert b"cust-00" in first and b"cust-29" not in first and b"Page 1 of 2" in first
    assert b"cust-29" in client.get("/console/spaces/?page=2").content
    searched = client.get("/console/spaces/?q=cust-1").content
    assert b"cust-15" in searched and b"cust-25" not in searched


def test_thresholds_preview_shows_merges_and_the_histogram_and_never_writes(client, tenant_a, space_a, remembered):
    from tests.conftest import make_space  # noqa: F401

    login(client, tenant_a, "operator")
    page = client.get(f"/console/spaces/{space_a.external_id}/thresholds/")
    assert page.status_code == 200 and b'data-threshold="dedup"' in page.content
    preview_url = f"/console/spaces/{space_a.external_id}/thresholds/preview/"
    loose = client.get(
        preview_url, {"dedup_distance": "0.4", "recall_distance": "0.3", "sample_query": "warehouse code"}
    )
    assert b'data-value="0.400"' in loose.content
    assert SECRET_FACT.encode() in loose.content  # the sample query's recall, with scores
    with scope.tenant_scope(tenant_a):
        space_a.refresh_from_db()
    assert space_a.settings == {}


def test_saving_thresholds_is_validated_and_audited(client, tenant_a, space_a):
    from tenants.models import SettingsChange

    login(client, tenant_a, "operator", username="olga")
    url = f"/console/spaces/{space_a.external_id}/thresholds/"
    bad = client.post(url, {"flags_present": "1", "recall_distance": "1.7"})
    assert bad.status_code == 400 and b"between" in bad.content
    saved = client.post(
        url, {"flags_present": "1", "hybrid": "on", "dedup_requires_same_terms": "on", "recall_distance": "0.18"}
    )
    assert saved.status_code == 302
    with scope.tenant_scope(tenant_a):
        space_a.refresh_from_db()
        [change] = SettingsChange.objects.filter(space=space_a)
    assert space_a.settings == {"recall_distance": 0.18}
    assert (change.actor, change.setting, change.old_value, change.new_value) == (
        "operator olga", "recall_distance", 0.08, 0.18,
    )  # fmt: skip


def test_support_cannot_change_settings(client, tenant_a, space_a):
    login(client, tenant_a, "support")
    url = f"/console/spaces/{space_a.external_id}/thresholds/"
    assert client.post(url, {"recall_distance": "0.3"}).status_code == 403
    assert client.get("/console/settings/").status_code == 403
    assert client.get("/console/playground/").status_code == 403


def test_tenant_defaults_are_saved_and_audited(client, tenant_a):
    from tenants.models import SettingsChange, Tenant

    login(client, tenant_a, "admin")
    assert client.post("/console/settings/", {"forget_floor": "0.08"}).status_code == 302
    with scope.tenant_scope(tenant_a):
        assert Tenant.objects.get(pk=tenant_a.pk).default_space_settings == {"forget_floor": 0.08}
        assert SettingsChange.objects.get(space=None).setting == "forget_floor"


def test_the_playground_shows_scores_and_the_threshold_line_and_a_forget_dry_run(client, tenant_a, space_a, remembered):
    login(client, tenant_a, "operator")
    page = client.get("/console/playground/", {"space": space_a.external_id, "message": "What is the warehouse code?"})
    assert page.status_code == 200 and SECRET_FACT.encode() in page.content
    assert b"Fused" in page.content
    dry = client.get(
        "/console/playground/",
        {"space": space_a.external_id, "message": "Forget what you know about our warehouse code.", "mode": "forget"},
    )
    assert b"would be deleted" in dry.content
    with scope.tenant_scope(tenant_a, space_a):
        assert Memory.objects.filter(pk=remembered.pk).exists()


def test_the_playground_shows_the_relevance_gate_and_why_each_row_passed_or_failed(
    client, tenant_a, space_a, remembered
):
    """#27 point 4: an operator tuning the gate sees each candidate's relevance and the floor it was held to."""
    login(client, tenant_a, "operator")
    page = client.get("/console/playground/", {"space": space_a.external_id, "message": "What is the warehouse code?"})
    text = page.content.decode()
    assert "Relevance" in text and "Why" in text
    floor, admit = defaults()["relevance_floor"], defaults()["relevance_admit"]
    assert f"relevance gate on (floor {floor}, admit {admit})" in text
    assert re.search(r"relevance \d\.\d\d (≥|&lt;) (floor|admit) \d|within the inner distance|routed by", text)
    with scope.tenant_scope(tenant_a, space_a):
        space = Space.objects.get(pk=space_a.pk)
        space.settings = {**space.settings, "relevance_gate": False}
        space.save(update_fields=["settings"])
    off = client.get("/console/playground/", {"space": space_a.external_id, "message": "What is the warehouse code?"})
    assert "relevance gate off" in off.content.decode()


def test_admins_create_and_revoke_api_keys_and_see_the_secret_once(client, tenant_a):
    from tenants.models import ApiKey

    login(client, tenant_a, "admin")
    created = client.post("/console/keys/", {"name": "bot", "scopes": ["turns"]})
    secret = created.content.decode().split('id="new-secret">')[1].split("<")[0]
    assert secret.startswith("eng_")
    assert secret not in client.get("/console/keys/").content.decode()
    with scope.tenant_scope(tenant_a):
        key = ApiKey.objects.get(name="bot")
    assert client.post(f"/console/keys/{key.pk}/revoke/").status_code == 302
    with scope.tenant_scope(tenant_a):
        assert ApiKey.objects.get(pk=key.pk).revoked_at is not None


def test_only_admins_manage_keys(client, tenant_a):
    login(client, tenant_a, "operator")
    assert client.get("/console/keys/").status_code == 403


def test_repeated_failed_logins_are_slowed_down(client, tenant_a):
    create_operator(tenant=tenant_a, username="olga", password="a-long-password", role="operator")
    for _ in range(5):
        assert client.post("/console/login/", {"username": "olga", "password": "wrong"}).status_code == 200
    locked = client.post("/console/login/", {"username": "olga", "password": "a-long-password"})
    assert locked.status_code == 429 and locked["Retry-After"]


def test_admins_add_change_and_remove_members(client, tenant_a, django_user_model):
    from tenants.models import Membership

    login(client, tenant_a, "admin", username="ada")
    assert client.post("/console/members/", {"username": "newbie", "password": "x"}).status_code == 400
    assert (
        client.post("/console/members/", {"username": "newbie", "password": PASSWORD_OK, "role": "support"}).status_code
        == 302
    )
    with scope.tenant_scope(tenant_a):
        membership = Membership.objects.get(user__username="newbie")
    client.post(f"/console/members/{membership.pk}/", {"role": "operator"})
    with scope.tenant_scope(tenant_a):
        assert Membership.objects.get(pk=membership.pk).role == "operator"
    client.post(f"/console/members/{membership.pk}/", {"action": "remove"})
    with scope.tenant_scope(tenant_a):
        assert not Membership.objects.filter(pk=membership.pk).exists()


PASSWORD_OK = "a-long-enough-password"


@pytest.mark.parametrize(
    "url",
    ["/console/", "/console/spaces/", "/console/spaces/customer-1/", "/console/spaces/customer-1/thresholds/",
     "/console/spaces/customer-1/thresholds/preview/", "/console/settings/", "/console/playground/",
     "/console/keys/", "/console/members/", "/console/deletions/"],
)  # fmt: skip
def test_every_console_page_sends_an_anonymous_visitor_to_login(client, space_a, url):
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/console/login/")


@pytest.mark.parametrize(
    "url",
    ["/console/spaces/customer-1/", "/console/spaces/customer-1/thresholds/",
     "/console/spaces/customer-1/thresholds/preview/", "/console/playground/?space=customer-1&message=vans"],
)  # fmt: skip
def test_every_space_page_is_a_404_for_another_tenants_operator(client, tenant_b, space_a, url):
    login(client, tenant_b, "operator", username="bob")
    assert client.get(url).status_code == 404


def test_support_sees_no_keys_or_members(client, tenant_a):
    login(client, tenant_a, "support")
    assert client.get("/console/keys/").status_code == 403
    assert client.get("/console/members/").status_code == 403
