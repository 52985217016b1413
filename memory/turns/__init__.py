"""A turn: the customer's message stored and queued, the one sequence the API runs (intake, forget check, recall,
inline attempt), the worker's pipeline and the turn's result. The doors (``api/``, ``console/``, ``mcp_server/``)
import this module, not the ones inside it."""

from memory.turns.intake import IncomingMessage, TurnNotFound, find_turn, store_reply
from memory.turns.pipeline import requeue_failed
from memory.turns.results import turn_result
from memory.turns.sequence import TakenTurn, take_transcript, take_turn

__all__ = [
    "IncomingMessage",
    "TurnNotFound",
    "TakenTurn",
    "find_turn",
    "requeue_failed",
    "store_reply",
    "take_transcript",
    "take_turn",
    "turn_result",
]
