"""Forgetting: a request in words judged and bounded, deletion under the space lock, the audit kept without the
content, erasure of a whole customer. The doors (``api/``, ``console/``, ``mcp_server/``) import this module, not
the ones inside it."""

from memory.forgetting.audit import deletions, was_deleted
from memory.forgetting.conversational import confirmation_on_record, forget, reply_language
from memory.forgetting.deletion import DeletionContext, delete_memory
from memory.forgetting.erasure import erase_space

__all__ = [
    "DeletionContext",
    "confirmation_on_record",
    "delete_memory",
    "deletions",
    "erase_space",
    "forget",
    "reply_language",
    "was_deleted",
]
