"""Per-space settings with tenant-wide defaults: names, ranges and the effective value for a space.

The defaults of the distances are calibrated on the labelled set in eval/data (`make eval`);
docs/quality.md shows the curves and says which operating point was chosen and why.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from django.core.exceptions import ValidationError

STRATEGIES = ("vector", "keyword", "topic", "messages")


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


ARGUMENT_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
AGENT_PATTERN = re.compile(r"^[A-Za-z0-9 ._:@-]{1,100}$")
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
            raise ValidationError({name: [f"Argument {argument!r}: use 1 to 64 characters from A-Z a-z 0-9 _ . -"]})
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
            raise ValidationError(
                {name: [f"Agent {agent!r}: use 1 to 100 characters from A-Z a-z 0-9 space . _ : @ -"]}
            )
        cleaned[agent] = clean_search_keys(f"{name}.{agent}", keys)
    return cleaned


SETTINGS = {
    s.name: s
    for s in [
        Setting("dedup_distance", float, 0.07, 0.0, 1.0, "Cosine distance under which two facts of one kind merge."),
        Setting(
            "dedup_requires_same_terms",
            bool,
            True,
            help="Merge only statements whose content terms match (needed with the bundled embedding model).",
        ),
        Setting(
            "recall_distance",
            float,
            0.08,
            0.0,
            1.0,
            "Cosine distance under which a memory is recalled on meaning alone.",
        ),
        Setting(
            "corroborated_recall_distance",
            float,
            0.18,
            0.0,
            1.0,
            "Up to this distance a memory is recalled only if a keyword or topic also matches, or it stands out.",
        ),
        Setting("forget_floor", float, 0.06, 0.0, 1.0, "Cosine distance a memory must be under to be forgotten."),
        Setting("max_deletions_per_request", int, 3, 1, 10, "Most memories one forget request may delete."),
        Setting("recall_limit", int, 8, 1, 50, "Most memories returned by recall."),
        Setting(
            "max_entries_per_turn",
            int,
            20,
            1,
            200,
            "Most entries one turn may write; the rest are rejected and recorded on the turn.",
        ),
        Setting("hybrid", bool, True, help="Fuse keyword and topic matches with vector similarity."),
        Setting(
            "strategy_weights",
            dict,
            {"vector": 1.0, "keyword": 1.0, "topic": 1.0, "messages": 0.5},
            help="Weight of each recall strategy in rank fusion.",
            cleaner=_clean_weights,
        ),
        Setting("prompt_token_budget", int, 600, 50, 8000, "Most tokens in the prompt block."),
        Setting("keep_transcripts", bool, False, help="Keep raw message text for transcript recall."),
        Setting(
            "episode_search_keys",
            dict,
            {},
            help="Which input arguments count when matching episodes, with weights; empty: every argument, weight 1.",
            cleaner=clean_search_keys,
            shared_only=True,
        ),
        Setting(
            "agent_search_keys",
            dict,
            {},
            help="Per agent, search keys that replace the space's for that agent.",
            cleaner=clean_agent_search_keys,
            shared_only=True,
        ),
        Setting(
            "episode_min_score",
            float,
            0.70,
            0.0,
            1.0,
            "Score an episode must reach to be returned as an example.",
            shared_only=True,
        ),
        Setting("episode_examples", int, 3, 1, 20, "Most episodes returned as examples.", shared_only=True),
        Setting(
            "episode_hybrid",
            bool,
            True,
            help="Score arguments by meaning and shared keywords (off: meaning only).",
            shared_only=True,
        ),
        Setting(
            "escalation_min_score",
            float,
            0.90,
            0.0,
            1.0,
            "Score the best past resolution must reach to be applied instead of escalating.",
            shared_only=True,
        ),
        Setting(
            "duplicate_min_score",
            float,
            0.93,
            0.0,
            1.0,
            "Score at which a new episode or resolution counts as a near-duplicate of a stored one.",
            shared_only=True,
        ),
        # Retention (memory/forgetting/retention.py, enforced by the sweep); 0 keeps forever.
        Setting("task_retention_days", int, 30, 0, 3650, "Days a task lives after its last change (0: no limit)."),
        Setting(
            "task_expires_with_session",
            bool,
            True,
            help="A task from a closed session expires (closed: ended, or idle for session_idle_hours).",
        ),
        Setting("session_idle_hours", int, 24, 1, 8760, "Hours without a message after which a session is closed."),
        Setting("event_retention_days", int, 365, 0, 36500, "Days an event is kept after it happened (0: no limit)."),
        Setting(
            "transcript_retention_days", int, 30, 0, 3650, "Days a kept transcript line's text lives (0: no limit)."
        ),
    ]
}


def clean_overrides(overrides) -> dict:
    """Validate a partial settings object; a bad value is a ValidationError naming the field."""
    if not isinstance(overrides, dict):
        raise ValidationError({"settings": ["Must be an object."]})
    cleaned = {}
    for name, value in overrides.items():
        setting = SETTINGS.get(name)
        if setting is None:
            raise ValidationError({name: [f"Unknown setting; known settings: {', '.join(SETTINGS)}."]})
        cleaned[name] = setting.clean(value)
    return cleaned


def defaults() -> dict:
    return {name: setting.default for name, setting in SETTINGS.items()}


def effective_settings(space) -> dict:
    """Built-in defaults, overridden by the tenant's defaults, overridden by the space's own settings."""
    merged = defaults()
    for layer in (space.tenant.default_space_settings, space.settings):
        for name, value in (layer or {}).items():
            if name == "strategy_weights":
                merged[name] = {**merged[name], **value}
            elif name in merged:
                merged[name] = value
    return merged
