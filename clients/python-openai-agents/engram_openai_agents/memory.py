"""``EngramMemory``: a customer's Engram memories in an OpenAI Agents SDK run.

Turn start: the agent's instructions (``memory.instructions(...)``, the SDK's dynamic instructions) recall the
customer's memories for the user's message and add recall's ``prompt`` to them, once per run (a run that calls
the model several times, around tool calls, recalls once). Turn end: ``memory`` is the run's ``RunHooks``; when
the agent gives its final output, ``on_agent_end`` stores the user's message as a turn (Engram derives the
memories from it) and the agent's answer as the turn's reply.

When Engram cannot be reached (the connection fails, or it answers 5xx or 429 after the client's retries), the
run goes on and the customer gets the agent's answer: a turn start recalls nothing, and a turn end keeps what it
could not store in ``memory.unsent`` until ``await memory.resend()`` stores it, exactly once (each turn carries
its ``message_id`` from the start). A refused request (a wrong key, a bad space) still raises: retrying cannot
fix it.

>>> memory = EngramMemory(AsyncEngram("http://127.0.0.1:8000", api_key="eng_..."))
>>> agent = Agent(name="Support", instructions=memory.instructions("You help Acme's customers."))
>>> await Runner.run(agent, "How many vans do we have?", context=EngramContext(space="customer-42"), hooks=memory)
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx2
from agents import Agent, AgentHookContext, RunContextWrapper, RunHooks
from engram_client import AsyncEngram, Engram, EngramError, NotFound

Json = dict[str, Any]
Instructions = str | Callable[[RunContextWrapper[Any], Agent[Any]], str | Awaitable[str]] | None


@dataclass
class EngramContext:
    """A run context naming the customer. ``space``: the external id of the customer's space; ``session_id``:
    the conversation, when you have one (else Engram derives one). The memory fills in ``recalled`` (recall's
    answer at turn start), ``turn`` (the turn stored at turn end) and ``reply`` (the answer recorded for it)."""

    space: str
    session_id: str | None = None
    recalled: Json | None = None
    turn: Json | None = None
    reply: Json | None = None
    unreachable: str | None = None  # why Engram could not be reached in this run, if it could not


@dataclass
class UnsentTurn:
    """A turn end Engram could not take: the customer's message (``turn_id`` None) or, once the turn is stored,
    only the agent's reply to it. ``message_id`` makes storing it again idempotent."""

    space: str
    message: str
    message_id: str
    session_id: str | None
    reply: str | None
    error: str
    turn_id: str | None = None


def unreachable(error: Exception) -> bool:
    """Engram is down or overloaded (worth keeping the work for later), rather than refusing the request."""
    if isinstance(error, httpx2.TransportError):
        return True
    return isinstance(error, EngramError) and (error.status >= 500 or error.status == 429)


def _from_context(name: str) -> Callable[[Any], str | None]:
    def read(context: Any) -> str | None:
        if isinstance(context, EngramContext):
            return getattr(context, name)
        if name == "space":
            raise TypeError(
                "EngramMemory needs the customer: run with context=EngramContext(space=...), or give "
                "EngramMemory(space=...) a function of your run context that returns the space's external id."
            )
        return None

    return read


class EngramMemory(RunHooks[Any]):
    """Recall at turn start (``instructions``), store at turn end (these run hooks).

    ``client``: an ``AsyncEngram`` (a sync ``Engram`` is run in a worker thread). ``space`` and ``session_id``:
    a string, or a function of the run context (what you pass as ``Runner.run(context=...)``); by default read
    from an ``EngramContext``. ``limit`` and ``max_chars``: recall's bounds (at most ``limit`` memories, prompt
    lines within ``max_chars`` characters). ``wait``: the turn end waits until Engram has derived the memories.
    ``record_reply``: the agent's final text answer is stored as the turn's reply (context only, never mined).
    """

    def __init__(
        self,
        client: AsyncEngram | Engram,
        *,
        space: str | Callable[[Any], str] | None = None,
        session_id: str | Callable[[Any], str | None] | None = None,
        limit: int | None = None,
        max_chars: int | None = 2000,
        wait: bool = False,
        record_reply: bool = True,
        create_space: bool = True,
    ) -> None:
        self.client = client
        self._space = _constant(space) if isinstance(space, str) else space or _from_context("space")
        self._session = _constant(session_id) if isinstance(session_id, str) else session_id
        self._session = self._session or _from_context("session_id")
        self.limit = limit
        self.max_chars = max_chars
        self.wait = wait
        self.record_reply = record_reply
        self.create_space = create_space
        # What each run recalled, by its run context wrapper (one per run): (the user's message, the prompt).
        self._recalled: weakref.WeakKeyDictionary[RunContextWrapper[Any], tuple[str, str]] = weakref.WeakKeyDictionary()
        self.unsent: list[UnsentTurn] = []

    def instructions(self, base: Instructions = None) -> Callable[[RunContextWrapper[Any], Agent[Any]], Awaitable[str]]:
        """The agent's ``instructions``: ``base`` (a string, or the SDK's instructions function) followed by what
        Engram recalls for the user's message."""
        return _MemoryInstructions(self, base)

    async def recall_prompt(self, context: RunContextWrapper[Any]) -> str:
        """Recall's prompt block for the run's user message ("" when nothing is recalled), once per run."""
        message = last_user_message(context.turn_input)
        if message is None:
            return ""
        cached = self._recalled.get(context)
        if cached is not None and cached[0] == message:
            return cached[1]
        try:
            recalled = await self._call(
                "recall", self._space(context.context), message, limit=self.limit, max_chars=self.max_chars
            )
        except NotFound:  # a new customer: no space yet (the turn end creates it), so nothing to recall
            recalled = {"memories": [], "prompt": ""}
        except (EngramError, httpx2.TransportError) as error:
            if not unreachable(error):
                raise
            recalled = {"memories": [], "prompt": ""}  # the customer is answered without memory, not left waiting
            _note_unreachable(context.context, _why(error))
        prompt = recalled["prompt"] if recalled["memories"] else ""
        self._recalled[context] = (message, prompt)
        if isinstance(context.context, EngramContext):
            context.context.recalled = recalled
        return prompt

    async def on_agent_end(self, context: AgentHookContext[Any], agent: Agent[Any], output: Any) -> None:
        """Turn end: the user's message becomes a turn of the customer's space; the answer, its reply."""
        message = last_user_message(context.turn_input)
        if message is None:
            return
        unsent = UnsentTurn(
            space=self._space(context.context),
            message=message,
            message_id=f"agents-{uuid.uuid4().hex}",
            session_id=self._session(context.context),
            reply=output if self.record_reply and isinstance(output, str) and output else None,
            error="",
        )
        stored = await self._store_or_keep(unsent)
        if stored is None:
            self.unsent.append(unsent)
            _note_unreachable(context.context, unsent.error)
            return
        if isinstance(context.context, EngramContext):
            context.context.turn, context.context.reply = stored

    async def resend(self) -> list[Json]:
        """Store the turns Engram could not take (``unsent``), oldest first; each is stored once, however often
        this runs. Returns the turns stored; what still cannot be stored stays in ``unsent``."""
        stored, kept = [], []
        for unsent in self.unsent:
            result = await self._store_or_keep(unsent)
            if result is None:
                kept.append(unsent)
            else:
                stored.append(result[0])
        self.unsent = kept
        return stored

    async def _store_or_keep(self, unsent: UnsentTurn) -> tuple[Json, Json | None] | None:
        """``_store``'s turn and reply; None, with ``unsent.error`` saying why, when Engram cannot be reached."""
        try:
            return await self._store(unsent)
        except (EngramError, httpx2.TransportError) as error:
            if not unreachable(error):
                raise
            unsent.error = _why(error)
            return None

    async def _store(self, unsent: UnsentTurn) -> tuple[Json, Json | None]:
        """The turn (the same ``message_id``: a replay answers with the turn stored the first time) and its reply;
        when the reply fails after the turn was stored, only the reply is left to send."""
        turn = await self._call(
            "post_turn",
            unsent.space,
            unsent.message,
            session_id=unsent.session_id,
            message_id=unsent.message_id,
            create_space=self.create_space,
            wait=self.wait,
        )
        unsent.turn_id = turn["turn_id"]
        reply = None
        if unsent.reply:
            reply = await self._call("post_reply", unsent.space, turn["turn_id"], unsent.reply)
        return turn, reply

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        call = getattr(self.client, method)
        if isinstance(self.client, AsyncEngram):
            return await call(*args, **kwargs)
        return await asyncio.to_thread(call, *args, **kwargs)


class _MemoryInstructions:
    """The SDK calls instructions with (context, agent) before every model call."""

    def __init__(self, memory: EngramMemory, base: Instructions) -> None:
        self.memory = memory
        self.base = base

    async def __call__(self, context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        base = self.base(context, agent) if callable(self.base) else self.base
        if inspect.isawaitable(base):
            base = await base
        recalled = await self.memory.recall_prompt(context)
        return "\n\n".join(part for part in (base, recalled) if part)


def _why(error: Exception) -> str:
    return str(error) or type(error).__name__


def _note_unreachable(context: Any, why: str) -> None:
    if isinstance(context, EngramContext):
        context.unreachable = why


def _constant(value: str) -> Callable[[Any], str]:
    return lambda _context: value


def last_user_message(items: list[Any]) -> str | None:
    """The text of the newest user message among the run's input items (a string input is one such item)."""
    for item in reversed(items or []):
        get = item.get if isinstance(item, dict) else lambda name, item=item: getattr(item, name, None)
        if get("role") != "user":
            continue
        content = get("content")
        if isinstance(content, str):
            return content or None
        texts = [
            part.get("text") if isinstance(part, dict) else getattr(part, "text", None)
            for part in content or []
            if (part.get("type") if isinstance(part, dict) else getattr(part, "type", None)) == "input_text"
        ]
        return "\n".join(t for t in texts if t) or None
    return None
