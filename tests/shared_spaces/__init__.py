"""Shared agent spaces: episodes and escalations, their duplicates, and which agent may change which case
(memory/shared)."""
