"""Per-space settings with tenant-wide defaults: the registry (names, ranges, labels) and the effective
value for a space.

The registry is the one list of settings: the API validates against it and the console builds its
forms from it, so a Setting added here is settable through both with no other edit.

The defaults of the distances are calibrated on the labelled set in eval/data (`make eval`);
docs/quality.md shows the curves and says which operating point was chosen and why.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any

from django.core.exceptions import ValidationError

from tenants import input_rules

STRATEGIES = ("vector", "keyword", "topic", "messages")
# relevance_floor and relevance_admit: set by hand below the operating point `python -m eval.recall_gate train`
# reports, where the labelled recall set loses no hit (decision 0022; docs/quality.md "Relevance gate: training").


@dataclasses.dataclass(frozen=True)
class Setting:
    name: str
    kind: type
    default: Any
    minimum: float | None = None
    maximum: float | None = None
    help: str = ""
    # For object-valued settings: the function that validates and normalises the object.
    cleaner: Any = None
    # Settings that only matter in shared (agent) spaces.
    shared_only: bool = False
    # What an operator reads beside the control; without one, the name in words.
    label: str = ""
    # A distance tuned on a slider from the minimum to here (the useful part of its range).
    slider_max: float | None = None
    # For an object with a fixed set of keys (one number each, between minimum and maximum).
    keys: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()

    def clean(self, value):
        if self.cleaner is not None:
            return self.cleaner(self.name, value)
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ValidationError({self.name: ["Must be true or false."]})
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValidationError({self.name: [f"Must be a number between {self.minimum} and {self.maximum}."]})
        if self.kind is int and (isinstance(value, float) and not value.is_integer()):
            raise ValidationError({self.name: ["Must be a whole number."]})
        value = self.kind(value)
        if not (self.minimum <= value <= self.maximum):
            raise ValidationError({self.name: [f"Must be between {self.minimum} and {self.maximum}."]})
        return value


def _clean_weights(name: str, value) -> dict:
    if not isinstance(value, dict):
        raise ValidationError({name: [f"Must be an object with weights for {', '.join(STRATEGIES)}."]})
    cleaned = {}
    for strategy, weight in value.items():
        if strategy not in STRATEGIES:
            raise ValidationError({name: [f"Unknown strategy {strategy!r}; use {', '.join(STRATEGIES)}."]})
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= 5:
            raise ValidationError({name: [f"The weight of {strategy} must be a number between 0 and 5."]})
        cleaned[strategy] = float(weight)
    return cleaned


ARGUMENT_PATTERN = re.compile(input_rules.ARGUMENT_PATTERN)
AGENT_PATTERN = re.compile(input_rules.AGENT_PATTERN)
MAX_ARGUMENTS = 20


def clean_search_keys(name: str, value) -> dict:
    """``{argument: weight}``: which inputs count when matching episodes, and how much (0–10)."""
    if not isinstance(value, dict):
        raise ValidationError({name: ['Must be an object of argument name to weight, e.g. {"question": 2}.']})
    if len(value) > MAX_ARGUMENTS:
        raise ValidationError({name: [f"At most {MAX_ARGUMENTS} arguments."]})
    cleaned = {}
    for argument, weight in value.items():
        if not ARGUMENT_PATTERN.match(argument):
            raise ValidationError({name: [f"Argument {argument!r}: use {input_rules.ARGUMENT_RULE}"]})
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= 10:
            raise ValidationError({name: [f"The weight of {argument!r} must be a number between 0 and 10."]})
        cleaned[argument] = float(weight)
    if cleaned and not any(cleaned.values()):
        raise ValidationError({name: ["At least one argument needs a weight above 0."]})
    return cleaned


def clean_agent_search_keys(name: str, value) -> dict:
    """``{agent: {argument: weight}}``: an agent's own search keys, replacing the space's for it."""
    if not isinstance(value, dict):
        raise ValidationError({name: ["Must be an object of agent name to search keys."]})
    cleaned = {}
    for agent, keys in value.items():
        if not AGENT_PATTERN.match(agent):
            raise ValidationError({name: [f"Agent {agent!r}: use {input_rules.AGENT_RULE}"]})
        cleaned[agent] = clean_search_keys(f"{name}.{agent}", keys)
    return cleaned


SETTINGS = {
    s.name: s
    for s in [
        Setting(
            "dedup_distance",
            float,
            0.07,
            0.0,
            1.0,
            "Cosine distance under which two facts of one kind merge.",
            label="Dedup distance",
            slider_max=0.4,
        ),
        Setting(
            "dedup_requires_same_terms",
            bool,
            True,
            help="Merge only statements whose content terms match (needed with the bundled embedding model).",
            label="Merge only statements with the same terms",
        ),
        Setting(
            "recall_distance",
            float,
            0.08,
            0.0,
            1.0,
            "Cosine distance under which a memory is recalled on meaning alone.",
            label="Recall distance (meaning alone)",
            slider_max=0.4,
        ),
        Setting(
            "corroborated_recall_distance",
            float,
            0.18,
            0.0,
            1.0,
            "Up to this distance a memory is recalled only if a keyword or topic also matches, or it stands out.",
            label="Recall distance with a keyword or topic match",
            slider_max=0.4,
        ),
        Setting(
            "relevance_gate",
            bool,
            True,
            help="Decide which memories answer a query by the learned relevance gate (distance, shared words, "
            "the attribute asked about and the one a memory states); off, by the two recall distances alone.",
            label="Learned relevance gate",
        ),
        Setting(
            "relevance_floor",
            float,
            0.05,
            0.0,
            1.0,
            "With the gate on, the probability of answering the query that a memory within the recall distances "
            "still needs (higher returns less).",
            label="Relevance floor (gate)",
            slider_max=1.0,
        ),
        Setting(
            "relevance_admit",
            float,
            0.5,
            0.0,
            1.0,
            "With the gate on, the probability from which a memory outside the recall distances is recalled "
            "(a paraphrase of what it states; higher returns less).",
            label="Relevance that admits a paraphrase (gate)",
            slider_max=1.0,
        ),
        Setting(
            "forget_floor",
            float,
            0.06,
            0.0,
            1.0,
            "Cosine distance a memory must be under to be forgotten.",
            label="Forget floor",
            slider_max=0.4,
        ),
        Setting(
            "max_deletions_per_request",
            int,
            3,
            1,
            10,
            "Most memories one forget request may delete.",
            label="Most deletions per request",
        ),
        Setting("recall_limit", int, 8, 1, 50, "Most memories returned by recall.", label="Recall limit"),
        Setting(
            "max_entries_per_message",
            int,
            20,
            1,
            200,
            "Most entries one customer message may write (a transcript of many messages keeps what each one "
            "gave); the rest are listed on the turn as rejected, over the limit.",
            label="Most entries one customer message may write",
        ),
        Setting(
            "admit_rewrites",
            bool,
            True,
            help="Admit a model's faithful rewrites of what the customer said (the customer's name as subject, "
            "synonyms, a summary, a resolved date) in the languages grounding reads; off, an entry must repeat "
            "the customer's words almost word for word.",
            label="Admit rewritten entries",
        ),
        Setting(
            "hybrid",
            bool,
            True,
            help="Fuse keyword and topic matches with vector similarity.",
            label="Hybrid recall (keyword and topic beside vector)",
        ),
        Setting(
            "strategy_weights",
            dict,
            {"vector": 1.0, "keyword": 1.0, "topic": 1.0, "messages": 0.5},
            0.0,
            5.0,
            help="Weight of each recall strategy in rank fusion.",
            cleaner=_clean_weights,
            label="Strategy weights",
            keys=STRATEGIES,
        ),
        Setting(
            "prompt_token_budget",
            int,
            600,
            50,
            8000,
            "Most tokens in the prompt block.",
            label="Prompt token budget",
        ),
        Setting(
            "keep_transcripts",
            bool,
            False,
            help="Keep raw message text for transcript recall.",
            label="Keep transcripts",
        ),
        Setting(
            "episode_search_keys",
            dict,
            {},
            help="Which input arguments count when matching episodes, with weights; empty: every argument, weight 1.",
            cleaner=clean_search_keys,
            shared_only=True,
            label="Search keys: argument → weight (empty: every argument, weight 1)",
        ),
        Setting(
            "agent_search_keys",
            dict,
            {},
            help="Per agent, search keys that replace the space's for that agent.",
            cleaner=clean_agent_search_keys,
            shared_only=True,
            label="Per-agent search keys: agent → {argument → weight}",
        ),
        Setting(
            "episode_min_score",
            float,
            0.70,
            0.0,
            1.0,
            "Score an episode must reach to be returned as an example.",
            shared_only=True,
            label="Episode example score (at least)",
        ),
        Setting(
            "episode_examples",
            int,
            3,
            1,
            20,
            "Most episodes returned as examples.",
            shared_only=True,
            label="Examples returned",
        ),
        Setting(
            "episode_hybrid",
            bool,
            True,
            help="Score arguments by meaning and shared keywords (off: meaning only).",
            shared_only=True,
            label="Hybrid: meaning and shared keywords (off: meaning only)",
        ),
        Setting(
            "escalation_min_score",
            float,
            0.90,
            0.0,
            1.0,
            "Score the best past resolution must reach to be applied instead of escalating.",
            shared_only=True,
            label="Apply a past resolution at score",
        ),
        Setting(
            "duplicate_min_score",
            float,
            0.93,
            0.0,
            1.0,
            "Score at which a new episode or resolution counts as a near-duplicate of a stored one.",
            shared_only=True,
            label="Near-duplicate at score",
        ),
        # Retention (memory/forgetting/retention.py, enforced by the sweep); 0 keeps forever.
        Setting(
            "task_retention_days",
            int,
            30,
            0,
            3650,
            "Days a task lives after its last change (0: no limit).",
            label="Days a task lives after its last change, 0: no limit",
        ),
        Setting(
            "task_expires_with_session",
            bool,
            True,
            help="A task from a closed session expires (closed: ended, or idle for session_idle_hours).",
            label="A task expires with its session",
        ),
        Setting(
            "session_idle_hours",
            int,
            24,
            1,
            8760,
            "Hours without a message after which a session is closed.",
            label="Hours without a message that close a session",
        ),
        Setting(
            "event_retention_days",
            int,
            365,
            0,
            36500,
            "Days an event is kept after it happened (0: no limit).",
            label="Days an event is kept, 0: no limit",
        ),
        Setting(
            "transcript_retention_days",
            int,
            30,
            0,
            3650,
            "Days a kept transcript line's text lives (0: no limit).",
            label="Days a kept transcript line lives, 0: no limit",
        ),
    ]
}


# Settings renamed since they were first published: the old name is still read and accepted, as the new one
# (docs/api.md says why each was renamed).
RENAMED = {"max_entries_per_turn": "max_entries_per_message"}


def current_names(layer: dict) -> dict:
    """A settings layer with any old name read as its new one (a value under the new name wins).

    >>> current_names({"max_entries_per_turn": 5})
    {'max_entries_per_message': 5}
    """
    renamed = {RENAMED.get(name, name): value for name, value in layer.items() if name in RENAMED}
    return {**renamed, **{name: value for name, value in layer.items() if name not in RENAMED}}


def clean_overrides(overrides) -> dict:
    """Validate a partial settings object; a bad value is a ValidationError naming the field."""
    if not isinstance(overrides, dict):
        raise ValidationError({"settings": ["Must be an object."]})
    cleaned = {}
    for name, value in current_names(overrides).items():
        setting = SETTINGS.get(name)
        if setting is None:
            raise ValidationError({name: [f"Unknown setting; known settings: {', '.join(SETTINGS)}."]})
        cleaned[name] = setting.clean(value)
    return cleaned


def defaults() -> dict:
    # Copies: a caller that changes a nested value (the strategy weights) must not change the registry.
    return {name: copy.deepcopy(setting.default) for name, setting in SETTINGS.items()}


# The effective settings of recently used spaces, in this process. An entry is used only while the two
# layers it was merged from equal the ones the caller holds, and callers hold the layers read with the
# space row (every lookup joins the tenant): a save by any path in any process — an API PATCH, a console
# save, a bare UPDATE — is seen by the next request that reads the row, with no invalidation to miss.
_MERGED: dict[tuple, tuple[dict, dict, dict]] = {}
_MERGED_LIMIT = 10_000


def effective_settings(space) -> dict:
    """Built-in defaults, overridden by the tenant's defaults, overridden by the space's own settings."""
    space_layer = space.settings or {}
    tenant_layer = space.tenant.default_space_settings or {}
    key = (space.tenant_id, space.pk)
    entry = _MERGED.get(key)
    if entry is not None and entry[0] == space_layer and entry[1] == tenant_layer:
        return copy.deepcopy(entry[2])  # a caller that changes a value, nested or not, changes only its own
    merged = merge_layers(tenant_layer, space_layer)
    if space.pk is not None:
        if len(_MERGED) >= _MERGED_LIMIT:
            _MERGED.clear()
        # Copies, so that a layer changed in place later (before a save) cannot change what was cached.
        _MERGED[key] = (copy.deepcopy(space_layer), copy.deepcopy(tenant_layer), copy.deepcopy(merged))
    return merged


def merge_layers(*layers: dict) -> dict:
    """The built-in defaults with each layer on top (an object with fixed keys, like the strategy weights,
    merges key by key).

    >>> merge_layers({"recall_limit": 3}, {"strategy_weights": {"keyword": 2}})["strategy_weights"]["keyword"]
    2
    """
    merged = defaults()
    for layer in layers:
        for name, value in current_names(layer or {}).items():
            if name in SETTINGS and SETTINGS[name].keys:
                merged[name] = {**merged[name], **value}
            elif name in merged:
                merged[name] = value
    return merged
