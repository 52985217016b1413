"""Slow down repeated failed console logins: after 5 failures for one username from one address,
further attempts are refused for 15 minutes without checking the password."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpResponse

MAX_FAILURES = 5
LOCKOUT_SECONDS = 15 * 60


def _key(request) -> str:
    username = request.POST.get("username", "").strip().lower()[:150]
    return f"console-login-failures:{request.META.get('REMOTE_ADDR', '')}:{username}"


class ThrottledLoginView(auth_views.LoginView):
    template_name = "console/login.html"

    def post(self, request, *args, **kwargs):
        key = _key(request)
        if cache.get(key, 0) >= MAX_FAILURES:
            response = HttpResponse(
                "Too many failed logins for this account from this address; try again in 15 minutes.", status=429
            )
            response["Retry-After"] = str(LOCKOUT_SECONDS)
            return response
        response = super().post(request, *args, **kwargs)
        if response.status_code == 302:
            cache.delete(key)
        else:
            cache.set(key, cache.get(key, 0) + 1, LOCKOUT_SECONDS)
        return response
