"""The console login throttle: concurrent guesses cannot slip past it, and it limits one account
across addresses and one address across accounts (password spraying)."""

from __future__ import annotations

import pytest
from django.test import Client

from console.login_throttle import BUDGETS
from tenants.tenant_admin import create_operator
from tests.support.concurrency import at_once

PASSWORD = "olga-real-password"


def attempt(client, username="olga", password="wrong-password", address="10.0.0.1"):
    return client.post("/console/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


@pytest.mark.django_db(transaction=True)
def test_concurrent_guesses_get_exactly_the_budget_of_password_checks(tenant_a):
    create_operator(tenant=tenant_a, username="olga", password=PASSWORD, role="operator")
    guesses = 12
    statuses = at_once(lambda: attempt(Client()).status_code, guesses)
    # 200: the password was checked (and was wrong); 429: refused before any check.
    assert sorted(statuses) == [200] * BUDGETS["account-address"] + [429] * (guesses - BUDGETS["account-address"])
    assert attempt(Client(), password=PASSWORD).status_code == 429


@pytest.mark.django_db
def test_one_account_is_limited_across_addresses(client, tenant_a):
    create_operator(tenant=tenant_a, username="olga", password=PASSWORD, role="operator")
    for number in range(BUDGETS["account"]):
        assert attempt(client, address=f"10.0.{number}.1").status_code == 200
    locked = attempt(client, password=PASSWORD, address="192.0.2.77")
    assert locked.status_code == 429 and locked["Retry-After"] == "900"


@pytest.mark.django_db
def test_password_spraying_from_one_address_is_limited(client, tenant_a):
    create_operator(tenant=tenant_a, username="victim", password=PASSWORD, role="operator")
    for number in range(BUDGETS["address"]):
        assert attempt(client, username=f"user{number}", password="Summer2026!").status_code == 200
    assert attempt(client, username="victim", password=PASSWORD).status_code == 429
    # Another address is not affected.
    assert attempt(client, username="victim", password=PASSWORD, address="10.9.9.9").status_code == 302


@pytest.mark.django_db
def test_a_success_clears_the_accounts_count_but_not_the_addresses(client, tenant_a):
    create_operator(tenant=tenant_a, username="olga", password=PASSWORD, role="operator")
    for _ in range(BUDGETS["account-address"] - 1):
        assert attempt(client).status_code == 200
    assert attempt(client, password=PASSWORD).status_code == 302
    client.logout()
    for _ in range(BUDGETS["account-address"]):
        assert attempt(client).status_code == 200
    assert attempt(client).status_code == 429


@pytest.mark.django_db
@pytest.mark.parametrize("username", ["olga\x00", "\x00", "x" * 10_000, "ölga", "' OR 1=1 --"])
def test_odd_usernames_are_refused_or_counted_never_a_500(client, tenant_a, username):
    response = attempt(client, username=username)
    assert response.status_code in (200, 400)
    if "\x00" in username:
        assert response.status_code == 400 and b"NUL" in response.content
