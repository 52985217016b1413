"""Sealed export and import of a space (memory/transfer)."""
