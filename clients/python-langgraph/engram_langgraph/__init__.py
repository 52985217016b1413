"""LangGraph's ``BaseStore`` backed by Engram: namespaces are Engram spaces (see ``EngramStore``)."""

from engram_langgraph.store import SPACE, EngramStore

__all__ = ["SPACE", "EngramStore"]
