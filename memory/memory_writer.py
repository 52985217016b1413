"""De-duplicate and write a turn's grounded entries, under a per-space lock.

- topics merge by exact (normalised) topic name;
- facts and instructions merge into the nearest active memory of the same kind within the
  space's dedup distance; failing that, an active one with the same topic key is superseded
  (kept as history, ``superseded_by`` set). A near neighbour whose values differ ("May" vs
  "June", "four" vs "six") is superseded rather than merged, so the old value stays in history;
- events accumulate: only a near-identical restatement in the same session merges;
- tasks belong to their session and merge only within it.
A merge updates the row: newer content and embedding, importance = the higher, mention count + 1,
latest session and message.
"""

from __future__ import annotations

import dataclasses
import uuid

from django.db import connection, transaction
from pgvector.django import CosineDistance

from memory.digests import keyword_digests, topic_digest
from memory.grounding import Grounded
from memory.merge_rule import is_restatement, values_conflict
from memory.models import Memory, Message, Session
from memory.text_analysis import search_tokens

EVENT_RESTATEMENT_DISTANCE = 0.03


@dataclasses.dataclass
class WriteOutcome:
    created: list[uuid.UUID] = dataclasses.field(default_factory=list)
    merged: list[uuid.UUID] = dataclasses.field(default_factory=list)
    superseded: list[uuid.UUID] = dataclasses.field(default_factory=list)


def lock_space(space_id) -> None:
    """Serialise writers of one space until the transaction ends.

    Without it two concurrent turns carrying the same fact would both see no neighbour and both
    insert it.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"engram-space:{space_id}"])


def index_digests(space_id, entry) -> list[str]:
    tokens = search_tokens(entry.content) | {k.lower() for k in entry.keywords if k}
    if entry.topic:
        tokens |= search_tokens(entry.topic) | {entry.topic.lower()}
    return keyword_digests(space_id, tokens)


class MemoryWriter:
    def __init__(self, *, space, settings: dict, session: Session, message: Message):
        self.space = space
        self.dedup_distance = settings["dedup_distance"]
        self.requires_same_terms = settings["dedup_requires_same_terms"]
        self.session = session
        self.message = message
        self.outcome = WriteOutcome()

    def active(self):
        return Memory.objects.filter(space=self.space, superseded_by__isnull=True)

    def nearest(self, queryset, vector):
        return queryset.annotate(distance=CosineDistance("embedding", vector)).order_by("distance").first()

    def write(self, grounded: Grounded) -> None:
        entry, vector = grounded.candidate, grounded.vector
        topic_key = topic_digest(self.space.id, entry.topic) if entry.topic else ""
        active = self.active()
        if entry.kind == "topic":
            existing = active.filter(kind="topic", topic_digest=topic_key).first() if topic_key else None
            return self.merge(existing, grounded, topic_key) if existing else self.create(grounded, topic_key)
        if entry.kind in ("fact", "instruction"):
            near = self.nearest(active.filter(kind=entry.kind), vector)
            if near is not None and near.distance <= self.dedup_distance:
                if values_conflict(near.content, entry.content):
                    return self.supersede(near, grounded, topic_key)
                if is_restatement(
                    near.content,
                    entry.content,
                    near.distance,
                    dedup_distance=self.dedup_distance,
                    requires_same_terms=self.requires_same_terms,
                ):
                    return self.merge(near, grounded, topic_key)
            same_topic = (
                active.filter(kind=entry.kind, topic_digest=topic_key).order_by("-updated_at").first()
                if topic_key
                else None
            )
            if same_topic is not None:
                return self.supersede(same_topic, grounded, topic_key)
            return self.create(grounded, topic_key)
        if entry.kind == "event":
            near = self.nearest(active.filter(kind="event", source_session=self.session), vector)
            if near is not None and near.distance <= min(self.dedup_distance, EVENT_RESTATEMENT_DISTANCE):
                return self.merge(near, grounded, topic_key)
            return self.create(grounded, topic_key)
        if entry.kind == "task":
            near = self.nearest(active.filter(kind="task", task_session=self.session), vector)
            if near is not None and near.distance <= self.dedup_distance:
                return self.merge(near, grounded, topic_key)
            return self.create(grounded, topic_key)
        raise ValueError(f"unknown kind {entry.kind!r}")

    def create(self, grounded: Grounded, topic_key: str) -> Memory:
        entry = grounded.candidate
        memory = Memory.objects.create(
            tenant_id=self.space.tenant_id,
            space=self.space,
            kind=entry.kind,
            content=entry.content,
            topic=entry.topic or None,
            topic_digest=topic_key,
            keyword_digests=index_digests(self.space.id, entry),
            embedding=grounded.vector,
            importance=entry.importance,
            source_session=self.session,
            source_message=self.message,
            task_session=self.session if entry.kind == "task" else None,
            event_at=entry.event_at,
        )
        self.outcome.created.append(memory.id)
        return memory

    def merge(self, memory: Memory, grounded: Grounded, topic_key: str) -> Memory:
        entry = grounded.candidate
        memory.content = entry.content
        memory.embedding = grounded.vector
        memory.importance = max(memory.importance, entry.importance)
        memory.mention_count += 1
        memory.source_session = self.session
        memory.source_message = self.message
        if entry.topic:
            memory.topic, memory.topic_digest = entry.topic, topic_key
        memory.keyword_digests = index_digests(self.space.id, entry)
        if entry.event_at:
            memory.event_at = entry.event_at
        memory.save()
        if memory.id not in self.outcome.created and memory.id not in self.outcome.merged:
            self.outcome.merged.append(memory.id)
        return memory

    def supersede(self, old: Memory, grounded: Grounded, topic_key: str) -> Memory:
        new = self.create(grounded, topic_key)
        Memory.objects.filter(pk=old.pk).update(superseded_by=new)
        self.outcome.superseded.append(old.id)
        return new


def write_entries(
    *, space, settings: dict, session: Session, message: Message, grounded: list[Grounded]
) -> WriteOutcome:
    with transaction.atomic():
        lock_space(space.id)
        writer = MemoryWriter(space=space, settings=settings, session=session, message=message)
        for entry in grounded:
            writer.write(entry)
        return writer.outcome
