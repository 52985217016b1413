"""De-duplication and edits: a restatement merges, a changed value supersedes (history kept), an operator's edit
and restore. The doors (``api/``, ``console/``, ``mcp_server/``) import this module, not the ones inside it."""

from memory.dedup.edits import MAX_CONTENT_CHARS, MAX_TOPIC_CHARS, edit_memory, restore_memory
from memory.dedup.merge_rule import is_restatement
from memory.dedup.pair_marks import mark as mark_pair
from memory.dedup.pair_marks import report as pair_mark_report
from memory.dedup.pair_marks import unmarked_candidates

__all__ = [
    "MAX_CONTENT_CHARS",
    "MAX_TOPIC_CHARS",
    "edit_memory",
    "is_restatement",
    "mark_pair",
    "pair_mark_report",
    "restore_memory",
    "unmarked_candidates",
]
