"""A strong model's rewrites get in (#26): LoCoMo's own model-written observations, replayed as a chat model's
extraction, are grounded against the speaker's turns they cite.

Reads ``../shared/data/locomo-dev`` at run time (CC BY-NC 4.0, evaluation only, never copied here) and skips
with a message where it is absent. The figures and the held-out labelled set are in docs/quality.md
(``python -m eval.grounding``).
"""

from __future__ import annotations

import datetime
import json
import re

import pytest
from django.urls import reverse

from eval.locomo_data import DATA, dia_ids, sessions
from memory.extraction.grounding import Speaker, check_candidate
from tests.conftest import make_space, use_local_models
from tests.support.grounding import CAROLINE, entry
from tests.support.model_servers import ObservationChat, serving

# Measured when the paraphrase grounding landed (2026-12-01): 66 % of the 47 observations of Caroline's first ten
# sessions, 56 % of all four speakers' 346. The issue's target is 90 %; this floor only keeps what was reached.
ADMITTED_FLOOR = 0.5


# The first sessions of the conversation only: the whole one costs the suite about a minute (docs/quality.md
# has all four speakers of both conversations, `python -m eval.grounding`).
SESSIONS = 10


def _observations(sample: dict, speaker: str) -> tuple[dict[str, list[dict]], int]:
    """Each observation about ``speaker`` that cites one of their turns, as an entry of the first such turn."""
    texts = {
        t["dia_id"]: (t["speaker"], t["text"])
        for _n, _d, turns in sessions(sample["conversation"])[:SESSIONS]
        for t in turns
    }
    entries: dict[str, list[dict]] = {}
    total = 0
    for per_speaker in sample["observation"].values():
        for text, evidence in per_speaker.get(speaker, []):
            cited = dia_ids(evidence if isinstance(evidence, str) else ";".join(evidence))
            own = [d for d in cited if d in texts and texts[d][0] == speaker]
            if not own:
                continue
            message = texts[own[0]][1]
            entries.setdefault(message, []).append(
                {
                    "kind": "fact",
                    "content": text,
                    "topic": "",
                    "importance": 0.6,
                    "keywords": [],
                    "quote": message,
                    "event_days_ago": None,
                }  # fmt: skip
            )
            total += 1
    return entries, total


@pytest.mark.skipif(not DATA.exists(), reason=f"LoCoMo development data not found at {DATA} (evaluation only)")
def test_a_strong_models_rewrites_of_a_real_conversation_are_mostly_admitted(
    settings, local_embedding_url, tenant_a, client_a
):
    sample = json.loads(DATA.read_text())[0]
    speaker = sample["conversation"]["speaker_a"]
    entries, total = _observations(sample, speaker)
    chat = ObservationChat(entries)
    space = make_space(tenant_a, "locomo-speaker", display_name=speaker)
    url = reverse("transcript-ingest", args=[space.external_id]) + "?wait=true"
    rejected = []
    with serving(chat.server) as chat_url:
        use_local_models(settings, chat_url, local_embedding_url)
        for number, started, turns in sessions(sample["conversation"])[:SESSIONS]:
            messages = [
                {
                    "role": "customer" if t["speaker"] == speaker else "agent",
                    "content": t["text"],
                    "id": t["dia_id"],
                    "at": (started + datetime.timedelta(minutes=i)).isoformat(),
                }  # fmt: skip
                for i, t in enumerate(turns)
            ]
            reply = client_a.post(url, {"session_id": f"session-{number}", "messages": messages}, format="json")
            assert reply.status_code == 201, reply.content
            rejected += reply.json()["rejected"]
    assert total > 40
    admitted = 1 - len(rejected) / total
    assert admitted >= ADMITTED_FLOOR, (admitted, [r["reason"] for r in rejected][:10])
    reasons = {re.sub(r":.*", "", r["reason"]) for r in rejected}
    assert not any("over the limit" in r for r in reasons)


FAITHFUL = [
    # (customer message, entry a strong model writes; it quotes the whole message)
    ("Our shop is closed every Monday.", "Caroline's shop is closed on Mondays."),  # a name's plural "s"
    (
        "I went to a LGBTQ support group yesterday and it was so powerful.",
        "Caroline attended an LGBTQ support group and found it powerful.",
    ),
    (
        "I went to a LGBTQ support group yesterday and it was so powerful.",
        "Caroline went to an LGBTQ support group on 7 May 2023.",
    ),  # the date "yesterday" resolves to
    ("Honestly I have three kids under ten, so mornings are chaos.", "The customer has three children under ten."),
    (
        "I ran my first half marathon in October. It took me 2 hours 14 minutes!",
        "Caroline ran her first half marathon in October in 2 hours 14 minutes.",
    ),  # two sentences joined
    ("Я купила у вас пылесос в декабре, он отличный.", "Caroline купила пылесос в декабре."),
    ("Mám dvě děti, obě chodí do školy.", "Zákazník má dvě děti."),
    # a clause it only shares a word with ("dance") is not one it rewrites
    (
        "Besides the dance classes and workshops, I'm offering one-on-one mentoring and training to help dancers "
        "reach their full potential.",
        "Caroline is offering one-on-one mentoring and training to help dancers reach their full potential.",
    ),
    (
        "Yesterday I took the kids to the museum - it was so cool spending time with them and seeing their eyes "
        "light up!",
        "Caroline loves spending time with her kids and seeing their eyes light up.",
    ),
]

FABRICATED = [
    # (customer message, a faithful-looking rewrite with one thing changed, the start of the reason)
    (
        "I've been getting into pottery lately, I go to a studio every Thursday.",
        "Caroline has been getting into painting lately and goes to a studio every Thursday.",
        "adds a detail",
    ),
    ("My sister just adopted a rescue greyhound.", "Caroline just adopted a rescue greyhound.", "leaves out"),
    (
        "Тренер считает, что я готова к соревнованиям, а мне кажется, ещё рано.",
        "Caroline готова к соревнованиям.",
        "leaves out",
    ),
    (
        "I started volunteering at the animal shelter on Saturdays.",
        "Caroline started volunteering at the animal shelter on Saturdays and wants to become a vet.",
        "adds a detail",
    ),
    ("I went to a LGBTQ support group yesterday.", "Caroline went to an LGBTQ support group on Monday.", "adds a date"),
    (
        "I went to a LGBTQ support group yesterday.",
        "Caroline went to an LGBTQ support group with Melanie.",
        "adds a name",
    ),
    (
        "I went to a LGBTQ support group yesterday.",
        "Caroline never went to an LGBTQ support group.",
        "its polarity differs",
    ),
    ("We sell bread to cafes and milk to shops.", "Caroline sells milk to cafes.", "mixes words"),
    ("I have 4 vans and 12 drivers.", "Caroline has 12 vans.", "mixes words"),
    (
        "I'm the one who does all the cooking at home, my boyfriend can barely boil an egg lol",
        "Caroline's boyfriend does all the cooking at home.",
        "mixes words",
    ),
    (
        "En casa la que arregla todo soy yo, mi marido no sabe ni cambiar una bombilla.",
        "En casa de Caroline es su marido quien lo arregla todo.",
        "mixes words",
    ),
]


# Languages with a stop-word list and a lemmatiser but no lists of ours (decision 0021): number words from
# num2words, months and weekdays from dateparser's locale data, negation by the learned reading.
WIDER_FAITHFUL = [
    ("Ho comprato tre biciclette per i miei figli.", "Caroline ha comprato tre biciclette per i suoi figli."),
    ("Ik ben vorige maand naar Utrecht verhuisd.", "Caroline is vorige maand naar Utrecht verhuisd."),
    ("Mam dwa psy i kota.", "Caroline ma dwa psy i kota."),
    ("Moro no centro de Lisboa com a minha filha.", "Caroline mora no centro de Lisboa com a filha."),  # "no": in the
]

WIDER_FABRICATED = [
    ("Ho comprato tre biciclette per i miei figli.", "Caroline ha comprato quattro biciclette per i suoi figli.",
     "adds a number"),
    ("Ik heb elke dinsdag koorrepetitie.", "Caroline heeft elke donderdag koorrepetitie.", "adds a date"),
    ("Mijn man is vorige maand met pensioen gegaan.", "Caroline is vorige maand met pensioen gegaan.", "leaves out"),
    ("Ho comprato tre biciclette per i miei figli.",
     "Caroline ha comprato tre biciclette per i suoi figli perché vanno a scuola in bici.", "only"),
]  # fmt: skip


# A negation bears on the words it turns, not on the whole clause around it (LoCoMo's "not just a hobby",
# "can't wait", "you won't believe it" refused a strong model's faithful rewrites). A spaced hyphen parts
# clauses as a dash does.
NEGATION_ELSEWHERE_FAITHFUL = [
    (
        "Pottery is a huge part of my life, not just a hobby - it helps me express my emotions.",
        "Pottery is a significant part of Caroline's life and helps her express her emotions.",
    ),
    ("Next month I'm having an art show with my paintings - can't wait!", "Caroline is having an art show next month."),
    (
        "You won't believe it - I got mentored by a business coach yesterday!",
        "Caroline got mentored by a business coach.",
    ),
    ("Je ne suis pas une grande cuisinière, mais je fais mon pain moi-même.", "Caroline fait son pain elle-même."),
    ("Я не люблю шум, поэтому переехала в деревню.", "Caroline переехала в деревню."),
    ("Ich habe meinen Hund nicht mitgebracht.", "Caroline hat einen Hund."),
    # the entry rewords what the negation turns and keeps the negation
    ("Я с компьютером не очень дружу.", "Caroline не очень хорошо разбирается в компьютерах."),
]

NEGATION_CARRIED_FABRICATED = [
    ("I don't eat meat.", "Caroline eats meat."),
    ("My sister doesn't like dogs.", "Caroline's sister likes dogs."),
    ("I don't think my sister likes dogs.", "Caroline's sister likes dogs."),
    ("Hunde mag ich nicht.", "Caroline mag Hunde."),  # the negation last: it turns the whole clause
    ("Na sociálních sítích nejsem.", "Caroline je na sociálních sítích."),
    ("Je ne mange pas de viande.", "La cliente mange de la viande."),
    ("Я не ем мясо.", "Caroline ест мясо."),
    ("No tengo coche.", "Caroline tiene coche."),
]


@pytest.mark.parametrize("message, content", NEGATION_ELSEWHERE_FAITHFUL)
def test_a_negation_that_turns_other_words_does_not_refuse_a_rewrite(message, content):
    assert check_candidate(entry(content, message), message, CAROLINE) is None


@pytest.mark.parametrize("message, content", NEGATION_CARRIED_FABRICATED)
def test_a_rewrite_that_drops_the_negation_of_its_own_words_is_refused(message, content):
    verdict = check_candidate(entry(content, message), message, CAROLINE)
    assert verdict is not None and "polarity" in verdict, verdict


@pytest.mark.parametrize("message, content", FAITHFUL + WIDER_FAITHFUL)
def test_a_faithful_rewrite_in_a_language_grounding_reads_is_admitted(message, content):
    assert check_candidate(entry(content, message), message, CAROLINE) is None


@pytest.mark.parametrize("message, content, reason", FABRICATED + WIDER_FABRICATED)
def test_a_rewrite_with_one_thing_changed_is_refused_with_its_reason(message, content, reason):
    verdict = check_candidate(entry(content, message), message, CAROLINE)
    assert verdict is not None and verdict.startswith(reason), verdict


def test_in_a_wider_language_a_negation_no_list_holds_is_read_by_the_learned_reading():
    """Turkish negates in the verb ("kullanmıyorum"): no word of any list marks it."""
    message = "Araba kullanmıyorum, her yere bisikletle gidiyorum."
    verdict = check_candidate(
        entry("Caroline araba kullanıyor, her yere bisikletle gidiyor.", message), message, CAROLINE
    )
    assert verdict is not None and verdict.startswith("its polarity differs"), verdict


def test_in_a_language_grounding_cannot_read_a_rewrite_must_repeat_the_customer():
    """Estonian has no stop-word list here: its number words, months and negations are not read, so rewording
    could hide a changed value there."""
    message = "Ostsin eile oma tütrele kolm uut jalgratast."
    rewrite = entry("Caroline ostis eile oma tütrele kolm uut jalgratast.", message)
    assert check_candidate(rewrite, message, CAROLINE) is not None
    assert check_candidate(entry(message, message), message, CAROLINE) is None


def test_with_rewrites_off_only_the_customers_words_are_admitted():
    message, content = FAITHFUL[0]
    assert check_candidate(entry(content, message), message, CAROLINE, admit_rewrites=False) is not None
    assert check_candidate(entry(message, message), message, CAROLINE, admit_rewrites=False) is None


def test_a_space_that_turns_rewrites_off_stores_only_what_repeats_the_customer(client_a, space_a, openai_engines):
    message = "I went to a LGBTQ support group yesterday and it was so powerful."
    rewrite = {"kind": "fact", "content": "Customer one attended an LGBTQ support group and found it powerful.",
               "topic": "", "importance": 0.6, "keywords": [], "quote": message, "event_days_ago": None}  # fmt: skip
    turns = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    settings_url = reverse("space-detail", args=[space_a.external_id])
    openai_engines.replies = [{"entries": [rewrite]}]
    admitted = client_a.post(turns, {"message": message, "session_id": "s1"}, format="json")
    assert admitted.status_code == 201, admitted.content
    assert [m["content"] for m in admitted.json()["created"]] == [rewrite["content"]]

    assert client_a.patch(settings_url, {"settings": {"admit_rewrites": False}}, format="json").status_code == 200
    openai_engines.replies = [{"entries": [{**rewrite, "content": "Customer one went to a support group."}]}]
    refused = client_a.post(turns, {"message": message + " Really.", "session_id": "s1"}, format="json")
    assert refused.status_code == 201, refused.content
    assert refused.json()["created"] == [] and refused.json()["rejected"], refused.json()


def test_a_models_rewrite_in_a_wider_language_is_stored_and_its_near_miss_is_not(client_a, space_a, openai_engines):
    """Through the API: an Italian customer, a model writing about them in the third person."""
    message = "Ho comprato tre biciclette per i miei figli."
    turns = reverse("turn-create", args=[space_a.external_id]) + "?wait=true"
    base = {"kind": "fact", "topic": "", "importance": 0.6, "keywords": [], "quote": message, "event_days_ago": None}
    faithful = {**base, "content": "Customer one ha comprato tre biciclette per i suoi figli."}
    changed = {**base, "content": "Customer one ha comprato quattro biciclette per i suoi figli."}
    openai_engines.replies = [{"entries": [faithful, changed]}]
    reply = client_a.post(turns, {"message": message, "session_id": "s1"}, format="json")
    assert reply.status_code == 201, reply.content
    assert [m["content"] for m in reply.json()["created"]] == [faithful["content"]]
    assert [r["reason"].split(":")[0] for r in reply.json()["rejected"]] == ["adds a number the customer did not say"]


def test_a_synthesized_answer_may_reword_the_memories_but_not_change_them():
    """Point 2 of #26: the answer's check is the entries' check."""
    from memory.recall.synthesis import grounded_answer

    memories = ["I moved to York last month.", "We have three kids."]
    assert grounded_answer("The customer moved to York and has three children.", memories)[0] is not None
    assert grounded_answer("The customer moved to Leeds.", memories)[0] is None
    assert grounded_answer("The customer has four children.", memories)[0] is None
    assert grounded_answer("The customer's sister moved to York.", memories)[0] is None


# The subject of a rewrite in a wider language: the word for "the customer" there, and a short name's case form
# whose stem changes (Polish "Tomka" is Tomek). A weekday's name must not be read into a word that only opens
# like it (Hungarian "szereti", "likes", is no "szerda", Wednesday).
TOMEK = Speaker.of("Tomek", sent_at=datetime.datetime(2026, 3, 2, 9, 0, tzinfo=datetime.UTC))
OLA = Speaker.of("Ola", sent_at=datetime.datetime(2026, 3, 2, 9, 0, tzinfo=datetime.UTC))

SUBJECT_FAITHFUL = [
    (CAROLINE, "Nagyon szeretem a csípős ételeket.", "Az ügyfél nagyon szereti a csípős ételeket."),
    (CAROLINE, "Мій син щосуботи ходить на плавання.", "Син клієнтки щосуботи ходить на плавання."),
    (CAROLINE, "Fiul meu merge la înot în fiecare sâmbătă.", "Fiul clientei merge la înot în fiecare sâmbătă."),
    (TOMEK, "Mój rower jest czerwony i ma trzy biegi.", "Rower Tomka jest czerwony i ma trzy biegi."),
    (OLA, "Mój rower jest czerwony i ma trzy biegi.", "Rower Oli jest czerwony i ma trzy biegi."),
]

SUBJECT_FABRICATED = [
    (OLA, "Kupiłam wczoraj czerwony rower.", "Olga kupiła wczoraj czerwony rower.", "olga"),
    (CAROLINE, "Szerdán megyek úszni.", "Az ügyfél csütörtökön megy úszni.", "csütörtök"),
    (CAROLINE, "Szerdán megyek úszni.", "Az ügyfél szerdán megy úszni a fiával.", "fiával"),
]


@pytest.mark.parametrize("speaker, message, content", SUBJECT_FAITHFUL)
def test_a_rewrite_naming_the_customer_in_a_wider_language_is_admitted(speaker, message, content):
    assert check_candidate(entry(content, message), message, speaker) is None


@pytest.mark.parametrize("speaker, message, content, changed", SUBJECT_FABRICATED)
def test_a_near_miss_about_the_customer_in_a_wider_language_is_refused(speaker, message, content, changed):
    verdict = check_candidate(entry(content, message), message, speaker)
    assert verdict is not None and changed in verdict, verdict


# A name the customer gave in another message of the conversation comes with the title they gave it there
# ("my wife Claire", "mi abuelo, don Ernesto Gil Navarro"): a model that writes "James's wife Claire" says what
# the customer said. A title they did not give it, or a name they did not write, is still refused; in a language
# whose names take no case endings a name is the customer's only as written ("Navarrete" is not "Navarro").
def _with_conversation(message: str, other: str) -> Speaker:
    return Speaker.of("James", f"{message}\n{other}", datetime.datetime(2026, 3, 2, 9, 0, tzinfo=datetime.UTC))


CLAIRE = "Hi, my wife Claire uses this account too."
CARD = "She wants to add her own payment card."
NAVARRO = "Mi abuelo, don Ernesto Gil Navarro, vive conmigo."
CHARGED = "Le han cobrado dos veces la factura de internet."

TITLED_FAITHFUL = [
    (CARD, CLAIRE, "James's wife Claire wants to add her own payment card."),
    ("She needs a phone with big buttons.", "I'm ordering for my mum, Patricia.",
     "James's mum Patricia needs a phone with big buttons."),
    (CHARGED, NAVARRO, "A Ernesto Gil Navarro, el abuelo de James, le han cobrado dos veces la factura de internet."),
    ("Chtěla by si přidat vlastní kartu.", "Moje žena Simona používá tenhle účet.",
     "Jamesova žena Simona si chce přidat vlastní kartu."),
    ("Она хочет привязать свою карту.", "Этим аккаунтом пользуется ещё моя жена Ирина.",
     "Жена клиента Ирина хочет привязать свою карту."),
]  # fmt: skip

TITLED_FABRICATED = [
    (CARD, CLAIRE, "James's daughter Claire wants to add her own payment card.", "daughter"),
    ("He is coming to the party.", "My brother Tom is a dentist.",
     "James's brother Tom, a doctor, is coming to the party.", "doctor"),
    ("He is coming to the party.", "My brother Tom is a dentist.",
     "James's brother Tim is coming to the party.", "tim"),
    (CHARGED, NAVARRO, "A Ernesto Gil Navarrete, el abuelo de James, le han cobrado dos veces la factura de internet.",
     "navarrete"),
    ("Chtěla by si přidat vlastní kartu.", "Moje žena Simona používá tenhle účet.",
     "Jamesova dcera Simona si chce přidat vlastní kartu.", "dcera"),
    # "cat" is three words from Murphy: the title of the other pet of the sentence
    ("It keeps eating the dog's food.", "I've got a Labrador called Murphy and a cat called Nell.",
     "James's cat Murphy keeps eating the dog's food.", "cat"),
]  # fmt: skip


@pytest.mark.parametrize("message, other, content", TITLED_FAITHFUL)
def test_a_name_from_another_message_may_carry_the_title_the_customer_gave_it(message, other, content):
    assert check_candidate(entry(content, message), message, _with_conversation(message, other)) is None


@pytest.mark.parametrize("message, other, content, changed", TITLED_FABRICATED)
def test_a_title_or_name_the_customer_did_not_give_is_refused(message, other, content, changed):
    verdict = check_candidate(entry(content, message), message, _with_conversation(message, other))
    assert verdict is not None and changed in verdict, verdict


@pytest.mark.xfail(
    strict=True,
    reason="known gap (#26): a person named in another message may be made the subject of what the customer said "
    "of themselves; grounding does not read whom a clause is about",
)
def test_the_customers_own_statement_given_to_someone_named_elsewhere_is_refused():
    message = "I live in Prague."
    speaker = _with_conversation(message, "My sister Anna lives in Berlin.")
    assert check_candidate(entry("Anna lives in Prague.", message), message, speaker) is not None
