"""Forgetting in conversation: judged, bounded by code, read back, permanent and audited."""

import csv
import io
import subprocess

import pytest
from django.db import connection
from django.db.utils import InternalError, ProgrammingError
from django.urls import reverse

from memory.forgetting.conversational import confirmation_for, confirmation_on_record
from memory.forgetting.deletion import Deleted
from memory.forgetting.judge import read_intent
from memory.models import DeletionAudit, Memory, Message
from memory.text import lexicon
from memory.text.vectors import embed_for_space
from tenants import scope
from tenants.models import SpaceKey

pytestmark = pytest.mark.django_db


def say(client, space, message, session="s", **extra):
    url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
    response = client.post(url, {"message": message, "session_id": session, **extra}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def facts(space):
    with scope.tenant_scope(space.tenant_id, space):
        return sorted(m.content for m in Memory.objects.exclude(kind="topic"))


def audit_rows(space):
    with scope.tenant_scope(space.tenant_id):
        return list(DeletionAudit.objects.filter(space_uuid=space.id).order_by("occurred_at"))


@pytest.mark.parametrize(
    "stored, request_text, expected_word",
    [
        ("Our company makes furniture.", "We don't make furniture.", "Done"),
        ("Our company makes furniture.", "That's not my company, we don't make furniture.", "Done"),
        ("Our company makes furniture.", "Forget what you know about our furniture.", "Done"),
        ("Наша компания производит мебель.", "Мы не делаем мебель.", "Готово"),
        ("Наша компания производит мебель.", "Это не моя компания, мы не производим мебель.", "Готово"),
        ("Наша компания производит мебель.", "Забудьте, что вы знаете о нашей мебели.", "Готово"),
        ("当社は家具を作っています。", "家具は作っていません。", "承知しました"),
        ("当社は家具を作っています。", "それは私の会社ではありません。家具は作っていません。", "承知しました"),
        ("当社は家具を作っています。", "家具について忘れてください。", "承知しました"),
    ],
)
def test_a_correction_or_forget_request_deletes_the_entry_and_reads_it_back(
    client_a, space_a, stored, request_text, expected_word
):
    say(client_a, space_a, stored, session="first")
    say(client_a, space_a, "We run a fleet of four vans.", session="second")
    body = say(client_a, space_a, request_text, session="third")
    forgotten = [f for f in body["forgotten"] if f["kind"] != "topic"]
    assert [f["content"] for f in forgotten] == [stored]
    assert body["confirmation"].startswith(expected_word)
    assert stored in body["confirmation"]
    assert facts(space_a) == ["We run a fleet of four vans."]
    [row] = [r for r in audit_rows(space_a) if r.memory_kind != "topic"]
    assert row.cause == "customer_request" and row.turn_id is not None
    assert row.limits == {"forget_floor": 0.06, "max_deletions_per_request": 3}
    if read_intent(request_text).kind != "explicit":  # a named target ("about X") may lie beyond the floor
        assert 0 <= row.matched_distance <= 0.1


def test_forget_what_you_know_about_x_on_an_account_with_nothing_about_x_deletes_nothing(client_a, space_a):
    say(client_a, space_a, "We run a fleet of four vans.", session="a")
    say(client_a, space_a, "Our renewal is in May.", session="b")
    body = say(client_a, space_a, "Forget what you know about zebras.", session="c")
    assert body["forgotten"] == []
    assert body["confirmation"].startswith("I had nothing stored")
    assert facts(space_a) == ["Our renewal is in May.", "We run a fleet of four vans."]
    assert audit_rows(space_a) == []


def test_a_statement_that_negates_nothing_stored_deletes_nothing_and_is_stored(client_a, space_a):
    say(client_a, space_a, "We run a fleet of four vans.", session="a")
    body = say(client_a, space_a, "We don't deliver on Sundays.", session="b")
    assert body["forgotten"] == []
    assert body["confirmation"] == ""
    assert "We don't deliver on Sundays." in facts(space_a)


def test_a_statement_agreeing_with_a_stored_negative_deletes_nothing(client_a, space_a):
    say(client_a, space_a, "We never deliver on Sundays.", session="a")
    body = say(client_a, space_a, "We don't deliver on Sundays.", session="b")
    assert body["forgotten"] == []


def test_a_request_matching_seven_entries_deletes_at_most_n_and_says_how_many_more(client_a, space_a):
    contents = [f"We have a blue delivery van number {n}." for n in range(1, 8)]
    with scope.tenant_scope(space_a.tenant_id, space_a):
        vectors = embed_for_space(space_a.id, contents)
        for text, vector in zip(contents, vectors, strict=True):
            Memory.objects.create(
                tenant_id=space_a.tenant_id, space=space_a, kind="fact", content=text, embedding=vector, importance=0.5
            )
    client_a.patch(
        reverse("space-detail", args=[space_a.external_id]), {"settings": {"forget_floor": 0.3}}, format="json"
    )
    body = say(client_a, space_a, "Forget that we have a blue delivery van.")
    assert len(body["forgotten"]) == 3
    assert body["more_matched"] == 4
    assert "4 more matched" in body["confirmation"]
    assert len(facts(space_a)) == 4


def test_the_per_request_maximum_can_never_exceed_ten(client_a, space_a):
    response = client_a.patch(
        reverse("space-detail", args=[space_a.external_id]),
        {"settings": {"max_deletions_per_request": 11}},
        format="json",
    )
    assert response.status_code == 400


def test_the_forget_message_never_recreates_what_it_deleted(client_a, space_a):
    say(client_a, space_a, "We have four vans.", session="a")
    body = say(client_a, space_a, "Forget that we have four vans.", session="b")
    assert [f["content"] for f in body["forgotten"]] == ["We have four vans.", "vehicle"]
    assert body["created"] == []
    assert facts(space_a) == []
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert not any("van" in (m.content or "").lower() for m in Memory.objects.all())


@pytest.mark.django_db(transaction=True)
def test_after_deletion_the_text_is_gone_from_recall_and_from_a_dump(tenant_a, superuser_conninfo):
    from database import embedded_postgres
    from tenants.api_keys import issue_api_key
    from tests.conftest import api_client, make_space

    space = make_space(tenant_a, "dumped")
    client = api_client(issue_api_key(tenant=tenant_a, name="k", scopes=["turns", "admin"]).secret)
    client.patch(reverse("space-detail", args=["dumped"]), {"settings": {"keep_transcripts": True}}, format="json")
    say(client, space, "Our courier Wenceslas Quetzalcoatl picks up at dawn.", session="a")
    say(client, space, "We run a fleet of four vans.", session="b")
    body = say(client, space, "Forget what you know about Wenceslas Quetzalcoatl.", session="c")
    assert "Our courier Wenceslas Quetzalcoatl picks up at dawn." in [f["content"] for f in body["forgotten"]]
    recall = client.post(reverse("recall", args=["dumped"]), {"query": "Wenceslas Quetzalcoatl"}, format="json")
    assert recall.json()["memories"] == []
    pg_dump = embedded_postgres.EmbeddedServer("", 0).bin("pg_dump")
    dump = subprocess.run([pg_dump, "--data-only", superuser_conninfo], check=True, capture_output=True).stdout
    assert b"Quetzalcoatl" not in dump
    assert len(audit_rows(space)) == len(body["forgotten"])
    with scope.tenant_scope(tenant_a, space):
        # The transcript line it came from went with it; the forget request itself was not kept.
        assert all("Quetzalcoatl" not in (m.content or "") for m in Message.objects.all())


def test_the_audit_table_refuses_update_and_delete_also_as_the_application_role(client_a, space_a):
    say(client_a, space_a, "We have four vans.", session="a")
    say(client_a, space_a, "Forget that we have four vans.", session="b")
    row = audit_rows(space_a)[0]
    for statement in ("UPDATE memory_deletionaudit SET actor = 'someone else'", "DELETE FROM memory_deletionaudit"):
        # The runtime role lacks the privilege; the trigger stops the owner (tests/tenancy/test_database_roles.py).
        with pytest.raises((InternalError, ProgrammingError), match="append-only|permission denied"):
            with scope.tenant_scope(space_a.tenant_id), connection.cursor() as cursor:
                cursor.execute(statement)
    with pytest.raises((InternalError, ProgrammingError), match="append-only|permission denied"):
        with scope.tenant_scope(space_a.tenant_id):
            DeletionAudit.objects.filter(pk=row.pk).delete()
    assert audit_rows(space_a)[0].actor == row.actor


def test_the_audit_keeps_a_digest_never_the_content(client_a, space_a):
    say(client_a, space_a, "We have four vans.", session="a")
    say(client_a, space_a, "Forget that we have four vans.", session="b")
    with scope.tenant_scope(space_a.tenant_id), connection.cursor() as cursor:
        cursor.execute("SELECT * FROM memory_deletionaudit")
        raw = str(cursor.fetchall())
    assert "vans" not in raw.lower()
    check = client_a.post(
        reverse("deletion-check"), {"space": space_a.external_id, "text": "we have four vans."}, format="json"
    ).json()
    assert check["deleted"] is True and len(check["records"]) == 1
    other = client_a.post(
        reverse("deletion-check"), {"space": space_a.external_id, "text": "We have five vans."}, format="json"
    ).json()
    assert other["deleted"] is False


def test_the_forget_endpoint_dry_run_shows_what_would_go_and_deletes_nothing(client_a, space_a):
    say(client_a, space_a, "Our company makes furniture.", session="a")
    url = reverse("forget", args=[space_a.external_id])
    dry = client_a.post(url, {"utterance": "We don't make furniture.", "dry_run": True}, format="json").json()
    assert dry["dry_run"] is True
    assert [f["content"] for f in dry["forgotten"]] == ["Our company makes furniture."]
    assert dry["candidates"][0]["distance"] <= 0.1
    assert facts(space_a) == ["Our company makes furniture."]
    assert audit_rows(space_a) == []
    real = client_a.post(url, {"utterance": "We don't make furniture."}, format="json").json()
    # The statement and the topic tag no remaining row carries (#25: forgetting leaves no tag behind).
    assert [f["content"] for f in real["forgotten"]] == ["Our company makes furniture.", "company"]
    assert facts(space_a) == []


def test_the_model_judges_but_code_bounds_what_it_may_delete(client_a, space_a, openai_engines):
    openai_engines.replies = [
        {"entries": [{"kind": "fact", "content": "Our company makes furniture.", "topic": "company", "importance": 0.6,
                      "keywords": [], "quote": "Our company makes furniture", "event_days_ago": None}]},
        {"entries": [{"kind": "fact", "content": "We run a fleet of four vans.", "topic": "fleet", "importance": 0.6,
                      "keywords": [], "quote": "We run a fleet of four vans", "event_days_ago": None}]},
    ]  # fmt: skip
    say(client_a, space_a, "Our company makes furniture.", session="a")
    say(client_a, space_a, "We run a fleet of four vans.", session="b")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        ids = {m.content: str(m.pk) for m in Memory.objects.all()}
        vans_id, furniture_id = ids["We run a fleet of four vans."], ids["Our company makes furniture."]
    # The model asks to delete everything, including a memory code never offered it.
    openai_engines.scripts["forget_judgement"] = [
        {
            "is_forget_request": True,
            "request_quote": "We don't make furniture",
            "delete_ids": [furniture_id, vans_id],
            "confirmation": "Deleted everything!",
        }
    ]
    body = say(client_a, space_a, "We don't make furniture.", session="c")
    assert [f["content"] for f in body["forgotten"]] == ["Our company makes furniture."]
    assert body["confirmation"] == "Done, I have forgotten: “Our company makes furniture.”."
    assert facts(space_a) == ["We run a fleet of four vans."]
    judged = [r for r in openai_engines.requests if r["response_format"]["json_schema"]["name"] == "forget_judgement"]
    assert vans_id not in judged[0]["messages"][1]["content"]


def test_an_operator_api_deletion_is_audited(client_a, space_a, key_a):
    say(client_a, space_a, "We run a fleet of four vans.", session="a")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        memory = Memory.objects.get(kind="fact")
    assert client_a.delete(reverse("memory-detail", args=[space_a.external_id, memory.pk])).status_code == 204
    [row] = audit_rows(space_a)
    assert row.cause == "api_key" and key_a.api_key.prefix in row.actor


def test_space_erasure_leaves_no_row_of_that_space_and_its_key_is_gone(client_a, space_a, space_a2):
    client_a.patch(
        reverse("space-detail", args=[space_a.external_id]), {"settings": {"keep_transcripts": True}}, format="json"
    )
    say(client_a, space_a, "We run a fleet of four vans.", session="a")
    say(client_a, space_a2, "We bake bread.", session="a")
    assert client_a.delete(reverse("space-detail", args=[space_a.external_id])).status_code == 204
    with scope.tenant_scope(space_a.tenant_id), connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND column_name IN ('space_id', 'space_uuid') AND table_name NOT LIKE 'django_%%'"
        )
        for table, column in cursor.fetchall():
            cursor.execute(f"SELECT count(*) FROM {table} WHERE {column} = %s", [space_a.id])
            remaining = cursor.fetchone()[0]
            if table == "memory_deletionaudit":
                assert remaining >= 1  # the audit says it happened, without content
            else:
                assert remaining == 0, table
        assert not SpaceKey.objects.filter(space_id=space_a.id).exists()
        assert Memory.objects.filter(space=space_a2).exists()
    causes = {row.cause for row in audit_rows(space_a)}
    assert causes == {"space_erasure"}


def test_the_deletion_list_filters_and_exports_csv(client_a, space_a, space_a2):
    say(client_a, space_a, "We have four vans.", session="a")
    say(client_a, space_a, "Forget that we have four vans.", session="b")
    say(client_a, space_a2, "We bake bread.", session="a")
    client_a.delete(reverse("space-detail", args=[space_a2.external_id]))
    listed = client_a.get(reverse("deletion-list")).json()
    with scope.tenant_scope(space_a.tenant_id):
        assert listed["count"] == DeletionAudit.objects.count() >= 3
    only = client_a.get(reverse("deletion-list"), {"cause": "space_erasure"}).json()
    assert {r["space"] for r in only["results"]} == {space_a2.external_id}
    by_space = client_a.get(reverse("deletion-list"), {"space": space_a.external_id}).json()
    assert {r["cause"] for r in by_space["results"]} == {"customer_request"}
    csv_response = client_a.get(reverse("deletion-list"), {"format": "csv"})
    assert csv_response["Content-Type"].startswith("text/csv")
    lines = csv_response.content.decode().strip().splitlines()
    assert lines[0].startswith("id,occurred_at,space") and len(lines) == listed["count"] + 1
    assert "vans" not in csv_response.content.decode()
    assert client_a.get(reverse("deletion-list"), {"since": "not a date"}).status_code == 400


def test_the_deletion_list_needs_the_admin_scope_and_is_tenant_scoped(tenant_a, client_b, client_a, space_a):
    from tenants.api_keys import issue_api_key
    from tests.conftest import api_client

    say(client_a, space_a, "We have four vans.", session="a")
    say(client_a, space_a, "Forget that we have four vans.", session="b")
    agent = api_client(issue_api_key(tenant=tenant_a, name="agent", scopes=["turns"]).secret)
    assert agent.get(reverse("deletion-list")).status_code == 403
    assert client_b.get(reverse("deletion-list")).json()["count"] == 0


def test_support_staff_read_the_audit_with_their_console_session(client, client_a, space_a, tenant_a, tenant_b):
    from tenants.tenant_admin import create_operator

    say(client_a, space_a, "We have four vans.", session="a")
    say(client_a, space_a, "Forget that we have four vans.", session="b")
    support = create_operator(tenant=tenant_a, username="sam", password="a-long-password", role="support").user
    operator = create_operator(tenant=tenant_a, username="olga", password="a-long-password", role="operator").user
    outsider = create_operator(tenant=tenant_b, username="bob", password="a-long-password", role="support").user

    client.force_login(support)
    rows = client.get(reverse("deletion-list")).json()
    assert rows["count"] >= 1 and {r["space"] for r in rows["results"]} == {space_a.external_id}
    client.force_login(operator)
    assert client.get(reverse("deletion-list")).status_code == 403
    client.force_login(outsider)
    assert client.get(reverse("deletion-list")).json()["count"] == 0
    client.logout()
    assert client.get(reverse("deletion-list")).status_code in (401, 403)


def test_support_staff_get_no_distances_from_the_audit_api_or_its_csv(client, client_a, space_a, tenant_a):
    from tenants.tenant_admin import create_operator

    say(client_a, space_a, "We have four vans.", session="a")
    say(client_a, space_a, "Forget that we have four vans.", session="b")
    admin_rows = client_a.get(reverse("deletion-list")).json()["results"]
    assert admin_rows and all(r["matched_distance"] is not None for r in admin_rows)
    support = create_operator(tenant=tenant_a, username="sam", password="a-long-password", role="support").user
    client.force_login(support)
    rows = client.get(reverse("deletion-list")).json()["results"]
    assert rows and all(r["matched_distance"] is None for r in rows)
    csv_text = client.get(reverse("deletion-list"), {"format": "csv"}).content.decode()
    csv_rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert csv_rows and all(r["matched_distance"] == "" for r in csv_rows)
    checked = client.post(
        reverse("deletion-check"),
        {"space": space_a.external_id, "text": "We have four vans."},
        content_type="application/json",
    ).json()
    assert checked["deleted"] and all(r["matched_distance"] is None for r in checked["records"])


@pytest.mark.parametrize("body", [{"utterance": ""}, {"utterance": "   "}, {"utterance": 7}, {}])
def test_a_bad_forget_request_is_a_400_and_deletes_nothing(client_a, space_a, body):
    say(client_a, space_a, "We have four vans.", session="a")
    response = client_a.post(reverse("forget", args=[space_a.external_id]), body, format="json")
    assert response.status_code == 400
    assert "utterance" in response.json()["error"]["details"]
    assert facts(space_a) == ["We have four vans."]


@pytest.mark.parametrize("language", [*lexicon.CONFIRMATIONS, "xx"])
def test_the_recorded_reply_renders_the_same_sentence_with_ids_for_the_text(language):
    ids = ["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"]
    forgotten = [Deleted(i, "fact", f"secret {n}") for n, i in enumerate(ids)]
    told = confirmation_for(language, forgotten, 2, explicit=True)
    record = {"language": language, "template": "done", "memory_ids": ids, "more_matched": 2}
    expected = told.replace("“secret 0”", f"«memory {ids[0]}»").replace("“secret 1”", f"«memory {ids[1]}»")
    assert confirmation_on_record(record) == expected and "secret" not in expected
    nothing = {"language": language, "template": "nothing", "memory_ids": [], "more_matched": 0}
    assert confirmation_on_record(nothing) == confirmation_for(language, [], 0, explicit=True)


@pytest.mark.parametrize("keep_transcripts", [True, False])
def test_a_replayed_message_whose_memory_was_forgotten_gets_its_turn_and_brings_nothing_back(
    client_a, space_a, keep_transcripts
):
    """A client that retries with the same message_id after the customer had it forgotten gets the original turn
    (once a 500: the turn's source was unique and the message row was gone), and the text is not stored again."""
    with scope.tenant_scope(space_a.tenant_id, space_a):
        space_a.settings = {"keep_transcripts": keep_transcripts}
        space_a.save(update_fields=["settings"])
    url = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    body = {"message": "My PIN is 4821.", "session_id": "chat-1", "message_id": "m-1"}
    first = client_a.post(url, body, format="json")
    assert first.status_code == 201, first.content
    say(client_a, space_a, "Please forget my PIN.", session="chat-2")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert not [m for m in Memory.objects.all() if "4821" in m.content]
    again = client_a.post(url, body, format="json")
    assert again.status_code == 200, again.content
    assert again.json()["turn_id"] == first.json()["turn_id"]
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert not [m for m in Memory.objects.all() if "4821" in m.content]
        assert not [m for m in Message.objects.all() if m.content and "4821" in m.content]
    ingest = reverse("transcript-ingest", args=[space_a.external_id]) + "?wait=true"
    transcript = {
        "session_id": "chat-3",
        "messages": [{"role": "customer", "content": "My badge is B-7731.", "id": "t-1"}],
    }
    first_ingest = client_a.post(ingest, transcript, format="json").json()
    say(client_a, space_a, "Please forget my badge number.", session="chat-4")
    replayed = client_a.post(ingest, transcript, format="json")
    assert replayed.status_code == 200 and replayed.json()["turn_id"] == first_ingest["turn_id"]
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert not [m for m in Message.objects.all() if m.content and "B-7731" in m.content]


def test_forgetting_a_restated_fact_drops_the_text_of_every_mention(client_a, space_a):
    """A fact said in two sessions is one row (a merge); forgetting it leaves neither transcript line (a merge
    once kept only the latest source message, and the first line survived "forget my PIN")."""
    with scope.tenant_scope(space_a.tenant_id, space_a):
        space_a.settings = {"keep_transcripts": True}
        space_a.save(update_fields=["settings"])
    say(client_a, space_a, "My PIN is 4821.", session="first")
    say(client_a, space_a, "My PIN is 4821.", session="second")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        [row] = [m for m in Memory.objects.filter(superseded_by__isnull=True) if "4821" in m.content]
        assert row.mention_count == 2 and len(row.earlier_source_message_ids) == 1
    say(client_a, space_a, "Please forget my PIN.", session="third")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert not [m for m in Memory.objects.all() if "4821" in m.content]
        assert not [m for m in Message.objects.all() if m.content and "4821" in m.content]


def test_lines_kept_while_transcripts_were_kept_go_when_the_fact_is_forgotten_after_the_setting_is_off(
    client_a, space_a
):
    """Deletion blanked transcript lines only while the space kept transcripts: turning the setting off left the
    lines kept before it holding the words of every fact forgotten afterwards."""
    space_url = reverse("space-detail", args=[space_a.external_id])
    client_a.patch(space_url, {"settings": {"keep_transcripts": True}}, format="json")
    say(client_a, space_a, "My PIN is 8841.", session="kept")
    client_a.patch(space_url, {"settings": {"keep_transcripts": False}}, format="json")
    forgotten = say(client_a, space_a, "Please forget my PIN.", session="later")["forgotten"]
    assert [f["content"] for f in forgotten if f["kind"] != "topic"] == ["My PIN is 8841."]
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert not [m.content for m in Message.objects.filter(space=space_a) if m.content and "8841" in m.content]
