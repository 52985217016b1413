"""A question about someone else recalls only what names that someone: "Where does the Prime Minister live?"
does not get the customer's own address, "Where does my brother live?" gets the brother's."""

import pytest

from tests.support.recall import contents, recall, tell

pytestmark = pytest.mark.django_db

# (what the customer said, questions about other people that must get none of it, a question about a person
# the customer did mention, the row that answers it, the customer's own row that must not)
CASES = {
    "en": (
        ["I live in Leeds.", "My brother Pablo lives in Madrid.", "I prefer to be contacted by email."],
        ["Where does the Prime Minister live?", "What's my colleague's phone number?"],
        ("Where does my brother live?", "My brother Pablo lives in Madrid.", "I live in Leeds."),
    ),
    "de": (
        ["Ich wohne in Freiburg.", "Meine Schwester Anna wohnt in Hamburg.", "Ich arbeite als Krankenpflegerin."],
        ["Wo wohnt der Bundeskanzler?", "Wo arbeitet mein Nachbar?"],
        ("Wo wohnt meine Schwester?", "Meine Schwester Anna wohnt in Hamburg.", "Ich wohne in Freiburg."),
    ),
    "ru": (
        ["Я живу в Екатеринбурге.", "Мой брат Олег живёт в Казани.", "Я работаю инженером-программистом."],
        ["Где живёт президент?", "Где работает мой сосед?"],
        ("Где живёт мой брат?", "Мой брат Олег живёт в Казани.", "Я живу в Екатеринбурге."),
    ),
    "cs": (
        ["Bydlím v Brně.", "Moje sestra Jana bydlí v Praze.", "Pracuji jako účetní."],
        ["Kde bydlí prezident?", "Kde pracuje můj soused?"],
        ("Kde bydlí moje sestra?", "Moje sestra Jana bydlí v Praze.", "Bydlím v Brně."),
    ),
}


KNOWN_GAPS = {
    ("ru", "Где работает мой сосед?"): "#27 open: 'работает' names the neighbour nearly as much as 'сосед' does, "
    "and the customer's 'Я работаю инженером-программистом.' carries it",
}


def known_gap(language, question):
    reason = KNOWN_GAPS.get((language, question))
    return pytest.param(language, question, marks=pytest.mark.xfail(strict=True, reason=reason) if reason else ())


@pytest.mark.parametrize(
    ("language", "question"), [known_gap(language, q) for language, (_s, others, _m) in CASES.items() for q in others]
)
def test_a_question_about_someone_else_gets_nothing_of_the_customers_own(client_a, space_a, language, question):
    tell(client_a, space_a, *CASES[language][0])
    assert recall(client_a, space_a, question)["memories"] == []


@pytest.mark.parametrize(
    ("language", "question"), [known_gap(language, mentioned[0]) for language, (_s, _o, mentioned) in CASES.items()]
)
def test_a_question_about_someone_the_customer_mentioned_gets_what_they_said_of_them(
    client_a, space_a, language, question
):
    said, _others, (_question, answer, own) = CASES[language]
    tell(client_a, space_a, *said)
    found = contents(recall(client_a, space_a, question))
    assert answer in found
    assert own not in found


def test_a_long_message_about_someone_else_is_not_read_word_by_word(client_a, space_a):
    tell(client_a, space_a, "I live in Leeds.")
    long_question = "Where does the Prime Minister live " + "and where " * 3000 + "?"
    response = client_a.post(f"/api/v1/spaces/{space_a.external_id}/recall", {"query": long_question}, format="json")
    assert response.status_code == 200


def test_the_customer_called_by_name_is_not_someone_else(client_a, space_a):
    tell(client_a, space_a, "I'm Tom Novak.", "I drive a Skoda Octavia.", "I live in Leeds.")
    assert "I drive a Skoda Octavia." in contents(recall(client_a, space_a, "What car does Mr. Novak drive?"))


@pytest.mark.xfail(
    strict=True,
    reason="#27 open: a customer called by a role ('the gentleman') with no name row to recognise reads as someone "
    "else, and the row not naming a gentleman is dropped (found by the attack on decision 0022's check)",
)
def test_the_customer_called_by_a_role_is_not_someone_else(client_a, space_a):
    tell(client_a, space_a, "My address is 12 Oak Road, Leeds.", "I love hiking.")
    found = contents(recall(client_a, space_a, "What's the gentleman's home address?"))
    assert "My address is 12 Oak Road, Leeds." in found
