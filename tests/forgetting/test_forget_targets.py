# ruff: noqa: E501  (multilingual cases read best one a line)
"""Forgetting targets by meaning and never wider than asked; corrections that only negate delete,
corrections that state a new value are mined; a model's forget verdict is checked, not obeyed.

Through the real API (turns and ``POST …/forget``) in English, Russian, Japanese and Czech, against
the real database and the bundled embedding model; the hostile cases against a local
OpenAI-compatible server of this module that answers whatever the test scripts.
"""

from __future__ import annotations

import json
import threading
from http.server import ThreadingHTTPServer

import pytest
from django.urls import reverse

from memory.models import DeletionAudit, Memory, Turn
from memory.text.analysis import search_tokens
from memory.text.digests import keyword_digests, topic_digest
from memory.text.vectors import embed_for_space
from tenants import scope
from tests.support.model_servers import ModelHandler

pytestmark = pytest.mark.django_db


def say(client, space, message, session="s"):
    url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
    response = client.post(url, {"message": message, "session_id": session}, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def forget_endpoint(client, space, utterance, **extra):
    response = client.post(
        reverse("forget", args=[space.external_id]), {"utterance": utterance, **extra}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def store(space, *contents, topic=""):
    """Memories written the way imports write them (the extractor is not what these tests are about)."""
    vectors = embed_for_space(space.id, list(contents))
    rows = []
    with scope.tenant_scope(space.tenant_id, space):
        for text, vector in zip(contents, vectors, strict=True):
            rows.append(
                Memory.objects.create(
                    tenant_id=space.tenant_id,
                    space=space,
                    kind="fact",
                    content=text,
                    topic=topic or None,
                    topic_digest=topic_digest(space.id, topic) if topic else "",
                    keyword_digests=keyword_digests(space.id, search_tokens(text)),
                    embedding=vector,
                    importance=0.6,
                )  # fmt: skip
            )
    return rows


def contents(space, *, current_only=True):
    with scope.tenant_scope(space.tenant_id, space):
        rows = Memory.objects.exclude(kind="topic")
        if current_only:
            rows = rows.filter(superseded_by__isnull=True)
        return sorted(m.content for m in rows)


def audited(space):
    with scope.tenant_scope(space.tenant_id):
        return DeletionAudit.objects.filter(space_uuid=space.id).exclude(memory_kind="topic").count()


def forgotten_contents(body):
    return [f["content"] for f in body["forgotten"] if f["kind"] != "topic"]


# --- #16.3: forget targets by meaning, never wider than asked ----------------------------------

BY_MEANING = [
    # (stored target, stored bystander, request)
    ("I'm allergic to peanuts.", "We run a fleet of four vans.", "Forget what you know about my allergy."),
    ("I live in Kazan.", "We run a fleet of four vans.", "Forget what you know about my city."),
    ("У меня аллергия на арахис.", "У нас четыре фургона.", "Забудьте про мою аллергию."),
    ("Я живу в Казани.", "У нас четыре фургона.", "Забудьте мой город."),
    ("私はピーナッツアレルギーです。", "当社はバンを4台持っています。", "私のアレルギーについて忘れてください。"),
    ("私は京都に住んでいます。", "当社はバンを4台持っています。", "私の住所は忘れてください。"),
    ("Mám alergii na arašídy.", "Máme čtyři dodávky.", "Zapomeňte na mou alergii."),
    ("Bydlím v Brně.", "Máme čtyři dodávky.", "Zapomeňte moje město."),
]


@pytest.mark.parametrize("target, bystander, request_text", BY_MEANING)
def test_a_request_naming_an_attribute_finds_the_memory_that_shares_no_word_with_it(
    client_a, space_a, target, bystander, request_text
):
    store(space_a, target, bystander)
    body = say(client_a, space_a, request_text, session="later")
    assert forgotten_contents(body) == [target]
    assert contents(space_a) == [bystander]
    assert audited(space_a) == 1
    assert body["created"] == []  # the request itself is never mined


PHONE_CASES = [
    ("My phone number is +420 777 123 456.", "I prefer email over phone.", "Please forget my phone number."),
    ("Мой номер телефона +7 912 345 67 89.", "Я предпочитаю почту, а не телефон.", "Пожалуйста, забудьте мой телефон."),
    ("私の電話番号は090-1234-5678です。", "電話よりメールの方が好きです。", "私の電話番号は忘れてください。"),
    ("Moje telefonní číslo je +420 777 123 456.", "Dávám přednost e-mailu před telefonem.", "Zapomeňte moje telefonní číslo."),
]  # fmt: skip


@pytest.mark.parametrize("number, preference, request_text", PHONE_CASES)
def test_forget_my_phone_number_deletes_the_number_and_not_a_preference_that_mentions_a_phone(
    client_a, space_a, number, preference, request_text
):
    store(space_a, number, preference)
    body = say(client_a, space_a, request_text, session="later")
    assert forgotten_contents(body) == [number]
    assert contents(space_a) == [preference]


OLD_ADDRESS_CASES = [
    ("I live in Kazan.", "I moved to Samara last week, my new address is Lenina 5.", "Delete my old address in Kazan."),
    ("Я живу в Казани.", "На прошлой неделе я переехал в Самару, мой новый адрес Ленина 5.", "Удалите мой старый адрес в Казани."),
    ("私はカザンに住んでいます。", "先週サマラに引っ越しました。新しい住所はレーニナ5です。", "カザンの古い住所を削除してください。"),
    ("Bydlím v Kazani.", "Minulý týden jsem se přestěhoval do Samary, moje nová adresa je Lenina 5.", "Smažte moji starou adresu v Kazani."),
]  # fmt: skip


@pytest.mark.parametrize("old, new, request_text", OLD_ADDRESS_CASES)
def test_forget_my_old_address_deletes_the_older_value_never_the_current_one(client_a, space_a, old, new, request_text):
    store(space_a, old)
    store(space_a, new)  # stored later: the current address
    body = say(client_a, space_a, request_text, session="later")
    assert forgotten_contents(body) == [old]
    assert contents(space_a) == [new]


def test_old_picks_the_superseded_version_and_leaves_the_current_one_and_its_own_history(client_a, space_a):
    [old] = store(space_a, "I live in Kazan.")
    [new] = store(space_a, "I moved to Samara last week, my new address is Lenina 5.")
    with scope.tenant_scope(space_a.tenant_id, space_a):
        Memory.objects.filter(pk=old.pk).update(superseded_by=new)
    body = forget_endpoint(client_a, space_a, "Please forget my old address.")
    assert forgotten_contents(body) == ["I live in Kazan."]
    assert contents(space_a, current_only=False) == ["I moved to Samara last week, my new address is Lenina 5."]


def test_old_with_only_one_value_stored_deletes_nothing(client_a, space_a):
    store(space_a, "I live in Kazan.")
    body = forget_endpoint(client_a, space_a, "Forget my old address.")
    assert body["forgotten"] == [] and body["is_forget_request"] is True
    assert contents(space_a) == ["I live in Kazan."]


def test_an_attribute_with_nothing_stating_it_deletes_nothing_even_when_something_is_near(client_a, space_a):
    store(space_a, "I prefer email over phone.", "Call the office before noon.")
    body = forget_endpoint(client_a, space_a, "Please forget my phone number.")
    assert body["forgotten"] == []
    assert body["confirmation"].startswith("I had nothing stored")
    assert audited(space_a) == 0


def test_a_value_named_beside_the_attribute_must_be_in_the_memory(client_a, space_a):
    store(space_a, "I live in Kazan.")
    body = forget_endpoint(client_a, space_a, "Forget my address in Paris.")
    assert body["forgotten"] == []
    assert contents(space_a) == ["I live in Kazan."]


def test_a_request_takes_the_best_match_not_every_candidate(client_a, space_a):
    store(space_a, "Our accounting runs on SAP.", "Our payroll runs on Excel.", "Our invoices go out on Fridays.")
    body = forget_endpoint(client_a, space_a, "Forget that our accounting runs on SAP.")
    assert forgotten_contents(body) == ["Our accounting runs on SAP."]
    assert len(contents(space_a)) == 2


def test_a_request_for_another_tenants_memory_never_reaches_it(client_a, client_b, space_a, space_b):
    store(space_b, "My phone number is +420 777 123 456.")
    store(space_a, "I prefer email over phone.")
    body = forget_endpoint(client_a, space_a, "Please forget my phone number.")
    assert body["forgotten"] == []
    assert contents(space_b) == ["My phone number is +420 777 123 456."]


# --- #16.1: corrections that only negate delete; with a new value they are mined ---------------

NEGATION_ONLY = [
    ("I live in Leeds.", "I don't live in Leeds any more."),
    ("Acme Logistics is my company.", "Acme Logistics isn't my company."),
    ("Я живу в Лидсе.", "Я больше не живу в Лидсе."),
    ("私はリーズに住んでいます。", "もうリーズには住んでいません。"),
    ("Bydlím v Leedsu.", "Už nebydlím v Leedsu."),
]


@pytest.mark.parametrize("stored, correction", NEGATION_ONLY)
def test_a_correction_that_only_negates_deletes_what_it_contradicts_and_is_audited(
    client_a, space_a, stored, correction
):
    store(space_a, stored, "We run a fleet of four vans.")
    body = say(client_a, space_a, correction, session="later")
    assert forgotten_contents(body) == [stored]
    assert contents(space_a) == ["We run a fleet of four vans."]
    assert audited(space_a) == 1


WITH_NEW_VALUE = [
    ("We are a bakery.", "We're not a bakery, we're a coffee roaster.", "coffee roaster"),
    ("Мы пекарня.", "Мы не пекарня, мы обжариваем кофе.", "кофе"),
    ("当社はパン屋です。", "パン屋ではありません、コーヒーの焙煎所です。", "焙煎所"),
    ("Jsme pekárna.", "Nejsme pekárna, jsme pražírna kávy.", "pražírna"),
]


@pytest.mark.parametrize("stored, correction, new_value", WITH_NEW_VALUE)
def test_a_correction_that_states_a_new_value_deletes_nothing_and_is_mined(
    client_a, space_a, stored, correction, new_value
):
    store(space_a, stored)
    body = say(client_a, space_a, correction, session="later")
    assert body["forgotten"] == [] and body["confirmation"] == ""
    assert audited(space_a) == 0
    everything = contents(space_a, current_only=False)
    assert stored in everything  # current, or kept as history by the writer: never deleted
    assert any(new_value in c for c in everything), everything  # the turn was mined


def test_the_forget_endpoint_reports_a_correction_with_a_new_value_as_no_request(client_a, space_a):
    store(space_a, "We are a bakery.")
    body = forget_endpoint(client_a, space_a, "We're not a bakery, we're a coffee roaster.", dry_run=True)
    assert body["is_forget_request"] is False and body["forgotten"] == []


LOOK_ALIKES = [
    ("Our warehouse is in Leeds.", "Our warehouse is in Leeds, as I said."),
    ("My phone number is +420 777 123 456.", "Don't forget my phone number is +420 777 123 456."),
    ("Наш склад в Казани.", "Наш склад в Казани, как я говорил."),
    ("倉庫は京都にあります。", "倉庫は京都にあると言いましたよね。"),
    ("Náš sklad je v Brně.", "Náš sklad je v Brně, jak jsem říkal."),
]


@pytest.mark.parametrize("stored, statement", LOOK_ALIKES)
def test_a_statement_that_asks_nothing_deletes_nothing(client_a, space_a, stored, statement):
    [row] = store(space_a, stored)
    body = say(client_a, space_a, statement, session="later")
    assert body["forgotten"] == []
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert Memory.objects.filter(pk=row.pk).exists()  # still there (the writer may merge the restatement in)
    assert audited(space_a) == 0


# --- #16.3: a question, a supposition, reported speech and "everything" are not carried out ------

PHONE = "My phone number is +420 777 123 456."
NOT_REQUESTS = [
    "How do I make you forget my phone number?",
    "Would you forget my phone number if I asked?",
    "I never said forget my phone number.",
    "My colleague said: forget the warehouse in Leeds, but we keep it.",
    "Do you delete my phone number after 30 days?",
    "Did you forget my phone number?",
    "Если я скажу: забудь мой номер телефона, ты забудешь?",
    "Коллега сказал: забудь склад в Лидсе, но мы его оставляем.",
    "同僚は「倉庫を忘れてください」と言いました。",
    "もし電話番号を削除してくださいと頼んだら、削除しますか？",
    "Kolega řekl: zapomeňte na sklad v Leedsu, ale necháváme si ho.",
    "Kdybych řekl zapomeňte moje telefonní číslo, zapomněl byste?",
    "Mi colega dijo: olvida el almacén de Leeds, pero lo mantenemos.",
    "¿Cómo hago para que olvides? Si te digo olvida mi número de teléfono, ¿lo harías?",
]
POLITE_REQUESTS = [
    "Can you forget my phone number?",
    "Could you please delete my phone number?",
    "Забудьте, пожалуйста, мой номер телефона.",
    "電話番号を忘れてください。",
    "Zapomeňte prosím moje telefonní číslo.",
    "Por favor, borre mi número de teléfono.",
]


@pytest.mark.parametrize("message", NOT_REQUESTS)
def test_a_forget_verb_asked_about_supposed_or_reported_is_no_request(message):
    from memory.forgetting.judge import read_intent

    intent = read_intent(message)
    assert intent.kind is None and intent.not_a_request, (message, intent)


@pytest.mark.parametrize("message", POLITE_REQUESTS)
def test_a_polite_modal_request_is_still_a_request(message):
    from memory.forgetting.judge import read_intent

    intent = read_intent(message)
    assert (intent.kind, intent.attribute) == ("explicit", "phone"), (message, intent)


def test_a_question_about_forgetting_as_a_turn_deletes_nothing_and_confirms_nothing(client_a, space_a):
    store(space_a, PHONE, "Our warehouse is in Leeds.")
    body = say(client_a, space_a, "How do I make you forget my phone number?", session="later")
    assert body["forgotten"] == [] and body["confirmation"] == ""
    for message in NOT_REQUESTS[1:4]:
        dry = forget_endpoint(client_a, space_a, message, dry_run=True)
        assert (dry["is_forget_request"], dry["forgotten"]) == (False, []), message
    assert contents(space_a) == [PHONE, "Our warehouse is in Leeds."]
    body = say(client_a, space_a, "Can you forget my phone number?", session="later")
    assert forgotten_contents(body) == [PHONE]


TWELVE = [
    PHONE, "I live in Kazan.", "I'm allergic to peanuts.", "We have four delivery vans in Brno.",
    "Our warehouse is in Leeds.", "My email is jan@example.com.", "I prefer email over phone.", "Our plan is Gold.",
    "We deliver on Mondays.", "My daughter is called Eva.", "I drive a blue Skoda.", "I like jazz.",
]  # fmt: skip


@pytest.mark.parametrize(
    "message, start",
    [
        ("forget everything", "I can't erase everything"),
        ("Forget everything you know about me.", "I can't erase everything"),
        ("Delete all my data.", "I can't erase everything"),
        ("Забудь всё обо мне.", "Удалить всё"),
        ("Borra todos mis datos.", "No puedo borrarlo todo"),
    ],
)
def test_forget_everything_deletes_nothing_says_so_truthfully_and_is_routed(client_a, space_a, message, start):
    store(space_a, *TWELVE)
    dry = forget_endpoint(client_a, space_a, message, dry_run=True)
    assert (dry["is_forget_request"], dry["forgotten"], dry["needs_operator"]) == (True, [], True)
    assert dry["confirmation"].startswith(start) and "nothing" not in dry["confirmation"]
    body = say(client_a, space_a, message, session="later")
    assert body["forgotten"] == [] and body["needs_operator"] is True
    assert body["confirmation"].startswith(start)
    assert len(contents(space_a)) == 12 and audited(space_a) == 0
    narrow = forget_endpoint(client_a, space_a, "Forget everything about my vans.", dry_run=True)
    assert narrow["needs_operator"] is False


# --- #15.3: a model's verdict is checked, not obeyed -------------------------------------------


class ForgetModel:
    """An OpenAI-compatible chat server: the forget judgement is whatever the test sets (raw JSON text);
    every other call gets an empty but valid answer. ``down`` answers 503."""

    EMPTY = {
        "memory_entries": {"entries": []},
        "query_analysis": {"keywords": [], "topic_keys": [], "phrases": []},
        "answer": {"answer": None},
    }

    def __init__(self):
        self.verdict = "{}"
        self.down = False
        self.judged: list[str] = []
        model = self

        class Handler(ModelHandler):
            def do_POST(self):
                body = self.read_json()
                name = body.get("response_format", {}).get("json_schema", {}).get("name", "")
                if model.down:
                    return self.send_json(503, {"error": {"message": "overloaded", "type": "server_error"}})
                if name == "forget_judgement":
                    model.judged.append(body["messages"][1]["content"])
                    content = model.verdict
                else:
                    content = json.dumps(model.EMPTY.get(name, {}))
                message = {"role": "assistant", "content": content}
                self.send_json(200, {
                    "id": "x", "object": "chat.completion", "created": 0, "model": "hostile",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                })  # fmt: skip

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)


@pytest.fixture
def hostile_model(settings):
    model = ForgetModel()
    thread = threading.Thread(target=model.server.serve_forever, daemon=True)
    thread.start()
    settings.ENGRAM_EXTRACTION_ENGINE = "openai"
    settings.OPENAI_BASE_URL = f"http://127.0.0.1:{model.server.server_address[1]}/v1"
    settings.OPENAI_API_KEY = "test-key"
    settings.ENGRAM_MODEL_MAX_RETRIES = 0
    settings.ENGRAM_MODEL_TIMEOUT_SECONDS = 5
    yield model
    model.server.shutdown()
    model.server.server_close()


def verdict(is_request, ids, quote, confirmation=None) -> str:
    return json.dumps(
        {"is_forget_request": is_request, "request_quote": quote, "delete_ids": ids, "confirmation": confirmation}
    )


@pytest.mark.parametrize("quote", ["forget it", "Our warehouse is in Leeds", None, "Please forget my warehouse"])
def test_a_model_calling_a_plain_statement_a_request_deletes_nothing(client_a, space_a, hostile_model, quote):
    [warehouse] = store(space_a, "Our warehouse is in Leeds.")
    hostile_model.verdict = verdict(True, [str(warehouse.pk)], quote, "Forgotten!")
    body = say(client_a, space_a, "Our warehouse is in Leeds, as I said.", session="later")
    assert hostile_model.judged, "the model was asked"
    assert body["forgotten"] == [] and body["confirmation"] == ""
    assert contents(space_a) == ["Our warehouse is in Leeds."]
    assert audited(space_a) == 0


def test_a_quote_that_asks_only_out_of_context_is_not_a_request(client_a, space_a, hostile_model):
    [renewal] = store(space_a, "Our renewal is in June.")
    hostile_model.verdict = verdict(True, [str(renewal.pk)], "forget our renewal is in June")
    body = say(client_a, space_a, "Don't forget our renewal is in June.", session="later")
    assert body["forgotten"] == []
    assert contents(space_a) == ["Our renewal is in June."]


@pytest.mark.parametrize("wrong", ['"false"', "1", "null", '"true"', "[true]"])
def test_anything_but_a_json_boolean_is_a_model_failure_and_the_rule_set_decides(
    client_a, space_a, hostile_model, wrong
):
    number, preference = store(space_a, "My phone number is +420 777 123 456.", "I prefer email over phone.")
    ids = json.dumps([str(number.pk), str(preference.pk)])
    hostile_model.verdict = (
        f'{{"is_forget_request": {wrong}, "request_quote": "forget my phone number", "delete_ids": {ids}, '
        '"confirmation": null}'
    )
    statement = forget_endpoint(client_a, space_a, "I prefer email over phone, as I said.")
    assert statement["forgotten"] == []  # the rule set reads no request
    request = forget_endpoint(client_a, space_a, "Please forget my phone number.")
    assert forgotten_contents(request) == ["My phone number is +420 777 123 456."]
    assert contents(space_a) == ["I prefer email over phone."]


@pytest.mark.parametrize(
    "reply",
    [
        '{"is_forget_request": true, "delete_ids": [], "confirmation": null}',  # no request_quote
        '{"is_forget_request": true, "request_quote": 5, "delete_ids": [], "confirmation": null}',
        '{"is_forget_request": true, "request_quote": "forget", "delete_ids": 5, "confirmation": null}',
        '{"is_forget_request": true, "request_quote": "forget", "delete_ids": [5], "confirmation": null}',
        '{"is_forget_request": true, "request_quote": "forget", "delete_ids": [], "confirmation": 7}',
        "[]",
        "not json at all",
    ],
)
def test_a_mistyped_verdict_never_gives_a_500_and_never_widens_a_deletion(client_a, space_a, hostile_model, reply):
    store(space_a, "My phone number is +420 777 123 456.", "I prefer email over phone.")
    hostile_model.verdict = reply
    body = say(client_a, space_a, "Please forget my phone number.", session="later")
    assert forgotten_contents(body) == ["My phone number is +420 777 123 456."]
    assert contents(space_a) == ["I prefer email over phone."]


def test_with_the_model_down_the_fallback_applies_the_same_bounds_never_all_candidates(
    client_a, space_a, hostile_model
):
    store(space_a, "I live in Kazan.")
    store(space_a, "I moved to Samara last week, my new address is Lenina 5.", "I prefer email over phone.")
    hostile_model.down = True
    body = say(client_a, space_a, "Delete my old address in Kazan.", session="later")
    assert forgotten_contents(body) == ["I live in Kazan."]
    assert contents(space_a) == [
        "I moved to Samara last week, my new address is Lenina 5.",
        "I prefer email over phone.",
    ]


def test_an_honest_model_with_a_quote_from_the_message_is_obeyed_within_the_offered_ids(
    client_a, space_a, hostile_model
):
    number, _preference = store(space_a, "My phone number is +420 777 123 456.", "I prefer email over phone.")
    hostile_model.verdict = verdict(True, [str(number.pk), "not-an-offered-id"], "please forget my phone number")
    body = say(client_a, space_a, "Please forget my phone number.", session="later")
    assert forgotten_contents(body) == ["My phone number is +420 777 123 456."]
    assert body["confirmation"] == "Done, I have forgotten: “My phone number is +420 777 123 456.”."
    assert contents(space_a) == ["I prefer email over phone."]


def test_a_model_cannot_delete_for_a_correction_that_states_a_new_value(client_a, space_a, hostile_model):
    [bakery] = store(space_a, "We are a bakery.")
    hostile_model.verdict = verdict(True, [str(bakery.pk)], "We're not a bakery")
    body = say(client_a, space_a, "We're not a bakery, we're a coffee roaster.", session="later")
    assert body["forgotten"] == []
    assert "We are a bakery." in contents(space_a, current_only=False)
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert Turn.objects.get(pk=body["turn_id"]).forget_handled is False  # left to the writer: mined


def test_a_model_verdict_is_bounded_by_the_attribute_the_request_names(client_a, space_a, hostile_model):
    rows = store(space_a, PHONE, "I prefer email over phone.", "Call me on weekends, my phone is always on.")
    hostile_model.verdict = verdict(True, [str(r.pk) for r in rows], "forget my phone number", "Done.")
    body = say(client_a, space_a, "Please forget my phone number.", session="later")
    assert forgotten_contents(body) == [PHONE]
    # The model was offered only what the rule admits.
    assert hostile_model.judged and "I prefer email" not in hostile_model.judged[-1]
    assert contents(space_a) == ["Call me on weekends, my phone is always on.", "I prefer email over phone."]


def test_a_model_verdict_for_an_old_value_never_takes_the_only_one(client_a, space_a, hostile_model):
    rows = store(space_a, PHONE, "I prefer email over phone.")
    hostile_model.verdict = verdict(True, [str(r.pk) for r in rows], "Forget my old phone number.")
    body = say(client_a, space_a, "Forget my old phone number.", session="later")
    assert body["forgotten"] == []
    assert contents(space_a) == ["I prefer email over phone.", PHONE]


@pytest.mark.parametrize("message", NOT_REQUESTS[:4])
def test_a_model_quoting_a_question_or_reported_request_deletes_nothing(client_a, space_a, hostile_model, message):
    rows = store(space_a, PHONE, "Our warehouse is in Leeds.")
    hostile_model.verdict = verdict(True, [str(r.pk) for r in rows], message)
    body = say(client_a, space_a, message, session="later")
    assert body["forgotten"] == []
    assert contents(space_a) == [PHONE, "Our warehouse is in Leeds."]


# --- the rule set's reading, table-tested ------------------------------------------------------


@pytest.mark.parametrize(
    "message, kind, new_value",
    [
        ("We're not a bakery, we're a coffee roaster.", "correction", True),
        ("That's wrong, we don't make furniture.", "correction", False),
        ("Мы не пекарня, мы обжариваем кофе.", "correction", True),
        ("Это не моя компания, мы не производим мебель.", "correction", False),
        ("それは違います、配送用のバンは4台もありません。", "correction", False),
        ("To není pravda, nemáme čtyři dodávky.", "correction", False),
        ("Ya no vivo en Leeds.", "correction", False),  # detected as another Latin-script language
        ("We never forget a delivery deadline.", None, False),  # the negation belongs to "forget"
        ("Don't forget our renewal is in June.", None, False),
    ],
)
def test_the_rule_set_tells_negation_only_corrections_from_updates_and_statements(message, kind, new_value):
    from memory.forgetting.judge import read_intent

    intent = read_intent(message)
    assert (intent.kind, intent.states_new_value) == (kind, new_value)
