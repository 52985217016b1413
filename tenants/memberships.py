"""Which tenants a console user belongs to, and in which role: the look-ups the console's access check and the
API's session authentication share.

A membership is read before any tenant scope exists (that is what chooses the scope), so row-level security
lets the user's own memberships through for the look-up alone (``scope.allow_membership_lookup``).
"""

from __future__ import annotations

from tenants import scope
from tenants.models import Membership


def memberships_of(user) -> list[Membership]:
    """Every membership of the user, oldest first (the console's tenant switcher lists them)."""
    scope.allow_membership_lookup(user.pk)
    memberships = list(Membership.objects.filter(user=user).order_by("created_at"))
    scope.allow_membership_lookup(0)
    return memberships


def membership_for(user, tenant_id=None) -> Membership | None:
    """The user's membership in ``tenant_id``, with the transaction scoped to its tenant.

    Without ``tenant_id`` only a user with exactly one membership resolves: a user of several
    tenants must choose one (the console's switcher keeps it in the session), never "the first".
    """
    memberships = memberships_of(user)
    if tenant_id:
        memberships = [m for m in memberships if str(m.tenant_id) == str(tenant_id)]
    membership = memberships[0] if len(memberships) == 1 else None
    if membership is not None:
        scope.enter_scope(membership.tenant_id)
    return membership
