"""Forgetting decided by the learned reading (#25), bounded by code: requests in languages no phrase list
covers work; what only looks like a request, a statement in an unseen language and "old" with one value
stored delete nothing; forgetting by attribute removes the statement, its history and its topic tags, and
the answer names the statements. Through the API: real database, bundled embedding model, offline engine.
"""

from __future__ import annotations

import pytest

from memory.forgetting.judge import read_intent
from memory.models import DeletionAudit, Memory
from tenants import scope
from tests.support.turns import say

pytestmark = pytest.mark.django_db


def all_rows(space):
    with scope.tenant_scope(space.tenant_id, space):
        return [(m.kind, m.content, m.topic or "", m.superseded_by_id is None) for m in Memory.objects.all()]


def every_text(space) -> str:
    return " | ".join(f"{content} {topic}" for _k, content, topic, _c in all_rows(space))


def deletions(space) -> int:
    with scope.tenant_scope(space.tenant_id, space):
        return DeletionAudit.objects.count()


def assert_takes_nothing(client, space, stored: list[str], message: str) -> None:
    """After ``stored`` in one session, ``message`` in the next deletes nothing and audits no deletion."""
    for statement in stored:
        say(client, space, statement, session="one")
    before = deletions(space)
    body = say(client, space, message, session="two")
    assert body["forgotten"] == [], body
    assert deletions(space) == before


# --- Requests in languages with no phrase list ----------------------------------------------------

UNSEEN_REQUESTS = [
    ("My phone number is 555-0123.", "Proszę zapomnieć mój numer telefonu.", "555-0123"),
    ("My phone number is 555-0123.", "Per favore, dimentica il mio numero di telefono.", "555-0123"),
    ("My phone number is 555-0123.", "Por favor, esqueça o meu número de telefone.", "555-0123"),
    ("My phone number is 555-0123.", "Lütfen telefon numaramı unutun.", "555-0123"),
    ("I live at 12 Baker Street in London.", "Proszę usunąć mój adres.", "Baker"),
]


@pytest.mark.parametrize("statement, request_text, value", UNSEEN_REQUESTS)
def test_a_request_in_a_language_with_no_phrase_list_is_carried_out(client_a, space_a, statement, request_text, value):
    say(client_a, space_a, statement, session="one")
    say(client_a, space_a, "We manufacture garden furniture.", session="one")
    body = say(client_a, space_a, request_text, session="two")
    assert value in body["confirmation"], body
    assert value not in every_text(space_a)
    assert "furniture" in every_text(space_a)  # the request takes only the attribute it names


# --- What only looks like a request deletes nothing -------------------------------------------------

NOT_REQUESTS = [
    "I forgot my password.",
    "I forgot my address.",
    "How do I delete my account?",
    "Don't forget to send the invoice.",
    "Nie zapomnij wysłać faktury.",
    "Zapomniałem hasła.",
    "My colleague said to forget the address.",
]


@pytest.mark.parametrize("message", NOT_REQUESTS)
def test_what_only_looks_like_a_request_deletes_nothing(client_a, space_a, message):
    for statement in (
        "I live at 12 Baker Street in London.",
        "My phone number is 555-0123.",
        "My password hint is the name of my cat.",
        "We send the invoice at the end of each month.",
        "My account is on the premium plan.",
    ):
        say(client_a, space_a, statement, session="one")
    before = deletions(space_a)
    body = say(client_a, space_a, message, session="two")
    assert body["forgotten"] == [], body
    assert deletions(space_a) == before
    assert "Baker" in every_text(space_a) and "555-0123" in every_text(space_a)


UNSEEN_STATEMENTS = [
    "Mieszkam w Krakowie przy ulicy Długiej 5.",
    "Abito a Milano da tre anni.",
    "Moro em Lisboa com a minha família.",
    "İstanbul'da yaşıyorum.",
    "Mój numer telefonu to 555-0199.",
]


@pytest.mark.parametrize("statement", UNSEEN_STATEMENTS)
def test_a_statement_in_an_unseen_language_deletes_nothing(client_a, space_a, statement):
    say(client_a, space_a, "I live at 12 Baker Street in London.", session="one")
    say(client_a, space_a, "My phone number is 555-0123.", session="one")
    before = deletions(space_a)
    body = say(client_a, space_a, statement, session="two")
    assert body["forgotten"] == [], body
    assert deletions(space_a) == before


@pytest.mark.parametrize(
    "statement, request_text",
    [
        ("I live in Lyon.", "Please forget my old address."),
        ("I live in Lyon.", "Please forget my old address in Lyon."),
        ("Я живу в Казани.", "Пожалуйста, забудьте мой старый адрес."),
        ("I live in Lyon.", "Proszę zapomnieć mój stary adres."),
    ],
)
def test_forget_my_old_x_with_one_value_stored_deletes_nothing(client_a, space_a, statement, request_text):
    say(client_a, space_a, statement, session="one")
    before = deletions(space_a)
    body = say(client_a, space_a, request_text, session="two")
    assert body["forgotten"] == [], body
    assert deletions(space_a) == before
    assert any(kind == "fact" for kind, *_ in all_rows(space_a))


def test_forget_everything_in_any_language_is_answered_never_carried_out(client_a, space_a):
    say(client_a, space_a, "I live at 12 Baker Street in London.", session="one")
    for message in ("Forget everything you know about me.", "Proszę zapomnieć wszystko o mnie."):
        body = say(client_a, space_a, message, session="two")
        assert body["forgotten"] == [], body
    assert "Baker" in every_text(space_a)


# --- Forgetting by attribute: the statement, its history, its topic tags; the answer names them ----------


def test_forget_my_address_takes_the_current_value_and_its_history_and_names_the_statement(client_a, space_a):
    say(client_a, space_a, "I live in Lyon.", session="one")
    say(client_a, space_a, "I moved to Marseille.", session="two")
    say(client_a, space_a, "My phone number is 555-0123.", session="two")
    body = say(client_a, space_a, "Forget my address.", session="three")
    assert "Marseille" in body["confirmation"], body
    assert "Lyon" not in every_text(space_a) and "Marseille" not in every_text(space_a)
    assert "555-0123" in every_text(space_a)


def test_a_forgotten_number_takes_its_topic_tag_and_the_answer_lists_no_tag(client_a, space_a):
    say(client_a, space_a, "My phone number is 555-0123.", session="one")
    body = say(client_a, space_a, "Please forget my phone number.", session="two")
    assert "My phone number is 555-0123." in body["confirmation"]
    # The answer quotes the statements only; a tag that went with them is listed as such, never quoted.
    statements = [f["content"] for f in body["forgotten"] if f["kind"] != "topic"]
    assert body["confirmation"].count("“") == len(statements) == 1, body
    assert "555" not in every_text(space_a)


def test_a_phone_request_never_takes_a_contact_rule_without_a_number(client_a, space_a):
    say(client_a, space_a, "My phone number is 555-0123.", session="one")
    say(client_a, space_a, "Please call me only after 5 pm.", session="one")
    for request_text in ("Please forget my phone number.", "Proszę zapomnieć mój numer telefonu."):
        say(client_a, space_a, request_text, session="two")
    assert "555" not in every_text(space_a)
    assert "after 5 pm" in every_text(space_a)


# --- Negating corrections, learned ------------------------------------------------------------------


@pytest.mark.parametrize(
    "statements, correction, negated, kept",
    [
        (
            "I run a fleet of four vans. We manufacture garden furniture.",
            "That's wrong, we don't make furniture at all.",
            "furniture",
            "vans",
        ),
        pytest.param(
            "Wir haben vier Lieferwagen. Wir stellen Gartenmöbel her.",
            "Das stimmt nicht, wir machen überhaupt keine Möbel.",
            "möbel",
            "lieferwagen",
            marks=pytest.mark.xfail(
                strict=True, reason="#25 open: the German denial does not reach the compound 'Gartenmöbel'"
            ),
        ),
    ],
)
def test_a_negating_correction_keeps_what_it_does_not_negate(client_a, space_a, statements, correction, negated, kept):
    say(client_a, space_a, statements, session="one")
    say(client_a, space_a, correction, session="two")
    current = " | ".join(c for kind, c, _t, cur in all_rows(space_a) if kind != "topic" and cur).lower()
    assert negated not in current and kept in current, current


def test_a_correction_that_states_the_new_value_deletes_nothing(client_a, space_a):
    say(client_a, space_a, "We are a bakery in Brno.", session="one")
    before = deletions(space_a)
    say(client_a, space_a, "We're not a bakery, we're a coffee roaster.", session="two")
    assert deletions(space_a) == before


# --- The reading itself ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message, kind",
    [
        ("Proszę zapomnieć mój numer telefonu.", "explicit"),
        ("Forget my address.", "explicit"),
        ("That's wrong, we don't make furniture at all.", "correction"),
        ("I forgot my password.", None),
        ("How do I delete my account?", None),
        ("Don't forget to send the invoice.", None),
        ("Mieszkam w Krakowie.", None),
    ],
)
def test_the_decision_is_the_learned_reading_within_the_vetoes(message, kind):
    assert read_intent(message).kind == kind


# --- A restatement that negates is no denial ---------------------------------------------------------

RESTATED_IN_THE_NEGATIVE = [
    ("I am vegetarian.", "I don't eat meat at all."),
    ("Я вегетарианец.", "Я вообще не ем мясо."),
    ("Jsem vegetarián.", "Maso vůbec nejím."),
    ("Ich bin Vegetarier.", "Ich esse überhaupt kein Fleisch."),
]


@pytest.mark.parametrize("stored, restated", RESTATED_IN_THE_NEGATIVE)
def test_a_negative_restatement_of_a_stored_fact_deletes_nothing(client_a, space_a, stored, restated):
    say(client_a, space_a, stored, session="one")
    before = deletions(space_a)
    body = say(client_a, space_a, restated, session="two")
    assert body["forgotten"] == [], body
    assert deletions(space_a) == before
    assert stored in every_text(space_a)


# --- A request in another form of the stored word --------------------------------------------------

# (stored target, bystanders, request): the request's word is the stored word's stem in another form, which
# lemmatisers give another lemma (an adjective beside its noun), and the embedding alone puts a little
# farther than the floor.
STEM_REQUESTS = [
    ("Бухгалтерию мы ведём в 1С.", ["У нас 40 сотрудников.", "Счета отправляйте на billing@olga.example."],
     "Забудьте, какую бухгалтерскую программу мы используем.", "1С"),
    ("Účetnictví vedeme v Pohodě.", ["Máme 40 zaměstnanců.", "Faktury posílejte na billing@jana.example."],
     "Zapomeňte, jaký účetní program používáme.", "Pohod"),
    ("Usamos Holded para la contabilidad.", ["Tenemos 40 empleados.", "Envíen las facturas a billing@lucia.example."],
     "Olvida qué programa contable usamos.", "Holded"),
    ("Unsere Buchhaltung läuft über DATEV.", ["Wir haben 40 Mitarbeiter.", "Rechnungen bitte an billing@max.example."],
     "Vergessen Sie, welches Buchhaltungsprogramm wir nutzen.", "DATEV"),
]  # fmt: skip


@pytest.mark.parametrize("stored, bystanders, request_text, value", STEM_REQUESTS)
def test_a_request_naming_the_stored_words_stem_in_another_form_is_carried_out(
    client_a, space_a, stored, bystanders, request_text, value
):
    for statement in (stored, *bystanders):
        say(client_a, space_a, statement, session="one")
    body = say(client_a, space_a, request_text, session="two")
    assert value in body["confirmation"], body
    assert value not in every_text(space_a)
    for bystander in bystanders:  # one request, one thing: the rest stays
        assert bystander.split()[-1].rstrip(".") in every_text(space_a), bystander


@pytest.mark.parametrize("stored, bystanders, request_text, value", STEM_REQUESTS)
def test_a_request_for_something_not_stored_takes_no_neighbour_of_its_stem_search(
    client_a, space_a, stored, bystanders, request_text, value
):
    assert_takes_nothing(client_a, space_a, bystanders, request_text)


# (stored row about another subject, request): the row shares the request's word or its stem and lies within
# the distance a shared word reaches, but it is about someone's job or family, not the business's software.
OTHER_SUBJECT_SAME_WORD = [
    ("Я работаю бухгалтером.", "Забудьте, какую бухгалтерскую программу мы используем."),
    ("Pracuji jako účetní.", "Zapomeňte, jaký účetní program používáme."),
    ("Mi hermano es contable.", "Olvida qué programa contable usamos."),
    ("Ich arbeite in der Buchhaltung.", "Vergessen Sie, welches Buchhaltungsprogramm wir nutzen."),
    ("My sister is a photographer.", "Forget my photography business."),
]


@pytest.mark.parametrize("stored, request_text", OTHER_SUBJECT_SAME_WORD)
def test_a_shared_word_does_not_reach_a_row_about_another_subject(client_a, space_a, stored, request_text):
    assert_takes_nothing(client_a, space_a, [stored, "We have two dogs."], request_text)


# --- A request no list reads, about any attribute, by the words it shares with the row ---------------

# (stored rows, request, the row it names): Italian has no phrase list; the request shares a word with the row
# and the model reads both as the same attribute.
WORDED_UNSEEN_REQUESTS = [
    (["Mandate sempre le fatture a billing@giulia.example.", "Abbiamo 40 dipendenti."],
     "Cancella la nota su dove mandare le fatture.", "billing@giulia.example"),
    (["Il mio cane si chiama Rex.", "Abito a Torino."], "Dimentica il nome del mio cane.", "Rex"),
]  # fmt: skip


@pytest.mark.parametrize("stored, request_text, value", WORDED_UNSEEN_REQUESTS)
def test_a_request_no_list_reads_takes_the_row_sharing_its_words_and_attribute(
    client_a, space_a, stored, request_text, value
):
    for statement in stored:
        say(client_a, space_a, statement, session="one")
    body = say(client_a, space_a, request_text, session="two")
    assert value in body["confirmation"], body
    assert value not in every_text(space_a)
    assert stored[1] in every_text(space_a)


@pytest.mark.parametrize(
    "stored, message",
    [
        # Not a request: a reminder that shares the word.
        (["Mandate sempre le fatture a billing@giulia.example."], "Non dimenticare di mandare le fatture."),
        # A request whose shared word is in a row about someone's job, not the business's software.
        (["Mi hermano es contable.", "Tenemos dos perros."], "Borra lo que sabes de nuestro programa contable."),
        # Someone else forgot something.
        (["Il mio cane si chiama Rex."], "Il mio vicino ha dimenticato il suo cane al parco."),
    ],
)
def test_a_request_no_list_reads_takes_nothing_it_does_not_share_words_and_attribute_with(
    client_a, space_a, stored, message
):
    assert_takes_nothing(client_a, space_a, stored, message)


# --- A request in one language, the row in another ---------------------------------------------------

# (stored rows — the target first, then a bystander — request, a word of the target): the customer wrote the
# fact in one language and asks in another; the request's word reaches the row only in translation.
TRANSLATED_REQUESTS = [
    (["Бухгалтерию мы ведём в 1С.", "У нас 40 сотрудников."], "Forget what you know about our accounting software.",
     "1С"),
    (["Our accounting runs on SAP.", "We have 40 employees."], "Olvida lo que sabes de nuestra contabilidad.", "SAP"),
    (["Naše kancelář je v Brně na Vídeňské.", "Máme čtyři dodávky."], "Forget what you know about our office.",
     "Vídeňské"),
    pytest.param(
        ["We run four delivery vans out of our Brno depot.", "Our contract renewal is in June."],
        "Забудьте, что вы знаете о наших фургонах.", "Brno",
        marks=pytest.mark.xfail(strict=True, reason="#25 open: the pair sits at 0.21, past three times the floor "
                                "(0.18) that a translated word reaches; a longer English row drifts farther"),
    ),
]  # fmt: skip


@pytest.mark.parametrize("stored, request_text, value", TRANSLATED_REQUESTS)
def test_a_request_in_another_language_than_the_row_takes_it(client_a, space_a, stored, request_text, value):
    for statement in stored:
        say(client_a, space_a, statement, session="one")
    body = say(client_a, space_a, request_text, session="two")
    assert [f["content"] for f in body["forgotten"] if f["kind"] != "topic"] == [stored[0]], body
    assert value not in every_text(space_a)
    assert stored[1] in every_text(space_a)


# The translated word is in the row, but the row is about someone's job, or the request is about another thing.
TRANSLATED_LOOKALIKES = [
    (["Мой брат работает в бухгалтерии.", "У нас 40 сотрудников."],
     "Forget what you know about our accounting software."),
    (["Mi hermano trabaja de contable.", "Tenemos dos perros."], "Forget what you know about our accounting software."),
    (["У нас четыре фургона.", "Бухгалтерию мы ведём в 1С."], "Forget what you know about our trucks."),
]  # fmt: skip


@pytest.mark.parametrize("stored, request_text", TRANSLATED_LOOKALIKES)
def test_a_translated_word_does_not_reach_a_row_about_another_subject(client_a, space_a, stored, request_text):
    assert_takes_nothing(client_a, space_a, stored, request_text)
