"""Tenancy: one tenant never reaches another's rows, nor one space another's — row-level security and the runtime
role, per-space encryption and keyed vectors, API keys and the shortcuts that remember them, rate limits and the
settings service."""
