"""Receiving turns: store the customer's message (idempotently) and queue it for the pipeline.

Everything a request writes happens in its one transaction, so an error leaves nothing behind.
A replayed message (same content in the same session, or the same caller message id) writes
nothing new and returns the turn it created the first time.
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.utils import timezone

from core.errors import DomainError, PayloadTooLarge
from memory.forgetting import conversational
from memory.llm import budget
from memory.models import Message, Session, Turn
from memory.telemetry import traced
from memory.text.digests import digest, message_digest
from memory.text.vectors import engine_name
from memory.turns.pipeline import enqueue_turn
from tenants.space_settings import effective_settings

MAX_MESSAGE_BYTES = 32 * 1024
MAX_TRANSCRIPT_MESSAGES = 500


@dataclasses.dataclass(frozen=True)
class IncomingMessage:
    role: str
    content: str
    message_id: str = ""
    sent_at: datetime.datetime | None = None
    # The turn request's vector of ``content`` for this space, if it embedded it (kept for the pipeline).
    vector: np.ndarray | None = None


@dataclasses.dataclass
class TurnReceipt:
    turn: Turn
    session: Session
    is_new: bool


class TurnNotFound(DomainError):
    status_code = 404
    code = "not_found"


def check_content(content: str, *, field: str = "message") -> None:
    if not isinstance(content, str) or not content.strip():
        raise ValidationError({field: ["Must be non-empty text."]})
    if len(content.encode("utf-8")) > MAX_MESSAGE_BYTES:
        raise PayloadTooLarge(
            f"A message may hold at most {MAX_MESSAGE_BYTES} bytes.",
            details={"field": field, "limit_bytes": MAX_MESSAGE_BYTES},
        )
    if "\x00" in content:
        raise ValidationError({field: ["Must not contain NUL characters."]})


def derived_session_id(space, first_message: str) -> str:
    """The same first message in the same space always maps to the same session."""
    return "derived-" + digest(space.id, "session", first_message, length=32)


def session_for(space, *, session_id: str | None, first_message: str, channel: str, started_at) -> Session:
    external_id = session_id or derived_session_id(space, first_message)
    session, created = Session.objects.get_or_create(
        space=space,
        external_id=external_id,
        defaults={"tenant_id": space.tenant_id, "channel": channel or "", "started_at": started_at},
    )
    if not created and channel and not session.channel:
        session.channel = channel
        session.save(update_fields=["channel"])
    return session


def _message_key(space, session: Session, incoming: IncomingMessage) -> str:
    return message_digest(
        space.id,
        session_external_id=session.external_id,
        role=incoming.role,
        content=incoming.content,
        message_id=incoming.message_id,
    )


def store_message(space, session: Session, incoming: IncomingMessage, *, answers_turn_id=None) -> tuple[Message, bool]:
    """The stored message and whether it is new. A replay (same digest) is the row stored first, as it was: a
    reply that says again what the agent said to another turn of the session stays that turn's answer."""
    key = _message_key(space, session, incoming)
    existing = Message.objects.filter(space=space, digest=key).first()
    if existing is not None:
        return existing, False
    message = Message.objects.create(
        tenant_id=space.tenant_id,
        space=space,
        session=session,
        digest=key,
        role=incoming.role,
        content=incoming.content,
        caller_message_id=incoming.message_id,
        answers_turn_id=answers_turn_id if incoming.role != Message.Role.CUSTOMER else None,
        sent_at=incoming.sent_at or timezone.now(),
        pending_embedding=incoming.vector,
        pending_embedding_model=engine_name() if incoming.vector is not None else "",
    )
    return message, True


def _writes():
    """The intake's writes join the caller's transaction (the request's) without a savepoint of their own:
    an error in them fails the whole request, which then leaves nothing behind either, and the savepoint
    cost two round trips on every turn. Input is checked before, so a rejected message breaks nothing."""
    return transaction.atomic(savepoint=False)


@traced("engram.turn.intake")
def receive_turn(
    *,
    space,
    message: str,
    session_id: str | None = None,
    message_id: str = "",
    channel: str = "",
    at=None,
    vector: np.ndarray | None = None,
) -> TurnReceipt:
    """``vector``: the message's vector for this space, when the caller embedded it; stored with the
    message (in the same insert) until the pipeline has used it."""
    check_content(message)
    budget.start_request_budget()
    with _writes():
        incoming = IncomingMessage(
            role=Message.Role.CUSTOMER,
            content=message,
            message_id=message_id,
            sent_at=at or timezone.now(),
            vector=vector,
        )
        return _receive_turn(space, incoming, session_id=session_id, channel=channel)


def _receive_turn(space, incoming: IncomingMessage, *, session_id, channel: str) -> TurnReceipt:
    session = session_for(
        space, session_id=session_id, first_message=incoming.content, channel=channel, started_at=incoming.sent_at
    )
    stored, is_new = store_message(space, session, incoming)
    if not is_new:
        # A replay, also of a message forgotten since: forgetting drops its text and keeps the row, so the
        # replay is found here and answered with its turn, and nothing it said is stored again.
        turn = Turn.objects.filter(space=space, source_digest=stored.digest).first()
        if turn is not None:
            return TurnReceipt(turn=turn, session=stored.session, is_new=False)
    turn = Turn.objects.create(
        tenant_id=space.tenant_id, space=space, session=session, source_digest=stored.digest, message_ids=[stored.id]
    )
    enqueue_turn(turn)
    return TurnReceipt(turn=turn, session=session, is_new=True)


@traced("engram.turn.intake")
@transaction.atomic
def receive_transcript(*, space, messages: list[IncomingMessage], session_id: str | None = None) -> TurnReceipt:
    if not messages:
        raise ValidationError({"messages": ["Give at least one message."]})
    if len(messages) > MAX_TRANSCRIPT_MESSAGES:
        raise PayloadTooLarge(f"A transcript may hold at most {MAX_TRANSCRIPT_MESSAGES} messages.")
    budget.start_request_budget()
    for index, incoming in enumerate(messages):
        check_content(incoming.content, field=f"messages[{index}].content")
        if incoming.role not in Message.Role.values:
            raise ValidationError({f"messages[{index}].role": [f"Choose from {', '.join(Message.Role.values)}."]})
    first_at = messages[0].sent_at or timezone.now()
    session = session_for(
        space, session_id=session_id, first_message=messages[0].content, channel="", started_at=first_at
    )
    # Messages without a time keep their order: a microsecond apart after the first.
    timed = [
        dataclasses.replace(incoming, sent_at=incoming.sent_at or first_at + datetime.timedelta(microseconds=index))
        for index, incoming in enumerate(messages)
    ]
    source = digest(space.id, "transcript", *[_message_key(space, session, m) for m in timed])
    turn = Turn.objects.filter(space=space, source_digest=source).first()
    if turn is not None:
        return TurnReceipt(turn=turn, session=session, is_new=False)  # a replay: nothing stored again
    # The agent's (system's, tool's) lines answer this turn: forgetting what it taught drops their text too.
    turn_id = uuid.uuid4()
    stored = [store_message(space, session, incoming, answers_turn_id=turn_id)[0] for incoming in timed]
    turn = Turn.objects.create(
        id=turn_id,
        tenant_id=space.tenant_id,
        space=space,
        session=session,
        source_digest=source,
        message_ids=[m.id for m in stored if m.role == Message.Role.CUSTOMER],
    )
    if not effective_settings(space)["keep_transcripts"]:
        # The other lines are context only, never read by the pipeline: without transcript retention only their
        # digest is kept, as of a reply (the customer's lose their text once the pipeline has read them).
        context = [m.id for m in stored if m.role != Message.Role.CUSTOMER and m.content is not None]
        Message.objects.filter(pk__in=context).update(**Message.TEXT_DROPPED)
    enqueue_turn(turn)
    return TurnReceipt(turn=turn, session=session, is_new=True)


@transaction.atomic
def store_reply(*, space, turn: Turn, content: str, keep_transcripts: bool) -> Message:
    """Store the agent's reply in the turn's session, as the turn's answer: forgetting a memory the turn's
    message taught drops the reply's text with the message's (``memory.forgetting.deletion``), for a reply
    may quote it. It is context only: never extracted from."""
    check_content(content, field="content")
    # A reply to a forget request says the confirmation back, and the confirmation quotes what was deleted: its
    # text is not kept either, or the transcript would hold the very words the customer had forgotten. Nor is
    # the text of a reply to a message whose text is gone (forgotten since, or past retention): it came late.
    keep = keep_transcripts and not turn.forget_handled and not _text_dropped_from(turn)
    message, _ = store_message(
        space,
        turn.session,
        IncomingMessage(role=Message.Role.AGENT, content=content, sent_at=timezone.now()),
        answers_turn_id=turn.id,
    )
    if not keep and message.content is not None:
        Message.objects.filter(pk=message.pk).update(content=None)
    return message


def _text_dropped_from(turn: Turn) -> bool:
    """Whether a customer line of the turn has lost its text. Its rows are locked until the reply is stored,
    so a reply cannot slip past a deletion running now: the deletion blanks these lines before it looks for
    their replies, so either it waits for this reply and then finds it, or this waits for the deletion and
    sees the lines blanked. (In id order: two replies to one transcript's turn lock its lines in the same order.)"""
    lines = (
        Message.objects.select_for_update(no_key=True)
        .filter(space_id=turn.space_id, pk__in=turn.message_ids)
        .order_by("pk")
    )
    dropped = ExpressionWrapper(Q(content__isnull=True), output_field=BooleanField())
    return any(lines.annotate(dropped=dropped).values_list("dropped", flat=True))


def find_turn(*, space=None, turn_id) -> Turn:
    queryset = Turn.objects.select_related("session", "space__tenant")
    if space is not None:
        queryset = queryset.filter(space=space)
    turn = queryset.filter(pk=turn_id).first()
    if turn is None:
        raise TurnNotFound("No such turn.")
    return turn


def mark_forget_handled(turn: Turn) -> None:
    """The message asked to forget: never mine it, and do not keep its text."""
    turn.forget_handled = True
    turn.save(update_fields=["forget_handled", "updated_at"])
    _drop_message_text(turn)


def _drop_message_text(turn: Turn) -> None:
    Message.objects.filter(pk__in=turn.message_ids).update(**Message.TEXT_DROPPED)


def record_forget_outcome(turn: Turn, outcome) -> None:
    """What the forget check found, in one write: whether the message was about forgetting (then it is
    never mined and its text is not kept) and what the customer was told (``conversational.reply_record``,
    without the deleted text)."""
    fields = []
    if outcome.handled:
        turn.forget_handled = True
        fields.append("forget_handled")
        _drop_message_text(turn)
    record = conversational.reply_record(outcome)
    if record is not None:
        turn.forget_reply = record
        fields.append("forget_reply")
    if fields:
        turn.save(update_fields=[*fields, "updated_at"])
