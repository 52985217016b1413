"""A turn as the agent takes it: the one sequence the API, the benchmarks and ``make eval`` all run.

Store the customer's message and queue the turn (``intake``); check the new message for a forget
request or correction before anything is recalled (so a forgotten memory is not handed back in the
same turn); recall for the message at turn start; and, when the caller waits, run the pipeline
inline. A repeated message (same digest) is a retry: it is neither checked for forgetting again nor
processed twice.
"""

from __future__ import annotations

import dataclasses

from memory.forgetting import conversational
from memory.forgetting.deletion import DeletionContext
from memory.forgetting.judge import read_intent
from memory.models import DeletionAudit, Turn
from memory.provenance import attach_sources
from memory.recall import search
from memory.text.analysis import languages_remembered_in_space
from memory.text.embeddings import EmbeddingUnavailable
from memory.text.vectors import vectors_by_text
from memory.turns import intake, pipeline


@dataclasses.dataclass
class TakenTurn:
    receipt: intake.TurnReceipt
    # The turn after the inline attempt, when the caller waited.
    turn: Turn
    forgot: conversational.ForgetOutcome | None = None
    recalled: search.RecallResult | None = None


@languages_remembered_in_space
def take_turn(
    *,
    space,
    message: str,
    actor: str,
    wait: bool = False,
    recall: bool = True,
    sources: bool = False,
    session_id: str | None = None,
    message_id: str = "",
    channel: str = "",
    at=None,
    max_chars: int | None = None,
) -> TakenTurn:
    intake.check_content(message)  # before anything is embedded
    intent = read_intent(message)
    matches_memories = conversational.needs_candidates(intent)
    # The message is embedded once, together with what the forget check matches (its targets are the
    # message itself unless it names what to forget), and that vector serves the check, the recall and,
    # stored with the message in the same insert, the pipeline (the worker need not embed it again).
    # Embedded before the message is stored, so whether it is a replay is not known yet: a replayed
    # forget request embeds its targets for nothing (rare), every new turn saves a round trip.
    texts = [*([message] if recall else []), *(intent.targets if matches_memories else [])]
    try:
        embedded = vectors_by_text(space.id, texts)
    except EmbeddingUnavailable:
        embedded = None
    receipt = intake.receive_turn(
        space=space,
        message=message,
        session_id=session_id,
        message_id=message_id,
        channel=channel,
        at=at,
        vector=embedded.get(message) if embedded else None,
    )
    # A replay is neither checked for forgetting again nor processed twice.
    intent = intent if receipt.is_new else None
    forgot = _forget_in_turn(receipt, message, actor, intent, embedded)
    recalled = None
    if recall:
        # Without a vector (the engine is down) recall tries once more itself and, failing, searches by keyword.
        vector = embedded.get(message) if embedded else None
        recalled = search.recall(
            space=space, query=message, current_session=receipt.session, query_vector=vector, max_chars=max_chars
        )
        if sources:
            attach_sources(space, recalled.hits)
    turn = _attempted(receipt.turn, wait, known_vectors=embedded)
    return TakenTurn(receipt=receipt, turn=turn, forgot=forgot, recalled=recalled)


def take_transcript(
    *, space, messages: list[intake.IncomingMessage], session_id: str | None = None, wait: bool = False
) -> TakenTurn:
    """A whole transcript at once (after the fact): stored and queued; nothing recalled or forgotten."""
    receipt = intake.receive_transcript(space=space, messages=messages, session_id=session_id)
    return TakenTurn(receipt=receipt, turn=_attempted(receipt.turn, wait))


def _attempted(turn: Turn, wait: bool, known_vectors: dict | None = None) -> Turn:
    if wait and turn.status == Turn.Status.QUEUED:
        return pipeline.attempt_turn(turn, known_vectors=known_vectors)
    return turn


def _forget_in_turn(receipt: intake.TurnReceipt, message: str, actor: str, intent, embedded: dict | None):
    """Check a new customer message for a forget request or correction, before anything is recalled.
    ``embedded`` is None when the embedding engine failed for this turn."""
    if not receipt.is_new:
        return None
    try:
        if embedded is None:
            raise EmbeddingUnavailable("the turn's message could not be embedded")
        outcome = conversational.forget(
            space=receipt.turn.space,
            utterance=message,
            context=DeletionContext(cause=DeletionAudit.Cause.CUSTOMER_REQUEST, actor=actor, turn_id=receipt.turn.id),
            intent=intent,
            vectors=embedded,
        )
    except EmbeddingUnavailable:
        # Nothing can be matched right now; an explicit request is still never mined as a fact.
        if intent.kind == "explicit":
            intake.mark_forget_handled(receipt.turn)
        return None
    intake.record_forget_outcome(receipt.turn, outcome)
    return outcome
