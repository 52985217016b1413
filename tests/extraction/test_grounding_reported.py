"""What someone else told the customer is not the customer's own statement (#26): an entry that keeps the
customer's words and drops whose view they were is refused; one that keeps the source, or a statement of the
customer's own that merely mentions other people, is admitted. Which sentences report is learned
(``memory.understanding.reported_speech``, decision 0026); none of these sentences is in its training file.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.extraction.grounding import check_candidate
from memory.understanding.reported_speech import reported_probabilities
from tests.support.grounding import CAROLINE, entry

PASSED_OFF = "states as the customer's own what the words it cites give as someone else's view"

# (customer message, entry that gives the other person's view as Caroline's own). Each passes every other
# rule of grounding: the entry keeps the customer's own words and who they are about.
REPORTS_PASSED_OFF = [
    ("According to my accountant, I pay far too much tax every year.", "Caroline pays far too much tax every year."),
    ("The way my physio sees it, my shoulder needs another six weeks.", "Caroline's shoulder needs another six weeks."),
    ("My trainer is adamant: I'm ready for the Boston marathon.", "Caroline is ready for the Boston marathon."),
    ("Meine Schwiegermutter findet, ich würde zu viel Geld für Kleidung ausgeben.",
     "Caroline gibt zu viel Geld für Kleidung aus."),
    ("Der Elektriker sagt, die Leitungen im Keller müssen erneuert werden.",
     "Die Leitungen in Carolines Keller müssen erneuert werden."),
    ("Meinem Steuerberater zufolge zahle ich viel zu viele Steuern.", "Caroline zahlt viel zu viele Steuern."),
    ("D'après l'électricien, tout le câblage de l'appartement est à refaire.",
     "Tout le câblage de l'appartement de Caroline est à refaire."),
    ("По мнению бухгалтера, я плачу слишком много налогов.", "Caroline платит слишком много налогов."),
    ("Электрик говорит, проводку в квартире надо полностью менять.",
     "Проводку в квартире Caroline надо полностью менять."),
    ("Если верить свекрови, я слишком много трачу на одежду.", "Caroline слишком много тратит на одежду."),
    ("Elektrikář říká, celé rozvody v bytě se musí vyměnit.", "Celé rozvody v bytě Caroline se musí vyměnit."),
    ("Tchyně tvrdí, utrácím moc za oblečení.", "Caroline utrácí moc za oblečení."),
]  # fmt: skip

# The source kept, or the customer's own statement about other people: admitted.
KEEPS_WHOSE_VIEW_IT_IS = [
    ("According to my accountant, I pay far too much tax every year.",
     "According to her accountant, Caroline pays far too much tax every year."),
    ("Meinem Steuerberater zufolge zahle ich viel zu viele Steuern.",
     "Ihrem Steuerberater zufolge zahlt Caroline viel zu viele Steuern."),
    ("My optician says I need reading glasses already.", "Caroline's optician says she needs reading glasses."),
    ("My wife snores so loudly that I sleep in the spare room.", "Caroline's wife snores loudly."),
    ("I told my landlord I'm moving out in June.", "Caroline told her landlord she is moving out in June."),
    ("Meine Schwester hat letzte Woche ihren Führerschein gemacht.",
     "Carolines Schwester hat letzte Woche ihren Führerschein gemacht."),
    ("Je pense que l'ancien modèle est plus fiable.", "Caroline pense que l'ancien modèle est plus fiable."),
    ("Мой муж недавно начал бегать по утрам.", "Муж Caroline недавно начал бегать по утрам."),
    ("Mám vysoký tlak, takže hlídám sůl.", "Caroline má vysoký tlak, a tak hlídá sůl."),
]  # fmt: skip


@pytest.mark.parametrize("message, content", REPORTS_PASSED_OFF)
def test_someone_elses_view_given_as_the_customers_own_is_refused(message, content):
    assert check_candidate(entry(content, message), message, CAROLINE) == PASSED_OFF


@pytest.mark.parametrize("message, content", KEEPS_WHOSE_VIEW_IT_IS)
def test_an_entry_that_keeps_whose_view_it_is_or_the_customers_own_statement_is_admitted(message, content):
    assert check_candidate(entry(content, message), message, CAROLINE) is None


def test_the_reading_is_one_batch_and_empty_for_no_text():
    assert reported_probabilities([]).shape == (0,)
    probabilities = reported_probabilities(["Mein Arzt meint, ich hätte Eisenmangel.", "Ich habe Eisenmangel."])
    assert probabilities[0] > 0.5 > probabilities[1]


def test_a_models_passed_off_report_is_not_stored_and_the_turn_says_why(client_a, space_a, openai_engines):
    """Through the API: the model writes the accountant's view as the customer's own; the faithful entry of
    the same turn is stored."""
    message = "According to my accountant, I pay far too much tax every year. I moved to Leeds in March."
    turns = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    base = {"kind": "fact", "topic": "", "importance": 0.6, "keywords": [], "event_days_ago": None}
    passed_off = {
        **base,
        "content": "Customer one pays far too much tax every year.",
        "quote": "According to my accountant, I pay far too much tax every year.",
    }
    faithful = {**base, "content": "Customer one moved to Leeds in March.", "quote": "I moved to Leeds in March."}
    openai_engines.replies = [{"entries": [passed_off, faithful]}]
    reply = client_a.post(turns, {"message": message, "session_id": "s1"}, format="json")
    assert reply.status_code == 201, reply.content
    assert [m["content"] for m in reply.json()["created"]] == [faithful["content"]]
    assert [r["reason"] for r in reply.json()["rejected"]] == [PASSED_OFF]


# Found by the attack on decision 0026 and not mended: the reading sees one sentence, and it reads a
# customer's strong conviction as someone else's view.
KNOWN_MISSES = [
    pytest.param(
        "I saw my GP on Monday. She thinks I'm pre-diabetic.", "Caroline is pre-diabetic.", PASSED_OFF,
        marks=pytest.mark.xfail(strict=True, reason="#26 open: the sayer is a pronoun, named in the sentence "
                                "before; 'She thinks I'm pre-diabetic' reads 0.38"),
        id="frame-in-the-sentence-before",
    ),
    pytest.param(
        "I'm absolutely convinced my landlord is overcharging me for heating.",
        "Caroline's landlord is overcharging her for heating.", None,
        marks=pytest.mark.xfail(strict=True, reason="#26 open: the customer's own conviction reads as reported "
                                "(0.84) and the entry, without 'convinced', as her own"),
        id="own-conviction",
    ),
]  # fmt: skip


@pytest.mark.parametrize("message, content, verdict", KNOWN_MISSES)
def test_known_misses_of_the_reading(message, content, verdict):
    assert check_candidate(entry(content, message), message, CAROLINE) == verdict
