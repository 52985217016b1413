"""The ground floor of ``memory/``: the space lock every writer and deleter takes first (``lock``) and the reads
every capability shares (``reads``). It imports no other capability of ``memory/`` (an import-linter contract).
The doors (``api/``, ``console/``, ``mcp_server/``) import this module, not the ones inside it."""

from memory.store.reads import find_memory, history_of, memories_of

__all__ = ["find_memory", "history_of", "memories_of"]
