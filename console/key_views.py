"""API keys for admins: create (the secret is shown once), revoke, see when each was last used."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view
from console.form_input import error_status
from tenants.api_keys import issue_api_key, revoke_api_key
from tenants.models import ApiKey, Tenant


@console_view(roles={"admin"})
def api_keys(request):
    issued = None
    errors = {}
    if request.method == "POST":
        try:
            issued = issue_api_key(
                tenant=Tenant.objects.get(pk=request.membership.tenant_id),
                name=request.POST.get("name", "").strip() or "unnamed key",
                scopes=request.POST.getlist("scopes"),
                agent=request.POST.get("agent", "").strip(),
            )
        except ValidationError as exc:
            errors = exc.message_dict
    keys = ApiKey.objects.order_by("-created_at")
    context = {"keys": keys, "issued": issued, "errors": errors}
    return render(request, "console/api_keys.html", context, status=error_status(request, errors))


@console_view(roles={"admin"})
@require_POST
def revoke_key(request, key_id):
    key = ApiKey.objects.filter(pk=key_id, tenant_id=request.membership.tenant_id).first()
    if key is None:
        raise Http404("No such key.")
    revoke_api_key(key)
    messages.success(request, f"Revoked {key}.")
    return redirect("console:api-keys")
