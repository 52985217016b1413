"""Episodic and escalation memory in shared spaces: store past cases, find similar ones.

An episode's inputs are matched argument by argument. Each argument's search key is embedded
(all keys of a request in one call); the score of a stored case is

    score = Σ weight(a) · similarity(a)  /  Σ weight(a)      over the weighted arguments of the query

where ``similarity(a) = 1 − cosine distance`` of that argument's keys, blended with the overlap of
their blind keyword indexes when the space is hybrid (``(1 − KEYWORD_SHARE) · semantic +
KEYWORD_SHARE · keyword``), and 0 when the stored case lacks the argument. Weights come from the
space's ``episode_search_keys`` (empty: every argument of the query, weight 1), or the agent's
own entry in ``agent_search_keys``. Only cases at or above the space's threshold are returned —
an unrelated case is never an "example anyway".

Escalation memory is the same store with one argument, ``input``: a person's resolution applies
only when the single best past case clears ``escalation_min_score``.
"""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction
from pgvector.django import CosineDistance

from core.errors import Conflict, DomainError
from memory.dedup.lock import lock_space
from memory.forgetting.audit import record_deletion
from memory.models import DeletionAudit, Episode, EpisodeKey
from memory.shared.agents import note_agent
from memory.shared.search_keys import key_for
from memory.text.analysis import search_tokens
from memory.text.digests import keyword_digests
from memory.text.vectors import embed_for_space
from tenants.models import Space
from tenants.space_settings import ARGUMENT_PATTERN, MAX_ARGUMENTS, effective_settings

KEYWORD_SHARE = 0.25
CANDIDATES_PER_ARGUMENT = 200
ESCALATION_ARGUMENT = "input"
DUPLICATE_CHOICES = ("replace", "merge", "add")
MAX_DUPLICATES_SHOWN = 5


class WrongSpaceKind(DomainError):
    code = "wrong_space_kind"


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


def require_shared(space: Space) -> None:
    if space.kind != Space.Kind.SHARED:
        raise WrongSpaceKind(
            "Episodes and escalations live in shared spaces; create the space with kind 'shared'.",
            details={"space_kind": space.kind},
        )


@dataclasses.dataclass
class PreparedInputs:
    stored: dict
    keys: dict[str, str]
    compressed: dict[str, str]
    vectors: dict[str, np.ndarray]
    tokens: dict[str, set[str]]


def prepare_inputs(space: Space, inputs) -> PreparedInputs:
    """Validate the inputs, build each argument's search key and embed them all in one call."""
    if not isinstance(inputs, dict) or not inputs:
        raise ValidationError({"inputs": ["Must be a non-empty object of argument name to value."]})
    if len(inputs) > MAX_ARGUMENTS:
        raise ValidationError({"inputs": [f"At most {MAX_ARGUMENTS} arguments."]})
    stored, keys, compressed = {}, {}, {}
    for argument, value in inputs.items():
        if not isinstance(argument, str) or not ARGUMENT_PATTERN.match(argument):
            raise ValidationError({"inputs": [f"Argument {argument!r}: use 1 to 64 characters from A-Z a-z 0-9 _ . -"]})
        search_key = key_for(argument, value)
        stored[argument], keys[argument] = search_key.stored_input, search_key.key
        if search_key.compressed:
            compressed[argument] = search_key.compressed
    names = list(keys)
    vectors = embed_for_space(space.id, [keys[n] for n in names])
    return PreparedInputs(
        stored=stored,
        keys=keys,
        compressed=compressed,
        vectors=dict(zip(names, vectors, strict=True)),
        tokens={n: search_tokens(keys[n]) for n in names},
    )


def weights_for(space: Space, agent: str, arguments) -> dict[str, float]:
    """The search keys that apply for this agent: its override, else the space's, else all equally."""
    settings = effective_settings(space)
    configured = settings["agent_search_keys"].get(agent) if agent else None
    if configured is None:
        configured = settings["episode_search_keys"]
    if not configured:
        return {a: 1.0 for a in arguments}
    return {a: w for a, w in configured.items() if w > 0 and a in arguments}


@dataclasses.dataclass
class Match:
    episode: Episode
    score: float
    arguments: dict[str, dict]


def _keyword_overlap(query: set[str], stored: set[str]) -> float:
    if not query or not stored:
        return 0.0
    return len(query & stored) / len(query | stored)


def find_matches(
    space: Space,
    *,
    kind: str,
    prepared: PreparedInputs,
    weights: dict[str, float],
    hybrid: bool,
    exclude_ids=(),
) -> list[Match]:
    """Every stored case of ``kind`` that shares a weighted argument, scored, best first (no threshold)."""
    weights = {a: w for a, w in weights.items() if a in prepared.vectors and w > 0}
    if not weights:
        return []
    digests = {a: set(keyword_digests(space.id, prepared.tokens[a])) for a in weights}
    keys = EpisodeKey.objects.filter(space=space, episode__kind=kind).exclude(episode_id__in=list(exclude_ids))
    candidate_ids = set()
    for argument in weights:
        nearest = (
            keys.filter(argument=argument)
            .annotate(distance=CosineDistance("embedding", prepared.vectors[argument].tolist()))
            .order_by("distance")
            .values_list("episode_id", flat=True)[:CANDIDATES_PER_ARGUMENT]
        )
        candidate_ids.update(nearest)
    if not candidate_ids:
        return []
    per_episode: dict = {}
    for argument in weights:
        rows = (
            keys.filter(argument=argument, episode_id__in=candidate_ids)
            .annotate(distance=CosineDistance("embedding", prepared.vectors[argument].tolist()))
            .values_list("episode_id", "distance", "keyword_digests")
        )
        for episode_id, distance, stored_digests in rows:
            semantic = max(0.0, 1.0 - float(distance))
            keyword = _keyword_overlap(digests[argument], set(stored_digests))
            score = (1 - KEYWORD_SHARE) * semantic + KEYWORD_SHARE * keyword if hybrid else semantic
            per_episode.setdefault(episode_id, {})[argument] = {
                "semantic": round(semantic, 4),
                "keyword": round(keyword, 4),
                "weight": weights[argument],
                "score": round(score, 4),
            }
    total_weight = sum(weights.values())
    episodes = Episode.objects.in_bulk(list(per_episode))
    matches = []
    for episode_id, by_argument in per_episode.items():
        combined = sum(d["weight"] * d["score"] for d in by_argument.values()) / total_weight
        matches.append(Match(episode=episodes[episode_id], score=round(combined, 4), arguments=by_argument))
    matches.sort(key=lambda m: (-m.score, -m.episode.created_at.timestamp()))
    return matches


# --- recall -----------------------------------------------------------------------------------


@dataclasses.dataclass
class EpisodeRecall:
    matches: list[Match]
    threshold: float
    weights: dict[str, float]
    considered: list[Match]


def recall_episodes(
    space: Space, *, inputs, agent: str = "", limit: int | None = None, record_agent: bool = True
) -> EpisodeRecall:
    require_shared(space)
    settings = effective_settings(space)
    prepared = prepare_inputs(space, inputs)
    weights = weights_for(space, agent, prepared.keys)
    if not weights:
        known = ", ".join(sorted(_configured_keys(space, agent)))
        raise ValidationError({"inputs": [f"None of the arguments given is a search key of this space ({known})."]})
    considered = find_matches(
        space, kind=Episode.Kind.EPISODE, prepared=prepared, weights=weights, hybrid=settings["episode_hybrid"]
    )
    threshold = settings["episode_min_score"]
    limit = limit or settings["episode_examples"]
    if record_agent:
        note_agent(space, agent)
    return EpisodeRecall(
        matches=[m for m in considered if m.score >= threshold][:limit],
        threshold=threshold,
        weights=weights,
        considered=considered,
    )


def _configured_keys(space: Space, agent: str) -> set[str]:
    settings = effective_settings(space)
    return set(settings["agent_search_keys"].get(agent) or settings["episode_search_keys"])


@dataclasses.dataclass
class EscalationMatch:
    apply: bool
    best: Match | None
    threshold: float


def match_escalation(space: Space, *, text: str, agent: str = "") -> EscalationMatch:
    """The single best past resolution, applied only when it clears the threshold. Never a list."""
    require_shared(space)
    settings = effective_settings(space)
    prepared = prepare_inputs(space, {ESCALATION_ARGUMENT: text})
    matches = find_matches(
        space,
        kind=Episode.Kind.RESOLUTION,
        prepared=prepared,
        weights={ESCALATION_ARGUMENT: 1.0},
        hybrid=settings["episode_hybrid"],
    )
    note_agent(space, agent)
    best = matches[0] if matches else None
    threshold = settings["escalation_min_score"]
    return EscalationMatch(apply=best is not None and best.score >= threshold, best=best, threshold=threshold)


# --- storing, with duplicate review -----------------------------------------------------------


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


def duplicates_of(space: Space, case: NewCase, prepared: PreparedInputs, exclude_ids=()) -> list[Match]:
    """Stored cases of the same kind whose inputs, all arguments weighted equally, are near-identical."""
    settings = effective_settings(space)
    weights = {a: 1.0 for a in prepared.keys}
    matches = find_matches(
        space, kind=case.kind, prepared=prepared, weights=weights, hybrid=settings["episode_hybrid"],
        exclude_ids=exclude_ids,
    )  # fmt: skip
    threshold = settings["duplicate_min_score"]
    return [m for m in matches if m.score >= threshold and set(m.episode.search_keys_dict) == set(prepared.keys)]


def find_duplicates(space: Space, case: NewCase) -> list[Match]:
    """The near-duplicates a new case would meet; writes nothing."""
    require_shared(space)
    return duplicates_of(space, case, prepare_inputs(space, case.inputs))


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
    duplicates = duplicates_of(space, case, prepared)
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
    return StoreResult(episode=_merge(target.episode, case, choice), action="merged", duplicates=duplicates)


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


def _merge(existing: Episode, case: NewCase, choice: DuplicateChoice) -> Episode:
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


def delete_episode(
    space: Space,
    episode: Episode,
    *,
    actor: str,
    cause: str = DeletionAudit.Cause.API_KEY,
    acting_agent: str | None = ANY_AGENT,
) -> None:
    """Permanent, with a deletion audit row (no content: a keyed digest of the search keys)."""
    require_owner(episode, acting_agent)
    record_deletion(
        memory=SimpleNamespace(id=episode.pk, kind=episode.kind, content=episode.search_keys),
        space=space,
        cause=cause,
        actor=actor,
    )
    episode.delete()


def update_feedback(episode: Episode, *, fields: dict, acting_agent: str | None = ANY_AGENT) -> Episode:
    """Output, outcome, feedback and resolution comment may change; inputs never do."""
    require_owner(episode, acting_agent)
    if "inputs" in fields:
        raise ValidationError({"inputs": ["An episode's inputs cannot be edited; delete it and add a new one."]})
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
