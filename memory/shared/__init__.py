"""Shared agent spaces: episodes and escalations stored with duplicate review, recalled and matched. The doors
(``api/``, ``console/``, ``mcp_server/``) import this module, not the ones inside it."""

from memory.shared.agents import affected_agents
from memory.shared.matching import (
    ESCALATION_ARGUMENT,
    WrongSpaceKind,
    match_escalation,
    recall_episodes,
    require_shared,
)
from memory.shared.search_keys import UploadedFile
from memory.shared.storing import (
    ANY_AGENT,
    MAX_DUPLICATES_SHOWN,
    ConflictingFeedback,
    DuplicateChoice,
    DuplicateFound,
    NewCase,
    StoreResult,
    delete_episode,
    describe,
    describe_match,
    find_duplicates,
    store_case,
    update_feedback,
)

__all__ = [
    "ANY_AGENT",
    "ESCALATION_ARGUMENT",
    "MAX_DUPLICATES_SHOWN",
    "ConflictingFeedback",
    "DuplicateChoice",
    "DuplicateFound",
    "NewCase",
    "StoreResult",
    "UploadedFile",
    "WrongSpaceKind",
    "affected_agents",
    "delete_episode",
    "describe",
    "describe_match",
    "find_duplicates",
    "match_escalation",
    "recall_episodes",
    "require_shared",
    "store_case",
    "update_feedback",
]
