# ruff: noqa: E501  (multilingual cases read best one a line)
"""A phone number beside other long numbers (#25): seven or more digits are a PIN, an account or an order number
as much as a phone number, and "number" alone does not say which. Through the real API (turns with
``?wait=true`` and ``POST …/forget``), offline engine and bundled models, in English, German, Czech and Russian:

- "forget my phone number" takes the phone number and leaves a PIN or an account number of as many digits
  (the learned reading of the row decides which number it states; the digits only bound);
- a phone number said after an account number does not make the account number its history, nor the other
  way round, and forgetting the phone number then leaves the account number;
- what must still work: a new phone number supersedes the old one, and "forget my phone number" with only a
  phone number stored deletes it.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.dedup.merge_rule import is_update
from memory.forgetting import targets
from memory.models import Memory
from tenants import scope

pytestmark = pytest.mark.django_db


def say(client, space, message, session):
    url = reverse("turn-create", args=[space.external_id]) + "?wait=true"
    response = client.post(url, {"message": message, "session_id": session}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def forget(client, space, utterance):
    response = client.post(reverse("forget", args=[space.external_id]), {"utterance": utterance}, format="json")
    assert response.status_code == 200, response.content
    return [f["content"] for f in response.json()["forgotten"] if f["kind"] != "topic"]


def rows(space, *, current: bool):
    with scope.tenant_scope(space.tenant_id, space):
        found = Memory.objects.filter(space=space, superseded_by__isnull=current).exclude(kind="topic")
        return sorted(m.content for m in found)


# (phone number, another number of seven or more digits, the request) per language
PHONE_AND_PIN = [
    ("My phone number is +10 129 089 894.", "My PIN is 178723005.", "Please forget my phone number."),
    ("Meine Telefonnummer ist +49 151 2345678.", "Meine PIN ist 178723005.", "Bitte vergiss meine Telefonnummer."),
    ("Moje telefonní číslo je +420 777 123 456.", "Můj PIN je 178723005.", "Zapomeňte prosím moje telefonní číslo."),
    ("Мой номер телефона +7 912 345 67 89.", "Мой ПИН-код 178723005.", "Пожалуйста, забудьте мой номер телефона."),
]  # fmt: skip
PHONE_AND_ACCOUNT = [
    ("My phone number is +10 129 089 894.", "My account number is 12345678901.", "Please forget my phone number."),
    ("Meine Telefonnummer ist +49 151 2345678.", "Meine Kontonummer ist 1234567890.", "Bitte vergiss meine Telefonnummer."),
    ("Moje telefonní číslo je +420 777 123 456.", "Číslo mého účtu je 1234567890.", "Zapomeňte prosím moje telefonní číslo."),
    ("Мой номер телефона +7 912 345 67 89.", "Номер моего счёта 1234567890.", "Пожалуйста, забудьте мой номер телефона."),
]  # fmt: skip


@pytest.mark.parametrize("phone, other, request_text", PHONE_AND_PIN + PHONE_AND_ACCOUNT)
def test_forget_my_phone_number_leaves_a_pin_or_an_account_number_of_as_many_digits(
    client_a, space_a, phone, other, request_text
):
    say(client_a, space_a, phone, "s1")
    say(client_a, space_a, other, "s2")
    assert rows(space_a, current=True) == sorted([phone, other])
    assert forget(client_a, space_a, request_text) == [phone]
    assert rows(space_a, current=True) == [other]


@pytest.mark.parametrize("phone, other, request_text", PHONE_AND_PIN[:1] + PHONE_AND_ACCOUNT[1:2])
def test_forget_my_phone_number_in_conversation_leaves_the_other_number(client_a, space_a, phone, other, request_text):
    say(client_a, space_a, other, "s1")
    say(client_a, space_a, phone, "s2")
    body = say(client_a, space_a, request_text, "s3")
    assert [f["content"] for f in body["forgotten"] if f["kind"] != "topic"] == [phone]
    assert rows(space_a, current=True) == [other]


# (account number, phone number, the request) per language: "number", "Nummer", "číslo", "номер" name both
ACCOUNT_THEN_PHONE = [
    ("My account number is 574354.", "My phone number is +77 010 510 101.", "Please forget my phone number."),
    ("Meine Kontonummer ist 574354.", "Meine Telefonnummer ist +49 151 2345678.", "Bitte vergiss meine Telefonnummer."),
    ("Moje číslo účtu je 574354.", "Moje telefonní číslo je +420 777 123 456.", "Zapomeňte prosím moje telefonní číslo."),
    ("Мой номер счёта 574354.", "Мой номер телефона +7 912 345 67 89.", "Пожалуйста, забудьте мой номер телефона."),
]  # fmt: skip


@pytest.mark.parametrize("account, phone, request_text", ACCOUNT_THEN_PHONE)
def test_a_phone_number_said_after_an_account_number_does_not_make_it_history(
    client_a, space_a, account, phone, request_text
):
    say(client_a, space_a, account, "s1")
    body = say(client_a, space_a, phone, "s2")
    assert body["superseded"] == []
    assert rows(space_a, current=True) == sorted([account, phone])
    assert rows(space_a, current=False) == []
    assert forget(client_a, space_a, request_text) == [phone]
    assert rows(space_a, current=True) == [account]


@pytest.mark.parametrize("account, phone, request_text", ACCOUNT_THEN_PHONE)
def test_an_account_number_said_after_a_phone_number_does_not_make_it_history(
    client_a, space_a, account, phone, request_text
):
    say(client_a, space_a, phone, "s1")
    body = say(client_a, space_a, account, "s2")
    assert body["superseded"] == []
    assert rows(space_a, current=True) == sorted([account, phone])
    assert rows(space_a, current=False) == []


def test_a_bare_number_and_an_order_number_are_two_numbers(client_a, space_a):
    """ "Moje číslo" (the model reads a phone number) and "číslo objednávky": "číslo" names both."""
    say(client_a, space_a, "Moje číslo je 777 123 456.", "s1")
    body = say(client_a, space_a, "Moje číslo objednávky je 88412.", "s2")
    assert body["superseded"] == []
    assert rows(space_a, current=True) == ["Moje číslo je 777 123 456.", "Moje číslo objednávky je 88412."]


# --- what must still work ---------------------------------------------------------------------------------

# (old phone number, new phone number) per language
NEW_PHONE = [
    ("My phone number is +10 129 089 894.", "My new phone number is +77 010 510 101."),
    ("Meine Telefonnummer ist +49 151 2345678.", "Meine neue Telefonnummer ist +49 160 9876543."),
    ("Moje telefonní číslo je +420 777 123 456.", "Moje nové telefonní číslo je +420 608 111 222."),
    ("Мой номер телефона +7 912 345 67 89.", "Мой новый номер телефона +7 916 111 22 33."),
    ("Мой телефон +7 912 345 67 89.", "Мой номер теперь +7 916 111 22 33."),
]  # fmt: skip


@pytest.mark.parametrize("old, new", NEW_PHONE)
def test_a_new_phone_number_supersedes_the_old_one(client_a, space_a, old, new):
    say(client_a, space_a, old, "s1")
    body = say(client_a, space_a, new, "s2")
    assert len(body["superseded"]) == 1
    assert rows(space_a, current=True) == [new]
    assert rows(space_a, current=False) == [old]


def test_a_changed_account_number_supersedes_the_old_one(client_a, space_a):
    say(client_a, space_a, "My account number is 574354.", "s1")
    body = say(client_a, space_a, "My account number is now 998877.", "s2")
    assert len(body["superseded"]) == 1
    assert rows(space_a, current=False) == ["My account number is 574354."]


@pytest.mark.parametrize("phone, _other, request_text", PHONE_AND_PIN)
def test_forget_my_phone_number_with_only_a_phone_number_stored_deletes_it(
    client_a, space_a, phone, _other, request_text
):
    say(client_a, space_a, phone, "s1")
    assert forget(client_a, space_a, request_text) == [phone]
    assert rows(space_a, current=True) == []


# --- the rules themselves ---------------------------------------------------------------------------------


def test_a_row_not_read_by_the_model_is_judged_by_its_value_alone():
    """A caller without the model's reading of a row keeps the value bound (the digits) as the test."""
    assert targets.row_states("My PIN is 178723005.", attribute="phone", learned="contact")
    assert not targets.row_states(
        "My PIN is 178723005.", attribute="phone", learned="contact", row_attribute="payment", row_confidence=0.6
    )
    assert targets.row_states(
        "My phone number is +10 129 089 894.", attribute="phone", learned="contact", row_attribute="contact"
    )
    # An e-mail address says what it is: the model's reading of the row is not asked.
    assert targets.row_states("Invoices go to billing@example.org.", attribute="email", learned="contact",
                              row_attribute="payment", row_confidence=0.9)  # fmt: skip
    # A request no list read ("contact"): the same bound on a number.
    assert not targets.row_states(
        "My PIN is 178723005.", attribute=None, learned="contact", row_attribute="payment", row_confidence=0.6
    )


@pytest.mark.parametrize(
    "old, new, supersedes",
    [
        ("My order number is 4411.", "My order number is 5522.", True),
        ("Номер моего заказа 4411.", "Номер моего заказа 5522.", True),
        ("My number is +420 777 123 456.", "My new phone number is +44 7700 900456.", True),
        ("My phone number is +44 7700 900123.", "Мой новый номер телефона +7 916 111 22 33.", True),
        ("My order number is 4411.", "My account number is 574354.", False),
        ("My card number is 4111 1111 1111 1111.", "My account number is 12345678901.", False),
        ("My number is +420 777 123 456.", "My account number is 574354.", False),
        ("Мой номер +7 912 345 67 89.", "Мой номер счёта 574354.", False),
        ("Mi número de cuenta es 574354.", "Mi número de teléfono es 612 345 678.", False),
        ("私の口座番号は574354です。", "私の電話番号は090-1234-5678です。", False),
    ],
)
def test_number_words_alone_do_not_make_two_statements_one_attribute(old, new, supersedes):
    assert is_update(old, new) is supersedes
