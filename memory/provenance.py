"""Where a memory came from: the session, the caller's message id, the turn and the time it was said.

Read in a fixed number of queries for a whole page, so listing memories stays one round of queries:

    sources = sources_for(memories)   # {memory id: {"session_id", "message_id", "turn_id", "said_at"}}
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db.models import Q

from memory.models import Memory, Message, Turn


def _source(*, message: Message | None, session_id: str | None, turn_id: uuid.UUID | None) -> dict:
    return {
        "session_id": message.session.external_id if message is not None else session_id,
        # The id the caller sent with the message (``message_id``); null when it sent none.
        "message_id": (message.caller_message_id or None) if message is not None else None,
        "turn_id": turn_id,
        "said_at": message.sent_at if message is not None else None,
    }


def sources_for(memories: Iterable[Memory]) -> dict[uuid.UUID, dict]:
    """Each memory's source. The turn is the one that created the row, else the one that stored its message;
    a memory whose message was erased (or that was imported) keeps what is still known."""
    memories = list(memories)
    if not memories:
        return {}
    memory_ids = [m.pk for m in memories]
    message_ids = [m.source_message_id for m in memories if m.source_message_id]
    messages = {m.pk: m for m in Message.objects.filter(pk__in=message_ids).select_related("session")}
    creating_turn: dict[uuid.UUID, uuid.UUID] = {}
    turn_of_message: dict[uuid.UUID, uuid.UUID] = {}
    made_or_said = Q(created_ids__overlap=memory_ids)
    if message_ids:
        made_or_said |= Q(message_ids__overlap=message_ids)
    turns = Turn.objects.filter(made_or_said, space_id__in={m.space_id for m in memories})
    for turn in turns.only("id", "created_ids", "message_ids"):
        for created in turn.created_ids:
            creating_turn.setdefault(created, turn.pk)
        for message_id in turn.message_ids:
            turn_of_message.setdefault(message_id, turn.pk)
    sessions = {m.pk: getattr(m.source_session, "external_id", None) for m in memories if m.source_session_id}
    return {
        m.pk: _source(
            message=messages.get(m.source_message_id),
            session_id=sessions.get(m.pk),
            turn_id=creating_turn.get(m.pk) or turn_of_message.get(m.source_message_id),
        )
        for m in memories
    }


def attach_sources(space, hits: list[dict]) -> None:
    """Add ``source`` to recall hits: memories as above, kept transcript lines from their own message."""
    ids = [h["id"] for h in hits]
    memories = Memory.objects.filter(space=space, pk__in=ids).prefetch_related("source_session")
    sources = sources_for(memories)
    lines = {m.pk: m for m in Message.objects.filter(space=space, pk__in=ids).select_related("session")}
    if lines:
        turns = Turn.objects.filter(space=space, message_ids__overlap=list(lines)).only("id", "message_ids")
        turn_of_line = {message_id: t.pk for t in turns for message_id in t.message_ids}
        for pk, line in lines.items():
            sources[pk] = _source(message=line, session_id=None, turn_id=turn_of_line.get(pk))
    for hit in hits:
        hit["source"] = sources.get(hit["id"])
