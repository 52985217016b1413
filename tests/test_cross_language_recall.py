"""A question in one language recalls a fact the customer stated in another — and only that fact."""

import pytest

from tests.test_recall import contents, recall, tell

pytestmark = pytest.mark.django_db

FACTS = [
    "We run four delivery vans out of our Brno depot.",
    "Мы храним все счета в бухгалтерии на 1С.",
    "契約の更新は6月です。",
    "Máme čtyřicet zaměstnanců.",
    "I love hiking in the mountains.",
]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Сколько у вас фургонов?", "We run four delivery vans out of our Brno depot."),
        ("バンは何台ありますか？", "We run four delivery vans out of our Brno depot."),
        ("Kolik máte dodávek?", "We run four delivery vans out of our Brno depot."),
        ("When is the contract renewal?", "契約の更新は6月です。"),
        ("How many employees do you have?", "Máme čtyřicet zaměstnanců."),
        ("Сколько у вас сотрудников?", "Máme čtyřicet zaměstnanců."),
        ("Kdy je obnovení smlouvy?", "契約の更新は6月です。"),
    ],
)
def test_a_question_recalls_the_fact_stated_in_another_language(client_a, space_a, question, expected):
    tell(client_a, space_a, *FACTS)
    body = recall(client_a, space_a, question)
    assert expected in contents(body)
    assert "I love hiking in the mountains." not in contents(body)


@pytest.mark.parametrize("question", ["Сколько у вас фургонов?", "従業員は何人いますか？", "Kam posílat faktury?"])
def test_a_question_in_another_language_about_something_never_said_recalls_nothing(client_a, space_a, question):
    tell(client_a, space_a, "I love hiking in the mountains.", "My favourite dish is mushroom risotto.")
    assert recall(client_a, space_a, question)["memories"] == []


def test_translated_words_never_reach_another_tenants_memories(client_a, client_b, space_a, space_b):
    tell(client_b, space_b, "We run four delivery vans out of our Brno depot.")
    tell(client_a, space_a, "I love hiking in the mountains.")
    assert recall(client_a, space_a, "Сколько у вас фургонов?")["memories"] == []
    assert "We run four delivery vans out of our Brno depot." in contents(
        recall(client_b, space_b, "Сколько у вас фургонов?")
    )
