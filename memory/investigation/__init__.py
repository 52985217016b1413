"""Investigation: the read-only selectors an operator's questions need and any door may reuse — a tenant's
numbers, its spaces as a directory, a space's memories with the turns that made them, what one turn did, and
what a threshold would do on a space's own memories. The doors (``api/``, ``console/``, ``mcp_server/``)
import this module, not the ones inside it."""

from memory.investigation.directory import TURN_STATES, spaces_listed
from memory.investigation.overview import tenant_overview
from memory.investigation.space_page import (
    MemoryFilter,
    forgotten_by,
    matching_memories,
    transcript_of,
    turn_account,
    turns_that_created,
)
from memory.investigation.threshold_examples import examples_at
from memory.investigation.thresholds import pairwise_distances, space_vectors, threshold_preview

__all__ = [
    "TURN_STATES",
    "MemoryFilter",
    "examples_at",
    "forgotten_by",
    "matching_memories",
    "pairwise_distances",
    "space_vectors",
    "spaces_listed",
    "tenant_overview",
    "threshold_preview",
    "transcript_of",
    "turn_account",
    "turns_that_created",
]
