"""Who may see which console page: login, the user's membership (tenant and role), the RLS scope.

Every console view runs in the request's transaction scoped to the user's tenant, so a page can
only ever read that tenant's rows; a space of another tenant is simply not found (404).

The tenant is the one kept in the session (``ACTIVE_TENANT``), checked against the user's
memberships on every request; a user of several tenants picks it on the tenant switcher, and a
user of one tenant gets it without asking.
"""

from __future__ import annotations

import functools

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode

from console.form_input import bad_request, nul_field
from tenants.memberships import membership_for, memberships_of
from tenants.models import Tenant

OPERATOR_ROLES = {"operator", "admin"}
AUDIT_ROLES = {"support", "admin"}
ALL_ROLES = {"operator", "support", "admin"}
ACTIVE_TENANT = "tenant_id"


def console_view(roles: set[str] = frozenset(ALL_ROLES)):
    def decorate(view):
        @login_required
        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            refused = nul_field(request.GET, request.POST, kwargs)
            if refused is not None:
                return bad_request(f"The field {refused!r} contains a NUL character; remove it and try again.")
            memberships = memberships_of(request.user)
            if not memberships:
                return forbidden(request, "This account has no role in any tenant.")
            chosen = request.session.get(ACTIVE_TENANT)
            if chosen is None and len(memberships) == 1:
                chosen = request.session[ACTIVE_TENANT] = str(memberships[0].tenant_id)
            membership = membership_for(request.user, chosen) if chosen else None
            if membership is None:
                # No choice yet, or a tenant this account no longer belongs to: ask again.
                request.session.pop(ACTIVE_TENANT, None)
                return redirect(f"{reverse('console:choose-tenant')}?{urlencode({'next': request.get_full_path()})}")
            request.membership = membership
            request.tenant_count = len(memberships)
            if len(memberships) > 1:  # say which tenant this is, when there is a choice
                request.tenant_name = Tenant.objects.values_list("name", flat=True).get(pk=membership.tenant_id)
            if membership.role not in roles:
                return forbidden(request, "Your role does not allow this page.")
            try:
                return view(request, *args, **kwargs)
            except PermissionDenied as exc:
                return forbidden(request, str(exc) or "Your role does not allow this.")

        return wrapper

    return decorate


def forbidden(request, reason: str):
    """A 403 inside the console's frame (header, navigation, log out), saying why."""
    return render(request, "console/forbidden.html", {"reason": reason}, status=403)


def may_read_memory_text(request) -> bool:
    return request.membership.role in OPERATOR_ROLES


def may_see_distances(request) -> bool:
    """Distances and sample queries are an oracle for memory text: only roles that read the text see them."""
    return request.membership.role in OPERATOR_ROLES
