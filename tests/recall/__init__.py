"""Recall: what an agent gets back for a question — strict, within its room, by attribute, across languages, about the
customer or someone else, with provenance, in a prompt block a memory cannot forge (memory/recall)."""
