"""Episodic and escalation memory in shared spaces, the write side: store a case, with duplicate review.

A new case that nearly repeats a stored one (every argument near-identical, ``duplicate_min_score``)
is not written until the caller says what to do: ``replace`` the stored case, ``merge`` into it
(comments combined; a disagreeing sentiment or outcome must be settled by ``sentiment_wins``) or
``add`` it beside. A caller speaking for one agent changes only that agent's cases. Every write and
delete takes the space's lock; a deleted case leaves a deletion-audit row. Matching is
``memory.shared.matching``.
"""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404

from core.errors import Conflict, DomainError
from memory.forgetting.audit import record_deletion
from memory.models import DeletionAudit, Episode, EpisodeKey
from memory.shared.agents import note_agent
from memory.shared.matching import Match, PreparedInputs, duplicates_of, prepare_inputs, require_shared
from memory.store.lock import lock_space
from memory.text.digests import keyword_digests
from tenants.models import Space
from tenants.space_settings import effective_settings

DUPLICATE_CHOICES = ("replace", "merge", "add")
MAX_DUPLICATES_SHOWN = 5


class NotYourCase(DomainError):
    """A caller speaking for one agent tried to change another agent's case."""

    status_code = 403
    code = "permission_denied"


class DuplicateFound(Conflict):
    code = "duplicate_found"


class ConflictingFeedback(Conflict):
    code = "conflicting_feedback"


ANY_AGENT = None  # ``acting_agent`` of a caller who may change every agent's cases (admin scope, console)


def require_owner(episode: Episode, acting_agent: str | None) -> None:
    """A caller speaking for an agent changes, merges into or replaces only that agent's cases.

    ``acting_agent`` is the agent the caller's key is bound to ("" for a key bound to none: it
    owns only cases stored without an agent); ``ANY_AGENT`` skips the check.
    """
    if acting_agent is not ANY_AGENT and episode.agent != acting_agent:
        raise NotYourCase(
            f"This case belongs to agent {episode.agent!r}; changing another agent's case needs the admin scope."
        )


@dataclasses.dataclass
class NewCase:
    kind: str
    inputs: dict
    output: str | None = None
    outcome: str | None = None
    resolution_comment: str | None = None
    sentiment: str = ""
    feedback_comment: str | None = None
    agent: str = ""


@dataclasses.dataclass
class DuplicateChoice:
    on_duplicate: str | None = None
    target_id: object = None  # which existing item to replace or merge into (default: the closest)
    sentiment_wins: str | None = None  # "existing" or "new", when merged sentiments (or outcomes) differ


@dataclasses.dataclass
class StoreResult:
    episode: Episode
    action: str  # created | replaced | merged | added
    duplicates: list[Match]
    replaced_id: object = None


def find_duplicates(space: Space, case: NewCase) -> list[Match]:
    """The near-duplicates a new case would meet; writes nothing."""
    require_shared(space)
    return duplicates_of(space, kind=case.kind, prepared=prepare_inputs(space, case.inputs))


@transaction.atomic
def store_case(
    space: Space,
    case: NewCase,
    choice: DuplicateChoice | None = None,
    *,
    actor: str = "",
    cause: str = DeletionAudit.Cause.API_KEY,
    acting_agent: str | None = ANY_AGENT,
) -> StoreResult:
    """``acting_agent``: see ``require_owner``; a merge or replace may touch only that agent's cases."""
    require_shared(space)
    choice = choice or DuplicateChoice()
    if choice.on_duplicate is not None and choice.on_duplicate not in DUPLICATE_CHOICES:
        raise ValidationError({"on_duplicate": [f"Choose from {', '.join(DUPLICATE_CHOICES)}."]})
    prepared = prepare_inputs(space, case.inputs)
    lock_space(space.id)
    duplicates = duplicates_of(space, kind=case.kind, prepared=prepared)
    note_agent(space, case.agent)
    if not duplicates:
        return StoreResult(episode=_create(space, case, prepared), action="created", duplicates=[])
    if choice.on_duplicate is None:
        raise DuplicateFound(
            f"{len(duplicates)} near-duplicate(s) already stored; say what to do with on_duplicate "
            f"({', '.join(DUPLICATE_CHOICES)}).",
            details={
                "duplicates": [describe_match(m) for m in duplicates[:MAX_DUPLICATES_SHOWN]],
                "choices": list(DUPLICATE_CHOICES),
                "threshold": effective_settings(space)["duplicate_min_score"],
            },
        )
    if choice.on_duplicate == "add":
        return StoreResult(episode=_create(space, case, prepared), action="added", duplicates=duplicates)
    target = _chosen(duplicates, choice.target_id)
    require_owner(target.episode, acting_agent)
    if choice.on_duplicate == "replace":
        replaced_id = target.episode.pk
        delete_episode(space, target.episode, actor=actor or "duplicate review: replace", cause=cause)
        others = [m for m in duplicates if m is not target]
        return StoreResult(
            episode=_create(space, case, prepared), action="replaced", duplicates=others, replaced_id=replaced_id
        )
    return StoreResult(
        episode=merge_into_existing(target.episode, case, choice), action="merged", duplicates=duplicates
    )


def _chosen(duplicates: list[Match], target_id) -> Match:
    if target_id is None:
        return duplicates[0]
    for match in duplicates:
        if str(match.episode.pk) == str(target_id):
            return match
    raise ValidationError({"target_id": ["Must be the id of one of the near-duplicates found."]})


def _create(space: Space, case: NewCase, prepared: PreparedInputs) -> Episode:
    episode = Episode(
        tenant_id=space.tenant_id,
        space=space,
        kind=case.kind,
        agent=case.agent,
        output=case.output,
        outcome=case.outcome,
        resolution_comment=case.resolution_comment,
        sentiment=case.sentiment or "",
        feedback_comment=case.feedback_comment,
    )
    episode.inputs = json.dumps(prepared.stored, ensure_ascii=False)
    episode.search_keys = json.dumps(prepared.keys, ensure_ascii=False)
    episode.save()
    write_keys(space, episode, prepared.vectors, prepared.tokens)
    return episode


def write_keys(space: Space, episode: Episode, vectors: dict, tokens: dict) -> None:
    """Each argument's vector and blind keyword index (digests under this space's key)."""
    EpisodeKey.objects.bulk_create(
        [
            EpisodeKey(
                tenant_id=space.tenant_id,
                space=space,
                episode=episode,
                argument=argument,
                embedding=vector.tolist(),
                keyword_digests=keyword_digests(space.id, tokens[argument]),
            )
            for argument, vector in vectors.items()
        ]
    )


def _combined(existing: str | None, new: str | None) -> str | None:
    parts = [p for p in (existing, new) if p and p.strip()]
    if len(parts) == 2 and parts[0].strip() == parts[1].strip():
        parts = parts[:1]
    return "\n\n".join(parts) if parts else None


def merge_into_existing(existing: Episode, case: NewCase, choice: DuplicateChoice) -> Episode:
    """Keep the existing case; combine the comments; a disagreement must be settled by the request."""
    if case.kind == Episode.Kind.EPISODE:
        conflict = bool(existing.sentiment and case.sentiment and existing.sentiment != case.sentiment)
        field, existing_value, new_value = "sentiment", existing.sentiment, case.sentiment
    else:
        conflict = bool(existing.outcome and case.outcome and existing.outcome.strip() != case.outcome.strip())
        field, existing_value, new_value = "outcome", existing.outcome, case.outcome
    if conflict and choice.sentiment_wins not in ("existing", "new"):
        raise ConflictingFeedback(
            f"The stored case's {field} ({existing_value!r}) and the new one ({new_value!r}) disagree; "
            "say which wins with sentiment_wins: 'existing' or 'new'.",
            details={"field": field, "existing": existing_value, "new": new_value, "episode_id": str(existing.pk)},
        )
    new_wins = conflict and choice.sentiment_wins == "new"
    if case.kind == Episode.Kind.EPISODE:
        existing.feedback_comment = _combined(existing.feedback_comment, case.feedback_comment)
        if new_wins or not existing.sentiment:
            existing.sentiment = case.sentiment or existing.sentiment
    else:
        existing.resolution_comment = _combined(existing.resolution_comment, case.resolution_comment)
        if new_wins or not existing.outcome:
            existing.outcome = case.outcome or existing.outcome
    existing.save()
    return existing


@transaction.atomic
def delete_episode(
    space: Space,
    episode: Episode,
    *,
    actor: str,
    cause: str = DeletionAudit.Cause.API_KEY,
    acting_agent: str | None = ANY_AGENT,
) -> None:
    """Permanent, with a deletion audit row (no content: a keyed digest of the search keys).

    Under the space's lock, like ``store_case``: a merge into this case that had read it before it
    was deleted would otherwise save it back (a save whose UPDATE finds no row inserts it).
    """
    lock_space(space.id)
    current = Episode.objects.filter(space=space, pk=episode.pk).first()
    if current is None:
        return  # deleted while we waited, and audited by whoever deleted it
    require_owner(current, acting_agent)
    record_deletion(
        memory=SimpleNamespace(id=current.pk, kind=current.kind, content=current.search_keys),
        space=space,
        cause=cause,
        actor=actor,
    )
    # A queryset's delete is one statement naming the tenant; its keys cascade in the database (decision 0030).
    Episode.objects.filter(space=space, pk=current.pk).delete()


@transaction.atomic
def update_feedback(episode: Episode, *, fields: dict, acting_agent: str | None = ANY_AGENT) -> Episode:
    """Output, outcome, feedback and resolution comment may change; inputs never do.

    Under the space's lock and on the row as it is now: a merge committed meanwhile keeps its combined
    comments, and a case deleted meanwhile is not saved back.
    """
    require_owner(episode, acting_agent)
    if "inputs" in fields:
        raise ValidationError({"inputs": ["An episode's inputs cannot be edited; delete it and add a new one."]})
    lock_space(episode.space_id)
    episode = Episode.objects.filter(pk=episode.pk).first()
    if episode is None:
        raise Http404("No such episode.")
    for name in ("output", "outcome", "resolution_comment", "sentiment", "feedback_comment"):
        if name in fields:
            setattr(episode, name, fields[name] if name != "sentiment" else (fields[name] or ""))
    episode.save()
    return episode


def describe_match(match: Match) -> dict:
    return {**describe(match.episode), "score": match.score, "arguments": match.arguments}


def describe(episode: Episode) -> dict:
    body = {
        "id": str(episode.pk),
        "kind": episode.kind,
        "agent": episode.agent,
        "inputs": episode.inputs_dict,
        "search_keys": episode.search_keys_dict,
        "outcome": episode.outcome,
        "created_at": episode.created_at.isoformat(),
        "updated_at": episode.updated_at.isoformat(),
    }
    if episode.kind == Episode.Kind.EPISODE:
        body["output"] = episode.output
        body["feedback"] = (
            {"sentiment": episode.sentiment or None, "comment": episode.feedback_comment}
            if episode.sentiment or episode.feedback_comment
            else None
        )
    else:
        body["resolution_comment"] = episode.resolution_comment
    return body
