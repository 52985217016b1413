"""De-duplicate and write a turn's grounded entries, under a per-space lock.

- topics merge by exact (normalised) topic name;
- facts and instructions merge into the nearest active memory of the same kind when the merge rule
  says they are one statement (``merge_rule.is_restatement``);
- a fact or event replaces an active fact or event as current only when it is a real update of it
  (same subject, same attribute, a different value: ``merge_rule.is_update``) or a correction that
  names the old value ("not a bakery, a coffee roaster"). Sharing a topic word is never enough;
- events accumulate: only a near-identical restatement in the same session merges;
- tasks belong to their session and merge only within it.
A merge counts the mention (mention count + 1, importance = the higher, latest session and message);
it rewrites the stored wording only when the new one says more, and then keeps the earlier wording
as a history row. One turn supersedes at most ``ENGRAM_TURN_MAX_SUPERSESSIONS`` memories: past that,
entries are written as new memories beside the old ones (``WriteOutcome.held_back``), so one
message — or one hostile model reply — cannot rewrite a customer's whole memory.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid

from django.conf import settings as django_settings
from django.db import transaction
from pgvector.django import CosineDistance

from memory.dedup.merge_rule import (
    is_correction,
    is_restatement,
    key_terms,
    learned_update,
    replaced_by_name,
    single_valued,
    supersession,
)
from memory.extraction.grounding import Grounded
from memory.models import Memory, Message, Session, Turn
from memory.store.lock import lock_space
from memory.text.analysis import normalise, search_tokens
from memory.text.digests import keyword_digests, topic_digest
from memory.understanding.readings import read, read_one

logger = logging.getLogger(__name__)
EVENT_RESTATEMENT_DISTANCE = 0.03
# How far (cosine) an older statement may be and still be the one a new statement updates. The rule
# itself (subject, attribute, value) decides; this only bounds how many rows it reads.
UPDATE_SEARCH_DISTANCE = 0.3
UPDATE_SEARCH_ROWS = 20
# Neighbours the learned reading compares a one-valued statement with (each may cost an embedding).
LEARNED_UPDATE_ROWS = 5
STATEMENT_KINDS = ("fact", "event")


@dataclasses.dataclass
class WriteOutcome:
    created: list[uuid.UUID] = dataclasses.field(default_factory=list)
    merged: list[uuid.UUID] = dataclasses.field(default_factory=list)
    superseded: list[uuid.UUID] = dataclasses.field(default_factory=list)
    # Entries that would have superseded a memory past the per-turn limit: written as new instead.
    held_back: list[uuid.UUID] = dataclasses.field(default_factory=list)


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
            if near is not None and is_restatement(
                near.content,
                entry.content,
                near.distance,
                dedup_distance=self.dedup_distance,
                requires_same_terms=self.requires_same_terms,
            ):
                return self.merge(near, grounded, topic_key)
            if entry.kind == "fact":
                return self.create_or_update(grounded, topic_key)
            return self.create(grounded, topic_key)
        if entry.kind == "event":
            near = self.nearest(active.filter(kind="event", source_session=self.session), vector)
            if near is not None and near.distance <= min(self.dedup_distance, EVENT_RESTATEMENT_DISTANCE):
                return self.merge(near, grounded, topic_key)
            return self.create_or_update(grounded, topic_key)
        if entry.kind == "task":
            near = self.nearest(active.filter(kind="task", task_session=self.session), vector)
            if near is not None and near.distance <= self.dedup_distance:
                return self.merge(near, grounded, topic_key)
            return self.create(grounded, topic_key)
        raise ValueError(f"unknown kind {entry.kind!r}")

    def updated_by(self, grounded: Grounded) -> tuple[Memory | None, str]:
        """The active fact or event this entry updates or corrects, and which of the two it is."""
        entry = grounded.candidate
        neighbours = (
            self.active()
            .filter(kind__in=STATEMENT_KINDS)
            .annotate(distance=CosineDistance("embedding", grounded.vector))
            .filter(distance__lte=UPDATE_SEARCH_DISTANCE)
            .order_by("distance")
            .defer("embedding")[:UPDATE_SEARCH_ROWS]  # only the text is compared: no vector to parse per row
        )
        # The correction's words must be the customer's: the quote grounding found in their message.
        source = entry.quote if normalise(entry.quote) in normalise(self.message.content or "") else entry.content
        neighbours = list(neighbours)
        for old in neighbours:
            reason = supersession(old.content, entry.content, source)
            if reason:
                return old, reason
        return self.learned_update(entry.content, source, neighbours)

    def learned_update(self, content: str, source: str, neighbours: list[Memory]) -> tuple[Memory | None, str]:
        """What the word tables miss ("Ich bin nach Nowosibirsk gezogen" after "ich wohne in Kasan"): the learned
        reading says both state the same one-valued attribute of the same subject with a different value. Read
        only when the new entry is such a statement, and only its nearest neighbours (one embedding batch)."""
        scope = str(self.space.id)
        new = read_one(content, cache_scope=scope) if neighbours else None
        if new is None or not (single_valued(new, content) or replaced_by_name(new)):
            return None, ""
        nearest = neighbours[:LEARNED_UPDATE_ROWS]
        for old, reading in zip(nearest, read([old.content for old in nearest], cache_scope=scope), strict=True):
            if learned_update(old.content, content, reading, new):
                return old, "correction" if is_correction(source) else "update"
        return None, ""

    def create_or_update(self, grounded: Grounded, topic_key: str) -> Memory:
        old, reason = self.updated_by(grounded)
        if old is None:
            return self.create(grounded, topic_key)
        if self.supersessions_this_turn() >= max_supersessions_per_turn():
            new = self.create(grounded, topic_key)
            self.outcome.held_back.append(new.id)
            logger.info("turn limit: %s written beside %s instead of superseding it", new.id, old.id)
            return new
        return self.supersede(old, grounded, topic_key, reason=reason)

    def supersessions_this_turn(self) -> int:
        """Memories already superseded by entries of this message's turn (all of its messages)."""
        turn = Turn.objects.filter(space=self.space, message_ids__contains=[self.message.id]).first()
        message_ids = turn.message_ids if turn else [self.message.id]
        return Memory.objects.filter(
            space=self.space,
            superseded_reason__in=("update", "correction"),
            superseded_by__source_message_id__in=message_ids,
        ).count()

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
        if says_more(memory.content, entry.content):
            keep_as_history(memory)
            memory.content = entry.content
            memory.embedding = grounded.vector
        memory.importance = max(memory.importance, entry.importance)
        if memory.id not in self.outcome.created and memory.id not in self.outcome.merged:
            # One message is one mention, however many times an extractor repeats the entry.
            memory.mention_count += 1
        earlier = memory.source_message_id
        if earlier and earlier != self.message.id and earlier not in memory.earlier_source_message_ids:
            memory.earlier_source_message_ids = [*memory.earlier_source_message_ids, earlier]
        memory.source_session = self.session
        memory.source_message = self.message
        if entry.topic:
            memory.topic, memory.topic_digest = entry.topic, topic_key
        memory.keyword_digests = sorted(set(memory.keyword_digests) | set(index_digests(self.space.id, entry)))
        if entry.event_at:
            memory.event_at = entry.event_at
        memory.save()
        if memory.id not in self.outcome.created and memory.id not in self.outcome.merged:
            self.outcome.merged.append(memory.id)
        return memory

    def supersede(self, old: Memory, grounded: Grounded, topic_key: str, *, reason: str) -> Memory:
        new = self.create(grounded, topic_key)
        Memory.objects.filter(pk=old.pk).update(superseded_by=new, superseded_reason=reason)
        self.outcome.superseded.append(old.id)
        return new


def max_supersessions_per_turn() -> int:
    return getattr(django_settings, "ENGRAM_TURN_MAX_SUPERSESSIONS", 3)


def says_more(old_content: str, new_content: str) -> bool:
    """The new wording of a restatement carries terms the stored one lacks ("… in Brno")."""
    return bool(key_terms(new_content) - key_terms(old_content))


def keep_as_history(memory: Memory, reason: str = "merged") -> Memory:
    """A copy of the row as it is now, superseded by it: a merge or an edit never loses the earlier wording."""
    return Memory.objects.create(
        tenant_id=memory.tenant_id,
        space_id=memory.space_id,
        kind=memory.kind,
        content=memory.content,
        topic=memory.topic,
        topic_digest=memory.topic_digest,
        embedding=memory.embedding,
        importance=memory.importance,
        mention_count=memory.mention_count,
        source_session_id=memory.source_session_id,
        source_message_id=memory.source_message_id,
        earlier_source_message_ids=list(memory.earlier_source_message_ids),
        task_session_id=memory.task_session_id,
        event_at=memory.event_at,
        superseded_by=memory,
        superseded_reason=reason,
    )


def write_entries(
    *, space, settings: dict, session: Session, message: Message, grounded: list[Grounded]
) -> WriteOutcome:
    # No savepoint of its own (it cost two round trips per message): an error here propagates, and the
    # caller's transaction (the pipeline's attempt) rolls back the whole write, as it did the savepoint.
    with transaction.atomic(savepoint=False):
        lock_space(space.id)
        writer = MemoryWriter(space=space, settings=settings, session=session, message=message)
        for entry in grounded:
            writer.write(entry)
        return writer.outcome
