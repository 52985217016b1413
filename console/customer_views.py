"""A whole customer from the console, for admins: export everything the space holds, or erase the space.

Both act on every memory of one customer at once, so both ask the admin to type the space's id: a click on the
wrong row of the space list cannot export or erase anyone. They go through the same services as the API
(``GET …/export``, ``DELETE /api/v1/spaces/{id}``): the export is the same file the API streams (importable with
``POST …/import``), and the erasure writes one audit row per memory and drops the space's key.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import StreamingHttpResponse
from django.shortcuts import redirect, render

from console.access import console_view
from console.form_input import error_status
from memory.forgetting import erase_space
from memory.models import Episode, Memory
from memory.transfer import export_lines
from tenants import spaces
from tenants.key_retirement import residue_key

ADMIN_ONLY = {"admin"}


def _space(request, external_id):
    return spaces.find_space(tenant=request.membership.tenant_id, external_id=external_id)


def _page(request, template: str, space, *, refused: bool = False):
    context = {
        "space": space,
        "memories": Memory.objects.filter(space=space).count(),
        "episodes": Episode.objects.filter(space=space).count(),
        "error": f"Type the space id “{space.external_id}” exactly to go on; nothing was done." if refused else "",
    }
    return render(request, template, context, status=error_status(request, refused))


def _unconfirmed(request, template: str, space):
    """The confirmation page until the admin has typed the space id: on a GET, and again (400, nothing done) on a
    POST without it; None once it is typed."""
    if request.method != "POST":
        return _page(request, template, space)
    if request.POST.get("confirm_id", "").strip() != space.external_id:
        return _page(request, template, space, refused=True)
    return None


@console_view(roles=ADMIN_ONLY)
def space_export(request, external_id):
    """GET: what the file will hold. POST (the space id typed, a passphrase optional): the export file."""
    space = _space(request, external_id)
    if (page := _unconfirmed(request, "console/space_export.html", space)) is not None:
        return page
    # In the form's body, never the URL: a passphrase must not land in logs or the browser's history.
    passphrase = request.POST.get("passphrase") or None
    response = StreamingHttpResponse(export_lines(space, passphrase=passphrase), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{space.external_id}.jsonl"'
    response["Cache-Control"] = "no-store"
    return response


@console_view(roles=ADMIN_ONLY)
def space_erase(request, external_id):
    """GET: what will go. POST (the space id typed): erase the space, its rows and its key."""
    space = _space(request, external_id)
    if (page := _unconfirmed(request, "console/space_erase.html", space)) is not None:
        return page
    residue = residue_key(space)
    erased = erase_space(space=space, actor=f"admin {request.user.username}")
    notice = f"Space {space.external_id} was erased: {erased} memories, each in the audit."
    if residue is not None:
        notice += f" Dead copies in table pages, WAL and backups stay decryptable until {residue} is retired."
    messages.success(request, notice)
    return redirect("console:spaces")
