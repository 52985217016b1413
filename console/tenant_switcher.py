"""The tenant switcher: an account with roles in several tenants chooses the one it acts in."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from console.access import ACTIVE_TENANT
from console.form_input import bad_request, error_status, nul_field
from tenants import scope
from tenants.memberships import memberships_of
from tenants.models import Tenant


def _choices(user) -> list[dict]:
    choices = []
    for membership in memberships_of(user):
        # A tenant row is visible only inside its own scope.
        with scope.tenant_scope(membership.tenant_id):
            name = Tenant.objects.get(pk=membership.tenant_id).name
        choices.append({"tenant_id": str(membership.tenant_id), "name": name, "role": membership.role})
    return choices


def _safe_next(request, candidate: str) -> str:
    allowed = url_has_allowed_host_and_scheme(candidate, allowed_hosts={request.get_host()})
    return candidate if candidate and allowed and candidate.startswith("/console/") else "/console/"


@login_required
def choose_tenant(request):
    refused = nul_field(request.GET, request.POST)
    if refused is not None:
        return bad_request(f"The field {refused!r} contains a NUL character.")
    choices = _choices(request.user)
    next_url = _safe_next(request, request.POST.get("next") or request.GET.get("next", ""))
    error = ""
    if request.method == "POST":
        wanted = request.POST.get("tenant_id", "")
        if any(choice["tenant_id"] == wanted for choice in choices):
            request.session[ACTIVE_TENANT] = wanted
            return redirect(next_url)
        error = "Choose one of your tenants."
    context = {"choices": choices, "next": next_url, "error": error,
               "active": request.session.get(ACTIVE_TENANT)}  # fmt: skip
    return render(request, "console/choose_tenant.html", context, status=error_status(request, error))
