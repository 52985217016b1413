"""The console through Django's test client: who sees what, and deletions that go through the audit."""

import pytest
from django.urls import reverse

from memory.models import DeletionAudit, Memory
from tenants import scope
from tenants.tenant_admin import create_operator

pytestmark = pytest.mark.django_db
SECRET_FACT = "Our warehouse code is Zephyr-42."


@pytest.fixture
def remembered(client_a, space_a):
    url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    client_a.post(url, {"message": SECRET_FACT}, format="json")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        return Memory.objects.get(kind="fact")


def login(client, tenant, role, username=None):
    membership = create_operator(tenant=tenant, username=username or role, password="a-long-password", role=role)
    client.force_login(membership.user)
    return membership.user


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
