"""#25's examples, each through the API in at least four languages: what a user expects after ordinary
turns once the decisions about a sentence (what it is, what it is about, whether it denies) are learned
rather than listed. Real database, bundled embedding model, the offline engine.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.models import Memory
from tenants import scope
from tests.support.turns import recall, say

pytestmark = pytest.mark.django_db


def rows(space, *, current_only=True, kinds=None):
    with scope.tenant_scope(space.tenant_id, space):
        found = Memory.objects.all()
        if current_only:
            found = found.filter(superseded_by__isnull=True)
        if kinds:
            found = found.filter(kind__in=kinds)
        return [(m.kind, m.content, m.topic or "") for m in found]


def every_text(space) -> str:
    """Every text a space keeps about its memories, current or not: content, topics, history."""
    return " | ".join(f"{content} {topic}" for _kind, content, topic in rows(space, current_only=False))


# --- 3. A statement is the unit that changes ----------------------------------------------------

NAME_THEN_MOVE = [
    ("Меня зовут Дмитрий, я живу в Казани.", "Я переехал в Новосибирск.", "Как зовут клиента?", "Дмитрий", "Казан"),
    (
        "My name is Dmitri, I live in Kazan.",
        "I moved to Novosibirsk.",
        "What is the customer's name?",
        "Dmitri",
        "Kazan",
    ),
    (
        "Jmenuji se Dmitrij, bydlím v Kazani.",
        "Přestěhoval jsem se do Novosibirsku.",
        "Jak se zákazník jmenuje?",
        "Dmitrij",
        "Kazan",
    ),
    (
        "Ich heiße Dmitri, ich wohne in Kasan.",
        "Ich bin nach Nowosibirsk gezogen.",
        "Wie heißt der Kunde?",
        "Dmitri",
        "Kasan",
    ),
]


@pytest.mark.parametrize("first, move, question, name, old_city", NAME_THEN_MOVE)
def test_a_move_replaces_only_the_residence_and_the_name_stays_current(
    client_a, space_a, first, move, question, name, old_city
):
    say(client_a, space_a, first, session="one")
    say(client_a, space_a, move, session="two")
    current = [content for kind, content, _ in rows(space_a) if kind != "topic"]
    assert any(name in c for c in current), current
    assert not any(old_city in c for c in current), current
    hits = [h["content"] for h in recall(client_a, space_a, question)["memories"]]
    assert any(name in h for h in hits), hits


# --- 4. Forgetting by attribute removes every row that carries the value --------------------------

FORGET_ADDRESS = [
    ("I live at 12 Baker Street in London.", "Forget my address.", "Where do I live?", "Baker"),
    ("Я живу на улице Ленина 5 в Казани.", "Забудьте мой адрес.", "Где я живу?", "Ленина"),
    ("Bydlím na Vinohradské 12 v Praze.", "Zapomeňte mou adresu.", "Kde bydlím?", "Vinohradsk"),
    ("Ich wohne in der Goethestraße 7 in Leipzig.", "Vergessen Sie meine Adresse.", "Wo wohne ich?", "Goethestra"),
]


@pytest.mark.parametrize("statement, request_text, question, value", FORGET_ADDRESS)
def test_forget_my_address_deletes_the_statement_and_says_so_not_a_topic_tag(
    client_a, space_a, statement, request_text, question, value
):
    say(client_a, space_a, statement, session="one")
    body = say(client_a, space_a, request_text, session="two")
    forgotten = [f["content"] for f in body["forgotten"] if f["kind"] != "topic"]
    assert any(value in f for f in forgotten), body["forgotten"]
    assert value in body["confirmation"]
    assert value not in every_text(space_a)
    assert not any(value in h["content"] for h in recall(client_a, space_a, question)["memories"])


OLD_ADDRESS = [
    ("I live in Lyon.", "I moved to Marseille.", "Please forget my old address in Lyon.", "Lyon", "Marseille"),
    ("Я живу в Казани.", "Я переехал в Самару.", "Пожалуйста, забудьте мой старый адрес в Казани.", "Казан", "Самар"),
    (
        "Bydlím v Brně.",
        "Přestěhoval jsem se do Ostravy.",
        "Zapomeňte prosím mou starou adresu v Brně.",
        "Brn",
        "Ostrav",
    ),
    (
        "Ich wohne in Köln.",
        "Ich bin nach Bonn umgezogen.",
        "Bitte vergessen Sie meine alte Adresse in Köln.",
        "Köln",
        "Bonn",
    ),
]


@pytest.mark.parametrize("first, move, request_text, old, new", OLD_ADDRESS)
def test_forget_my_old_address_removes_the_replaced_row_from_history(
    client_a, space_a, first, move, request_text, old, new
):
    say(client_a, space_a, first, session="one")
    say(client_a, space_a, move, session="two")
    body = say(client_a, space_a, request_text, session="three")
    assert any(old in f["content"] for f in body["forgotten"]), body
    assert old not in every_text(space_a)
    assert any(new in content for _k, content, _t in rows(space_a))


PHONE = [
    ("My phone number is 555-0123.", "Please forget my phone number."),
    ("Мой номер телефона 555-0123.", "Пожалуйста, забудьте мой номер телефона."),
    ("Moje telefonní číslo je 555-0123.", "Zapomeňte prosím moje telefonní číslo."),
    ("Meine Telefonnummer ist 555-0123.", "Bitte vergessen Sie meine Telefonnummer."),
]


@pytest.mark.parametrize("statement, request_text", PHONE)
def test_a_forgotten_phone_number_is_nowhere_not_even_as_a_topic(client_a, space_a, statement, request_text):
    say(client_a, space_a, statement, session="one")
    body = say(client_a, space_a, request_text, session="two")
    assert "555-0123" in body["confirmation"]
    assert "555" not in every_text(space_a)
    listed = client_a.get(reverse("memory-list", args=[space_a.external_id])).json()
    assert "555" not in str(listed)


# --- 5. Topics name a subject, never carry a value ------------------------------------------------

VALUES = [
    "My phone number is 555-0123.",
    "Мой номер телефона 555-0123, почта ivan@example.com.",
    "Moje číslo objednávky je 88412.",
    "Meine Kundennummer ist 99-1234.",
]


@pytest.mark.parametrize("statement", VALUES)
def test_no_topic_carries_a_number_an_address_or_a_name(client_a, space_a, statement):
    say(client_a, space_a, statement)
    topics = [topic for _kind, _content, topic in rows(space_a) if topic]
    assert topics, rows(space_a)
    assert not any(any(c.isdigit() for c in t) or "@" in t for t in topics), topics


# --- 6. Negating corrections delete what they negate; restatements merge ---------------------------

NEGATING = [
    (
        "I run a fleet of four vans. We manufacture garden furniture.",
        "That's wrong, we don't make furniture at all.",
        "furniture",
        "vans",
    ),
    (
        "У нас четыре фургона. Мы производим садовую мебель.",
        "Это неправда, мы вообще не делаем мебель.",
        "мебел",
        "фургон",
    ),
    ("Máme čtyři dodávky. Vyrábíme zahradní nábytek.", "To není pravda, nábytek vůbec neděláme.", "nábyt", "dodáv"),
    pytest.param(
        "Wir haben vier Lieferwagen. Wir stellen Gartenmöbel her.",
        "Das stimmt nicht, wir machen überhaupt keine Möbel.",
        "möbel",
        "Lieferwagen",
        marks=pytest.mark.xfail(
            strict=True, reason="#25 open: the German denial does not reach the compound 'Gartenmöbel'"
        ),
    ),
]


@pytest.mark.parametrize("statements, correction, negated, kept", NEGATING)
def test_a_negating_correction_deletes_what_it_negates_and_nothing_else(
    client_a, space_a, statements, correction, negated, kept
):
    say(client_a, space_a, statements, session="one")
    say(client_a, space_a, correction, session="two")
    current = " | ".join(c for kind, c, _ in rows(space_a) if kind != "topic")
    assert negated not in current.lower(), current
    assert kept.lower() in current.lower(), current


RESTATED = [
    "Hi! I run a fleet of four delivery vans in Brno.",
    "Привет! У меня парк из четырёх фургонов в Брно.",
    "Ahoj! Provozuji flotilu čtyř dodávek v Brně.",
    "Hallo! Ich betreibe eine Flotte von vier Lieferwagen in Brünn.",
]


@pytest.mark.parametrize("statement", RESTATED)
def test_a_restatement_in_four_later_sessions_leaves_one_row(client_a, space_a, statement):
    for session in ("one", "two", "three", "four", "five"):
        say(client_a, space_a, statement, session=session)
    facts = [content for kind, content, _ in rows(space_a) if kind == "fact"]
    assert len(facts) == 1, facts


# --- 7. Questions whose words are all stop words still have content --------------------------------

STOP_WORD_QUESTIONS = [
    ("My order number is 4411.", "What is his order number?"),
    ("Номер моего заказа 4411.", "Какой номер заказа?"),
    ("Číslo mé objednávky je 4411.", "Jaké je číslo objednávky?"),
    ("Meine Bestellnummer ist 4411.", "Wie ist die Nummer der Bestellung?"),
]


@pytest.mark.parametrize("statement, question", STOP_WORD_QUESTIONS)
def test_a_question_of_stop_words_still_finds_its_answer(client_a, space_a, statement, question):
    say(client_a, space_a, statement)
    body = recall(client_a, space_a, question)
    assert body.get("warning", "") != "no content words"
    assert any("4411" in h["content"] for h in body["memories"]), body


# Questions no attribute routes, whose every word a stop list holds (English's holds "working", "opening", "old";
# Russian's "лет"): searched by meaning, under the gate, because the reading says they ask something of someone.
UNROUTED_STOP_WORD_QUESTIONS = [
    ("Still working on opening a dance studio.", "What is he working on opening?", "dance studio"),
    ("I'm working on opening a second bakery in the old town.", "What is she working on opening?", "bakery"),
    ("Мне тридцать четыре года.", "Сколько ему лет?", "тридцать четыре"),
    ("I've been doing pottery for seven years.", "How long has she been doing it?", "pottery"),
]


@pytest.mark.parametrize("statement, question, answer", UNROUTED_STOP_WORD_QUESTIONS)
def test_an_unrouted_question_of_stop_words_is_searched_by_meaning(client_a, space_a, statement, question, answer):
    say(client_a, space_a, "Please always write to me by e-mail.")
    say(client_a, space_a, statement)
    body = recall(client_a, space_a, question)
    assert body.get("warning", "") != "no content words"
    statements = [h["content"] for h in body["memories"] if h["kind"] != "topic"]
    assert statements == [statement] and answer in statements[0], body


@pytest.mark.parametrize("question", ["is it in?", "What is it?", "Is that all?", "How old is he?"])
def test_a_question_of_stop_words_asking_nothing_of_anyone_gets_nothing(client_a, space_a, question):
    say(client_a, space_a, "Still working on opening a dance studio.")
    say(client_a, space_a, "I lost my job as a banker last month.")
    body = recall(client_a, space_a, question)
    assert [h for h in body["memories"] if h["kind"] != "topic"] == [], body


def test_name_alone_is_a_query_with_content(client_a, space_a):
    say(client_a, space_a, "My name is Alice Morgan.")
    body = recall(client_a, space_a, "name")
    assert any("Alice" in h["content"] for h in body["memories"]), body


# --- Junk: sentences that say nothing about the customer are not kept ------------------------------

JUNK = [
    [
        "Lucky you!",
        "It's beautiful!",
        "Glad you agree, Caroline.",
        "Wow Mel, that's stunning!",
        "I'd love to check them out.",
    ],
    ["Везёт тебе!", "Как красиво!", "Рада, что ты согласна, Лена.", "Вау, Маша, это потрясающе!"],
    ["Máš štěstí!", "To je nádhera!", "Jsem ráda, že souhlasíš, Jano.", "Páni, Petře, to je úžasné!"],
    ["Du Glückspilz!", "Wie schön!", "Schön, dass du zustimmst, Anna.", "Wow, Mia, das ist atemberaubend!"],
]


@pytest.mark.parametrize("reactions", JUNK)
def test_reactions_and_compliments_leave_no_row(client_a, space_a, reactions):
    for reaction in reactions:
        say(client_a, space_a, reaction)
    assert rows(space_a) == []
