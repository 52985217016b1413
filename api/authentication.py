"""DRF authentication by ``Authorization: Bearer <api key>`` and per-view scope permission.

Authentication runs inside the request's transaction (ATOMIC_REQUESTS), so the tenant scope it
sets is the RLS scope for everything the view does.
"""

from __future__ import annotations

import dataclasses

from rest_framework import authentication, exceptions, permissions

from tenants.api_keys import resolve_api_key
from tenants.memberships import membership_for
from tenants.models import ApiKey, Membership


@dataclasses.dataclass(frozen=True)
class ApiClient:
    """The caller behind an API key, as ``request.user``."""

    api_key: ApiKey

    is_authenticated = True
    is_anonymous = False

    @property
    def tenant_id(self):
        return self.api_key.tenant_id

    @property
    def agent(self) -> str:
        return self.api_key.agent


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        keyword, _, token = header.partition(" ")
        if keyword != self.keyword or not token.strip():
            raise exceptions.AuthenticationFailed("Use 'Authorization: Bearer <api key>'.")
        api_key = resolve_api_key(token.strip())
        if api_key is None:
            raise exceptions.AuthenticationFailed("The API key is not valid or has been revoked.")
        return ApiClient(api_key), api_key

    def authenticate_header(self, request):
        return self.keyword


@dataclasses.dataclass(frozen=True)
class ConsoleMember:
    """A logged-in console user acting in one tenant through the API (``request.user``)."""

    membership: Membership

    is_authenticated = True
    is_anonymous = False

    @property
    def tenant_id(self):
        return self.membership.tenant_id


class ConsoleSessionAuthentication(authentication.SessionAuthentication):
    """Console users (support staff reading the deletion audit) call a few endpoints with their session."""

    def authenticate(self, request):
        result = super().authenticate(request)
        if result is None:
            return None
        user, _ = result
        membership = membership_for(user, request._request.session.get("tenant_id"))
        if membership is None:
            raise exceptions.PermissionDenied("Choose a tenant in the console first; this user has no role here.")
        return ConsoleMember(membership), membership


class HasApiKeyScope(permissions.BasePermission):
    """The view's ``required_scope`` (default ``turns``) must be among the key's scopes.

    A view may name a scope per method with ``required_scopes = {"GET": {...}, "POST": {...}}``;
    a key holding any of the named scopes passes.
    """

    message = "This API key does not have the scope this endpoint needs."

    def has_permission(self, request, view):
        if not isinstance(request.user, ApiClient | ConsoleMember):
            return False
        by_method = getattr(view, "required_scopes", None)
        if by_method is not None:
            needed = by_method.get(request.method, by_method.get("*", {"admin"}))
        else:
            needed = {getattr(view, "required_scope", "turns")}
        return bool(needed & set(request.auth.scopes))


def actor_of(request) -> str:
    """Who made an API request, for audit rows: the API key, or the console user behind a session."""
    if isinstance(request.auth, ApiKey):
        return f"api key {request.auth.name} (eng_{request.auth.prefix})"
    if isinstance(request.auth, Membership):
        return f"{request.auth.role} {request.auth.user.username} (console session)"
    return "unknown"
