"""What a space holds and how it got there, as an operator investigates it: which memories match the filters,
which turn created each, what one turn did, a session's transcript. Reads only, in the request's tenant scope.

Memory text and topics are encrypted, so text search decrypts the space's current memories and
matches in Python (a space holds at most a few thousand current memories). Only roles that read
the text may search it: a text filter is an oracle for content otherwise.
"""

from __future__ import annotations

import dataclasses
import datetime
import json

from memory.forgetting import confirmation_on_record, reply_language
from memory.models import DeletionAudit, Memory, Message, Session, Turn
from memory.store import memories_of


@dataclasses.dataclass(frozen=True)
class MemoryFilter:
    kind: str | None = None
    topic: str | None = None
    text: str | None = None
    since: datetime.datetime | None = None
    until: datetime.datetime | None = None


def matching_memories(space, wanted: MemoryFilter) -> list[Memory]:
    """The space's current memories that match, most recently updated first.

    Raises ``ValidationError`` for a kind that does not exist (from the shared selector).
    """
    rows = memories_of(space, kind=wanted.kind, topic=wanted.topic).prefetch_related("source_message")
    if wanted.since:
        rows = rows.filter(updated_at__gte=wanted.since)
    if wanted.until:
        rows = rows.filter(updated_at__lt=wanted.until)
    if not wanted.text:
        return list(rows)
    needle = wanted.text.casefold()
    return [m for m in rows if needle in m.content.casefold() or needle in (m.topic or "").casefold()]


def turns_that_created(space, memory_ids) -> dict:
    """memory id -> the turn that created it (provenance), for the memories given."""
    ids = list(memory_ids)
    if not ids:
        return {}
    found = {}
    for turn in Turn.objects.filter(space=space, created_ids__overlap=ids).order_by("created_at"):
        for memory_id in turn.created_ids:
            found.setdefault(memory_id, turn)
    return found


def forgotten_by(turns) -> dict:
    """turn id -> the deletion audit rows that turn caused (a forget request, a correction)."""
    by_turn: dict = {}
    rows = DeletionAudit.objects.filter(turn_id__in=[t.id for t in turns]).order_by("occurred_at")
    for row in rows:
        by_turn.setdefault(row.turn_id, []).append(row)
    return by_turn


def turn_account(turn: Turn) -> dict:
    """What one turn did: its messages, what it created, merged, superseded, rejected (with reasons)
    and forgot. Text included; the view drops it for roles that do not read memory text."""
    memories = {m.id: m for m in Memory.objects.filter(pk__in=[*turn.created_ids, *turn.merged_ids,
                                                                 *turn.superseded_ids])}  # fmt: skip
    messages = list(Message.objects.filter(pk__in=turn.message_ids).order_by("sent_at"))
    return {
        "turn": turn,
        "messages": messages,
        "created": [_brief(i, memories) for i in turn.created_ids],
        "merged": [_brief(i, memories) for i in turn.merged_ids],
        "superseded": [_brief(i, memories) for i in turn.superseded_ids],
        "rejected": json.loads(turn.rejected) if turn.rejected else [],
        "forgotten": list(DeletionAudit.objects.filter(turn_id=turn.id).order_by("occurred_at")),
        "forget_reply": _forget_reply(turn),
    }


def _forget_reply(turn: Turn) -> dict | None:
    """What the customer was told about forgetting, with memory ids where it quoted their text: the
    text is deleted, so every role sees the same sentence."""
    if not turn.forget_reply:
        return None
    return {
        "language": reply_language(turn.forget_reply.get("language", "en")),
        "text": confirmation_on_record(turn.forget_reply),
    }


def _brief(memory_id, memories: dict) -> dict:
    memory = memories.get(memory_id)
    if memory is None:  # deleted since, or the version was removed with its memory
        return {"id": memory_id, "kind": "", "content": None, "gone": True}
    return {"id": memory_id, "kind": memory.kind, "content": memory.content, "gone": False}


def transcript_of(*, space, session_external_id) -> tuple:
    """(the session, its messages in order), or (None, []) when the space has no such session."""
    session = Session.objects.filter(space=space, external_id=session_external_id).first()
    if session is None:
        return None, []
    return session, list(Message.objects.filter(session=session).order_by("sent_at", "created_at"))
