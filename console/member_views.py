"""Members for admins: who has which role in this tenant; add, change or remove a membership."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view
from console.form_input import error_status
from tenants.models import Membership, Tenant
from tenants.tenant_admin import add_member


@console_view(roles={"admin"})
def members(request):
    errors = {}
    if request.method == "POST":
        username = request.POST.get("username", "").strip()
        try:
            add_member(
                tenant=Tenant.objects.get(pk=request.membership.tenant_id),
                username=username,
                password=request.POST.get("password", ""),
                role=request.POST.get("role", ""),
            )
            messages.success(request, f"{username} can now log in.")
            return redirect("console:members")
        except ValidationError as exc:
            errors = exc.message_dict
    rows = Membership.objects.select_related("user").order_by("user__username")
    context = {"rows": rows, "roles": Membership.Role.values, "errors": errors}
    return render(request, "console/members.html", context, status=error_status(request, errors))


@console_view(roles={"admin"})
@require_POST
def change_member(request, membership_id):
    membership = Membership.objects.filter(pk=membership_id, tenant_id=request.membership.tenant_id).first()
    if membership is None:
        raise Http404("No such member.")
    if membership.pk == request.membership.pk:
        messages.error(request, "You cannot change or remove your own membership.")
        return redirect("console:members")
    if request.POST.get("action") == "remove":
        membership.delete()
        messages.success(request, f"{membership.user.username} no longer has a role here.")
    elif request.POST.get("role") in Membership.Role.values:
        membership.role = request.POST["role"]
        membership.save(update_fields=["role"])
        messages.success(request, f"{membership.user.username} is now {membership.role}.")
    return redirect("console:members")
