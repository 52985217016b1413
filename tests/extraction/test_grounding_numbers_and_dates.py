"""A rewrite may give a number in words or a relative time as its date; a changed number or date still fails, in
languages grounding never had a table for (#26).

Number words come from ``num2words`` (memory/text/number_words.py), relative times are resolved with
``dateparser`` (memory/text/relative_dates.py), and a question the customer asked is not a fact they stated (the
learned reading of intent).
"""

from __future__ import annotations

import datetime

import pytest

from memory.extraction.engine import Candidate
from memory.extraction.grounding import Speaker, check_candidate, identifiers, number_values


def _verdict(message: str, entry: str, *, sent: str = "2025-11-12", name: str = "Emma") -> str | None:
    sent_at = datetime.datetime.fromisoformat(sent).replace(tzinfo=datetime.UTC)
    candidate = Candidate(kind="fact", content=entry, topic="", importance=0.5, keywords=[], quote=message)
    return check_candidate(candidate, message, Speaker.of(name, message, sent_at))


@pytest.mark.parametrize(
    ("message", "changed"),
    [
        ("I teach yoga at a community centre, my classes have about fifteen people each.",
         "Emma teaches yoga at a community centre, her classes have about fifty people each."),
        ("We had about sixty guests at the christening.", "Emma had about eighty guests at the christening."),
        ("Мы ждём возврат уже девять дней.", "Эмма ждёт возврат уже шесть дней."),
        ("У нас стоматологическая клиника: четыре врача и две ассистентки.",
         "У Эммы стоматологическая клиника с пятью врачами и двумя ассистентками."),
        ("Máme zubní ordinaci se čtyřmi zubaři.", "Emma má zubní ordinaci se třemi zubaři."),
        ("Wir haben acht Tische im Café.", "Emma hat zwölf Tische im Café."),
        ("Wir erwarten hundert Gäste zur Feier.", "Emma erwartet tausend Gäste zur Feier."),
    ],
)  # fmt: skip
def test_a_number_changed_in_words_is_refused_in_any_case_and_language(message, changed):
    assert "adds a number" in (_verdict(message, changed) or "")


@pytest.mark.parametrize(
    ("word", "value"),
    [("forty", "40"), ("czterdzieści", "40"), ("quaranta", "40"), ("veertig", "40"), ("förtio", "40"),
     ("negyven", "40"), ("czternaście", "14"), ("quattordici", "14")],
)  # fmt: skip
def test_number_words_of_languages_grounding_had_no_table_for_are_read_as_numbers(word, value):
    assert number_values(f"about {word} people") == {value}


def test_a_name_is_not_read_as_a_number_and_articles_are_not_ones():
    assert number_values("We sold the car to Otto, a friend.") == set()  # "otto" is eight in Italian
    assert number_values("Ein Hund, un chat, a dog") == set()
    assert _verdict("I run four vans.", "Otto runs four vans.", name="Otto Berger") is None


def test_the_same_number_in_other_words_is_admitted():
    assert (
        _verdict("We had about sixty guests at the christening.", "Emma had about 60 guests at the christening.")
        is None
    )
    message = "На крестинах было около шестидесяти гостей."
    assert _verdict(message, "На крестинах у Марины было примерно шестьдесят гостей.", name="Марина") is None


MESSAGE = "Our washing machine finally arrived yesterday, two weeks later than promised."


def test_a_relative_time_given_as_its_date_is_admitted():
    assert (
        _verdict(MESSAGE, "Emma's washing machine arrived on November 11, 2025, two weeks later than promised.") is None
    )
    assert _verdict(MESSAGE, "Emma's washing machine arrived on 11 November 2025.") is None


@pytest.mark.parametrize(
    "entry",
    [
        "Emma's washing machine arrived on November 10, 2025, two weeks later than promised.",
        "Emma's washing machine arrived on December 11, 2025.",
        "Emma's washing machine arrived on November 11, 2024.",
    ],
)
def test_a_date_the_relative_time_does_not_resolve_to_is_refused(entry):
    assert _verdict(MESSAGE, entry) is not None


def test_a_count_is_never_licensed_by_a_date_it_happens_to_match():
    # Sent on 26 May: "nine days" read as a date is 4 June or 17 May, so 6, 17 and 4 are that date's parts,
    # and "six days" is still a number the customer did not say.
    problem = _verdict(
        "I've been waiting nine days for my refund.",
        "Emma has been waiting six days for her refund.",
        sent="2026-05-26",
    )
    assert "adds a number the customer did not say: 6" == problem


def test_a_date_more_precise_than_the_customer_said_is_refused():
    message = "We moved to Leeds last month."
    assert _verdict(message, "Emma moved to Leeds in October 2025.") is None
    assert "adds a number" in (_verdict(message, "Emma moved to Leeds on 3 October 2025.") or "")


@pytest.mark.parametrize(
    ("message", "entry", "sent"),
    [
        ("Ich ziehe diesen Samstag nach Leipzig.", "Emma zieht am 15. November 2025 nach Leipzig.", "2025-11-12"),
        ("Nos casamos el año pasado.", "Emma se casó en 2024.", "2025-11-12"),
        ("В следующем месяце летим в Сочи на свадьбу брата.", "Эмма в декабре 2025 года летит в Сочи на свадьбу брата.",
         "2025-11-12"),
    ],
)  # fmt: skip
def test_relative_times_resolve_in_other_languages(message, entry, sent):
    assert _verdict(message, entry, sent=sent) is None


def test_a_date_written_in_japanese_or_a_number_with_an_ending_is_no_id():
    assert identifiers("2025年11月11日に届いた") == set()
    assert identifiers("2025. november 11-én érkezett") == set()
    assert identifiers("Order A-1234, flight B52") == {"a-1234", "b52"}
    assert "adds an id" in (_verdict("My order A-1234 is late.", "Emma's order A-1235 is late.") or "")
    assert "adds an id" in (_verdict("Please deliver to flat 12-b.", "Emma wants delivery to flat 12-c.") or "")


@pytest.mark.parametrize(
    ("question", "as_fact"),
    [
        ("Is it true that renters can't get the solar panel grant?",
         "Emma can't get the solar panel grant because she rents."),
        ("Stimmt es, dass Mieter keine Förderung für Balkonkraftwerke bekommen?",
         "Emma bekommt als Mieterin keine Förderung für Balkonkraftwerke."),
        ("Est-ce que la formule annuelle est vraiment moins chère ?", "La formule annuelle est moins chère pour Emma."),
    ],
)  # fmt: skip
def test_what_the_customer_only_asked_is_not_stored_as_a_fact(question, as_fact):
    assert "only asked" in (_verdict(question, as_fact) or "")


def test_a_statement_beside_a_question_is_still_admitted():
    message = "We rent our flat with a small garden. Can we still get the solar panel grant?"
    candidate = Candidate(kind="fact", content="The customer rents a flat with a small garden.", topic="",
                          importance=0.5, keywords=[], quote="We rent our flat with a small garden.")  # fmt: skip
    assert check_candidate(candidate, message, Speaker.of("Emma", message)) is None


def test_a_statement_the_reading_is_unsure_about_is_not_refused_as_a_question():
    # Read together, the thanks and the Japanese statement score 0.43 for a question; without a question mark
    # the reading must be surer than that.
    message = "Thanks for the quick answer. 私たちは毎週月曜日に配送します。"
    assert "only asked" not in (_verdict(message, message) or "")


# Found by an attack on the first version: a resolved date licensed its numbers anywhere in the entry, a weekday
# made any number beside it a day, "last month" was read as an exact day, a Japanese date's month and day could
# swap, a customer named Otto licensed an eight, and a thank-you after a question hid it.
@pytest.mark.parametrize(
    ("message", "entry", "sent", "name"),
    [
        ("I bought 3 bikes yesterday.", "Emma bought 11 bikes on November 11.", "2025-11-12", "Emma"),
        ("I ordered the parts yesterday.", "Emma ordered 2025 parts yesterday.", "2025-11-12", "Emma"),
        ("I was born in 1990 and moved here yesterday.", "Emma was born in 2025 and moved here yesterday.",
         "2025-11-12", "Emma"),
        ("I bought chairs yesterday.", "Emma bought 11 chairs on Tuesday.", "2025-11-12", "Emma"),
        ("We stayed in Rome for 9 days.", "Emma stayed in Rome for 3 days in November.", "2025-11-12", "Emma"),
        ("I paid for the repair last month.", "Emma paid for the repair on October 13.", "2025-11-12", "Emma"),
        ("I moved the day before yesterday.", "Emma moved on November 11.", "2025-11-12", "Emma"),
        ("Mein Paket kam gestern an.", "Emmas Paket kam am 11.3. an.", "2025-11-04", "Emma"),
        ("2025年11月12日に荷物が届きました。", "2025年12月11日に荷物が届きました。", "2025-11-12", "Emma"),
        ("I have three cats.", "Otto has eight cats.", "2025-11-12", "Otto Berger"),
        ("Is it true that renters can't get the grant? Thanks a lot.", "Renters can't get the grant.", "2025-11-12",
         "Emma"),
    ],
)  # fmt: skip
def test_a_date_number_person_or_question_the_message_does_not_carry_is_refused(message, entry, sent, name):
    assert _verdict(message, entry, sent=sent, name=name) is not None


@pytest.mark.parametrize(
    ("message", "entry", "sent", "name"),
    [
        ("I paid for the repair last month.", "Emma paid for the repair in October 2025.", "2025-11-12", "Emma"),
        ("I moved the day before yesterday.", "Emma moved on November 10.", "2025-11-12", "Emma"),
        ("Mein Paket kam gestern an.", "Emmas Paket kam am 3.11. an.", "2025-11-04", "Emma"),
        ("昨日やっと乾燥機が届きました。", "2025年11月11日にやっと乾燥機が届きました。", "2025-11-12", "Emma"),
        ("I have three cats.", "Otto has three cats.", "2025-11-12", "Otto Berger"),
        ("I moved to Berlin last month, do you ship there?", "Emma moved to Berlin last month.", "2025-11-12", "Emma"),
        ("We have four kids, can we all fit in the van?", "We have four kids.", "2025-11-12", "Emma"),
    ],
)  # fmt: skip
def test_the_faithful_versions_of_those_entries_are_admitted(message, entry, sent, name):
    assert _verdict(message, entry, sent=sent, name=name) is None


def _entry_verdict(message: str, entry: str, kind: str, *, name: str = "Emma") -> str | None:
    sent_at = datetime.datetime(2025, 11, 12, tzinfo=datetime.UTC)
    candidate = Candidate(kind=kind, content=entry, topic="", importance=0.5, keywords=[], quote=message)
    return check_candidate(candidate, message, Speaker.of(name, message, sent_at))


# A status question is no request: an entry turning it into an action or a standing rule is refused, whatever its
# kind (found by an attack on a version that let tasks and instructions come from questions). The cost: a task
# from a real request ("Can you call me tomorrow at 10?" → "Call Emma on November 13 at 10.") is refused too.
@pytest.mark.parametrize(
    ("message", "entry", "kind"),
    [
        ("Is my contract cancelled?", "Cancel Emma's contract.", "task"),
        ("Ist mein Vertrag gekündigt?", "Emmas Vertrag kündigen.", "task"),
        ("Do I qualify for the 20% discount?", "Always give Emma the 20% discount.", "instruction"),
        ("Is it true renters can't get the grant?", "Remember that renters can't get the grant.", "instruction"),
    ],
)  # fmt: skip
def test_a_question_does_not_become_an_action_or_a_rule(message, entry, kind):
    assert _entry_verdict(message, entry, kind) is not None


def test_a_fact_written_as_a_task_is_still_refused_when_the_customer_only_asked():
    verdict = _entry_verdict(
        "Is it true that renters can't get the solar panel grant?",
        "Emma can't get the solar panel grant because she rents.",
        "task",
    )
    assert "only asked" in (verdict or "")


@pytest.mark.parametrize(
    ("message", "entry"),
    [
        ("I rent my flat. Is it true renters can't get the grant?", "Renters can't get the grant."),
        ("We have two dogs. Do you deliver dog food to Brno?", "Emma needs dog food delivered to Brno."),
        ("Hi! I'm Anna. Can you tell me whether my plan includes roaming? I travel a lot for work.",
         "Anna's plan includes roaming."),
        ("Ich wohne zur Miete. Stimmt es, dass Mieter keine Förderung bekommen?", "Mieter bekommen keine Förderung."),
        ("Wir haben einen Hund. Darf er mit in den Zug?", "Emmas Hund darf mit in den Zug."),
        ("Мы снимаем квартиру. Правда, что арендаторы не получают субсидию?", "Арендаторы не получают субсидию."),
        # The statement's words do not carry the one word only the question says.
        ("My order 4471 is late. Has order 4471 been refunded?", "Order 4471 has been refunded."),
        # A question with a statement inside it is still a question for what only it says.
        ("We rent our flat, is that a problem? Can renters get the grant?", "Renters can get the grant."),
    ],
)  # fmt: skip
def test_an_entry_drawn_from_a_question_beside_a_statement_is_refused(message, entry):
    assert "only asked" in (_entry_verdict(message, entry, "fact", name="Anna" if "Anna" in entry else "Emma") or "")


@pytest.mark.parametrize(
    ("message", "entry", "name"),
    [
        ("I rent my flat. Is it true renters can't get the grant?", "Emma rents a flat.", "Emma"),
        ("Hi! I'm Anna. Can you tell me whether my plan includes roaming? I travel a lot for work.",
         "Anna travels a lot for work.", "Anna"),
        ("Wir haben einen Hund. Darf er mit in den Zug?", "Emma hat einen Hund.", "Emma"),
        ("Hi, I'm Emma. We have four kids, can we all fit in the van?", "Emma has four kids.", "Emma"),
        ("Thanks. Since I moved to Brno in March, can you update my address?", "Emma moved to Brno in March.", "Emma"),
    ],
)  # fmt: skip
def test_the_statement_beside_a_question_is_admitted_in_a_short_rewrite(message, entry, name):
    assert _entry_verdict(message, entry, "fact", name=name) is None


@pytest.mark.parametrize(
    ("message", "entry", "name"),
    [
        ("Mes amies disent que je suis trop perfectionniste, moi je dirais juste exigeante.",
         "Coralie est trop perfectionniste, selon elle.", "Coralie"),
        ("Meine Freunde sagten, dass ich zu perfektionistisch bin.", "Coralie ist zu perfektionistisch.", "Coralie"),
        ("Mis amigos dicen que soy demasiado perfeccionista.", "Coralie es demasiado perfeccionista.", "Coralie"),
    ],
)  # fmt: skip
def test_what_others_say_about_the_customer_is_not_stored_as_the_customers_statement(message, entry, name):
    assert "reported speech" in (_entry_verdict(message, entry, "fact", name=name) or "")


@pytest.mark.parametrize(
    ("message", "entry"),
    [
        ("I must say that we are very happy with the new van.", "Emma is very happy with the new van."),
        ("Ich muss sagen, dass wir mit dem neuen Transporter sehr zufrieden sind.",
         "Emma ist mit dem neuen Transporter sehr zufrieden."),
    ],
)  # fmt: skip
def test_the_customers_own_saying_is_not_reported_speech(message, entry):
    assert _entry_verdict(message, entry, "fact") is None


# A time of day is a value of the fact, as a weekday is (CLDR's names through Babel, memory.text.day_periods).
@pytest.mark.parametrize(
    ("message", "changed", "kept"),
    [
        ("My son has a school play on Thursday evening.", "Emma's son has a school play on Thursday afternoon.",
         "Emma's son has a school play on Thursday evening."),
        ("Můj syn má ve čtvrtek večer školní besídku.", "Emmin syn má ve čtvrtek odpoledne školní besídku.",
         "Emmin syn má ve čtvrtek večer školní besídku."),
        ("Mi hijo tiene la función del colegio el jueves por la tarde.",
         "El hijo de Emma tiene la función del colegio el jueves por la mañana.",
         "El hijo de Emma tiene la función del colegio el jueves por la tarde."),
        ("Mein Sohn hat am Donnerstag abends eine Schulaufführung.",
         "Emmas Sohn hat am Donnerstag nachmittags eine Schulaufführung.",
         "Emmas Sohn hat am Donnerstag abends eine Schulaufführung."),
        ("У сына в четверг вечером школьный спектакль.", "У сына Эммы в четверг утром школьный спектакль.",
         "У сына Эммы в четверг вечером школьный спектакль."),
    ],
)  # fmt: skip
def test_a_changed_time_of_day_is_refused_and_the_same_one_admitted(message, changed, kept):
    assert "time of day" in (_verdict(message, changed) or "")
    assert "time of day" not in (_verdict(message, kept) or "")
