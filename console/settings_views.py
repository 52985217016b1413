"""Threshold tuning: per-space overrides and tenant defaults, with a live preview on the space's own data."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect, render

from console.access import OPERATOR_ROLES, console_view, may_see_distances
from console.charts import histogram_svg
from console.form_input import bad_request, error_status
from console.settings_form import GENERAL, SHARED, changed_values, form_fields, rendered_from
from memory import dedup, investigation
from memory.shared import affected_agents
from tenants import spaces
from tenants.models import SettingsChange, Space, Tenant
from tenants.settings_service import apply_changes, change_space_settings, change_tenant_defaults, validated_changes
from tenants.space_settings import SETTINGS, clean_overrides, defaults, effective_settings, merge_layers

SLIDERS = tuple(name for name, setting in SETTINGS.items() if setting.slider_max is not None)


class _AwaitingConfirmation(Exception):
    pass


def _agents_needing_confirmation(space, current: dict, values: dict, data) -> list[str]:
    """A shared space's matching change is saved only after the operator has seen whom it affects."""
    if space.kind != Space.Kind.SHARED or data.get("confirmed") == "1":
        return []
    cleaned, dropped = validated_changes(values)
    proposed = merge_layers(space.tenant.default_space_settings, apply_changes(space.settings, cleaned, dropped))
    return affected_agents(space, current, proposed)


def _resubmitted_fields(data) -> list[tuple[str, str]]:
    """Every posted value again (a checkbox marker repeats once per flag), for the confirmation form."""
    return [
        (name, value)
        for name, values in data.lists()
        if name not in ("csrfmiddlewaretoken", "confirmed")
        for value in values
    ]


def setting_origins(space) -> dict[str, str]:
    """Where each setting's value comes from: "overridden" (this space), "tenant" or "default"."""
    tenant_layer = space.tenant.default_space_settings or {}
    return {
        name: "overridden" if name in (space.settings or {}) else "tenant" if name in tenant_layer else "default"
        for name in defaults()
    }


def _reset_values(space, name: str) -> dict:
    """The change that drops a space's override of ``name``, so that it inherits again."""
    if name not in (space.settings or {}):
        raise ValidationError({name: ["This space does not override it; there is nothing to reset."]})
    return {name: None}


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
        setting = SETTINGS[name]
        rows.append({"name": setting.title, "value": value, "origin": origins[name], "help": setting.help})
    return rows


def _groups(space) -> tuple[str, ...]:
    """The setting groups a space's form shows: the shared-space section only for a shared space."""
    return (GENERAL, SHARED) if space.kind == Space.Kind.SHARED else (GENERAL,)


def _actor(request) -> str:
    return f"{request.membership.role} {request.user.username}"


def _preview(*, space, values: dict, sample_query: str = "", vectors=None) -> dict:
    """The domain's threshold preview with its nearest-neighbour distances drawn as a histogram."""
    found = investigation.threshold_preview(space=space, values=values, sample_query=sample_query, vectors=vectors)
    lines = {"dedup": values["dedup_distance"], "recall": values["recall_distance"], "forget": values["forget_floor"]}
    return {**found, "histogram": histogram_svg(found["nearest"], lines)}


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
            if reset:
                values = _reset_values(space, reset)
            else:
                values = changed_values(request.POST, current, space.settings, groups=_groups(space))
            agents = _agents_needing_confirmation(space, current, values, request.POST)
            if agents:
                confirm = {"agents": agents, "fields": _resubmitted_fields(request.POST)}
                raise _AwaitingConfirmation
            changes = change_space_settings(space=space, changes=values, actor=_actor(request))
            messages.success(request, f"Saved {len(changes)} change(s); they take effect on the next turn.")
            return redirect("console:thresholds", external_id=space.external_id)
        except ValidationError as exc:
            errors = exc.message_dict
        except _AwaitingConfirmation:
            pass
    history = SettingsChange.objects.filter(space=space).order_by("-changed_at")[:20]
    context = {
        "space": space, "current": current, "errors": errors, "history": history,
        "confirm": confirm, "shared": space.kind == Space.Kind.SHARED,
        "fields": form_fields(GENERAL, current, errors), "shared_fields": form_fields(SHARED, current, errors),
        "rendered_from": rendered_from(current),
        "can_save": request.membership.role in OPERATOR_ROLES, "show_distances": may_see_distances(request),
        "origins": setting_origins(space), "readonly_rows": _readonly_rows(current, setting_origins(space)),
    }  # fmt: skip
    if context["show_distances"]:
        vectors = investigation.space_vectors(space)  # read once: the preview and the pair marks both use them
        context["preview"] = _preview(space=space, values=current, sample_query="", vectors=vectors)
        context.update(pair_marks_context(space, current, vectors))
    return render(request, "console/thresholds.html", context, status=error_status(request, errors))


def pair_marks_context(space, current: dict, vectors=None) -> dict:
    rows, matrix = vectors if vectors is not None else investigation.space_vectors(space)
    distances = investigation.pairwise_distances(matrix) if rows else None
    return {
        "mark_candidates": dedup.unmarked_candidates(space, rows, distances) if rows else [],
        "marks": dedup.pair_mark_report(
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
            dedup.mark_pair(
                space=space, first_id=request.POST.get("first", ""), second_id=request.POST.get("second", ""),
                label=request.POST.get("label", ""), actor=_actor(request),
            )  # fmt: skip
        except (ValidationError, ValueError) as exc:
            errors = getattr(exc, "messages", [str(exc)])
    current = effective_settings(space)
    context = {"space": space, "current": current, "mark_errors": errors, **pair_marks_context(space, current)}
    if request.htmx:
        return render(request, "console/thresholds.html#pair_marks", context, status=error_status(request, errors))
    if errors:
        return bad_request(" ".join(errors))
    return redirect("console:thresholds", external_id=space.external_id)


@console_view()
def threshold_preview(request, external_id):
    """The preview fragment for the values currently in the form (htmx, debounced; it never writes)."""
    space = spaces.find_space(tenant=request.membership.tenant_id, external_id=external_id)
    current = effective_settings(space)
    try:
        values = {**current, **clean_overrides(changed_values(request.GET, current, space.settings))}
        errors = {}
    except ValidationError as exc:
        values, errors = current, exc.message_dict
    # The sliders' values beside them follow the form (out-of-band swaps: the CSP allows no inline script).
    oob = SLIDERS if request.htmx and may_see_distances(request) else ()
    examples = [(name, investigation.examples_at(name, values[name])) for name in oob]
    context = {"values": values, "errors": errors, "show_distances": may_see_distances(request),
               "oob_values": oob, "oob_examples": examples}  # fmt: skip
    if context["show_distances"]:
        # Distances and a typed query's matches are an oracle for text support must never read:
        # for support nothing is computed, let alone shown.
        sample = request.GET.get("sample_query", "")
        context.update(preview=_preview(space=space, values=values, sample_query=sample), sample_query=sample,
                       show_text=True)  # fmt: skip
    return render(request, "console/thresholds.html#threshold_preview", context, status=error_status(request, errors))


@console_view(roles=OPERATOR_ROLES)
def tenant_defaults(request):
    tenant = Tenant.objects.get(pk=request.membership.tenant_id)
    current = merge_layers(tenant.default_space_settings)
    errors = {}
    if request.method == "POST":
        try:
            values = changed_values(request.POST, current, tenant.default_space_settings, groups=(GENERAL,))
            changes = change_tenant_defaults(tenant=tenant, changes=values, actor=_actor(request))
            messages.success(request, f"Saved {len(changes)} change(s) to the tenant defaults.")
            return redirect("console:tenant-defaults")
        except ValidationError as exc:
            errors = exc.message_dict
    history = SettingsChange.objects.filter(space__isnull=True).order_by("-changed_at")[:20]
    return render(
        request,
        "console/tenant_defaults.html",
        {
            "current": current,
            "errors": errors,
            "history": history,
            "fields": form_fields(GENERAL, current, errors),
            "rendered_from": rendered_from(current),
        },  # fmt: skip
        status=error_status(request, errors),
    )
