"""``EngramStore``: LangGraph's ``BaseStore`` over Engram, one namespace per Engram space (one customer).

The namespace ``("memories", "<external id>")`` (the default template ``("memories", SPACE)``) is the space with
that external id. An item is one of the space's memories: its key is the memory's id, its value the memory as
the API returns it (``content``, ``kind``, ``topic``, ``importance``, ``event_at``, ``source``, …) without the id
and the times, which are the item's ``key``, ``created_at`` and ``updated_at``.

Engram derives memories from what a customer says, so ``put`` is not a plain key-value write (README.md):

- ``put(ns, key, {"content": ...})`` with the id of a memory of that space changes that memory (``PATCH``:
  ``content``, ``topic``, ``importance``; the API's ``admin`` scope);
- with any other key it sends ``content`` as what the customer said (a turn, ``?wait=true`` by default); the
  memories Engram derives from it get ids of their own, so ``get(ns, key)`` then finds nothing: ``search``
  finds them;
- ``put(ns, key, None)`` / ``delete`` deletes the memory with that id (a no-op for any other key).

Every operation is written once, as a generator that yields the client calls it needs (``_Call``, and
``_Open``/``_Next`` to walk a paginated list); ``batch`` runs it on the sync client, ``abatch`` on the async one.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engram_client import AsyncEngram, Engram, NotFound
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

SPACE = "{space}"
"""The label of a namespace template that stands for the space's external id."""

RECALL_LIMIT = 50  # the most one recall returns (the API's bound)
PAGE_SIZE = 200  # the largest page a list may ask for
WRITABLE = frozenset({"content", "topic", "importance"})
# What the store itself returns in an item's value: accepted in a put and ignored, so an item read with get can
# be changed and put back. Anything else is refused rather than dropped.
READ_ONLY = frozenset(
    {
        "kind",
        "mention_count",
        "session_id",
        "event_at",
        "superseded_by",
        "superseded_reason",
        "source",
    }
)
_SEARCH_FILTERS = ("kind", "topic")


@dataclass(frozen=True)
class _Call:
    """One client method call; the driver sends back its result or throws its error."""

    method: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class _Open:
    """Open a paginated ``iter_*`` method; the driver sends back a cursor for ``_Next``."""

    method: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class _Next:
    """The cursor's next item, or ``_END``."""

    cursor: Any


_END = object()
Step = Generator[_Call | _Open | _Next, Any, Result]


class EngramStore(BaseStore):
    """A LangGraph store whose namespaces are Engram spaces.

    ``client`` serves ``batch`` (and the sync methods), ``async_client`` serves ``abatch`` (without it, ``abatch``
    runs the sync client in a worker thread). ``namespace``: the template, one of whose labels is ``SPACE``.
    ``wait``: a put that becomes a turn waits for Engram to derive its memories, so a search right after finds
    them. ``create_spaces``: such a put creates the customer's space when it does not exist yet.
    """

    def __init__(
        self,
        client: Engram | None = None,
        *,
        async_client: AsyncEngram | None = None,
        namespace: tuple[str, ...] = ("memories", SPACE),
        wait: bool = True,
        create_spaces: bool = True,
    ) -> None:
        if client is None and async_client is None:
            raise TypeError("EngramStore needs an Engram client, an AsyncEngram client or both.")
        if list(namespace).count(SPACE) != 1:
            raise ValueError(f"The namespace template needs exactly one {SPACE!r} label, got {namespace!r}.")
        self.client = client
        self.async_client = async_client
        self.namespace = tuple(namespace)
        self.wait = wait
        self.create_spaces = create_spaces

    # The namespace mapping
    def space_of(self, namespace: tuple[str, ...]) -> str:
        """The external id a namespace names: the label where the template has ``SPACE``, the others equal."""
        namespace = tuple(namespace)
        if len(namespace) == len(self.namespace) and all(
            want == SPACE or want == got for want, got in zip(self.namespace, namespace, strict=True)
        ):
            return namespace[self.namespace.index(SPACE)]
        raise InvalidNamespaceError(
            f"{namespace!r} names no Engram space: this store's namespaces are {self.namespace!r} with the "
            "customer's external id in place of {space} (a search or get needs the whole namespace: Engram "
            "recalls one customer's memories at a time)."
        )

    def namespace_for(self, external_id: str) -> tuple[str, ...]:
        return tuple(external_id if label == SPACE else label for label in self.namespace)

    # BaseStore's two abstract methods
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self.client is None:
            raise TypeError("This EngramStore has only an async client: use the a-methods (aget, asearch, …).")
        return [self._run(self._operation(op)) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if self.async_client is None:
            return await asyncio.to_thread(self.batch, ops)
        return [await self._arun(self._operation(op)) for op in ops]

    def _run(self, steps: Step) -> Result:
        reply: Any = None
        error: Exception | None = None
        while True:
            try:
                step = steps.throw(error) if error is not None else steps.send(reply)
            except StopIteration as done:
                return done.value
            reply, error = None, None
            try:
                if isinstance(step, _Call):
                    reply = getattr(self.client, step.method)(*step.args, **step.kwargs)
                elif isinstance(step, _Open):
                    reply = iter(getattr(self.client, step.method)(*step.args, **step.kwargs))
                else:
                    reply = next(step.cursor, _END)
            except Exception as exc:
                error = exc

    async def _arun(self, steps: Step) -> Result:
        reply: Any = None
        error: Exception | None = None
        while True:
            try:
                step = steps.throw(error) if error is not None else steps.send(reply)
            except StopIteration as done:
                return done.value
            reply, error = None, None
            try:
                if isinstance(step, _Call):
                    reply = await getattr(self.async_client, step.method)(*step.args, **step.kwargs)
                elif isinstance(step, _Open):
                    reply = aiter(getattr(self.async_client, step.method)(*step.args, **step.kwargs))
                else:
                    reply = await anext(step.cursor, _END)
            except Exception as exc:
                error = exc

    def _operation(self, op: Op) -> Step:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"Unknown store operation: {op!r}")

    # The operations
    def _get(self, op: GetOp) -> Step:
        space = self.space_of(op.namespace)
        if not _is_memory_id(op.key):
            return None
        try:
            memory = yield _Call("get_memory", (space, op.key))
        except NotFound:
            return None
        return _item(Item, op.namespace, memory)

    def _put(self, op: PutOp) -> Step:
        space = self.space_of(op.namespace)
        if op.value is None:
            if _is_memory_id(op.key):
                try:
                    yield _Call("delete_memory", (space, op.key))
                except NotFound:
                    pass  # deleting what is not there is a no-op, as in any store
            return None
        changes = _writable_fields(op.value)
        if _is_memory_id(op.key):
            try:
                yield _Call("get_memory", (space, op.key))
            except NotFound:
                pass
            else:
                yield _Call("update_memory", (space, op.key), changes)
                return None
        extra = sorted(set(changes) - {"content"})
        if extra:
            raise ValueError(
                f"{extra} can only change a memory that exists (put with its id as the key): a new memory's "
                "topic and importance are derived by Engram from what the customer said."
            )
        options = {"message_id": _message_id(op.key, changes["content"]), "create_space": self.create_spaces}
        yield _Call("post_turn", (space, changes["content"]), {**options, "wait": self.wait})
        return None

    def _search(self, op: SearchOp) -> Step:
        space = self.space_of(op.namespace_prefix)
        kind, topic = _search_filter(op.filter)
        if op.query:
            try:
                limit = min(op.offset + op.limit, RECALL_LIMIT)
                options = {"limit": limit, "kinds": [kind] if kind else None, "provenance": True}
                recalled = yield _Call("recall", (space, op.query), options)
            except NotFound:
                return []
            memories = [m for m in recalled["memories"] if topic is None or m.get("topic") == topic]
            return [
                _item(SearchItem, op.namespace_prefix, m, score=m["score"]["fused"])
                for m in memories[op.offset : op.offset + op.limit]
            ]
        page_size = max(1, min(op.offset + op.limit, PAGE_SIZE))
        cursor = yield _Open("iter_memories", (space,), {"kind": kind, "topic": topic, "page_size": page_size})
        found: list[SearchItem] = []
        skipped = 0
        while len(found) < op.limit:
            try:
                memory = yield _Next(cursor)
            except NotFound:
                return []
            if memory is _END:
                break
            if skipped < op.offset:
                skipped += 1
                continue
            found.append(_item(SearchItem, op.namespace_prefix, memory))
        return found

    def _list_namespaces(self, op: ListNamespacesOp) -> Step:
        wanted = op.offset + op.limit
        seen: list[tuple[str, ...]] = []
        cursor = yield _Open("iter_spaces", (), {"page_size": PAGE_SIZE})
        while len(seen) < wanted:
            space = yield _Next(cursor)
            if space is _END:
                break
            namespace = self.namespace_for(space["external_id"])
            if not all(_matches(namespace, condition) for condition in op.match_conditions or ()):
                continue
            if op.max_depth is not None:
                namespace = namespace[: op.max_depth]
            if namespace not in seen:
                seen.append(namespace)
        return seen[op.offset : op.offset + op.limit]


def _is_memory_id(key: str) -> bool:
    try:
        uuid.UUID(str(key))
    except ValueError:
        return False
    return True


def _message_id(key: str, content: str) -> str:
    """The turn's ``message_id``: the same put sent again (a retry) is stored once; another value under the same
    key is a new message (Engram treats a repeated ``message_id`` as a replay whatever its text)."""
    return f"langgraph:{key}:{hashlib.sha256(content.encode()).hexdigest()[:16]}"


def _writable_fields(value: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(value) - WRITABLE - READ_ONLY)
    if unknown:
        raise ValueError(
            f"Engram stores no {unknown} field: a value holds 'content' (what the customer said, or a memory's "
            "new wording), and to change a memory 'topic' and 'importance'."
        )
    if not isinstance(value.get("content"), str):
        raise ValueError("A value needs 'content', a string: what the customer said, or a memory's new wording.")
    return {name: value[name] for name in WRITABLE if name in value}


def _search_filter(filter: dict[str, Any] | None) -> tuple[str | None, str | None]:
    """``{"kind": ...}`` and ``{"topic": ...}`` (or ``{"$eq": ...}``): Engram filters by these two; any other
    filter is refused rather than ignored."""
    values: dict[str, str] = {}
    for name, wanted in (filter or {}).items():
        if isinstance(wanted, dict) and set(wanted) == {"$eq"}:
            wanted = wanted["$eq"]
        if name not in _SEARCH_FILTERS or not isinstance(wanted, str):
            raise ValueError(
                f"Engram cannot filter by {name!r}={wanted!r}: a search filters by 'kind' and 'topic', each "
                "equal to a string."
            )
        values[name] = wanted
    return values.get("kind"), values.get("topic")


def _matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(want == "*" or want == got for want, got in zip(path, part, strict=True))


def _item(cls: type[Item], namespace: tuple[str, ...], memory: dict[str, Any], **extra: Any) -> Any:
    value = {k: v for k, v in memory.items() if k not in ("id", "created_at", "updated_at", "score")}
    # Recall answers without the creation time: its items carry the last change as both times.
    return cls(
        namespace=tuple(namespace),
        key=memory["id"],
        value=value,
        created_at=memory.get("created_at") or memory["updated_at"],
        updated_at=memory["updated_at"],
        **extra,
    )
