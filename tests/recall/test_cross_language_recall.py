"""A question in one language recalls a fact the customer stated in another — and only that fact."""

import pytest

from tests.support.recall import contents, recall, tell

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


# Languages the language dictionaries do not hold: their words, read as two different known languages, must
# not make a question and a row "in another language" and so beyond the gate's veto.
UNHELD = {
    "it": (["Mi chiamo Lucia Ferri.", "Ho un fratello che si chiama Marco.", "Il mio numero di cliente è MI-55210."],
           ["Che ore sono a Tokyo?", "Chi ha vinto i mondiali nel 2006?", "Che tempo fa?"]),
    "pl": (["Nazywam się Anna Nowak.", "Mam brata, który ma na imię Piotr.", "Mój numer klienta to PL-88231."],
           ["Jaka jest dziś pogoda?", "Kto wygrał mundial w 2018 roku?", "Opowie mi pan dowcip?"]),
    "tr": (["Adım Ayşe Yılmaz.", "Ali adında bir ağabeyim var.", "Müşteri numaram TR-40412."],
           ["Bugün hava nasıl?", "Dünya kupasını kim kazandı?"]),
}  # fmt: skip


@pytest.mark.parametrize(
    ("language", "question"), [(language, q) for language, (_said, asked) in UNHELD.items() for q in asked]
)
def test_an_unrelated_question_in_a_language_without_dictionaries_recalls_nothing(
    client_a, space_a, language, question
):
    tell(client_a, space_a, *UNHELD[language][0])
    assert recall(client_a, space_a, question)["memories"] == []


# The dictionaries hold neither language; their stop-word lists tell the function words ("Mi", "bir"), which
# then count as no keyword (memory.text.analysis.unheld_function_words).
@pytest.mark.parametrize(
    ("language", "question"), [("it", "Mi racconti una storia?"), ("tr", "Bana bir hikaye anlatır mısın?")]
)
def test_a_function_word_of_a_language_without_a_stop_list_does_not_recall(client_a, space_a, language, question):
    tell(client_a, space_a, *UNHELD[language][0])
    assert recall(client_a, space_a, question)["memories"] == []
