"""The spaces API: authentication, scopes, the error shape, limits, and tenant isolation."""

import pytest
from django.urls import reverse

from tenants import scope
from tenants.api_keys import issue_api_key, revoke_api_key
from tenants.models import Space, SpaceKey
from tests.conftest import api_client

pytestmark = pytest.mark.django_db


def spaces_url():
    return reverse("space-list")


def space_url(external_id):
    return reverse("space-detail", args=[external_id])


def assert_error(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    return body["error"]


def test_create_list_get_update_and_erase_a_space(client_a, tenant_a):
    created = client_a.post(spaces_url(), {"external_id": "crm:42@shop", "display_name": "Jana"}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["external_id"] == "crm:42@shop"
    assert created.json()["key_id"] == "default"

    listed = client_a.get(spaces_url()).json()
    assert [s["external_id"] for s in listed["results"]] == ["crm:42@shop"]
    assert listed["count"] == 1

    patched = client_a.patch(space_url("crm:42@shop"), {"settings": {"recall_limit": 5}}, format="json")
    assert patched.status_code == 200, patched.content
    assert patched.json()["settings"] == {"recall_limit": 5}
    assert patched.json()["effective_settings"]["recall_limit"] == 5

    assert client_a.get(space_url("crm:42@shop")).json()["display_name"] == "Jana"
    assert client_a.delete(space_url("crm:42@shop")).status_code == 204
    assert_error(client_a.get(space_url("crm:42@shop")), 404, "not_found")
    with scope.tenant_scope(tenant_a):
        assert not Space.objects.exists()
        assert not SpaceKey.objects.exists()


@pytest.mark.parametrize("external_id", ["", "has space", "x" * 129, "ünicode", "semi;colon", "slash/inside"])
def test_an_invalid_external_id_is_a_400(client_a, external_id):
    error = assert_error(
        client_a.post(spaces_url(), {"external_id": external_id}, format="json"), 400, "invalid_request"
    )
    assert "external_id" in error["details"]


def test_a_duplicate_external_id_is_a_409(client_a, space_a):
    assert_error(client_a.post(spaces_url(), {"external_id": space_a.external_id}, format="json"), 409, "conflict")


def test_a_space_can_be_created_under_a_customer_managed_key(client_a):
    created = client_a.post(spaces_url(), {"external_id": "acme", "key_id": "customer-acme"}, format="json")
    assert created.json()["key_id"] == "customer-acme"
    assert_error(
        client_a.post(spaces_url(), {"external_id": "x", "key_id": "nope"}, format="json"), 400, "invalid_request"
    )


def test_a_spaces_key_id_cannot_change(client_a, space_a):
    error = assert_error(
        client_a.patch(space_url(space_a.external_id), {"key_id": "customer-acme"}, format="json"),
        400,
        "invalid_request",
    )
    assert "key_id" in error["details"]


@pytest.mark.parametrize(
    "settings, field",
    [
        ({"recall_distance": 1.5}, "recall_distance"),
        ({"max_deletions_per_request": 11}, "max_deletions_per_request"),
        ({"recall_limit": "many"}, "recall_limit"),
        ({"hybrid": "yes"}, "hybrid"),
        ({"strategy_weights": {"vector": -1}}, "strategy_weights"),
        ({"made_up": 1}, "made_up"),
    ],
)
def test_a_bad_setting_is_a_400_naming_the_field(client_a, space_a, settings, field):
    error = assert_error(
        client_a.patch(space_url(space_a.external_id), {"settings": settings}, format="json"), 400, "invalid_request"
    )
    assert field in error["details"]


def test_a_setting_override_can_be_dropped(client_a, space_a):
    client_a.patch(space_url(space_a.external_id), {"settings": {"recall_limit": 5, "hybrid": False}}, format="json")
    response = client_a.patch(space_url(space_a.external_id), {"settings": {"recall_limit": None}}, format="json")
    assert response.json()["settings"] == {"hybrid": False}


def test_tenant_defaults_apply_unless_the_space_overrides(client_a, tenant_a, space_a):
    with scope.tenant_scope(tenant_a):
        tenant_a.default_space_settings = {"recall_limit": 3, "strategy_weights": {"keyword": 2.0}}
        tenant_a.save()
    effective = client_a.get(space_url(space_a.external_id)).json()["effective_settings"]
    assert effective["recall_limit"] == 3
    assert effective["strategy_weights"]["keyword"] == 2.0
    assert effective["strategy_weights"]["vector"] == 1.0


def test_lists_are_paginated(client_a, tenant_a):
    for i in range(5):
        client_a.post(spaces_url(), {"external_id": f"c{i}"}, format="json")
    page = client_a.get(spaces_url(), {"limit": 2, "offset": 2}).json()
    assert page["count"] == 5
    assert [s["external_id"] for s in page["results"]] == ["c2", "c3"]
    assert page["next"] and page["previous"]


def test_every_space_endpoint_answers_404_for_another_tenants_space(client_a, space_b):
    url = space_url(space_b.external_id)
    assert_error(client_a.get(url), 404, "not_found")
    assert_error(client_a.patch(url, {"display_name": "mine now"}, format="json"), 404, "not_found")
    assert_error(client_a.delete(url), 404, "not_found")
    assert client_a.get(spaces_url()).json()["count"] == 0
    with scope.tenant_scope(space_b.tenant_id):
        assert Space.objects.get(id=space_b.id).display_name == "Bob's customer"


def test_the_same_external_id_in_two_tenants_are_two_spaces(client_a, client_b, space_b):
    assert client_a.post(spaces_url(), {"external_id": space_b.external_id}, format="json").status_code == 201
    client_a.delete(space_url(space_b.external_id))
    assert client_b.get(space_url(space_b.external_id)).status_code == 200


def test_a_missing_wrong_or_revoked_key_is_a_401(outsider, key_a, space_a):
    response = outsider.get(spaces_url())
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Bearer"
    assert_error(api_client("eng_000000000000_" + "x" * 43).get(spaces_url()), 401, "authentication_failed")
    tampered = key_a.secret[:-1] + ("A" if key_a.secret[-1] != "A" else "B")
    assert_error(api_client(tampered).get(spaces_url()), 401, "authentication_failed")
    assert_error(api_client("not a key").get(spaces_url()), 401, "authentication_failed")
    with scope.tenant_scope(key_a.api_key.tenant_id):
        revoke_api_key(key_a.api_key)
    assert_error(api_client(key_a.secret).get(spaces_url()), 401, "authentication_failed")


def test_a_key_without_the_scope_is_a_403(tenant_a, space_a):
    agent_key = issue_api_key(tenant=tenant_a, name="agent", scopes=["turns"])
    client = api_client(agent_key.secret)
    assert client.get(spaces_url()).status_code == 200
    assert_error(client.post(spaces_url(), {"external_id": "new"}, format="json"), 403, "permission_denied")
    assert_error(client.delete(space_url(space_a.external_id)), 403, "permission_denied")


def test_keys_are_stored_only_as_hashes(key_a):
    with scope.tenant_scope(key_a.api_key.tenant_id):
        from tenants.models import ApiKey

        row = ApiKey.objects.get(pk=key_a.api_key.pk)
    secret_part = key_a.secret[len("eng_") + 12 + 1 :]  # the secret may itself contain "_"
    assert secret_part not in str(row.__dict__)
    assert row.secret_hash != key_a.secret and len(row.secret_hash) == 64


def test_last_used_is_recorded(client_a, key_a):
    client_a.get(spaces_url())
    with scope.tenant_scope(key_a.api_key.tenant_id):
        key_a.api_key.refresh_from_db()
    assert key_a.api_key.last_used_at is not None


def test_a_body_over_256_kib_is_a_413(client_a):
    response = client_a.post(spaces_url(), {"external_id": "big", "display_name": "x" * (300 * 1024)}, format="json")
    assert_error(response, 413, "request_too_large")


def test_malformed_json_is_a_400(client_a):
    response = client_a.post(spaces_url(), "{not json", content_type="application/json")
    assert_error(response, 400, "malformed_request")


def test_an_unknown_api_path_is_a_json_404(client_a):
    assert_error(client_a.get("/api/v1/nothing-here"), 404, "not_found")


def test_health_reports_database_and_migrations(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "migrations": "ok"}


def test_the_openapi_schema_and_docs_are_served(client):
    schema = client.get("/api/v1/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/spaces/{external_id}" in schema.content
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"cdn" not in docs.content.lower() and b"swagger-ui" in docs.content  # served locally


def test_an_api_key_over_its_rate_limit_gets_429_with_retry_after(settings, client_a, client_b):
    settings.ENGRAM_API_RATE_LIMIT = "3/minute"
    for _ in range(3):
        assert client_a.get(spaces_url()).status_code == 200
    limited = client_a.get(spaces_url())
    assert_error(limited, 429, "rate_limited")
    assert int(limited["Retry-After"]) > 0
    assert client_b.get(spaces_url()).status_code == 200  # another key has its own budget


def test_pages_carry_security_headers(client):
    response = client.get("/console/login/")
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_the_rate_limit_count_is_shared_through_the_database(settings, client_a, key_a):
    """Every server process reads the same count: it lives in a table, so a second process (simulated
    by closing this process's connections, the counter's own one included) still sees it."""
    from django.db import connection

    settings.ENGRAM_API_RATE_LIMIT = "2/minute"
    assert client_a.get(spaces_url()).status_code == 200
    assert client_a.get(spaces_url()).status_code == 200
    connection.close_side_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM tenants_apikeyrequestbudget WHERE key_prefix = %s", [key_a.api_key.prefix])
        assert cursor.fetchone()[0] == 1
    assert client_a.get(spaces_url()).status_code == 429
