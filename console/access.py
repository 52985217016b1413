"""Who may see which console page: login, the user's membership (tenant and role), the RLS scope.

Every console view runs in the request's transaction scoped to the user's tenant, so a page can
only ever read that tenant's rows; a space of another tenant is simply not found (404).
"""

from __future__ import annotations

import functools

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied

from tenants.authentication import membership_for

OPERATOR_ROLES = {"operator", "admin"}
AUDIT_ROLES = {"support", "admin"}
ALL_ROLES = {"operator", "support", "admin"}


def console_view(roles: set[str] = frozenset(ALL_ROLES)):
    def decorate(view):
        @login_required
        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            membership = membership_for(request.user, request.session.get("tenant_id"))
            if membership is None:
                raise PermissionDenied("This account has no role in any tenant.")
            if membership.role not in roles:
                raise PermissionDenied("Your role does not allow this page.")
            request.membership = membership
            return view(request, *args, **kwargs)

        return wrapper

    return decorate


def may_read_memory_text(request) -> bool:
    return request.membership.role in OPERATOR_ROLES
