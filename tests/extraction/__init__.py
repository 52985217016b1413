"""What is stored from what the customer said: the engines, grounding against the customer's own sentences, the
learned reading of a sentence, and chat models that lie or answer nonsense (memory/extraction, memory/understanding,
memory/llm)."""
