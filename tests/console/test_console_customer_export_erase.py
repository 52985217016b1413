"""A whole customer from the console: an admin exports it or erases it after typing its id; no other role can,
no other tenant's customer is reached, and a wrong or missing confirmation does nothing."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from memory.models import DeletionAudit, Memory
from tenants import scope
from tenants.models import Space
from tenants.tenant_admin import create_operator
from tests.conftest import make_space

pytestmark = pytest.mark.django_db

SAID = ["We run four delivery vans out of our Brno depot.", "Please always send invoices to billing@alice.example."]


def remember(api_client, external_id: str, texts=SAID) -> None:
    for number, text in enumerate(texts):
        url = f"/api/v1/spaces/{external_id}/turns?wait=true"
        response = api_client.post(url, {"message": text, "session_id": f"s{number}"}, format="json")
        assert response.status_code == 201, response.json()


def console_as(role: str, tenant, client=None) -> Client:
    client = client or Client()
    membership = create_operator(tenant=tenant, username=f"{role}-{tenant.slug}", password="a-long-password", role=role)
    client.force_login(membership.user)
    return client


def memory_count(space) -> int:
    with scope.tenant_scope(space.tenant_id, space):
        return Memory.objects.filter(space=space).count()


def space_exists(tenant, external_id: str) -> bool:
    with scope.tenant_scope(tenant):
        return Space.objects.filter(external_id=external_id).exists()


def downloaded(response) -> list[dict]:
    assert response.status_code == 200 and response["Content-Type"].startswith("application/x-ndjson")
    assert response["Content-Disposition"] == 'attachment; filename="customer-1.jsonl"'
    return [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]


def test_only_an_admin_is_offered_export_and_erase_on_the_space_page(tenant_a, space_a):
    page = console_as("admin", tenant_a).get("/console/spaces/customer-1/")
    assert b'id="export-customer"' in page.content and b'id="erase-customer"' in page.content
    for role in ("operator", "support"):
        page = console_as(role, tenant_a).get("/console/spaces/customer-1/")
        assert page.status_code == 200
        assert b"export-customer" not in page.content and b"erase-customer" not in page.content


def test_an_admin_exports_a_customer_that_imports_into_another_tenant(tenant_a, space_a, space_b, client_a, client_b):
    remember(client_a, "customer-1")
    admin = console_as("admin", tenant_a)
    page = admin.get("/console/spaces/customer-1/export/")
    assert page.status_code == 200 and b"Type the space id" in page.content
    stored = memory_count(space_a)
    assert f"{stored} memor".encode() in page.content

    lines = downloaded(admin.post("/console/spaces/customer-1/export/", {"confirm_id": "customer-1"}))
    header, records, end = lines[0], lines[1:-1], lines[-1]
    assert header["source"]["external_id"] == "customer-1" and header["encryption"] is None
    assert end == {"type": "end", "records": len(records)} and len(records) == stored
    contents = {r["content"] for r in records}
    assert any("Brno" in c for c in contents) and any("billing@alice.example" in c for c in contents)

    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    imported = client_b.generic("POST", "/api/v1/spaces/customer-1/import", body, content_type="application/x-ndjson")
    assert imported.status_code == 200, imported.json()
    assert imported.json()["memories"] == stored


def test_an_export_with_a_passphrase_carries_no_text_in_the_clear(tenant_a, space_a, space_b, client_a, client_b):
    remember(client_a, "customer-1")
    admin = console_as("admin", tenant_a)
    response = admin.post("/console/spaces/customer-1/export/", {"confirm_id": "customer-1", "passphrase": "p4ss"})
    body = b"".join(response.streaming_content)
    assert b"Brno" not in body and b"billing@alice.example" not in body
    assert json.loads(body.splitlines()[0])["encryption"] is not None
    imported = client_b.generic(
        "POST", "/api/v1/spaces/customer-1/import", body, content_type="application/x-ndjson",
        HTTP_X_ENGRAM_PASSPHRASE="p4ss",
    )  # fmt: skip
    assert imported.status_code == 200 and imported.json()["memories"] == memory_count(space_a)


@pytest.mark.parametrize("typed", [None, "", "customer-2", "CUSTOMER-1", "customer-1x"])
def test_an_export_without_the_typed_id_gives_no_file(tenant_a, space_a, client_a, typed):
    remember(client_a, "customer-1", SAID[:1])
    data = {} if typed is None else {"confirm_id": typed}
    response = console_as("admin", tenant_a).post("/console/spaces/customer-1/export/", data)
    assert response.status_code == 400 and not response.streaming
    assert b"Brno" not in response.content and b"nothing was done" in response.content


def test_an_admin_erases_a_customer_after_typing_its_id(tenant_a, space_a, space_a2, client_a):
    remember(client_a, "customer-1")
    remember(client_a, "customer-2", ["We are a bakery in Leeds."])
    stored, other = memory_count(space_a), memory_count(space_a2)
    admin = console_as("admin", tenant_a)
    page = admin.get("/console/spaces/customer-1/erase/")
    assert page.status_code == 200 and b"Erase permanently" in page.content and space_exists(tenant_a, "customer-1")

    refused = admin.post("/console/spaces/customer-1/erase/", {"confirm_id": "customer-2"})
    assert refused.status_code == 400 and b"nothing was done" in refused.content
    assert memory_count(space_a) == stored

    response = admin.post("/console/spaces/customer-1/erase/", {"confirm_id": " customer-1 "}, follow=True)
    assert response.redirect_chain == [("/console/spaces/", 302)]
    notice = f"Space customer-1 was erased: {stored} memories, each in the audit. Dead copies"
    assert notice.encode() in response.content
    assert not space_exists(tenant_a, "customer-1")
    with scope.tenant_scope(tenant_a):
        audit = list(DeletionAudit.objects.filter(space_external_id="customer-1"))
    assert len(audit) == stored and {(a.cause, a.actor) for a in audit} == {("space_erasure", "admin admin-alice")}
    assert memory_count(space_a2) == other  # the tenant's other customer is untouched
    assert admin.get("/console/spaces/customer-1/erase/").status_code == 404


@pytest.mark.parametrize("role", ["operator", "support"])
@pytest.mark.parametrize("action", ["export", "erase"])
def test_no_other_role_exports_or_erases(tenant_a, space_a, client_a, role, action):
    remember(client_a, "customer-1", SAID[:1])
    stored = memory_count(space_a)
    console = console_as(role, tenant_a)
    url = f"/console/spaces/customer-1/{action}/"
    assert console.get(url).status_code == 403
    response = console.post(url, {"confirm_id": "customer-1"})
    assert response.status_code == 403 and not response.streaming and b"Brno" not in response.content
    assert memory_count(space_a) == stored


def test_an_admin_reaches_only_their_own_tenants_customer(tenant_a, tenant_b, space_a, space_b, client_a, client_b):
    remember(client_a, "customer-1", SAID[:1])
    remember(client_b, "customer-1", ["We bake sourdough in Leeds."])
    make_space(tenant_b, "bob-only")
    b_stored = memory_count(space_b)
    admin = console_as("admin", tenant_a)
    for action in ("export", "erase"):
        assert admin.get(f"/console/spaces/bob-only/{action}/").status_code == 404
        assert admin.post(f"/console/spaces/bob-only/{action}/", {"confirm_id": "bob-only"}).status_code == 404
    lines = downloaded(admin.post("/console/spaces/customer-1/export/", {"confirm_id": "customer-1"}))
    assert not any("sourdough" in line.get("content", "") for line in lines)
    admin.post("/console/spaces/customer-1/erase/", {"confirm_id": "customer-1"})
    assert not space_exists(tenant_a, "customer-1")
    assert space_exists(tenant_b, "customer-1") and space_exists(tenant_b, "bob-only")
    assert memory_count(space_b) == b_stored


@pytest.mark.parametrize("action", ["export", "erase"])
def test_a_post_without_the_csrf_token_is_refused(tenant_a, space_a, client_a, action):
    remember(client_a, "customer-1", SAID[:1])
    admin = console_as("admin", tenant_a, Client(enforce_csrf_checks=True))
    response = admin.post(f"/console/spaces/customer-1/{action}/", {"confirm_id": "customer-1"})
    assert response.status_code == 403 and not response.streaming
    assert space_exists(tenant_a, "customer-1") and memory_count(space_a) > 0
