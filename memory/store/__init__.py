"""The ground floor of ``memory/``: the space lock every writer and deleter takes first (``lock``) and the reads
every capability shares (``reads``). It imports no other capability of ``memory/`` (an import-linter contract)."""
