"""Review attacks on the per-process API key cache (tenants/api_keys.py, api/authentication.py)."""

import pytest
from django.db import connection, transaction
from django.urls import reverse

from tenants import scope
from tenants.api_keys import hash_key, known_keys, resolve_api_key
from tenants.models import ApiKey
from tests.conftest import api_client

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def forget_known_keys():
    known_keys.clear()
    yield
    known_keys.clear()


def resolve(secret):
    with transaction.atomic():
        return resolve_api_key(secret)


def update_key(api_key, **fields):
    with scope.tenant_scope(api_key.tenant_id):
        ApiKey.objects.filter(pk=api_key.pk).update(**fields)


def test_forged_secret_on_a_cached_prefix_is_refused(key_a):
    assert resolve(key_a.secret) is not None
    assert known_keys.get(key_a.api_key.prefix) is not None
    forged = key_a.secret[:-4] + ("AAAA" if not key_a.secret.endswith("AAAA") else "BBBB")
    assert resolve(forged) is None
    assert resolve(key_a.secret) is not None, "a forged attempt must not evict or poison the real key"


def test_forged_secret_on_an_unknown_prefix_is_not_remembered(key_a):
    forged = key_a.secret[:-4] + ("AAAA" if not key_a.secret.endswith("AAAA") else "BBBB")
    assert resolve(forged) is None
    assert known_keys.get(key_a.api_key.prefix) is None
    assert resolve(key_a.secret) is not None


def test_admin_scope_removed_after_caching_is_refused_at_once(key_a, space_a):
    client = api_client(key_a.secret)
    assert client.post(reverse("space-list"), {"external_id": "new-1"}, format="json").status_code == 201
    update_key(key_a.api_key, scopes=["turns"])
    response = client.post(reverse("space-list"), {"external_id": "new-2"}, format="json")
    assert response.status_code == 403, response.content


def test_revoked_key_refused_even_when_cached_and_revoked_by_a_bare_update(key_a):
    from django.utils import timezone

    assert resolve(key_a.secret) is not None
    update_key(key_a.api_key, revoked_at=timezone.now())  # another process revoked it: no cache forget here
    assert resolve(key_a.secret) is None


def test_deleted_tenant_key_refused_when_cached(key_a, tenant_a):
    assert resolve(key_a.secret) is not None
    with scope.tenant_scope(tenant_a):
        ApiKey.objects.filter(pk=key_a.api_key.pk).delete()
    assert resolve(key_a.secret) is None
    assert known_keys.get(key_a.api_key.prefix) is None


@pytest.mark.django_db(transaction=True)
def test_key_moved_to_another_tenant_is_not_served_with_the_old_tenant(key_a, tenant_b, superuser_conninfo):
    """Committed rows (transaction=True), so the superuser's UPDATE really moves the key."""
    import psycopg

    assert resolve(key_a.secret) is not None
    # Move the row as the superuser (the app role cannot: RLS WITH CHECK).
    with psycopg.connect(superuser_conninfo, autocommit=True) as su:
        moved = su.execute(
            "UPDATE tenants_apikey SET tenant_id = %s WHERE id = %s", [tenant_b.pk, key_a.api_key.pk]
        ).rowcount
    assert moved == 1
    try:
        with transaction.atomic():
            api_key = resolve_api_key(key_a.secret)
            tenant_in_scope, _ = scope.current_scope()
        assert api_key is None or (str(api_key.tenant_id) == str(tenant_b.pk) == tenant_in_scope)
    finally:
        with psycopg.connect(superuser_conninfo, autocommit=True) as su:
            su.execute(
                "UPDATE tenants_apikey SET tenant_id = %s WHERE id = %s", [key_a.api_key.tenant_id, key_a.api_key.pk]
            )


def test_secret_replaced_in_place_old_secret_stops_working(key_a, tenant_a):
    """A secret rewritten under the same prefix (an operator killing a leaked secret by UPDATE): the old
    secret must stop working and the new one start, in every process. The cache keeps the old hash."""
    prefix = key_a.api_key.prefix
    assert resolve(key_a.secret) is not None
    new_secret = f"eng_{prefix}_" + "N" * 43
    update_key(key_a.api_key, secret_hash=hash_key(new_secret))
    old_works = resolve(key_a.secret) is not None
    new_works = resolve(new_secret) is not None
    assert (old_works, new_works) == (False, True)


def test_cached_key_does_not_leave_a_scope_for_another_tenant(key_a, key_b, space_b):
    assert resolve(key_a.secret) is not None and resolve(key_b.secret) is not None
    with transaction.atomic():
        resolve_api_key(key_b.secret)
        resolve_api_key(key_a.secret)  # same transaction, second key: the scope must follow the last one
        tenant_in_scope, _ = scope.current_scope()
        assert tenant_in_scope == str(key_a.api_key.tenant_id)
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM tenants_space WHERE id = %s", [space_b.pk])
            assert cursor.fetchone()[0] == 0
