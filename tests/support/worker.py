"""The worker's side of a turn: queue one without the API's ``wait``, run the worker on it, read what it stored;
an embedder that counts its calls."""

from __future__ import annotations

import datetime

from django.utils import timezone

from memory.models import Memory, Message, Turn
from memory.text.embeddings import stored_vector
from memory.turns.pipeline import run_turn
from memory.turns.sequence import take_turn
from tenants import scope

# A model's answer for "We run a fleet of four vans." (the scripted chat model's extraction).
FLEET = {
    "entries": [
        {"kind": "fact", "content": "We run a fleet of four vans.", "topic": "fleet", "importance": 0.7,
         "keywords": ["fleet"], "quote": "We run a fleet of four vans", "event_days_ago": None}
    ]
}  # fmt: skip


class CountingEmbedder:
    """The real embedder, with every call recorded: (texts, query?)."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.calls: list[tuple[list[str], bool]] = []

    def embed(self, texts, *, query=False, **options):
        self.calls.append((list(texts), query))
        return self.inner.embed(texts, query=query, **options)


def queued(space, message, *, session_id="s", recall=True):
    """The API without ``wait``: store, forget check, recall, queue; the worker has not run."""
    with scope.tenant_scope(space.tenant_id, space):
        return take_turn(space=space, message=message, actor="test", session_id=session_id, recall=recall).turn


def work(space, turn) -> str:
    return run_turn(tenant_id=str(space.tenant_id), space_id=str(space.id), turn_id=str(turn.id))


def make_due(space, turn_id):
    with scope.tenant_scope(space.tenant_id, space):
        Turn.objects.filter(pk=turn_id).update(next_attempt_at=timezone.now() - datetime.timedelta(seconds=1))


def pending_vector(space, turn):
    with scope.tenant_scope(space.tenant_id, space):
        [message] = Message.objects.filter(pk__in=turn.message_ids)
        return None if message.pending_embedding is None else stored_vector(message.pending_embedding)


def current_facts(space):
    with scope.tenant_scope(space.tenant_id, space):
        return {m.content: stored_vector(m.embedding) for m in Memory.objects.filter(kind="fact", superseded_by=None)}
