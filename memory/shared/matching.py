"""Episodic and escalation memory in shared spaces, the read side: find the stored cases like a request.

Storing a case (and the duplicate review that goes with it) is ``memory.shared.storing``.

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

import numpy as np
from django.core.exceptions import ValidationError
from pgvector.django import CosineDistance

from core.errors import DomainError
from memory.models import Episode, EpisodeKey
from memory.shared.agents import note_agent
from memory.shared.search_keys import key_for
from memory.text.analysis import search_tokens
from memory.text.digests import keyword_digests
from memory.text.vectors import embed_for_space
from tenants.input_rules import ARGUMENT_RULE
from tenants.models import Space
from tenants.space_settings import ARGUMENT_PATTERN, MAX_ARGUMENTS, effective_settings

KEYWORD_SHARE = 0.25
CANDIDATES_PER_ARGUMENT = 200
ESCALATION_ARGUMENT = "input"


class WrongSpaceKind(DomainError):
    code = "wrong_space_kind"


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
            raise ValidationError({"inputs": [f"Argument {argument!r}: use {ARGUMENT_RULE}"]})
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
    # The joined case names the tenant too, so a distributed PostgreSQL reads one shard of it (decision 0030).
    keys = EpisodeKey.objects.filter(space=space, episode__kind=kind, episode__tenant_id=space.tenant_id).exclude(
        episode_id__in=list(exclude_ids)
    )
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


# --- duplicates -------------------------------------------------------------------------------


def duplicates_of(space: Space, *, kind: str, prepared: PreparedInputs, exclude_ids=()) -> list[Match]:
    """Stored cases of ``kind`` whose inputs, all arguments weighted equally, are near-identical."""
    settings = effective_settings(space)
    weights = {a: 1.0 for a in prepared.keys}
    matches = find_matches(
        space, kind=kind, prepared=prepared, weights=weights, hybrid=settings["episode_hybrid"],
        exclude_ids=exclude_ids,
    )  # fmt: skip
    threshold = settings["duplicate_min_score"]
    return [m for m in matches if m.score >= threshold and set(m.episode.search_keys_dict) == set(prepared.keys)]
