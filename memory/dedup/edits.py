"""Operator edits of stored memories: restore an earlier version, change a memory's text, topic or importance.
The reads they share with the API and the console are ``memory.store.reads``."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from core.errors import Conflict
from memory.dedup.writer import index_digests, keep_as_history
from memory.extraction.engine import Candidate
from memory.models import Memory
from memory.store.lock import lock_space
from memory.store.reads import current_version_of, reread
from memory.text.digests import topic_digest
from memory.text.vectors import embed_for_space
from tenants.input_rules import unstorable_refusal


@transaction.atomic
def restore_memory(*, memory: Memory) -> Memory:
    """Make a superseded version current again; the version that replaced it becomes its history.

    Under the space's write lock, so a turn writing at the same moment cannot supersede the version
    being demoted and leave two current rows.
    """
    lock_space(memory.space_id)
    reread(memory)
    if memory.superseded_by_id is None:
        raise Conflict("This memory is already current; only an earlier version can be restored.")
    current = current_version_of(memory)
    Memory.objects.filter(pk=memory.pk).update(superseded_by=None, superseded_reason="")
    if current.pk != memory.pk:
        Memory.objects.filter(pk=current.pk).update(superseded_by=memory, superseded_reason="restored")
    memory.refresh_from_db()
    return memory


MAX_CONTENT_CHARS = 4000
MAX_TOPIC_CHARS = 200


@transaction.atomic
def edit_memory(*, memory: Memory, content: str | None = None, topic: str | None = None, importance=None) -> Memory:
    """An operator's edit, under the space's write lock; a changed wording or topic keeps the earlier
    version as a history row (reason ``edited``), as a merge does."""
    if content is not None and not content.strip():
        raise ValidationError({"content": ["Must be non-empty text."]})
    # The same bounds whichever way the edit comes in (the API's serializer states them too, for its schema).
    if content is not None and len(content.strip()) > MAX_CONTENT_CHARS:
        raise ValidationError({"content": [f"Ensure this field has no more than {MAX_CONTENT_CHARS} characters."]})
    if topic is not None and len(topic.strip()) > MAX_TOPIC_CHARS:
        raise ValidationError({"topic": [f"Ensure this field has no more than {MAX_TOPIC_CHARS} characters."]})
    for field, text in (("content", content), ("topic", topic)):
        refusal = unstorable_refusal(text or "", field)
        if refusal:
            raise ValidationError({field: [refusal]})
    new_content = content.strip() if content is not None else None
    # Embedded before the lock: a writer of this space never waits on a model call.
    vector = embed_for_space(memory.space_id, [new_content])[0] if new_content is not None else None
    lock_space(memory.space_id)
    reread(memory)
    new_topic = (topic.strip() or None) if topic is not None else memory.topic
    if (new_content is not None and new_content != memory.content) or new_topic != memory.topic:
        keep_as_history(memory, reason="edited")
    if new_content is not None:
        memory.content, memory.embedding = new_content, vector
    if topic is not None:
        memory.topic = new_topic
        memory.topic_digest = topic_digest(memory.space_id, topic) if new_topic else ""
    if importance is not None:
        memory.importance = importance
    entry = Candidate(
        kind=memory.kind, content=memory.content, topic=memory.topic or "", importance=0, keywords=[], quote=""
    )
    memory.keyword_digests = index_digests(memory.space_id, entry)
    memory.save()
    return memory
