"""Shared spaces in the console: add an episode or a resolution (with the duplicate dialog), delete one.

The same service as the API (memory.shared.storing and .matching), so duplicate review, audit and limits are identical.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import OPERATOR_ROLES, console_view
from memory import shared
from memory.models import DeletionAudit, Episode
from tenants import spaces

FORM_FIELDS = ("kind", "inputs", "output", "outcome", "sentiment", "feedback_comment", "input", "resolution_comment")


def parse_inputs(raw: str) -> dict:
    """A JSON object, or one ``name: value`` per line."""
    raw = raw.strip()
    if raw.startswith("{"):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            raise ValidationError({"inputs": ["Not valid JSON."]}) from None
        if not isinstance(value, dict):
            raise ValidationError({"inputs": ["Must be a JSON object."]})
        return value
    inputs = {}
    for line in raw.splitlines():
        if not line.strip():
            continue
        name, separator, value = line.partition(":")
        if not separator:
            raise ValidationError({"inputs": [f"Write one 'name: value' per line (got {line[:40]!r})."]})
        inputs[name.strip()] = value.strip()
    return inputs


def case_from_form(data) -> shared.NewCase:
    kind = data.get("kind")
    if kind == Episode.Kind.RESOLUTION:
        if not data.get("input", "").strip() or not data.get("resolution_comment", "").strip():
            raise ValidationError({"input": ["A resolution needs the case and the resolution comment."]})
        return shared.NewCase(
            kind=kind,
            inputs={shared.ESCALATION_ARGUMENT: data["input"]},
            outcome=data.get("outcome", ""),
            resolution_comment=data["resolution_comment"],
        )
    if kind != Episode.Kind.EPISODE:
        raise ValidationError({"kind": ["Choose an episode or a resolution."]})
    sentiment = data.get("sentiment", "")
    if sentiment and sentiment not in Episode.Sentiment.values:
        raise ValidationError({"sentiment": ["Choose positive, negative or neutral."]})
    return shared.NewCase(
        kind=kind,
        inputs=parse_inputs(data.get("inputs", "")),
        output=data.get("output", ""),
        outcome=data.get("outcome", ""),
        sentiment=sentiment,
        feedback_comment=data.get("feedback_comment") or None,
    )


@require_POST
@console_view(roles=OPERATOR_ROLES)
def episode_add(request, external_id):
    space = spaces.find_space(tenant=request.membership.tenant_id, external_id=external_id)
    fields = [(name, request.POST.get(name, "")) for name in FORM_FIELDS]
    choice = shared.DuplicateChoice(
        on_duplicate=request.POST.get("on_duplicate") or None,
        target_id=request.POST.get("target_id") or None,
        sentiment_wins=request.POST.get("sentiment_wins") or None,
    )
    context = {"space": space, "fields": fields}
    try:
        result = shared.store_case(
            space, case_from_form(request.POST), choice,
            actor=f"{request.membership.role} {request.user.username}", cause=DeletionAudit.Cause.OPERATOR,
        )  # fmt: skip
    except shared.DuplicateFound as exc:
        context.update(duplicates=exc.details["duplicates"], threshold=exc.details["threshold"])
        return render(request, "console/space.html#episode_duplicates", context)
    except shared.ConflictingFeedback as exc:
        context.update(
            duplicates=_still_duplicates(space, request.POST), conflict=exc.details, chosen=choice,
            threshold=None,
        )  # fmt: skip
        return render(request, "console/space.html#episode_duplicates", context)
    except ValidationError as exc:
        return render(request, "console/space.html#episode_form_errors", {"errors": exc.messages},
                      status=200 if request.htmx else 422)  # fmt: skip
    messages.success(request, f"Stored: {result.action}.")
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    return redirect("console:space", external_id=space.external_id)


def _still_duplicates(space, data) -> list[dict]:
    matches = shared.find_duplicates(space, case_from_form(data))
    return [shared.describe_match(m) for m in matches[: shared.MAX_DUPLICATES_SHOWN]]


@require_POST
@console_view(roles=OPERATOR_ROLES)
def episode_delete(request, external_id, episode_id):
    space = spaces.find_space(tenant=request.membership.tenant_id, external_id=external_id)
    episode = Episode.objects.filter(space=space, pk=episode_id).first()
    if episode is not None:
        shared.delete_episode(
            space, episode, actor=f"{request.membership.role} {request.user.username}",
            cause=DeletionAudit.Cause.OPERATOR,
        )  # fmt: skip
        messages.success(request, f"Deleted the {episode.kind}.")
    return redirect("console:space", external_id=space.external_id)
