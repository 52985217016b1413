"""The playground: exactly the recall step the API runs, with every candidate's scores; a forget
phrase gets a dry run; in a shared space, episodic recall (inputs → matched episodes with their
scores) and escalation matching (would a past resolution apply?). It never writes."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.shortcuts import render

from console.access import OPERATOR_ROLES, console_view
from console.episode_views import parse_inputs
from console.form_input import bad_request
from memory import shared
from memory.forgetting import DeletionContext, forget
from memory.recall import PROMPT_BLOCK_HEADER, estimate_tokens, recall
from tenants import spaces
from tenants.models import Space
from tenants.space_settings import effective_settings

MODES = ("recall", "forget", "episodes", "escalation")


@console_view(roles=OPERATOR_ROLES)
def playground(request):
    names = list(Space.objects.order_by("external_id").values_list("external_id", flat=True)[:500])
    chosen, message, mode = (
        request.GET.get("space", ""),
        request.GET.get("message", ""),
        request.GET.get("mode") or "recall",
    )
    result = forget_result = settings = episode_result = escalation = None
    error = ""
    agent = request.GET.get("agent", "").strip()
    if mode not in MODES:
        return bad_request(f"mode: choose from {', '.join(MODES)}.")
    if chosen and message.strip():
        space = spaces.find_space(tenant=request.membership.tenant_id, external_id=chosen)
        settings = effective_settings(space)
        if mode in ("episodes", "escalation"):
            try:
                if mode == "episodes":
                    episode_result = shared.recall_episodes(
                        space, inputs=parse_inputs(message), agent=agent, record_agent=False
                    )
                else:
                    escalation = shared.match_escalation(space, text=message)
            except ValidationError as exc:
                error = " ".join(exc.messages)
            except shared.WrongSpaceKind as exc:
                error = exc.message
        elif mode == "forget":
            forget_result = forget(
                space=space, utterance=message, context=DeletionContext(cause="operator"), dry_run=True
            )
        else:
            result = recall(space=space, query=message)
    prompt = _prompt_use(result, settings) if result is not None else {}
    context = {
        "spaces": names, "chosen": chosen, "message": message, "mode": mode, "result": result,
        "forget": forget_result, "settings": settings, "show_text": True, "agent": agent, "error": error,
        "episodes": episode_result, "escalation": escalation, **prompt,
    }  # fmt: skip
    template = "console/playground.html#results" if request.htmx else "console/playground.html"
    return render(request, template, context)


def _prompt_use(result, settings: dict) -> dict:
    """How much of the space's token budget the prompt block uses, and how many memories made it in."""
    tokens = estimate_tokens(result.prompt) if result.prompt else 0
    budget = settings["prompt_token_budget"] or 1
    lines = len([line for line in result.prompt.splitlines() if line and line != PROMPT_BLOCK_HEADER])
    return {"prompt_tokens": tokens, "prompt_share": round(100 * tokens / budget), "prompt_lines": lines}
