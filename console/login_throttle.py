"""Slow down guessing console passwords. Three budgets of failed logins, each for 15 minutes:

- one account from one address (5): the plain guesser;
- one account from any address (20): a guesser spread over many addresses;
- one address against any account (30): password spraying, one password tried on many accounts.

Every attempt takes its place in all three budgets *before* the password is checked, under a
PostgreSQL advisory lock per budget, so concurrent guesses cannot all read "4 so far" and slip
past together; a success gives back what it took from the address's budget and clears the
account's. Counts live in the database cache, shared by every worker.
"""

from __future__ import annotations

import hashlib

from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.db import connection, transaction
from django.http import HttpResponse
from django.utils.decorators import method_decorator

from console.form_input import bad_request, nul_field

LOCKOUT_SECONDS = 15 * 60
BUDGETS = {"account-address": 5, "account": 20, "address": 30}


def _budget_keys(request) -> dict[str, str]:
    username = request.POST.get("username", "").strip().lower()[:150]
    address = request.META.get("REMOTE_ADDR", "")
    # Hashed: the cache key holds neither a raw username nor anything the cache table cannot store.
    account = hashlib.sha256(username.encode("utf-8", "replace")).hexdigest()[:32]
    return {
        "account-address": f"console-login-failures:{address}:{account}",
        "account": f"console-login-failures:account:{account}",
        "address": f"console-login-failures:address:{address}",
    }


def _add(key: str, delta: int) -> int:
    """Add ``delta`` to one count atomically and return the new count.

    The advisory lock serialises read-and-write per key across workers (the cache's own incr
    reads and writes in two steps); the short transaction commits before the password is checked.
    """
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [key])
        count = max(0, int(cache.get(key, 0)) + delta)
        cache.set(key, count, LOCKOUT_SECONDS)
    return count


def _refused() -> HttpResponse:
    response = HttpResponse("Too many failed logins; try again in 15 minutes.", status=429)
    response["Retry-After"] = str(LOCKOUT_SECONDS)
    return response


# Outside the request transaction, so each count commits the moment it is taken.
@method_decorator(transaction.non_atomic_requests, name="dispatch")
class ThrottledLoginView(auth_views.LoginView):
    template_name = "console/login.html"

    def post(self, request, *args, **kwargs):
        refused = nul_field(request.POST)
        if refused is not None:
            return bad_request(f"The field {refused!r} contains a NUL character.")
        keys = _budget_keys(request)
        taken = {}
        for budget in sorted(keys):  # one order everywhere: no two requests wait on each other's locks
            taken[budget] = _add(keys[budget], 1)
        if any(taken[budget] > limit for budget, limit in BUDGETS.items()):
            return _refused()
        with transaction.atomic():
            response = super().post(request, *args, **kwargs)
        if response.status_code == 302:
            cache.delete_many([keys["account-address"], keys["account"]])
            _add(keys["address"], -1)  # a success is not a failure; the rest of the address's count stays
        return response
