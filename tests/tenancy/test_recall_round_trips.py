"""A recall request is the query embedding plus a few statements, and none of the shortcuts that keep it so
reaches another tenant or another space:

- the key the process remembers: a forged secret on a remembered prefix, and a key revoked, deleted,
  narrowed, moved to another tenant or given a new secret by another process, are refused at once;
- the scope sent with the next statement: through a rolled-back savepoint, a server-side cursor, another
  thread, an error before any statement, a hostile value and two requests on one thread;
- every strategy in one statement: hostile query text is data, hostile kinds and limits are a 400, and the
  statement stays in the asked space even under a tenant-wide scope."""

import re
import threading
import time

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from database import prepared_statements
from database.prepared_statements import written_as
from memory.models import Memory
from memory.recall.search import recall
from memory.text.embeddings import local_embedder
from tenants import scope
from tenants.api_keys import hash_key, known_keys, resolve_api_key, revoke_api_key
from tenants.encrypted_fields import Sealed
from tenants.models import ApiKey, Space
from tests.conftest import api_client
from tests.support.recall import tell

pytestmark = pytest.mark.django_db

# Authentication 3 (the key's row, read with the tenant scope), the space 1, the space scope + the
# candidate statement 3 (a scope is two SET LOCAL, pipelined with the statement after them), the test's
# savepoint pair 2 and the scope reset after a request inside the test's transaction 1. The rate limit's
# one statement runs on its own connection (not captured here; it was 6 statements on this connection
# when it counted in Django's database cache: 14 then).
STATEMENTS_PER_RECALL = 10


@pytest.fixture(autouse=True)
def forget_known_keys():
    known_keys.clear()
    yield
    known_keys.clear()


def post_recall(client, space, query="How many vans do you have?"):
    return client.post(reverse("recall", args=[space.external_id]), {"query": query}, format="json")


def statements_of_one_recall(client, space, query):
    # The key is remembered, the model loaded and the statement's shape prepared on this connection.
    post_recall(client, space, query)
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
    # Every strategy (vector, keyword, topic) and the passing filter: one statement over the memories,
    # prepared on the connection by the first recall of its shape and executed by name since.
    assert len([sql for sql in small if "memory_memory" in (written_as(sql) or sql)]) == 1
    [candidates] = [i for i, sql in enumerate(small) if "memory_memory" in (written_as(sql) or sql)]
    assert small[candidates].startswith("EXECUTE ")
    assert small[candidates - 2 : candidates] == [
        f"SET LOCAL engram.tenant_id = '{space_a.tenant_id}'",
        f"SET LOCAL engram.space_id = '{space_a.id}'",
    ], "the scope rides just before it"

    tell(client_a, space_a2, *[f"Our depot number {i} opens at {i % 12 + 1} o'clock." for i in range(12)])
    larger, _ = statements_of_one_recall(client_a, space_a2, "When does the depot open?")
    assert len(larger) == len(small)


def test_a_statement_shape_is_prepared_once_per_connection_and_survives_a_rolled_back_request(client_a, space_a):
    tell(client_a, space_a, "We run a fleet of four vans.")
    with CaptureQueriesContext(connection) as first:
        post_recall(client_a, space_a, "Which vehicles does the customer own?")
    prepares = [q["sql"] for q in first.captured_queries if q["sql"].startswith("PREPARE ")]
    assert len(prepares) <= 1  # none when an earlier test's recall prepared this shape on the connection
    with transaction.atomic():
        sid = transaction.savepoint()
        post_recall(client_a, space_a, "Which vehicles does the customer own?")
        transaction.savepoint_rollback(sid)  # PREPARE is not transactional: the statement stays prepared
    with CaptureQueriesContext(connection) as again:
        response = post_recall(client_a, space_a, "Which vehicles does the customer own?")
    assert [m["content"] for m in response.json()["memories"]][:1] == ["We run a fleet of four vans."]
    assert not [q for q in again.captured_queries if q["sql"].startswith("PREPARE ")]
    assert [q for q in again.captured_queries if q["sql"].startswith("EXECUTE ")]


@pytest.mark.django_db(transaction=True)
def test_a_new_connection_prepares_again(client_a, space_a):
    tell(client_a, space_a, "We run a fleet of four vans.")
    assert post_recall(client_a, space_a, "How many vans do you have?").json()["memories"]
    used = connection.connection
    used.close()  # the server session, and its prepared statements, end; the pool drops the closed connection
    connection.close()
    with CaptureQueriesContext(connection) as captured:
        response = post_recall(client_a, space_a, "How many vans do you have?")
    assert [m["content"] for m in response.json()["memories"]][:1] == ["We run a fleet of four vans."]
    assert connection.connection is not used
    assert [q for q in captured.captured_queries if q["sql"].startswith("PREPARE ")]


def test_a_statement_the_server_holds_unrecorded_is_not_prepared_twice(client_a, space_a):
    # An exception between a PREPARE and its bookkeeping must not fail every later request of that shape.
    tell(client_a, space_a, "We run a fleet of four vans.")
    assert post_recall(client_a, space_a, "How many vans do you have?").json()["memories"]
    prepared_statements.forget_connection(connection.connection)
    with CaptureQueriesContext(connection) as captured:
        response = post_recall(client_a, space_a, "How many vans do you have?")
    assert [m["content"] for m in response.json()["memories"]][:1] == ["We run a fleet of four vans."]
    assert not [q for q in captured.captured_queries if q["sql"].startswith("PREPARE ")]


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


def test_server_timings_embed_phase_holds_the_querys_first_embedding(client_a, space_a, monkeypatch):
    """The learned reading embeds a new question before recall's own (cached) embedding does: that first
    embedding is the ``embed`` phase, so ``total - embed`` is the server's own time, not the model's."""
    tell(client_a, space_a, "We run a fleet of four vans.")
    engine = local_embedder().inner
    computed = engine.embed

    def slow(texts, **options):
        time.sleep(0.05)
        return computed(texts, **options)

    monkeypatch.setattr(engine, "embed", slow)
    response = post_recall(client_a, space_a, "Which vehicles does the company operate these days?")
    phases = {name: float(ms) for name, ms in re.findall(r"(\w+);dur=([0-9.]+)", response["Server-Timing"])}
    assert phases["embed"] >= 50.0
    assert phases["total"] - phases["embed"] < 50.0


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


def visible_space_ids():
    return {str(pk) for pk in Space.objects.values_list("pk", flat=True)}


def test_scope_survives_a_rolled_back_savepoint_that_carried_it(space_a, space_b):
    with transaction.atomic():
        scope.clear_scope()
        with scope.scope_with_next_statement(space_a.tenant_id, space_a):
            with pytest.raises(DatabaseError), transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SELECT 1/0")
            assert scope.current_scope() == (str(space_a.tenant_id), str(space_a.pk))
            assert visible_space_ids() == {str(space_a.pk)}


def test_server_side_cursor_first_still_scoped(space_a, space_a2, space_b):
    with transaction.atomic():
        scope.clear_scope()
        with scope.scope_with_next_statement(space_a.tenant_id):
            ids = {str(pk) for pk in Space.objects.values_list("pk", flat=True).iterator(chunk_size=1)}
        assert ids == {str(space_a.pk), str(space_a2.pk)}
        assert scope.current_scope() == (str(space_a.tenant_id), "")


def test_server_side_cursor_first_runs_in_the_previous_scope(space_a, space_b):
    with transaction.atomic():
        scope.enter_scope(space_b.tenant_id, space_b)
        with scope.scope_with_next_statement(space_a.tenant_id, space_a):
            ids = {str(pk) for pk in Space.objects.values_list("pk", flat=True).iterator(chunk_size=1)}
        assert str(space_b.pk) not in ids, "a statement of tenant A's block read tenant B's space"
        assert scope.current_scope() == (str(space_a.tenant_id), str(space_a.pk))


def test_other_thread_gets_no_scope_from_the_block(space_a):
    seen = []

    def other():
        try:
            with transaction.atomic():
                seen.append(visible_space_ids())
        finally:
            connection.close()

    with transaction.atomic():
        scope.clear_scope()
        with scope.scope_with_next_statement(space_a.tenant_id, space_a):
            thread = threading.Thread(target=other)
            thread.start()
            thread.join()
            assert visible_space_ids() == {str(space_a.pk)}
    assert seen == [set()]


def test_exception_before_any_statement_leaves_the_previous_scope_not_a_half_one(space_a, space_b):
    with transaction.atomic():
        scope.enter_scope(space_b.tenant_id, space_b)
        with pytest.raises(RuntimeError), scope.scope_with_next_statement(space_a.tenant_id, space_a):
            raise RuntimeError("embedding failed before recall's statement")
        # The wrapper is gone: the next statement is not silently re-scoped, and the old scope is whole.
        assert not connection.execute_wrappers
        assert scope.current_scope() == (str(space_b.tenant_id), str(space_b.pk))


def test_scope_value_is_a_parameter_not_sql(space_a):
    with transaction.atomic(), pytest.raises((ValueError, AttributeError, TypeError)):
        with scope.scope_with_next_statement("x'; SET LOCAL engram.maintenance = 'on'; --"):
            visible_space_ids()


def test_a_setting_from_a_request_is_a_quoted_literal_not_sql():
    """SET LOCAL takes no parameters: a key prefix read from a header is written into the statement quoted."""
    hostile = "ab'; SET LOCAL engram.maintenance = 'on'; --\\"
    with transaction.atomic():
        scope.allow_api_key_lookup(hostile)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('engram.api_key_prefix'), "
                "coalesce(current_setting('engram.maintenance', true), '')"
            )
            assert cursor.fetchone() == (hostile, "")


def test_two_requests_on_one_thread_do_not_share_a_scope(client_a, client_b, space_a, space_b):
    tell(client_a, space_a, "Alice's vans are blue.")
    tell(client_b, space_b, "Bob's vans are red.")
    for client, _own, other in ((client_b, "red", "blue"), (client_a, "blue", "red"), (client_b, "red", "blue")):
        body = client.post(
            reverse("recall", args=["customer-1"]), {"query": "What colour are the vans?"}, format="json"
        )
        contents = " ".join(m["content"] for m in body.json()["memories"])
        assert other not in contents


@pytest.mark.parametrize(
    "query",
    [
        "vans'; DROP TABLE memory_memory; --",
        "vans %s %(x)s {} {{}} ) UNION SELECT * FROM tenants_apikey --",
        "vans\x00 nul",
        "vans $$ $1 ::text[] ANY(",
    ],
)
def test_hostile_query_text_is_data(client_a, client_b, space_a, space_b, query):
    tell(client_a, space_a, "We run a fleet of four vans.")
    tell(client_b, space_b, "Bob runs a fleet of red vans.")
    response = client_a.post(reverse("recall", args=[space_a.external_id]), {"query": query}, format="json")
    assert response.status_code in (200, 400), response.content
    if response.status_code == 200:
        assert all("Bob" not in m["content"] for m in response.json()["memories"])
    assert (
        client_b.post(reverse("recall", args=[space_b.external_id]), {"query": "vans"}, format="json").status_code
        == 200
    )


@pytest.mark.parametrize(
    "body",
    [
        {"query": "vans", "kinds": ["fact'; --"]},
        {"query": "vans", "kinds": "fact"},
        {"query": "vans", "limit": "5; DROP TABLE x"},
        {"query": "vans", "limit": 0},
        {"query": "vans", "limit": 10**9},
        {"query": "vans", "kinds": []},
    ],
)
def test_hostile_kinds_and_limit_are_a_400(client_a, space_a, body):
    response = client_a.post(reverse("recall", args=[space_a.external_id]), body, format="json")
    assert response.status_code == 400, response.content


def test_candidate_statement_stays_in_the_space_with_a_tenant_wide_scope(client_a, space_a, space_a2):
    """Defence in depth: with only the tenant in scope (RLS shows both spaces), the one statement still
    returns only the asked space's rows (space_id in every part and in the outer select)."""
    from memory.recall import search

    tell(client_a, space_a2, "The depot in Leeds opens at seven.", "Leeds depot vans are serviced on Fridays.")
    tell(client_a, space_a, "The depot in York opens at nine.")
    with transaction.atomic():
        scope.enter_scope(space_a.tenant_id)  # tenant-wide: both spaces visible to RLS
        assert Memory.objects.filter(space=space_a2).exists(), "the check needs the other space visible"
        result = search.recall(space=space_a, query="When does the Leeds depot open on Fridays?")
        seen = {str(s.item.space_id) for s in result.candidates}
        contents = " ".join(str(h.get("content", "")) for h in result.hits)
        assert "Leeds" not in contents, contents
        assert result.candidates, "nothing considered: the check proved nothing"
        assert seen <= {str(space_a.pk)}, seen


def test_behind_a_transaction_pooler_statements_are_sent_whole(client_a, space_a, settings):
    # A pooler in transaction mode may send an EXECUTE to another server connection than its PREPARE.
    settings.ENGRAM_PREPARED_STATEMENTS = False
    tell(client_a, space_a, "We run a fleet of four vans.")
    with CaptureQueriesContext(connection) as captured:
        response = post_recall(client_a, space_a, "How many vans do you have?")
    assert [m["content"] for m in response.json()["memories"]][:1] == ["We run a fleet of four vans."]
    sent = [q["sql"] for q in captured.captured_queries]
    assert not [sql for sql in sent if sql.startswith(("PREPARE ", "EXECUTE "))]
    assert [sql for sql in sent if "memory_memory" in sql and "tenants_" not in sql]


def test_a_statement_prepared_for_one_tenant_returns_another_tenant_only_its_own_rows(
    client_a, client_b, space_a, space_b
):
    # Same connection, same statement shape, prepared during tenant A's request and executed for tenant B's:
    # the values and the row-level-security scope are read at each execution, never kept with the plan.
    tell(client_a, space_a, "We run a fleet of four vans.")
    tell(client_b, space_b, "We run a fleet of nine vans.")
    for _ in range(7):  # past PostgreSQL's five custom plans, when a generic plan may be cached
        assert contents_of(post_recall(client_a, space_a, "How many vans do you have?"))[:1] == [
            "We run a fleet of four vans."
        ]
    with CaptureQueriesContext(connection) as captured:
        for_b = contents_of(post_recall(client_b, space_b, "How many vans do you have?"))
    assert not [q for q in captured.captured_queries if q["sql"].startswith("PREPARE ")], "the same statement"
    assert "We run a fleet of four vans." not in for_b
    assert for_b[:1] == ["We run a fleet of nine vans."]


def contents_of(response):
    assert response.status_code == 200, response.content
    return [m["content"] for m in response.json()["memories"] if m["kind"] != "topic"]
