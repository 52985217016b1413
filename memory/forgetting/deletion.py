"""Deleting memories for good, with an audit row each and nothing left behind.

In one transaction: the memory, every version it superseded (its history), their blind-index
entries (they live in the rows), with ``with_topic_tags`` the topic rows whose topic no row left
carries (a tag "555-0123" is the forgotten value itself), and — where the space keeps transcripts —
the text of every customer message they were derived from, merged mentions included, and of the agent's
lines answering those messages' turns (the empty rows stay, so a replayed message finds its turn). No
archive, no soft delete. What was deleted is read back to the caller before the rows go.

Under the space's write lock (``memory.store.lock``), taken before any row is read or touched — the
writer's order, space then rows, so the two queue instead of deadlocking. Without it a merge that
had read the memory just before it was forgotten saves it back: Django's save() of a row whose
UPDATE finds nothing inserts it again, and the customer's "forget that" is undone.
"""

from __future__ import annotations

import dataclasses

from django.db import transaction

from memory.forgetting.audit import record_deletion
from memory.models import Memory, Message, Turn
from memory.store.lock import lock_space
from memory.store.reads import history_of
from memory.telemetry import traced


@dataclasses.dataclass(frozen=True)
class Deleted:
    id: object
    kind: str
    content: str


@dataclasses.dataclass(frozen=True)
class DeletionContext:
    cause: str
    actor: str = ""
    turn_id: object = None
    limits: dict | None = None


@traced("delete_memory engram", operation="delete_memory", records=len)
@transaction.atomic
def delete_memories(
    *, space, memories: list[Memory], context: DeletionContext, distances=None, with_topic_tags: bool = False
) -> list[Deleted]:
    """The memories deleted, read back, then the topic tags that went with them (listed, kind "topic"); their
    history goes too, audited, not listed."""
    distances = distances or {}
    lock_space(space.id)
    # Read again under the lock: a merge that finished while we waited may have reworded a memory (its
    # audit digest and read-back must be of what is deleted now), and a concurrent forget may have
    # deleted it already (audited once, by that forget).
    current = Memory.objects.filter(space=space, pk__in=[m.pk for m in memories]).in_bulk()
    memories = list({m.pk: current[m.pk] for m in memories if m.pk in current}.values())
    deleted: list[Deleted] = []
    message_ids = set()
    rows_to_delete: dict = {}

    def audited(row: Memory, matched_distance: float | None) -> None:
        rows_to_delete[row.pk] = row
        record_deletion(
            memory=row,
            space=space,
            cause=context.cause,
            actor=context.actor,
            turn_id=context.turn_id,
            matched_distance=matched_distance,
            limits=context.limits,
        )

    for memory in memories:
        for row in history_of(memory):
            if row.pk in rows_to_delete:
                continue
            if row.source_message_id:
                message_ids.add(row.source_message_id)
            message_ids.update(row.earlier_source_message_ids)
            audited(row, distances.get(memory.pk) if row.pk == memory.pk else None)
            if row.pk == memory.pk:
                deleted.append(Deleted(id=row.pk, kind=row.kind, content=row.content))
    if with_topic_tags:
        for tag in _orphaned_topic_tags(space, rows_to_delete):
            # The match that took it: the nearest of the statements it tagged.
            tagged = [distances[m.pk] for m in memories if m.topic_digest == tag.topic_digest and m.pk in distances]
            audited(tag, min(tagged, default=None))
            deleted.append(Deleted(id=tag.pk, kind=tag.kind, content=tag.content))
    # A row left pointing at a deleted one lets go of it first (the key does not set NULL by itself: decision 0030).
    Memory.objects.filter(space=space, superseded_by__in=list(rows_to_delete)).exclude(
        pk__in=list(rows_to_delete)
    ).update(superseded_by=None)
    Memory.objects.filter(pk__in=list(rows_to_delete)).delete()
    # Whatever the space's setting now: lines kept while it was on still hold the words.
    if message_ids:
        _drop_transcript_text(space, message_ids)
    return deleted


def _drop_transcript_text(space, message_ids: set) -> None:
    """Blank the customer messages the memories came from, then the agent's lines answering their turns.

    The text goes; the row stays, as it does when transcripts are not kept: a client that replays the
    message (same message_id) or the reply is answered with what it stored then, not with the forgotten
    words stored again. Two statements, in this order: a reply being stored holds the customer lines of its
    turn locked (``intake.store_reply``), so the first waits for it and the second, a new snapshot, sees it.
    """
    sources = Message.objects.filter(space=space, pk__in=message_ids, role=Message.Role.CUSTOMER)
    sessions = set(sources.values_list("session_id", flat=True))
    sources.update(**Message.TEXT_DROPPED)
    # A turn lists its customer messages; one of a transcript answered by several lines is one turn.
    turns = Turn.objects.filter(space=space, session_id__in=sessions, message_ids__overlap=list(message_ids))
    Message.objects.filter(
        space=space, session_id__in=sessions, answers_turn_id__in=turns.values("id"), content__isnull=False
    ).exclude(role=Message.Role.CUSTOMER).update(**Message.TEXT_DROPPED)


def _orphaned_topic_tags(space, rows_to_delete: dict) -> list[Memory]:
    """The topic rows tagging only statements that are being deleted: no other statement keeps their topic."""
    digests = {r.topic_digest for r in rows_to_delete.values() if r.kind != "topic" and r.topic_digest}
    if not digests:
        return []
    still_carried = set(
        Memory.objects.filter(space=space, topic_digest__in=digests)
        .exclude(kind="topic")
        .exclude(pk__in=list(rows_to_delete))
        .values_list("topic_digest", flat=True)
    )
    return list(
        Memory.objects.filter(space=space, kind="topic", topic_digest__in=digests - still_carried)
        .exclude(pk__in=list(rows_to_delete))
        .defer("embedding")
    )


def delete_memory(*, memory: Memory, space, context: DeletionContext) -> list[Deleted]:
    return delete_memories(space=space, memories=[memory], context=context)
