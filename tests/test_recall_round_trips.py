"""A recall request is the query embedding plus a few statements: keys remembered safely, the scope
sent with the query, every strategy in one statement — and a revoked key fails at once."""

import re

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memory.recall.search import recall
from tenants import scope
from tenants.api_keys import known_keys, revoke_api_key
from tenants.encrypted_fields import Sealed
from tenants.models import ApiKey, Space
from tests.support.recall import tell

pytestmark = pytest.mark.django_db

# Authentication 2 (the key's row, read with the tenant scope), the space 1, the space scope + the
# candidate statement 2, the test's savepoint pair 2 and the scope reset after a request inside the
# test's transaction 1. The rate limit's one statement runs on its own connection (not captured here;
# it was 6 statements on this connection when it counted in Django's database cache: 14 then).
STATEMENTS_PER_RECALL = 8


@pytest.fixture(autouse=True)
def forget_known_keys():
    known_keys.clear()
    yield
    known_keys.clear()


def post_recall(client, space, query="How many vans do you have?"):
    return client.post(reverse("recall", args=[space.external_id]), {"query": query}, format="json")


def statements_of_one_recall(client, space, query):
    post_recall(client, space, "warm up the van fleet")  # the key is remembered, the model loaded
    with CaptureQueriesContext(connection) as captured:
        response = post_recall(client, space, query)
    assert response.status_code == 200, response.content
    return [q["sql"] for q in captured.captured_queries], response.json()


def test_one_recall_request_runs_a_small_number_of_statements_that_does_not_grow_with_the_space(
    client_a, space_a, space_a2
):
    tell(client_a, space_a, "We run a fleet of four vans.", "Our renewal is in May.")
    small, body = statements_of_one_recall(client_a, space_a, "How many vans do you have?")
    assert [m["content"] for m in body["memories"]][:1] == ["We run a fleet of four vans."]
    assert len(small) <= STATEMENTS_PER_RECALL, "\n".join(small)
    # Every strategy (vector, keyword, topic) and the passing filter: one statement over the memories.
    assert len([sql for sql in small if "memory_memory" in sql]) == 1
    [candidates] = [i for i, sql in enumerate(small) if "memory_memory" in sql]
    assert small[candidates - 1].startswith("SELECT set_config('engram.tenant_id'"), "the scope rides just before it"

    tell(client_a, space_a2, *[f"Our depot number {i} opens at {i % 12 + 1} o'clock." for i in range(12)])
    larger, _ = statements_of_one_recall(client_a, space_a2, "When does the depot open?")
    assert len(larger) == len(small)


def test_a_revoked_key_fails_at_once(client_a, space_a, key_a):
    assert post_recall(client_a, space_a).status_code == 200
    with scope.tenant_scope(key_a.api_key.tenant_id):
        revoke_api_key(key_a.api_key)
    response = post_recall(client_a, space_a)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_a_key_revoked_by_another_process_fails_at_once_here(client_a, space_a, key_a):
    """Another server process revokes it: this process still remembers the key, and must not trust that."""
    assert post_recall(client_a, space_a).status_code == 200
    assert known_keys.get(key_a.api_key.prefix) is not None
    with scope.tenant_scope(key_a.api_key.tenant_id):
        ApiKey.objects.filter(pk=key_a.api_key.pk).update(revoked_at="2026-01-01T00:00:00Z")
    assert post_recall(client_a, space_a).status_code == 401
    assert known_keys.get(key_a.api_key.prefix) is None


def test_a_remembered_prefix_with_another_secret_is_refused(client_a, space_a, key_a):
    assert post_recall(client_a, space_a).status_code == 200
    forged = re.sub(r"_[A-Za-z0-9_-]{43}$", "_" + "A" * 43, key_a.secret)
    assert forged != key_a.secret
    client_a.credentials(HTTP_AUTHORIZATION=f"Bearer {forged}")
    assert post_recall(client_a, space_a).status_code == 401


def test_another_tenants_remembered_key_does_not_reach_this_tenants_space(client_a, space_a2, client_b, space_b):
    tell(client_a, space_a2, "We run a fleet of four vans.")
    assert post_recall(client_b, space_b).status_code == 200  # bob's key is remembered now
    assert post_recall(client_b, space_a2).status_code == 404
    assert post_recall(client_b, space_b, "We run a fleet of four vans.").json()["memories"] == []


def test_recall_reports_where_its_time_went_in_server_timing(client_a, space_a):
    tell(client_a, space_a, "We run a fleet of four vans.")
    response = post_recall(client_a, space_a)
    phases = dict(re.findall(r"(\w+);dur=([0-9.]+)", response["Server-Timing"]))
    assert set(phases) == {"embed", "db", "total"}
    assert 0 < float(phases["db"]) <= float(phases["total"])
    assert float(phases["embed"]) + float(phases["db"]) <= float(phases["total"]) + 0.2  # rounding
    assert "vans" not in response["Server-Timing"]


def test_only_the_rows_shown_are_decrypted(client_a, space_a):
    tell(client_a, space_a, "We run a fleet of four vans.", "I love hiking in the mountains.", "Our renewal is in May.")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        result = recall(space=Space.objects.get(pk=space_a.pk), query="How many vans do you have?")
    shown = {hit["id"] for hit in result.hits}
    assert shown
    for candidate in result.candidates:
        sealed = isinstance(candidate.item.__dict__["content"], Sealed)
        assert sealed == (candidate.id not in shown), candidate.kind


def test_the_pipelined_scope_is_what_row_level_security_sees(space_a, space_b):
    with transaction.atomic(), scope.scope_with_next_statement(space_a.tenant_id, space_a):
        assert list(Space.objects.values_list("pk", flat=True)) == [space_a.pk]
    with transaction.atomic():
        with scope.scope_with_next_statement(space_b.tenant_id, space_b):
            pass  # no statement in the block: the scope is set when it ends
        assert scope.current_scope() == (str(space_b.tenant_id), str(space_b.pk))
