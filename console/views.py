"""Console pages: thin views over the same services the API uses (so deletions here are audited too)."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Q
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from config.api_errors import Conflict
from console.access import AUDIT_ROLES, OPERATOR_ROLES, console_view, may_read_memory_text, may_see_distances
from console.charts import bar_chart
from console.dashboards import overview as overview_numbers
from console.form_input import BadInput, bad_request, error_status, parse_filter_time
from memory import deletion_audit, memory_edits, provenance
from memory.episodes import describe
from memory.memory_deletion import DeletionContext, delete_memory
from memory.models import DeletionAudit, Episode, Memory, Turn
from tenants import spaces
from tenants.models import Space

PAGE_SIZE = 25


def _space(request, external_id) -> Space:
    return spaces.find_space(tenant=request.membership.tenant_id, external_id=external_id)


@console_view()
def overview(request):
    numbers = overview_numbers(request.membership.tenant_id)
    chart = bar_chart(numbers["deletions_per_day"], title="Deletions per day, last 7 days")
    return render(request, "console/overview.html", {"numbers": numbers, "chart": chart})


@console_view()
def space_list(request):
    query = request.GET.get("q", "").strip()
    rows = Space.objects.filter(tenant_id=request.membership.tenant_id).order_by("external_id")
    if query:
        rows = rows.filter(Q(external_id__icontains=query) | Q(display_name__icontains=query))
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "console/spaces.html", {"page": page, "q": query})


@console_view()
def space_detail(request, external_id):
    space = _space(request, external_id)
    show_text = may_read_memory_text(request)
    memories = list(memory_edits.memories_of(space).select_related("source_session"))
    sources = provenance.sources_for(memories)  # ids and times only: support staff may see them
    groups = []
    for kind in Memory.Kind.values:
        rows = [m for m in memories if m.kind == kind]
        if rows:
            groups.append({"kind": kind, "rows": [_memory_row(m, show_text, sources.get(m.pk)) for m in rows]})
    turns = [_turn_row(t, show_text) for t in Turn.objects.filter(space=space).order_by("-created_at")[:20]]
    shared = space.kind == Space.Kind.SHARED
    cases = _cases(space, show_text) if shared else []
    return render(
        request,
        "console/space.html",
        {"space": space, "groups": groups, "turns": turns, "show_text": show_text, "shared": shared,
         "cases": cases, "can_delete": request.membership.role in OPERATOR_ROLES},
    )  # fmt: skip


CASES_SHOWN = 100


def _cases(space, show_text: bool) -> list[dict]:
    """The latest episodes and resolutions; support staff see metadata only."""
    rows = Episode.objects.filter(space=space).order_by("-created_at")[: CASES_SHOWN * 2]
    cases = {"episode": [], "resolution": []}
    for episode in rows:
        row = describe(episode) if show_text else {"id": episode.pk, "kind": episode.kind, "agent": episode.agent,
                                                   "created_at": episode.created_at.isoformat()}  # fmt: skip
        row["created"] = episode.created_at
        row["sentiment"] = episode.sentiment
        if len(cases[episode.kind]) < CASES_SHOWN:
            cases[episode.kind].append(row)
    return [
        {"kind": "resolution", "label": "Escalation resolutions", "rows": cases["resolution"]},
        {"kind": "episode", "label": "Episodes", "rows": cases["episode"]},
    ]


def _memory_row(memory: Memory, show_text: bool, source: dict | None = None) -> dict:
    history = memory_edits.history_of(memory)[1:]
    return {
        "id": memory.id,
        "content": memory.content if show_text else None,
        "topic": memory.topic if show_text else None,
        "importance": memory.importance,
        "mentions": memory.mention_count,
        "session": memory.source_session.external_id if memory.source_session else "",
        "source": source or {},
        "updated_at": memory.updated_at,
        "history": [
            {
                "id": h.id,
                "content": h.content if show_text else None,
                "created_at": h.created_at,
                "reason": h.superseded_reason,
            }
            for h in history
        ],
    }


def _turn_row(turn: Turn, show_text: bool) -> dict:
    rejected = json.loads(turn.rejected) if turn.rejected else []
    return {
        "id": turn.id,
        "status": turn.status,
        "created_at": turn.created_at,
        "created": len(turn.created_ids),
        "merged": len(turn.merged_ids),
        "superseded": len(turn.superseded_ids),
        "rejected": rejected if show_text else [{"content": None, "reason": r["reason"]} for r in rejected],
        "error": turn.error,
        "attempts": turn.attempts,
    }


@console_view(roles=OPERATOR_ROLES)
def memory_delete(request, external_id, memory_id):
    """GET: confirm. POST: delete through the same audited service as the API."""
    space = _space(request, external_id)
    memory = memory_edits.find_memory(space=space, memory_id=memory_id)
    if request.method == "POST":
        delete_memory(
            memory=memory,
            space=space,
            context=DeletionContext(cause=DeletionAudit.Cause.OPERATOR, actor=f"operator {request.user.username}"),
        )
        messages.success(request, "The memory and its history were deleted; the deletion is in the audit.")
        return redirect("console:space", external_id=space.external_id)
    history = memory_edits.history_of(memory)
    return render(request, "console/memory_delete.html", {"space": space, "memory": memory, "history": history})


@console_view(roles=OPERATOR_ROLES)
def memory_restore(request, external_id, memory_id):
    """POST: make an earlier version current again, through the same service as the API."""
    space = _space(request, external_id)
    memory = memory_edits.find_memory(space=space, memory_id=memory_id)
    if request.method != "POST":
        return redirect("console:space", external_id=space.external_id)
    try:
        memory_edits.restore_memory(memory=memory)
    except Conflict as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "The earlier version is current again; the newer one is kept in its history.")
    return redirect("console:space", external_id=space.external_id)


@console_view(roles=AUDIT_ROLES)
def deletions(request):
    params = request.GET
    errors = []
    bounds = {}
    for field in ("since", "until"):
        try:
            bounds[field] = parse_filter_time(params.get(field, ""), field)
        except BadInput as exc:
            errors.append(str(exc))
    cause = params.get("cause") or None
    if cause is not None and cause not in DeletionAudit.Cause.values:
        errors.append(f"cause: choose from {', '.join(DeletionAudit.Cause.values)}.")
    if errors:
        rows = DeletionAudit.objects.none()
    else:
        rows = deletion_audit.deletions(
            tenant_id=request.membership.tenant_id,
            space_external_id=params.get("space") or None,
            cause=cause,
            **bounds,
        )
    page = Paginator(rows, PAGE_SIZE).get_page(params.get("page"))
    return render(
        request,
        "console/deletions.html",
        {"page": page, "causes": DeletionAudit.Cause.values, "filters": params, "check": None, "errors": errors,
         "show_distances": may_see_distances(request)},
        status=error_status(request, errors),
    )  # fmt: skip


@console_view(roles=AUDIT_ROLES)
@require_POST
def deletion_check(request):
    space, text = request.POST.get("space", "").strip(), request.POST.get("text", "")
    if not space or not text.strip():
        return bad_request("Give a space and the text to check.")
    found = deletion_audit.was_deleted(tenant_id=request.membership.tenant_id, space_external_id=space, text=text)
    rows = deletion_audit.deletions(tenant_id=request.membership.tenant_id)
    page = Paginator(rows, PAGE_SIZE).get_page(1)
    return render(
        request,
        "console/deletions.html",
        {"page": page, "causes": DeletionAudit.Cause.values, "filters": {},
         "check": {"space": space, "found": found}, "show_distances": may_see_distances(request)},
    )  # fmt: skip
