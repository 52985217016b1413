"""An agent may ask its memory about the customer by name (the space's display name): the question is read as
about the customer, in any inflection of the name — and a question about someone the customer knows stays
about them."""

import datetime

import pytest
from django.urls import reverse

from memory.recall.customer_named import customer_named_in, without_names
from tenants import scope
from tests.conftest import make_space
from tests.support.recall import contents, recall, tell_at

pytestmark = pytest.mark.django_db

TOLD = datetime.datetime(2023, 1, 29, 12, tzinfo=datetime.UTC)


def named_space(client, tenant, external_id, display_name, *told):
    space = make_space(tenant, external_id)
    # As a deployment would: the name it knows the customer by, set through the API.
    url = reverse("space-detail", args=[space.external_id])
    assert client.patch(url, {"display_name": display_name}, format="json").status_code == 200
    with scope.tenant_scope(tenant):
        space.refresh_from_db()
    for message in told:
        tell_at(client, space, message, TOLD, "s1")
    return space


@pytest.mark.parametrize(
    ("question", "display_name", "named"),
    [
        ("When did Gina launch her ad campaign?", "Gina Rossi", ["Gina"]),
        ("What is Caroline's relationship status?", "Caroline", ["Caroline's"]),
        ("Kde pracuje Jana?", "Jana Nováková", ["Jana"]),
        ("Как зовут кошку Галины?", "Галина Петрова", ["Галины"]),
        ("Where does Gino live?", "Gina", []),  # another name, however close
        ("Where does Paula work?", "Paul Smith", []),  # the wife, not the customer
        ("Kde bydlí Marta?", "Marek Novák", []),
        ("Wo arbeitet Ginas Mann?", "Gina Rossi", ["Ginas"]),
        ("Who is Gina?", "gina.rossi@example.com", []),  # an e-mail address names nobody
        ("Did the bill arrive?", "Bill Jones", []),  # a word, not the name: no capital
        ("Where does Gina live?", "", []),  # no display name: nobody is named
        ("Where does J. live?", "J. R.", []),  # initials are not a name to recognise
    ],
)
def test_which_words_of_a_question_are_the_customers_name(question, display_name, named):
    assert customer_named_in(question, display_name) == named


def test_the_name_is_left_out_of_what_is_searched():
    assert without_names("When did Gina launch her ad campaign?", ["Gina"]) == "When did launch her ad campaign?"


def test_a_question_that_calls_the_customer_by_name_finds_what_they_said(client_a, tenant_a):
    space = named_space(
        client_a,
        tenant_a,
        "gina",
        "Gina Rossi",
        "I just launched an ad campaign for my clothing store.",
        "I love dancing contemporary.",
    )
    body = recall(client_a, space, "When did Gina launch an ad campaign for her store?")
    assert contents(body)[:1] == ["I just launched an ad campaign for my clothing store."]


def test_in_another_language_and_case_the_answering_row_comes_first(client_a, tenant_a):
    space = named_space(
        client_a, tenant_a, "galina", "Галина Петрова", "Я работаю бухгалтером в школе.", "Я живу в Казани."
    )
    assert contents(recall(client_a, space, "Где работает Галина?"))[:1] == ["Я работаю бухгалтером в школе."]


# Asked by name, each of these is answered by none of the customer's rows: nothing comes back.
ANSWERED_BY_NO_ROW = [
    # about someone the customer knows, not the customer
    ("Jana Nováková", ["Pracuji jako zdravotní sestra v nemocnici.", "Bydlím v Brně."], "Kde bydlí Janin bratr?"),
    ("Lukas Becker", ["Ich arbeite als Elektriker in München."], "Wo wohnt Lukas' Bruder?"),
    # about the customer, but something they never said
    ("Gina Rossi", ["I love dancing contemporary.", "I live in Leeds."], "What is Gina's favourite football team?"),
    ("Галина Петрова", ["Я живу в Казани.", "У меня есть кошка Мурка."], "Какой футбольный клуб любит Галина?"),
    ("Jana Nováková", ["Bydlím v Brně."], "Jaké auto má Jana?"),
]


@pytest.mark.parametrize(("display_name", "told", "question"), ANSWERED_BY_NO_ROW)
def test_a_question_by_name_that_no_row_answers_gets_nothing(client_a, tenant_a, display_name, told, question):
    space = named_space(client_a, tenant_a, "answered-by-none", display_name, *told)
    assert contents(recall(client_a, space, question)) == []


def test_a_relative_asked_about_in_english_does_not_get_the_customers_residence(client_a, tenant_a):
    space = named_space(client_a, tenant_a, "gina-sister", "Gina Rossi", "I live in Leeds.")
    assert contents(recall(client_a, space, "Where does Gina's sister live?")) == []


@pytest.mark.parametrize(
    "question", ["Gina Rossi", "Who is Gina?", "Tell me about Gina.", "What do you know about Gina?"]
)
def test_a_question_with_nothing_but_the_name_to_search_for_is_asked_as_written(client_a, tenant_a, question):
    space = named_space(client_a, tenant_a, "only-name", "Gina Rossi", "My name is Gina Rossi.", "I live in Leeds.")
    assert "My name is Gina Rossi." in contents(recall(client_a, space, question))


@pytest.mark.parametrize(
    ("display_name", "told", "question", "answer"),
    [
        ("Paul Smith", ["I work as a nurse.", "My wife Paula works at a bakery."], "Where does Paula work?", 1),
        ("Florence Smith", ["I went to Florence in May 2022.", "I work as a nurse."], "When did I go to Florence?", 0),
        ("Anna Sommer", ["Im Sommer war ich in Spanien.", "Ich arbeite als Köchin."], "Wo war ich im Sommer?", 0),
    ],
)
def test_a_word_that_names_someone_or_something_else_is_not_taken_for_the_customer(
    client_a, tenant_a, display_name, told, question, answer
):
    space = named_space(client_a, tenant_a, "something-else", display_name, *told)
    assert contents(recall(client_a, space, question))[:1] == [told[answer]]


def test_an_operator_sees_in_the_playground_that_the_question_was_read_as_about_the_customer(
    client, client_a, tenant_a
):
    from tests.support.console import login

    space = named_space(client_a, tenant_a, "playground", "Gina Rossi", "I just launched an ad campaign for my store.")
    login(client, tenant_a, "operator")
    asked = {"space": space.external_id, "message": "When did Gina launch an ad campaign?"}
    page = client.get(reverse("console:playground"), asked).content.decode()
    assert "asked about the customer by name: searched as “When did launch an ad campaign?”" in page
    assert "I just launched an ad campaign for my store." in page
    unnamed = client.get(reverse("console:playground"), {**asked, "message": "When did I launch an ad campaign?"})
    assert "searched-as" not in unnamed.content.decode()
