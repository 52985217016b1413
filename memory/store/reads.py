"""The reads several capabilities share: a space's memories by kind and topic, one memory, and its history (the
versions it superseded) — what the API (and through it the MCP server), the console, forgetting and the
operator's edits list and look up."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import Http404

from memory.models import Memory
from memory.text.digests import topic_digest


def memories_of(space, *, kind: str | None = None, topic: str | None = None, include_superseded: bool = False):
    queryset = Memory.objects.filter(space=space).prefetch_related("source_session")
    if not include_superseded:
        queryset = queryset.filter(superseded_by__isnull=True)
    if kind:
        if kind not in Memory.Kind.values:
            raise ValidationError({"kind": [f"Choose from {', '.join(Memory.Kind.values)}."]})
        queryset = queryset.filter(kind=kind)
    if topic:
        queryset = queryset.filter(topic_digest=topic_digest(space.id, topic))
    return queryset.order_by("-updated_at", "id")


def find_memory(*, space, memory_id) -> Memory:
    memory = Memory.objects.filter(space=space, pk=memory_id).prefetch_related("source_session").first()
    if memory is None:
        raise Http404("No such memory.")
    return memory


def history_of(memory: Memory) -> list[Memory]:
    """The memory and the versions it superseded, newest first."""
    chain, frontier, seen = [memory], [memory.pk], {memory.pk}
    while frontier:
        rows = Memory.objects.filter(superseded_by__in=frontier).order_by("-created_at")
        older = [m for m in rows if m.pk not in seen]
        chain.extend(older)
        seen.update(m.pk for m in older)
        frontier = [m.pk for m in older]
    return chain


def current_version_of(memory: Memory) -> Memory:
    """The active memory at the end of ``memory``'s chain of supersessions."""
    current, seen = memory, {memory.pk}
    while current.superseded_by_id is not None and current.superseded_by_id not in seen:
        seen.add(current.superseded_by_id)
        current = Memory.objects.get(pk=current.superseded_by_id)
    return current


def reread(memory: Memory) -> None:
    """The row as it is now, read under the space's lock: one forgotten while we waited is a 404, not a crash."""
    try:
        memory.refresh_from_db()
    except Memory.DoesNotExist:
        raise Http404("No such memory.") from None
