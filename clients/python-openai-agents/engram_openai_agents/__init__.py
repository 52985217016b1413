"""Engram memory for the OpenAI Agents SDK: recall at turn start, store at turn end (see ``EngramMemory``)."""

from engram_openai_agents.memory import EngramContext, EngramMemory, UnsentTurn, last_user_message, unreachable

__all__ = ["EngramContext", "EngramMemory", "UnsentTurn", "last_user_message", "unreachable"]
