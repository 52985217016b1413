"""#27: a question about one of the customer's attributes finds the row that states it, whatever words the
two share. After a move, "Where does the customer live?" answers with the new place first and never the
old one; a question about an attribute the customer never mentioned, and the same question asked of another
account, get nothing. Through the API, real database, bundled embedding model, offline engine.
"""

from __future__ import annotations

import pytest

from tests.support.turns import recall, say

pytestmark = pytest.mark.django_db

# (lang, where they lived, the move, the agent's question, a word of the new place, a word of the old one)
MOVES = [
    (
        "en",
        "I live in Leeds with my wife.",
        "Correction: I moved to York last month.",
        "Where does the customer live?",
        "York",
        "Leeds",
    ),
    (
        "de",
        "Ich wohne in Köln.",
        "Ich bin letzten Monat nach Bremen umgezogen.",
        "Wo wohnt der Kunde?",
        "Bremen",
        "Köln",
    ),
    ("ru", "Я живу в Казани.", "Я переехал в Новосибирск.", "Где живёт клиент?", "Новосибирск", "Казан"),
    ("cs", "Bydlím v Brně.", "Přestěhoval jsem se do Olomouce.", "Kde zákazník bydlí?", "Olomouc", "Brn"),
    ("es", "Vivo en Sevilla.", "Me mudé a Valencia el mes pasado.", "¿Dónde vive el cliente?", "Valencia", "Sevilla"),
    ("fr", "J'habite à Lyon.", "J'ai déménagé à Nantes le mois dernier.", "Où habite le client ?", "Nantes", "Lyon"),
    ("ja", "大阪に住んでいます。", "先月、札幌に引っ越しました。", "お客様はどこに住んでいますか？", "札幌", "大阪"),
    (
        "nl",
        "Ik woon in Utrecht.",
        "Vorige maand ben ik naar Groningen verhuisd.",
        "Waar woont de klant?",
        "Groningen",
        "Utrecht",
    ),
]


@pytest.mark.parametrize("lang, before, move, question, new, old", MOVES, ids=[m[0] for m in MOVES])
def test_after_a_move_where_the_customer_lives_is_the_new_place(
    client_a, space_a, lang, before, move, question, new, old
):
    say(client_a, space_a, before, session="one")
    say(client_a, space_a, move, session="two")
    found = [hit["content"] for hit in recall(client_a, space_a, question)["memories"]]
    assert found and new in found[0], found
    assert not any(old in content for content in found), found


def test_a_question_about_a_recent_move_finds_it(client_a, space_a):
    say(client_a, space_a, "I live in Leeds.", session="one")
    say(client_a, space_a, "Correction: I moved to York last month.", session="two")
    found = [hit["content"] for hit in recall(client_a, space_a, "Did the customer move recently?")["memories"]]
    assert found and "York" in found[0], found


def test_an_attribute_never_mentioned_gets_nothing(client_a, space_a):
    say(client_a, space_a, "We run a fleet of four vans.")
    say(client_a, space_a, "I'm allergic to peanuts.")
    assert recall(client_a, space_a, "Where does the customer live?")["memories"] == []
    assert recall(client_a, space_a, "Is the customer married?")["memories"] == []


def test_another_account_asked_the_same_question_gets_nothing(client_a, space_a, client_b, space_b):
    say(client_a, space_a, "I moved to York last month.")
    say(client_b, space_b, "We sell garden furniture online.")
    assert recall(client_b, space_b, "Where does the customer live?")["memories"] == []


def test_a_question_that_asks_two_things_finds_both(client_a, space_a):
    say(client_a, space_a, "We run a fleet of four vans.")
    say(client_a, space_a, "Our renewal is in May.")
    found = {
        hit["content"]
        for hit in recall(client_a, space_a, "When is our renewal and how many vans do we run?")["memories"]
    }
    assert found >= {"Our renewal is in May.", "We run a fleet of four vans."}, found


@pytest.mark.xfail(
    strict=True,
    reason="#27 open: the gate's learned similarity scores this plain match under 0.05 and vetoes it; "
    "its per-dimension weights are noisy on 954 training questions",
)
def test_a_plain_question_about_a_stated_code_finds_it(client_a, space_a):
    say(client_a, space_a, "Our warehouse code is Zephyr-42.")
    found = [hit["content"] for hit in recall(client_a, space_a, "What is the warehouse code?")["memories"]]
    assert found == ["Our warehouse code is Zephyr-42."], found
