"""The console as an operator investigates a customer and support matches the audit: through Django's
test client against the real database. Browser-level checks live in test_console_browser.py."""

from __future__ import annotations

import csv
import datetime
import io

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from memory.models import DeletionAudit, Memory, Turn
from tenants import scope
from tenants.models import Membership
from tenants.tenant_admin import create_operator
from tests.conftest import make_space
from tests.support.console import login

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-password"
STORED = "Our company makes furniture."


def say(client, space, message, session="s", **extra):
    url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
    response = client.post(url, {"message": message, "session_id": session, **extra}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def audit(tenant, space_external_id, *, number: int, cause="operator", limits=None) -> DeletionAudit:
    """An audit row as the deletion service writes it (the audit is append-only: no backdating)."""
    with scope.tenant_scope(tenant):
        return DeletionAudit.objects.create(
            tenant_id=tenant.id, space_uuid=tenant.id, space_external_id=space_external_id,
            memory_id=f"00000000-0000-4000-8000-{number:012d}", memory_kind="fact", cause=cause,
            actor="operator olga", limits=limits or {}, content_digest="x" * 64,
        )  # fmt: skip


def csv_rows(response) -> list[dict]:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


# Deletion audit


def test_the_csv_export_holds_exactly_the_rows_the_filters_match(client, tenant_a):
    old = audit(tenant_a, "customer-1", number=1, limits={"forget_floor": 0.06, "max_deletions_per_request": 3})
    boundary = timezone.now().isoformat()
    recent = audit(tenant_a, "customer-1", number=2, cause="customer_request")
    other = audit(tenant_a, "customer-2", number=3)
    login(client, tenant_a, "support")
    url = reverse("console:deletions-csv")
    ids = [str(r.memory_id) for r in (other, recent)]
    assert [r["memory_id"] for r in csv_rows(client.get(url, {"since": boundary}))] == ids
    assert [r["memory_id"] for r in csv_rows(client.get(url, {"until": boundary}))] == [str(old.memory_id)]
    assert csv_rows(client.get(url, {"until": "2020-01-01"})) == []  # the table said "none": so does the file
    only = csv_rows(client.get(url, {"space": "customer-1", "cause": "customer_request"}))
    assert [r["memory_id"] for r in only] == [str(recent.memory_id)]
    [old_row] = csv_rows(client.get(url, {"until": boundary}))
    assert old_row["limits"] == "forget_floor: 0.06; max_deletions_per_request: 3"
    assert old_row["matched_distance"] == ""  # support gets no distances in the file either
    # The table's export link carries the filters it shows.
    page = client.get(reverse("console:deletions"), {"since": "2026-10-01", "space": "customer-1"}).content.decode()
    assert 'href="/console/deletions/export.csv?space=customer-1&amp;since=2026-10-01"' in page


@pytest.mark.parametrize("params", [{"since": "last tuesday"}, {"until": "2026-02-30"}, {"cause": "boredom"}])
def test_a_bad_filter_is_a_400_that_says_why_in_the_table_and_the_export(client, tenant_a, params):
    audit(tenant_a, "customer-1", number=1)
    login(client, tenant_a, "support")
    page = client.get(reverse("console:deletions"), params)
    assert page.status_code == 400
    field = next(iter(params))
    assert f"{field}: ".encode() in page.content and b"Fix the filter above" in page.content
    assert b"Export CSV" not in page.content  # no link to an export that would ignore the bad filter
    export = client.get(reverse("console:deletions-csv"), params)
    assert export.status_code == 400 and f"{field}: ".encode() in export.content


def test_the_audit_table_shows_full_memory_ids_and_readable_limits(client, tenant_a):
    row = audit(tenant_a, "customer-1", number=1, limits={"forget_floor": 0.06})
    login(client, tenant_a, "support")
    page = client.get(reverse("console:deletions")).content.decode()
    assert str(row.memory_id) in page
    assert "forget_floor: 0.06" in page and "{" not in page.split("audit-rows")[1].split("</table>")[0]


def test_the_check_form_keeps_the_filters_and_lists_every_matching_deletion(client, client_a, tenant_a, space_a):
    for session in ("one", "two"):  # the same text learnt, then deleted, twice
        say(client_a, space_a, STORED, session=session)
        with scope.tenant_scope(tenant_a, space_a):
            memory = Memory.objects.get(kind="fact")
        assert client_a.delete(reverse("memory-detail", args=[space_a.external_id, memory.id])).status_code == 204
    login(client, tenant_a, "support")
    with scope.tenant_scope(tenant_a):
        deleted = {str(i) for i in DeletionAudit.objects.filter(memory_kind="fact").values_list("memory_id", flat=True)}
    assert len(deleted) == 2
    page = client.post(reverse("console:deletion-check"), {
        "space": space_a.external_id, "text": STORED, "filter_space": space_a.external_id, "cause": "api_key",
        "since": "2020-01-01"}).content.decode()  # fmt: skip
    assert "Yes: deleted 2 times" in page
    found = page.split('id="check-found"')[1].split("</table>")[0]
    assert all(memory_id in found for memory_id in deleted)
    assert f'name="filter_space" value="{space_a.external_id}"' in page and 'value="2020-01-01"' in page
    assert '<option value="api_key" selected>' in page
    assert STORED not in page  # support never sees the text, not even the one they typed back


# Destructive actions


def test_every_destructive_control_asks_first_and_names_its_object(client, tenant_a, space_a):
    admin = login(client, tenant_a, "admin", username="ada")
    other = create_operator(tenant=tenant_a, username="olga", password=PASSWORD, role="operator")
    client.post(reverse("console:api-keys"), {"name": "demo key", "scopes": ["turns"]})
    keys = client.get(reverse("console:api-keys")).content.decode()
    assert 'hx-confirm="Revoke the API key “demo key”' in keys
    members = client.get(reverse("console:members")).content.decode()
    assert 'hx-confirm="Remove olga (operator) from this tenant?' in members
    assert 'hx-confirm="Change the role of olga (now operator)?' in members
    # Your own row offers no control that would lock you out.
    assert f'action="/console/members/{admin.id}/"' not in members
    assert f'action="/console/members/{other.id}/"' in members


def test_an_admin_cannot_remove_or_demote_themselves(client, tenant_a):
    admin = login(client, tenant_a, "admin", username="ada")
    url = reverse("console:change-member", args=[admin.id])
    client.post(url, {"action": "remove"})
    client.post(url, {"role": "support"})
    with scope.tenant_scope(tenant_a):
        assert Membership.objects.get(pk=admin.pk).role == "admin"


def test_a_refused_page_keeps_the_console_header_and_says_why(client, tenant_a):
    login(client, tenant_a, "support")
    page = client.get(reverse("console:api-keys"))
    assert page.status_code == 403
    body = page.content.decode()
    assert "Not allowed" in body and "Log out" in body and 'href="/console/spaces/"' in body
    assert "support role" in body


def test_the_favicon_and_the_skip_link_are_there(client, tenant_a):
    icon = client.get("/favicon.ico")
    assert icon.status_code in (301, 302) and icon["Location"].endswith("favicon.svg")
    login(client, tenant_a, "operator")
    page = client.get(reverse("console:overview")).content.decode()
    assert 'class="skip-link" href="#main"' in page and 'id="main"' in page


# Space page


@pytest.fixture
def customer(client_a, space_a):
    say(client_a, space_a, "We run a fleet of four vans.", session="first")
    say(client_a, space_a, "Our renewal is in May.", session="second")
    say(client_a, space_a, STORED, session="third")
    return space_a


def test_an_operator_filters_memories_by_text_kind_and_date(client, tenant_a, customer):
    login(client, tenant_a, "operator")
    url = reverse("console:space", args=[customer.external_id])
    vans = client.get(url, {"q": "VANS"}).content.decode()
    assert "four vans" in vans and "renewal" not in vans
    assert "No memories match" in client.get(url, {"q": "zeppelin"}).content.decode()
    assert "renewal" in client.get(url, {"kind": "fact", "since": "2020-01-01"}).content.decode()
    assert "No memories match" in client.get(url, {"until": "2020-01-01"}).content.decode()
    bad = client.get(url, {"kind": "gossip", "since": "soon"})
    assert bad.status_code == 400 and b"kind: choose from" in bad.content and b"since: use an ISO 8601" in bad.content


def test_the_memory_list_pages_and_shows_ids_and_provenance(client, tenant_a, customer):
    with scope.tenant_scope(tenant_a, customer):
        fact = Memory.objects.filter(kind="fact").prefetch_related("source_session").first()
        turn = Turn.objects.get(space=customer, created_ids__contains=[fact.id])
    login(client, tenant_a, "operator")
    page = client.get(reverse("console:space", args=[customer.external_id])).content.decode()
    row = page.split(f'id="memory-{fact.id}"')[1].split("</tr>")[0]
    assert str(fact.id) in row and str(fact.source_message_id) in row
    assert f"/console/spaces/{customer.external_id}/turns/{turn.id}/" in row
    assert f"/console/spaces/{customer.external_id}/sessions/{fact.source_session.external_id}/" in row


def test_support_may_not_search_memory_text_it_cannot_read(client, tenant_a, customer):
    login(client, tenant_a, "support")
    url = reverse("console:space", args=[customer.external_id])
    for params in ({"q": "vans"}, {"topic": "fleet"}):
        response = client.get(url, params)
        # A match count would tell support what a memory says: the search is refused, not run.
        assert response.status_code == 400 and b"need a role that reads memory text" in response.content
        assert b"memory-count" in response.content and b"0 memories" in response.content
    assert b"Edit" not in client.get(url).content


def test_an_operator_edits_a_memory_through_the_same_service_as_the_api(client, client_a, tenant_a, customer):
    with scope.tenant_scope(tenant_a, customer):
        fact = Memory.objects.filter(kind="fact").first()
    login(client, tenant_a, "operator")
    url = reverse("console:memory-edit", args=[customer.external_id, fact.id])
    assert fact.content in client.get(url).content.decode()
    response = client.post(url, {"content": "We run a fleet of five vans.", "topic": "fleet", "importance": "0.9"})
    assert response.status_code == 302
    api = client_a.get(reverse("memory-detail", args=[customer.external_id, fact.id])).json()
    assert api["content"] == "We run a fleet of five vans." and api["importance"] == 0.9


@pytest.mark.parametrize(
    "form, message",
    [({"content": "  ", "importance": "0.5"}, b"content: Must be non-empty"),
     ({"content": "Fine text.", "importance": "2"}, b"importance: give a number between 0 and 1"),
     ({"content": "Fine text.", "importance": "nan"}, b"importance: give a number between 0 and 1")],
)  # fmt: skip
def test_a_bad_edit_is_a_400_and_changes_nothing(client, tenant_a, customer, form, message):
    with scope.tenant_scope(tenant_a, customer):
        fact = Memory.objects.filter(kind="fact").first()
    login(client, tenant_a, "operator")
    response = client.post(reverse("console:memory-edit", args=[customer.external_id, fact.id]), form)
    assert response.status_code == 400 and message in response.content
    with scope.tenant_scope(tenant_a, customer):
        after = Memory.objects.get(pk=fact.pk)
    assert (after.content, after.importance) == (fact.content, fact.importance)


def test_support_cannot_edit_and_another_tenants_memory_is_not_found(client, tenant_a, tenant_b, customer):
    with scope.tenant_scope(tenant_a, customer):
        fact = Memory.objects.filter(kind="fact").first()
        turn = Turn.objects.filter(space=customer).first()
    login(client, tenant_a, "support")
    url = reverse("console:memory-edit", args=[customer.external_id, fact.id])
    assert client.post(url, {"content": "Vandalised."}).status_code == 403
    make_space(tenant_b, customer.external_id)  # same external id, other tenant
    client.logout()
    login(client, tenant_b, "operator", username="bob-op")
    assert client.post(url, {"content": "Vandalised."}).status_code == 404
    assert client.get(reverse("console:turn", args=[customer.external_id, turn.id])).status_code == 404
    with scope.tenant_scope(tenant_a, customer):
        assert Memory.objects.get(pk=fact.pk).content == fact.content


def test_a_forget_turn_shows_what_it_forgot_not_created_0(client, client_a, tenant_a, customer):
    say(client_a, customer, "Forget what you know about our furniture.", session="fourth")
    with scope.tenant_scope(tenant_a, customer):
        turn = Turn.objects.filter(space=customer, forget_handled=True).get()
    with scope.tenant_scope(tenant_a):
        forgotten = DeletionAudit.objects.filter(turn_id=turn.id, memory_kind="fact").get()
    login(client, tenant_a, "operator")
    space_page = client.get(reverse("console:space", args=[customer.external_id])).content.decode()
    assert "forget request: " in space_page
    page = client.get(reverse("console:turn", args=[customer.external_id, turn.id])).content.decode()
    assert "Forget what you know about our furniture." not in page  # transcripts are not kept here
    assert "Text not kept" in page and "&#x27;digest&#x27;" not in page  # no raw dict in the notices area
    assert str(forgotten.memory_id) in page.split('id="turn-forgotten"')[1]


def turn_row_text(tenant, turn_id) -> str:
    """The whole Turn row as the database holds it."""
    with scope.tenant_scope(tenant), connection.cursor() as cursor:
        cursor.execute(f"SELECT row_to_json(t)::text FROM {Turn._meta.db_table} t WHERE id = %s", [turn_id])
        return cursor.fetchone()[0]


def reply_line(page: str) -> str:
    return page.split('id="turn-forget-reply">')[1].split("</p>")[0]


def test_a_forget_turn_shows_the_reply_the_customer_got_with_ids_not_the_deleted_text(
    client, client_a, tenant_a, customer
):
    with scope.tenant_scope(tenant_a, customer):
        [deleted] = [m for m in Memory.objects.filter(kind="fact") if "furniture" in m.content]
    body = say(client_a, customer, "Forget what you know about our furniture.", session="fourth")
    assert deleted.content in body["confirmation"]  # the customer was told the text itself
    ids = [d["id"] for d in body["forgotten"]]  # the fact, and its topic "furniture" with it
    assert str(deleted.id) in ids
    with scope.tenant_scope(tenant_a, customer):
        turn = Turn.objects.get(pk=body["turn_id"])
    # The reply on record names the statements; the topic tag that went with them is not part of the answer.
    statement_ids = [d["id"] for d in body["forgotten"] if d["kind"] != "topic"]
    assert turn.forget_reply == {"language": "en", "template": "done", "memory_ids": statement_ids, "more_matched": 0}
    row = turn_row_text(tenant_a, turn.id)
    assert all(i in row for i in statement_ids) and "furniture" not in row.lower()
    url = reverse("console:turn", args=[customer.external_id, turn.id])
    for role in ("operator", "support"):
        login(client, tenant_a, role)
        page = client.get(url).content.decode()
        items = "; ".join(f"«memory {i}»" for i in statement_ids)
        said = f'The customer was told (en): <span lang="en">Done, I have forgotten: {items}.</span>'
        assert reply_line(page) == said
        assert "furniture" not in page.lower()
        client.logout()


def test_forget_everything_shows_the_reply_that_routes_to_an_operator(client, client_a, tenant_a, customer):
    body = say(client_a, customer, "Forget everything you know about me.", session="fourth")
    assert body["needs_operator"] is True
    login(client, tenant_a, "support")
    page = client.get(reverse("console:turn", args=[customer.external_id, body["turn_id"]])).content.decode()
    line = reply_line(page)
    assert line.startswith("The customer was told (en): ")
    assert "I can&#x27;t erase everything from a single message." in line and "service operator" in line
    with scope.tenant_scope(tenant_a, customer):
        assert Turn.objects.get(pk=body["turn_id"]).forget_reply["template"] == "needs_operator"


def test_a_turn_that_forgot_nothing_shows_no_reply_and_an_unmatched_request_says_so(
    client, client_a, tenant_a, customer
):
    with scope.tenant_scope(tenant_a, customer):
        ordinary = Turn.objects.filter(space=customer).first()
    login(client, tenant_a, "operator")
    page = client.get(reverse("console:turn", args=[customer.external_id, ordinary.id])).content.decode()
    assert "turn-forget-reply" not in page and "The customer was told" not in page
    assert ordinary.forget_reply is None
    body = say(client_a, customer, "Forget what you know about our zeppelins.", session="fourth")
    assert body["forgotten"] == [] and body["confirmation"].startswith("I had nothing stored")
    page = client.get(reverse("console:turn", args=[customer.external_id, body["turn_id"]])).content.decode()
    assert "I had nothing stored about that, so there was nothing to forget." in reply_line(page)


def test_a_turn_shows_rejected_entries_with_reasons_and_support_sees_reasons_only(
    client, client_a, tenant_a, space_a, openai_engines
):
    client_a.patch(f"/api/v1/spaces/{space_a.external_id}", {"settings": {"keep_transcripts": True}}, format="json")
    openai_engines.replies = [{"entries": [{
        "kind": "fact", "content": "The company makes furniture.", "topic": "business", "importance": 0.8,
        "keywords": ["furniture"], "quote": "Yes, that's right", "event_days_ago": None}]}]  # fmt: skip
    body = say(client_a, space_a, "Yes, that's right.", session="chat-1")
    login(client, tenant_a, "operator", username="olga")
    url = reverse("console:turn", args=[space_a.external_id, body["turn_id"]])
    page = client.get(url).content.decode()
    rejected = page.split('id="turn-rejected"')[1].split("</ul>")[0]
    assert "The company makes furniture." in rejected and "words are in the customer" in rejected
    assert "Yes, that&#x27;s right." in page  # the kept message itself
    transcript = client.get(reverse("console:transcript", args=[space_a.external_id, "chat-1"])).content.decode()
    assert "Yes, that&#x27;s right." in transcript
    client.logout()
    login(client, tenant_a, "support", username="sam")
    page = client.get(url).content.decode()
    assert "furniture" not in page and "that&#x27;s right" not in page and "words are in the customer" in page
    assert "company" not in page  # grounding's reason names the missing words: support gets the class only
    transcript = client.get(reverse("console:transcript", args=[space_a.external_id, "chat-1"])).content.decode()
    assert "that&#x27;s right" not in transcript and "message metadata only" in transcript


# Thresholds and playground


def test_thresholds_mark_overrides_and_reset_one_to_the_default(client, client_a, tenant_a, space_a):
    client_a.patch(f"/api/v1/spaces/{space_a.external_id}", {"settings": {"recall_distance": 0.12}}, format="json")
    login(client, tenant_a, "operator")
    url = reverse("console:thresholds", args=[space_a.external_id])
    page = client.get(url).content.decode()
    assert 'id="origin-recall_distance">set for this space' in page
    assert 'id="origin-dedup_distance">built-in default' in page
    assert 'id="reset-recall_distance"' in page and 'id="reset-dedup_distance"' not in page
    assert '<output class="slider-value" id="value-recall_distance" for="recall_distance">0.120</output>' in page
    # Resetting one setting posts the whole form too: only that setting changes.
    form = {"reset": "recall_distance", "dedup_distance": "0.3", "flags_present": "1"}
    assert client.post(url, form).status_code == 302
    with scope.tenant_scope(tenant_a, space_a):
        space_a.refresh_from_db()
    assert space_a.settings == {}
    refused = client.post(url, {"reset": "dedup_distance"})
    assert refused.status_code == 400 and b"nothing to reset" in refused.content


def test_the_preview_sends_each_sliders_value_back_beside_it(client, tenant_a, space_a):
    login(client, tenant_a, "operator")
    url = reverse("console:threshold-preview", args=[space_a.external_id])
    fragment = client.get(url, {"dedup_distance": "0.25"}, HTTP_HX_REQUEST="true").content.decode()
    assert 'id="value-dedup_distance" for="dedup_distance" hx-swap-oob="true">0.250</output>' in fragment


def test_each_threshold_says_in_words_what_passes_at_its_value(client, tenant_a, space_a):
    login(client, tenant_a, "operator")
    page = client.get(reverse("console:thresholds", args=[space_a.external_id])).content.decode()
    assert "Cosine distance under which two facts of one kind merge." in page
    examples = page.split('id="examples-dedup_distance"')[1].split("</ul>")[0]
    # At the default 0.07 a restatement merges, a different business does not, and a changed number sits as
    # close as a restatement (why merging also asks for the same terms).
    assert "“We have four delivery vans.”: <strong>close enough to merge" in examples
    assert "“We sell garden furniture.”: <strong>too far apart to merge</strong>" in examples
    assert "“We run six delivery vans.”: <strong>close enough to merge" in examples
    recall = page.split('id="examples-corroborated_recall_distance"')[1].split("</ul>")[0]
    assert "“I live in Leeds.”: <strong>is recalled with a keyword or topic match</strong>" in recall
    weights = page.split('<fieldset class="weights">')[1].split("</fieldset>")[0]  # a legend, one label per input
    assert "<legend>Strategy weights" in weights and '<label for="strategy_weights__vector">vector</label>' in weights
    # Moving the slider brings the pairs back beside it with the new outcome.
    url = reverse("console:threshold-preview", args=[space_a.external_id])
    fragment = client.get(url, {"dedup_distance": "0.05"}, HTTP_HX_REQUEST="true").content.decode()
    moved = fragment.split('id="examples-dedup_distance" hx-swap-oob="true"')[1].split("</ul>")[0]
    assert "“We run six delivery vans.”: <strong>too far apart to merge</strong>" in moved
    assert "“We have four delivery vans.”: <strong>close enough to merge" in moved


def test_support_reads_thresholds_without_controls_or_links_that_refuse(client, tenant_a, space_a):
    login(client, tenant_a, "support")
    page = client.get(reverse("console:thresholds", args=[space_a.external_id])).content.decode()
    assert 'id="settings-readonly"' in page and "Recall distance (meaning alone)" in page
    assert "Cosine distance under which a memory is recalled on meaning alone." in page  # what it means, in words
    assert "<input" not in page.split("<main")[1] and "<select" not in page.split("<main")[1]
    assert reverse("console:tenant-defaults") not in page  # a link support would only get a 403 from


def test_the_playground_shows_the_prompt_block_and_its_share_of_the_budget(client, client_a, tenant_a, space_a):
    say(client_a, space_a, "We run a fleet of four vans.")
    say(client_a, space_a, "Our renewal is in May.")
    login(client, tenant_a, "operator")
    page = client.get(reverse("console:playground"), {"space": space_a.external_id, "message": "How many vans?"})
    body = page.content.decode()
    block = body.split('id="prompt-block">')[1].split("</pre>")[0]
    assert "We run a fleet of four vans." in block and "renewal" not in block
    budget = body.split('id="prompt-budget">')[1].split("</p>")[0]
    assert " of 600 tokens (" in budget and "% of the budget)" in budget
    assert "0.0000" not in body  # rows that did not pass show no fused score of zero


# Overview and the spaces list


def test_the_spaces_list_shows_counts_last_activity_and_filters_by_kind(client, tenant_a, customer):
    make_space(tenant_a, "agents", kind="shared")
    make_space(tenant_a, "quiet-customer")
    login(client, tenant_a, "support")
    url = reverse("console:spaces")
    page = client.get(url).content.decode()
    with scope.tenant_scope(tenant_a, customer):
        current = Memory.objects.filter(space=customer, superseded_by__isnull=True).count()
    row = page.split(f">{customer.external_id}</a>")[1].split("</tr>")[0]
    assert f'<td class="memory-count" data-label="Memories">{current}</td>' in row
    assert timezone.now().strftime("%Y-%m-%d") in row
    quiet = page.split(">quiet-customer</a>")[1].split("</tr>")[0]
    assert '<td class="memory-count" data-label="Memories">0</td>' in quiet and "never" in quiet
    shared_only = client.get(url, {"kind": "shared"}).content.decode()
    assert ">agents</a>" in shared_only and "quiet-customer" not in shared_only
    assert "No spaces match" in client.get(url, {"turns": "failed"}).content.decode()
    bad = client.get(url, {"kind": "gossip", "turns": "lost"})
    assert bad.status_code == 400 and b"kind: choose from" in bad.content and b"turns: choose from" in bad.content


def test_overview_figures_link_to_the_lists_they_count(client, tenant_a):
    login(client, tenant_a, "admin")
    page = client.get(reverse("console:overview")).content.decode()
    assert 'href="/console/spaces/?turns=failed"' in page and 'href="/console/spaces/?turns=queued"' in page
    week_ago = (timezone.now() - datetime.timedelta(days=6)).date().isoformat()
    assert f'href="/console/deletions/?since={week_ago}"' in page
    client.logout()
    login(client, tenant_a, "operator")
    assert "/console/deletions/" not in client.get(reverse("console:overview")).content.decode()  # it would 403


def test_a_turn_or_session_of_another_space_is_not_found_under_this_one(client, client_a, tenant_a, space_a, space_a2):
    body = say(client_a, space_a2, "We run a fleet of four vans.", session="chat-elsewhere")
    login(client, tenant_a, "operator")
    assert client.get(reverse("console:turn", args=[space_a.external_id, body["turn_id"]])).status_code == 404
    assert client.get(reverse("console:transcript", args=[space_a.external_id, "chat-elsewhere"])).status_code == 404
    own = client.get(reverse("console:transcript", args=[space_a2.external_id, "chat-elsewhere"]))
    assert own.status_code == 200 and b"chat-elsewhere" in own.content


def test_deleting_a_case_asks_first_naming_when_and_by_whom_it_was_added(client, client_a, tenant_a):
    make_space(tenant_a, "agents", kind="shared")
    resolve = {"input": "The courier lost parcel 7781", "outcome": "Send voucher VX-55", "resolution_comment": "ok",
               "agent": "triage"}  # fmt: skip
    assert client_a.post("/api/v1/spaces/agents/escalations/resolve", resolve, format="json").status_code == 201
    login(client, tenant_a, "operator")
    page = client.get(reverse("console:space", args=["agents"])).content.decode()
    assert 'hx-confirm="Delete the resolution added ' in page
    assert " by triage (outcome: Send voucher VX-55) for good?" in page
