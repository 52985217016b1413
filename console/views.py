"""Console pages: thin views over the same services the API uses (so deletions here are audited too)."""

from __future__ import annotations

import datetime
import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from console.access import OPERATOR_ROLES, console_view, may_read_memory_text
from console.charts import bar_chart
from console.form_input import BadInput, error_status, parse_filter_time
from core.errors import Conflict
from memory import provenance
from memory.dedup import edit_memory, restore_memory
from memory.forgetting import DeletionContext, delete_memory
from memory.investigation import (
    TURN_STATES,
    MemoryFilter,
    forgotten_by,
    matching_memories,
    spaces_listed,
    tenant_overview,
    turns_that_created,
)
from memory.models import DeletionAudit, Episode, Memory, Turn
from memory.shared import describe as describe_episode
from memory.store import find_memory, history_of
from memory.turns import requeue_failed
from tenants import spaces
from tenants.models import Space

PAGE_SIZE = 25


def _space(request, external_id) -> Space:
    return spaces.find_space(tenant=request.membership.tenant_id, external_id=external_id)


@console_view()
def overview(request):
    numbers = tenant_overview(request.membership.tenant_id)
    chart = bar_chart(numbers["deletions_per_day"], title="Deletions per day, last 7 days")
    # The same seven days the figure counts (tenant_overview: from midnight six days ago).
    week_ago = (timezone.now() - datetime.timedelta(days=6)).date().isoformat()
    return render(request, "console/overview.html", {"numbers": numbers, "chart": chart, "week_ago": week_ago})


@console_view(roles=OPERATOR_ROLES)
@require_POST
def requeue_failed_turns(request):
    """Every failed turn of the tenant queued again (after the cause is fixed), as the API's retry does."""
    count = requeue_failed(Turn.objects.all())
    messages.success(request, f"{count} failed turn(s) queued again.")
    return redirect("console:overview")


@console_view()
def space_list(request):
    query = request.GET.get("q", "").strip()
    kind, turns = request.GET.get("kind", "").strip(), request.GET.get("turns", "").strip()
    errors = []
    if kind and kind not in Space.Kind.values:
        errors.append(f"kind: choose from {', '.join(Space.Kind.values)}.")
    if turns and turns not in TURN_STATES:
        errors.append(f"turns: choose from {', '.join(TURN_STATES)}.")
    rows = Space.objects.none() if errors else spaces_listed(
        tenant_id=request.membership.tenant_id, query=query, kind=kind, turns=turns)  # fmt: skip
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {"page": page, "q": query, "kind": kind, "turns": turns, "kinds": Space.Kind.choices,
               "turn_states": TURN_STATES, "errors": errors}  # fmt: skip
    return render(request, "console/spaces.html", context, status=error_status(request, errors))


MEMORY_FILTERS = ("kind", "topic", "q", "since", "until")


def _memory_filter(params, *, show_text: bool) -> tuple[dict, MemoryFilter | None, list[str]]:
    """(the filters as typed, the filter to apply, error messages); no filter when there are errors."""
    typed = {name: params.get(name, "").strip() for name in MEMORY_FILTERS}
    errors, bounds = [], {}
    if typed["kind"] and typed["kind"] not in Memory.Kind.values:
        errors.append(f"kind: choose from {', '.join(Memory.Kind.values)}.")
    if not show_text and (typed["q"] or typed["topic"]):
        # Matching text is reading it: a count of matches would tell support staff what a memory says.
        errors.append("Text and topic search need a role that reads memory text.")
    for field in ("since", "until"):
        try:
            bounds[field] = parse_filter_time(typed[field], field)
        except BadInput as exc:
            errors.append(str(exc))
    if errors:
        return typed, None, errors
    wanted = MemoryFilter(kind=typed["kind"] or None, topic=typed["topic"] or None, text=typed["q"] or None, **bounds)
    return typed, wanted, errors


@console_view()
def space_detail(request, external_id):
    space = _space(request, external_id)
    show_text = may_read_memory_text(request)
    typed, wanted, errors = _memory_filter(request.GET, show_text=show_text)
    memories = matching_memories(space, wanted) if wanted else []
    page = Paginator(memories, PAGE_SIZE).get_page(request.GET.get("page"))
    origins = turns_that_created(space, [m.id for m in page])
    sources = provenance.sources_for(list(page))  # ids and times only: support staff may see them
    rows = [_memory_row(m, show_text, origins.get(m.id), sources.get(m.pk)) for m in page]
    recent = list(Turn.objects.filter(space=space).select_related("session").order_by("-created_at")[:20])
    forgotten = forgotten_by(recent)
    turns = [_turn_row(t, forgotten.get(t.id, [])) for t in recent]
    shared = space.kind == Space.Kind.SHARED
    cases = _cases(space, show_text) if shared else []
    filtered = any(typed.values())
    return render(
        request,
        "console/space.html",
        {"space": space, "page": page, "rows": rows, "turns": turns, "show_text": show_text, "shared": shared,
         "cases": cases, "can_edit": show_text, "can_delete": show_text, "filters": typed, "filtered": filtered,
         "errors": errors, "kinds": Memory.Kind.values, "total": len(memories),
         "is_admin": request.membership.role == "admin"},
        status=error_status(request, errors),
    )  # fmt: skip


CASES_SHOWN = 100


def _cases(space, show_text: bool) -> list[dict]:
    """The latest episodes and resolutions; support staff see metadata only."""
    rows = Episode.objects.filter(space=space).order_by("-created_at")[: CASES_SHOWN * 2]
    cases = {"episode": [], "resolution": []}
    for episode in rows:
        row = describe_episode(episode) if show_text else {
            "id": episode.pk, "kind": episode.kind, "agent": episode.agent, "created_at": episode.created_at.isoformat()
        }  # fmt: skip
        row["created"] = episode.created_at
        row["sentiment"] = episode.sentiment
        if len(cases[episode.kind]) < CASES_SHOWN:
            cases[episode.kind].append(row)
    return [
        {"kind": "resolution", "label": "Escalation resolutions", "rows": cases["resolution"]},
        {"kind": "episode", "label": "Episodes", "rows": cases["episode"]},
    ]


def _memory_row(memory: Memory, show_text: bool, origin_turn: Turn | None, source: dict | None = None) -> dict:
    history = history_of(memory)[1:]
    return {
        "id": memory.id,
        "kind": memory.kind,
        "content": memory.content if show_text else None,
        "topic": memory.topic if show_text else None,
        "importance": memory.importance,
        "mentions": memory.mention_count,
        "session": memory.source_session.external_id if memory.source_session else "",
        "message_id": memory.source_message_id,
        "message_sent_at": memory.source_message.sent_at if memory.source_message else None,
        "turn_id": origin_turn.id if origin_turn else None,
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
        "source": source or {},
        "history": [{"id": h.id, "content": h.content if show_text else None, "created_at": h.created_at,
                     "reason": h.superseded_reason}
                    for h in history],
    }  # fmt: skip


def _turn_row(turn: Turn, forgotten: list) -> dict:
    """Counts only: the turn page shows what they are (and the text, to roles that read it)."""
    rejected = json.loads(turn.rejected) if turn.rejected else []
    return {
        "id": turn.id,
        "status": turn.status,
        "created_at": turn.created_at,
        "session": turn.session.external_id,
        "created": len(turn.created_ids),
        "merged": len(turn.merged_ids),
        "superseded": len(turn.superseded_ids),
        "rejected": len(rejected),
        "forgotten": len(forgotten),
        "forget_handled": turn.forget_handled,
        "error": turn.error,
        "attempts": turn.attempts,
    }


@console_view(roles=OPERATOR_ROLES)
def memory_delete(request, external_id, memory_id):
    """GET: confirm. POST: delete through the same audited service as the API."""
    space = _space(request, external_id)
    memory = find_memory(space=space, memory_id=memory_id)
    if request.method == "POST":
        delete_memory(
            memory=memory,
            space=space,
            context=DeletionContext(cause=DeletionAudit.Cause.OPERATOR, actor=f"operator {request.user.username}"),
        )
        messages.success(request, "The memory and its history were deleted; the deletion is in the audit.")
        return redirect("console:space", external_id=space.external_id)
    history = history_of(memory)
    return render(request, "console/memory_delete.html", {"space": space, "memory": memory, "history": history})


@console_view(roles=OPERATOR_ROLES)
def memory_restore(request, external_id, memory_id):
    """POST: make an earlier version current again, through the same service as the API."""
    space = _space(request, external_id)
    memory = find_memory(space=space, memory_id=memory_id)
    if request.method != "POST":
        return redirect("console:space", external_id=space.external_id)
    try:
        restore_memory(memory=memory)
    except Conflict as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "The earlier version is current again; the newer one is kept in its history.")
    return redirect("console:space", external_id=space.external_id)


@console_view(roles=OPERATOR_ROLES)
def memory_edit(request, external_id, memory_id):
    """GET: the form. POST: the same edit service the API's PATCH calls."""
    space = _space(request, external_id)
    memory = find_memory(space=space, memory_id=memory_id)
    errors = []
    if request.method == "POST":
        try:
            importance = _importance(request.POST.get("importance", ""))
            edit_memory(
                memory=memory,
                content=request.POST.get("content", ""),
                topic=request.POST.get("topic", ""),
                importance=importance,
            )
        except BadInput as exc:
            errors.append(str(exc))
        except ValidationError as exc:
            errors.extend(f"{field}: {' '.join(messages_)}" for field, messages_ in exc.message_dict.items())
        if not errors:
            messages.success(request, f"Memory {memory.id} saved.")
            return redirect("console:space", external_id=space.external_id)
        memory.refresh_from_db()
    form = {
        "content": request.POST.get("content", memory.content),
        "topic": request.POST.get("topic", memory.topic or ""),
        "importance": request.POST.get("importance", f"{memory.importance:.2f}"),
    }
    return render(
        request,
        "console/memory_edit.html",
        {"space": space, "memory": memory, "form": form, "errors": errors, "history": history_of(memory)},
        status=error_status(request, errors),
    )


def _importance(value: str) -> float | None:
    """An importance between 0 and 1, as the API accepts it; empty keeps the current one.

    >>> _importance("0.5"), _importance("")
    (0.5, None)
    """
    if not value.strip():
        return None
    try:
        number = float(value)
    except ValueError:
        raise BadInput("importance: give a number between 0 and 1.") from None
    if not 0.0 <= number <= 1.0:  # also refuses NaN
        raise BadInput("importance: give a number between 0 and 1.")
    return number
