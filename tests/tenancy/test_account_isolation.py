"""Console accounts never cross tenants: a tenant admin cannot reach another tenant's users, and an
account with roles in several tenants acts only in the one it chose."""

import re
import statistics
import time

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from tenants import scope
from tenants.models import Membership
from tenants.tenant_admin import USERNAME_TAKEN, create_operator, create_tenant
from tests.conftest import make_space

pytestmark = pytest.mark.django_db
ALICE_PASSWORD = "alice-own-password"
ATTACKER_PASSWORD = "bob-chose-this-one"


def account_fields(username):
    user = get_user_model().objects.get(username=username)
    return {f.name: getattr(user, f.name) for f in user._meta.concrete_fields}


def as_admin(client, tenant, username):
    membership = create_operator(tenant=tenant, username=username, password="admin-password-1", role="admin")
    client.force_login(membership.user)


def error_text(response) -> str:
    if response["Content-Type"].startswith("text/plain"):
        return response.content.decode()
    return re.search(rb'<p class="error">(.*?)</p>', response.content, re.S).group(1).decode().strip()


def test_another_tenants_username_is_refused_and_the_account_is_untouched(client, tenant_a, tenant_b):
    create_operator(tenant=tenant_a, username="alice", password=ALICE_PASSWORD, role="admin")
    before = account_fields("alice")
    as_admin(client, tenant_b, "bob")
    for role in ("admin", "operator", "support"):
        response = client.post("/console/members/", {"username": "alice", "password": ATTACKER_PASSWORD, "role": role})
        assert response.status_code == 400 and error_text(response) == USERNAME_TAKEN
    assert account_fields("alice") == before
    with scope.tenant_scope(tenant_b):
        assert not Membership.objects.filter(user__username="alice").exists()
    with scope.tenant_scope(tenant_a):
        assert Membership.objects.get(user__username="alice").role == "admin"
    client.logout()
    refused = client.post("/console/login/", {"username": "alice", "password": ATTACKER_PASSWORD})
    assert refused.status_code == 200 and SESSION_KEY not in client.session
    assert client.login(username="alice", password=ALICE_PASSWORD)


def test_the_refusal_says_nothing_about_where_the_name_is_used(client, tenant_a, tenant_b):
    create_operator(tenant=tenant_a, username="alice", password=ALICE_PASSWORD, role="support")
    get_user_model().objects.create_user(username="nomad", password="no-tenant-at-all")
    get_user_model().objects.create_superuser(username="root", password="super-password")
    as_admin(client, tenant_b, "bob")
    create_operator(tenant=tenant_b, username="bobs-colleague", password="colleague-pass", role="operator")
    answers = set()
    for name in ("alice", "nomad", "root", "bobs-colleague"):
        response = client.post("/console/members/", {"username": name, "password": ATTACKER_PASSWORD, "role": "admin"})
        assert response.status_code == 400
        page = response.content.decode()
        assert "alice logistics" not in page.lower() and "support" not in error_text(response)
        answers.add(error_text(response))
    assert answers == {USERNAME_TAKEN}
    assert get_user_model().objects.get(username="root").check_password("super-password")


def test_a_new_name_becomes_a_new_account_in_this_tenant_only(client, tenant_a, tenant_b):
    as_admin(client, tenant_b, "bob")
    response = client.post(
        "/console/members/", {"username": "newbie", "password": "newbie-password", "role": "support"}
    )
    assert response.status_code == 302
    with scope.tenant_scope(tenant_b):
        assert Membership.objects.get(user__username="newbie").role == "support"
    with scope.tenant_scope(tenant_a):
        assert not Membership.objects.filter(user__username="newbie").exists()


@pytest.mark.parametrize(
    "form",
    [{"username": "", "password": "long-enough-password"}, {"username": "x" * 151, "password": "long-enough-pass"},
     {"username": "nul\x00name", "password": "long-enough-password"}, {"username": "ok", "password": "short"},
     {"username": "ok", "password": "long-enough-password", "role": "owner"},
     {"username": "with space", "password": "long-enough-password"}],
)  # fmt: skip
def test_bad_member_forms_are_a_400_with_a_message_and_create_nothing(client, tenant_b, form):
    as_admin(client, tenant_b, "bob")
    response = client.post("/console/members/", {"role": "operator", **form})
    assert response.status_code == 400 and error_text(response)
    assert not get_user_model().objects.exclude(username="bob").exists()


def test_a_member_of_another_tenant_cannot_be_changed_or_removed(client, tenant_a, tenant_b):
    alice = create_operator(tenant=tenant_a, username="alice", password=ALICE_PASSWORD, role="operator")
    as_admin(client, tenant_b, "bob")
    page = client.get("/console/members/").content.decode()
    assert "alice" not in page
    assert client.post(f"/console/members/{alice.pk}/", {"role": "admin"}).status_code == 404
    assert client.post(f"/console/members/{alice.pk}/", {"action": "remove"}).status_code == 404
    with scope.tenant_scope(tenant_a):
        assert Membership.objects.get(pk=alice.pk).role == "operator"


@pytest.fixture
def two_tenant_account(tenant_a, tenant_b):
    create_operator(tenant=tenant_a, username="sam", password="sam-password-1", role="operator")
    create_operator(tenant=tenant_b, username="sam", password="ignored-for-an-existing-account", role="support")
    make_space(tenant_a, "alice-customer")
    make_space(tenant_b, "bob-customer")
    return get_user_model().objects.get(username="sam")


def test_an_account_of_two_tenants_is_asked_which_one_and_never_gets_the_first(client, tenant_a, tenant_b,
                                                                               two_tenant_account):  # fmt: skip
    client.force_login(two_tenant_account)
    first = client.get("/console/spaces/")
    assert first.status_code == 302 and first["Location"].startswith("/console/tenant/")
    chooser = client.get(first["Location"]).content.decode()
    assert "Alice Logistics" in chooser and "Bob Bakery" in chooser
    chosen = client.post("/console/tenant/", {"tenant_id": str(tenant_b.id), "next": "/console/spaces/"})
    assert chosen.status_code == 302 and chosen["Location"] == "/console/spaces/"
    page = client.get("/console/spaces/").content.decode()
    assert "bob-customer" in page and "alice-customer" not in page and "Switch tenant" in page
    assert '<span id="active-tenant">Bob Bakery</span>' in page
    # Support in tenant B: the audit opens, an operator page does not, whatever the role in A is.
    assert client.get("/console/deletions/").status_code == 200
    assert client.get("/console/playground/").status_code == 403
    client.post("/console/tenant/", {"tenant_id": str(tenant_a.id)})
    assert "alice-customer" in client.get("/console/spaces/").content.decode()


def test_the_switcher_refuses_a_tenant_the_account_has_no_role_in(client, tenant_a, tenant_b, two_tenant_account):
    outsider = create_tenant(name="Carol Cars", slug="carol")
    make_space(outsider, "carol-customer")
    client.force_login(two_tenant_account)
    response = client.post("/console/tenant/", {"tenant_id": str(outsider.id)})
    assert response.status_code == 400 and "Choose one of your tenants" in response.content.decode()
    assert client.post("/console/tenant/", {"tenant_id": "not-a-uuid\x00"}).status_code == 400
    # A session that names a tenant the account is not in (forged, or the role was removed) is asked again.
    session = client.session
    session["tenant_id"] = str(outsider.id)
    session.save()
    assert client.get("/api/v1/deletions").status_code == 403  # the audit API reads the session too
    response = client.get("/console/spaces/")
    assert response.status_code == 302 and response["Location"].startswith("/console/tenant/")


def test_an_off_site_next_is_ignored(client, tenant_a, two_tenant_account):
    client.force_login(two_tenant_account)
    response = client.post("/console/tenant/", {"tenant_id": str(tenant_a.id), "next": "https://evil.example/"})
    assert response["Location"] == "/console/"


def test_removing_the_active_membership_ends_access_to_that_tenant(client, tenant_a, tenant_b, two_tenant_account):
    client.force_login(two_tenant_account)
    client.post("/console/tenant/", {"tenant_id": str(tenant_a.id)})
    with scope.tenant_scope(tenant_a):
        Membership.objects.filter(user=two_tenant_account).delete()
    response = client.get("/console/spaces/")
    assert response.status_code == 302 and response["Location"].startswith("/console/tenant/")
    # One membership left: it is the only choice, so it is used without asking.
    assert "bob-customer" in client.get("/console/spaces/").content.decode()


class MeasurableHasher(PBKDF2PasswordHasher):
    """A real key-stretching hash, slow enough (about 0.1 s) that skipping it would show."""

    iterations = 200_000


def test_a_refusal_takes_as_long_as_a_creation(client, settings, tenant_a, tenant_b):
    settings.PASSWORD_HASHERS = ["tests.tenancy.test_account_isolation.MeasurableHasher"]
    create_operator(tenant=tenant_a, username="alice", password=ALICE_PASSWORD, role="admin")
    as_admin(client, tenant_b, "bob")
    created, refused = [], []
    for number in range(5):
        started = time.perf_counter()
        response = client.post(
            "/console/members/", {"username": f"new{number}", "password": ATTACKER_PASSWORD, "role": "support"}
        )
        created.append(time.perf_counter() - started)
        assert response.status_code == 302
        started = time.perf_counter()
        response = client.post(
            "/console/members/", {"username": "alice", "password": ATTACKER_PASSWORD, "role": "support"}
        )
        refused.append(time.perf_counter() - started)
        assert response.status_code == 400
    # Without the hash on the refusal path it would take a small fraction of a creation.
    assert statistics.median(refused) > 0.6 * statistics.median(created), (created, refused)
