"""DRF authentication by ``Authorization: Bearer <api key>`` and per-view scope permission.

Authentication runs inside the request's transaction (ATOMIC_REQUESTS), so the tenant scope it
sets is the RLS scope for everything the view does.
"""

from __future__ import annotations

import dataclasses

from rest_framework import authentication, exceptions, permissions

from tenants.api_keys import resolve_api_key
from tenants.models import ApiKey


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


class HasApiKeyScope(permissions.BasePermission):
    """The view's ``required_scope`` (default ``turns``) must be among the key's scopes.

    A view may name a scope per method with ``required_scopes = {"GET": {...}, "POST": {...}}``;
    a key holding any of the named scopes passes.
    """

    message = "This API key does not have the scope this endpoint needs."

    def has_permission(self, request, view):
        if not isinstance(request.user, ApiClient):
            return False
        by_method = getattr(view, "required_scopes", None)
        if by_method is not None:
            needed = by_method.get(request.method, by_method.get("*", {"admin"}))
        else:
            needed = {getattr(view, "required_scope", "turns")}
        return bool(needed & set(request.auth.scopes))
