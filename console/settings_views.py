"""Threshold tuning: per-space overrides and tenant defaults, with a live preview on the space's own data."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect, render

from console.access import OPERATOR_ROLES, console_view, may_see_distances
from console.form_input import bad_request, error_status
from console.threshold_preview import pairwise_distances, preview, space_vectors
from memory.dedup import pair_marks
from memory.shared.agents import affected_agents
from tenants import spaces
from tenants.models import SettingsChange, Space, Tenant
from tenants.settings_changes import change_space_settings, change_tenant_defaults
from tenants.space_settings import STRATEGIES, clean_overrides, defaults, effective_settings

FLOATS = ("dedup_distance", "recall_distance", "corroborated_recall_distance", "forget_floor", "episode_min_score",
          "escalation_min_score", "duplicate_min_score")  # fmt: skip
SLIDERS = ("dedup_distance", "recall_distance", "corroborated_recall_distance", "forget_floor")
INTEGERS = ("max_deletions_per_request", "recall_limit", "prompt_token_budget", "episode_examples")
FLAGS = ("hybrid", "keep_transcripts", "dedup_requires_same_terms")
SHARED_FLAGS = ("episode_hybrid",)
JSON_SETTINGS = ("episode_search_keys", "agent_search_keys")


def values_from_form(data, current: dict) -> dict:
    """Form fields to setting values; a malformed number is a ValidationError naming the field."""
    values = {}
    for name in FLOATS + INTEGERS:
        raw = data.get(name)
        if raw in (None, ""):
            continue
        try:
            values[name] = float(raw) if name in FLOATS else int(raw)
        except ValueError:
            raise ValidationError({name: ["Must be a number."]}) from None
    if "flags_present" in data:
        for name in FLAGS:
            values[name] = data.get(name) == "on"
    if "shared_present" in data:
        for name in SHARED_FLAGS:
            values[name] = data.get(name) == "on"
    for name in JSON_SETTINGS:
        raw = data.get(name)
        if raw is None:
            continue
        try:
            values[name] = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            raise ValidationError({name: ['Must be a JSON object, e.g. {"question": 2, "product": 1}.']}) from None
    weights = {}
    for strategy in STRATEGIES:
        raw = data.get(f"weight_{strategy}")
        if raw not in (None, ""):
            try:
                weights[strategy] = float(raw)
            except ValueError:
                raise ValidationError({"strategy_weights": [f"The {strategy} weight must be a number."]}) from None
    if weights:
        values["strategy_weights"] = {**current["strategy_weights"], **weights}
    return values


class _AwaitingConfirmation(Exception):
    pass


def _agents_needing_confirmation(space, current: dict, values: dict, data) -> list[str]:
    """A shared space's matching change is saved only after the operator has seen whom it affects."""
    if space.kind != Space.Kind.SHARED or data.get("confirmed") == "1":
        return []
    proposed = {**current, **clean_overrides(values)}
    return affected_agents(space, current, proposed)


def _resubmitted_fields(data) -> list[tuple[str, str]]:
    return [(name, value) for name, value in data.items() if name not in ("csrfmiddlewaretoken", "confirmed")]


def setting_origins(space) -> dict[str, str]:
    """Where each setting's value comes from: "overridden" (this space), "tenant" or "default"."""
    tenant_layer = space.tenant.default_space_settings or {}
    return {
        name: "overridden" if name in (space.settings or {}) else "tenant" if name in tenant_layer else "default"
        for name in defaults()
    }


def _reset_values(space, name: str) -> dict:
    """The value that drops a space's override of ``name``: what the space would inherit."""
    if name not in (space.settings or {}):
        raise ValidationError({name: ["This space does not override it; there is nothing to reset."]})
    inherited = {**defaults(), **(space.tenant.default_space_settings or {})}
    return {name: inherited[name]}


def _readonly_rows(current: dict, origins: dict) -> list[dict]:
    """Every setting as text, for roles that may look but not change (no control that looks editable)."""
    rows = []
    for name in origins:
        value = current[name]
        if isinstance(value, dict):
            value = "; ".join(f"{key}: {item}" for key, item in value.items()) or "none"
        elif isinstance(value, bool):
            value = "on" if value else "off"
        elif isinstance(value, float):
            value = f"{value:.3f}"
        rows.append({"name": name.replace("_", " "), "value": value, "origin": origins[name]})
    return rows


def _actor(request) -> str:
    return f"{request.membership.role} {request.user.username}"


@console_view()
def space_thresholds(request, external_id):
    space = spaces.find_space(tenant=request.membership.tenant_id, external_id=external_id)
    current = effective_settings(space)
    errors = {}
    confirm = None
    if request.method == "POST":
        if request.membership.role not in OPERATOR_ROLES:
            raise PermissionDenied("Your role cannot change settings.")
        try:
            reset = request.POST.get("reset")
            values = _reset_values(space, reset) if reset else values_from_form(request.POST, current)
            agents = _agents_needing_confirmation(space, current, values, request.POST)
            if agents:
                confirm = {"agents": agents, "fields": _resubmitted_fields(request.POST)}
                raise _AwaitingConfirmation
            changes = change_space_settings(space=space, values=values, actor=_actor(request))
            messages.success(request, f"Saved {len(changes)} change(s); they take effect on the next turn.")
            return redirect("console:thresholds", external_id=space.external_id)
        except ValidationError as exc:
            errors = exc.message_dict
        except _AwaitingConfirmation:
            pass
    history = SettingsChange.objects.filter(space=space).order_by("-changed_at")[:20]
    context = {
        "space": space, "current": current, "errors": errors, "history": history, "strategies": STRATEGIES,
        "confirm": confirm, "shared": space.kind == Space.Kind.SHARED,
        "search_keys_json": json.dumps(current["episode_search_keys"], indent=1),
        "agent_keys_json": json.dumps(current["agent_search_keys"], indent=1),
        "can_save": request.membership.role in OPERATOR_ROLES, "show_distances": may_see_distances(request),
        "origins": setting_origins(space), "readonly_rows": _readonly_rows(current, setting_origins(space)),
    }  # fmt: skip
    if context["show_distances"]:
        vectors = space_vectors(space)  # read once: the preview and the pair marks both use them
        context["preview"] = preview(space=space, values=current, sample_query="", vectors=vectors)
        context.update(pair_marks_context(space, current, vectors))
    return render(request, "console/thresholds.html", context, status=error_status(request, errors))


def pair_marks_context(space, current: dict, vectors=None) -> dict:
    rows, matrix = vectors if vectors is not None else space_vectors(space)
    distances = pairwise_distances(matrix) if rows else None
    return {
        "mark_candidates": pair_marks.unmarked_candidates(space, rows, distances) if rows else [],
        "marks": pair_marks.report(
            space, dedup_distance=current["dedup_distance"], requires_same_terms=current["dedup_requires_same_terms"]
        ),
    }


@console_view(roles=OPERATOR_ROLES)
def mark_pair(request, external_id):
    """An operator marks two memories as the same fact or different ones (htmx; the marks panel comes back)."""
    space = spaces.find_space(tenant=request.membership.tenant_id, external_id=external_id)
    errors = []
    if request.method == "POST":
        try:
            pair_marks.mark(
                space=space, first_id=request.POST.get("first", ""), second_id=request.POST.get("second", ""),
                label=request.POST.get("label", ""), actor=_actor(request),
            )  # fmt: skip
        except (ValidationError, ValueError) as exc:
            errors = getattr(exc, "messages", [str(exc)])
    current = effective_settings(space)
    context = {"space": space, "current": current, "mark_errors": errors, **pair_marks_context(space, current)}
    if request.htmx:
        return render(request, "console/_pair_marks.html", context, status=error_status(request, errors))
    if errors:
        return bad_request(" ".join(errors))
    return redirect("console:thresholds", external_id=space.external_id)


@console_view()
def threshold_preview(request, external_id):
    """The preview fragment for the values currently in the form (htmx, debounced; it never writes)."""
    space = spaces.find_space(tenant=request.membership.tenant_id, external_id=external_id)
    current = effective_settings(space)
    try:
        values = {**current, **clean_overrides(values_from_form(request.GET, current))}
        errors = {}
    except ValidationError as exc:
        values, errors = current, exc.message_dict
    # The sliders' values beside them follow the form (out-of-band swaps: the CSP allows no inline script).
    context = {"values": values, "errors": errors, "show_distances": may_see_distances(request),
               "oob_values": SLIDERS if request.htmx and may_see_distances(request) else ()}  # fmt: skip
    if context["show_distances"]:
        # Distances and a typed query's matches are an oracle for text support must never read:
        # for support nothing is computed, let alone shown.
        sample = request.GET.get("sample_query", "")
        context.update(preview=preview(space=space, values=values, sample_query=sample), sample_query=sample,
                       show_text=True)  # fmt: skip
    return render(request, "console/_threshold_preview.html", context, status=error_status(request, errors))


@console_view(roles=OPERATOR_ROLES)
def tenant_defaults(request):
    tenant = Tenant.objects.get(pk=request.membership.tenant_id)
    current = {**defaults(), **(tenant.default_space_settings or {})}
    errors = {}
    if request.method == "POST":
        try:
            changes = change_tenant_defaults(
                tenant=tenant, values=values_from_form(request.POST, current), actor=_actor(request)
            )
            messages.success(request, f"Saved {len(changes)} change(s) to the tenant defaults.")
            return redirect("console:tenant-defaults")
        except ValidationError as exc:
            errors = exc.message_dict
    history = SettingsChange.objects.filter(space__isnull=True).order_by("-changed_at")[:20]
    return render(
        request,
        "console/tenant_defaults.html",
        {"current": current, "errors": errors, "history": history, "strategies": STRATEGIES},
        status=error_status(request, errors),
    )
