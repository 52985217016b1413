"""What every space endpoint does first: check the scope, resolve the space and enter its RLS scope."""

from __future__ import annotations

from django.http import Http404

from api.authentication import actor_of
from tenants import scope, spaces

READ = {"turns", "admin"}
ADMIN = {"admin"}


def space_in_scope(request, external_id: str, *, create: bool = False):
    """The tenant's space from the URL, with the transaction scoped to it; 404 unless ``create``."""
    try:
        space = spaces.find_space(tenant=request.auth.tenant_id, external_id=external_id)
    except Http404:
        if not create:
            raise
        space = spaces.create_space(tenant=request.auth.tenant, external_id=external_id)
    scope.enter_scope(space.tenant_id, space)
    return space


def wants_wait(request) -> bool:
    return request.query_params.get("wait", "").lower() in ("1", "true", "yes")


def api_actor(request) -> str:
    return actor_of(request)
