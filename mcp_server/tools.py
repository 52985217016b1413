"""Engram's tools for MCP clients: the turn loop, recall, forgetting, memories and shared spaces' cases.

Each tool is one API call through ``gateway.engram_for`` with the caller's API key: over stdio the key in
``ENGRAM_API_KEY``, over HTTP the request's ``Authorization: Bearer`` header.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal

import httpx2
from engram_client import EngramError
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mcp_server.gateway import engram_for

API_KEY_VARIABLE = "ENGRAM_API_KEY"
LIST_LIMIT_MAX = 200

INSTRUCTIONS = """Engram is long-term memory about one customer (a "space", named by its external id).
At the start of each customer turn call take_turn with the customer's message: it stores the message and
returns what is worth knowing now (memories and a ready prompt block) and, when the customer asked to
forget something, a confirmation to say back. Use recall_memories for a question mid-conversation.
Only what the customer says is learnt; your replies are context (record_reply), never facts."""

Space = Annotated[str, Field(description="The customer's space: its external id, e.g. 'customer-42'.")]
RoomForMemories = Annotated[
    int | None,
    Field(
        ge=100,
        le=100_000,
        description="Room you have for the memories, in characters: filled best first with what answers, then "
        "with the next nearest statements; `left_out` counts answering memories that did not fit.",
    ),
]


def api_key_of(ctx: Context) -> str:
    headers = ctx.headers
    if headers is not None:
        value = headers.get("authorization") or ""
        scheme, _, key = value.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise ToolError("authentication_failed: send 'Authorization: Bearer <Engram API key>'.")
        return key.strip()
    key = os.environ.get(API_KEY_VARIABLE, "")
    if not key:
        raise ToolError(f"authentication_failed: set {API_KEY_VARIABLE} to an Engram API key.")
    return key


@contextlib.contextmanager
def api_errors() -> Iterator[None]:
    """An API error, or an id the client cannot send, becomes a tool error the model can read."""
    try:
        yield
    except EngramError as error:
        detail = f" {error.details}" if error.details else ""
        raise ToolError(f"{error.code}: {error.message}{detail}") from None
    except ValueError as error:  # an id the client refuses to put in a URL
        raise ToolError(f"invalid_request: {error}") from None
    except httpx2.InvalidURL:  # an argument too long or too odd to be part of a URL at all
        raise ToolError("invalid_request: an id in the arguments cannot be part of a URL") from None


def call(ctx: Context, operation: str, *args: Any, **kwargs: Any) -> Any:
    """Run one client operation as the caller."""
    with engram_for(api_key_of(ctx)) as engram, api_errors():
        return getattr(engram, operation)(*args, **kwargs)


def first_items(ctx: Context, operation: str, limit: int, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """The first ``limit`` items of one of the client's paginated ``iter_*`` operations, as the caller."""
    with engram_for(api_key_of(ctx)) as engram, api_errors():
        return list(itertools.islice(getattr(engram, operation)(*args, page_size=limit, **kwargs), limit))


def build_server() -> MCPServer:
    return build_server_with_tools()[0]


def build_server_with_tools() -> tuple[MCPServer, dict[str, Callable[..., Any]]]:
    """The server and each tool's function by name: a host that embeds the server (or a test) calls a tool in
    its own thread and transaction, which the protocol's ``call_tool`` (a worker thread) does not."""
    server = MCPServer(name="engram", instructions=INSTRUCTIONS)
    functions: dict[str, Callable[..., Any]] = {}

    def tool() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            functions[function.__name__] = function
            return server.tool()(function)

        return register

    @tool()
    def take_turn(
        ctx: Context,
        space: Space,
        message: Annotated[str, Field(description="The customer's message, verbatim.")],
        session_id: Annotated[str | None, Field(description="Your conversation id; omit to derive one.")] = None,
        message_id: Annotated[
            str | None, Field(description="Your id for this message; resending it stores nothing twice.")
        ] = None,
        create_space: Annotated[bool, Field(description="Create the space if this is a new customer.")] = False,
        provenance: Annotated[
            bool, Field(description="Add each recalled memory's source: session, message id, turn, when said.")
        ] = False,
        max_chars: RoomForMemories = None,
        wait: Annotated[
            bool,
            Field(
                description="true: learn from the message before answering (slower), so that a recall right "
                "after finds what it said; the answer then lists what was `created`, `merged`, `superseded` and "
                "`rejected`."
            ),
        ] = False,
    ) -> dict[str, Any]:
        """Call at the START of every customer turn, before answering. Stores the customer's message (facts are
        learnt from it in the background unless `wait`) and returns `memories` recalled for it with scores,
        `prompt` (a block to put in your system prompt), `turn_id` (for record_reply) and, when the customer asked
        to forget something, `forgotten` and `confirmation` (a sentence to say back; `""` otherwise)."""
        return call(
            ctx, "post_turn", space, message, session_id=session_id, message_id=message_id,
            create_space=create_space, provenance=provenance or None, max_chars=max_chars, wait=wait,
        )  # fmt: skip

    @tool()
    def record_reply(
        ctx: Context,
        space: Space,
        turn_id: Annotated[str, Field(description="The turn_id take_turn returned.")],
        content: Annotated[str, Field(description="Your reply to the customer.")],
    ) -> dict[str, Any]:
        """Record your reply to a turn, as context for later turns. Replies are never mined for facts."""
        return call(ctx, "post_reply", space, turn_id, content)

    @tool()
    def ingest_transcript(
        ctx: Context,
        space: Space,
        messages: Annotated[
            list[dict[str, Any]],
            Field(description="[{'role': 'customer'|'agent', 'content': str, 'id'?: str, 'at'?: ISO time}]"),
        ],
        session_id: Annotated[str | None, Field(description="The conversation's id.")] = None,
        create_space: bool = False,
    ) -> dict[str, Any]:
        """Store a whole past conversation at once (e.g. from before Engram was used). Only the customer's
        messages are learnt from. Sending the same transcript again stores nothing new."""
        return call(ctx, "ingest", space, messages, session_id=session_id, create_space=create_space)

    @tool()
    def recall_memories(
        ctx: Context,
        space: Space,
        query: Annotated[str, Field(description="What you want to know about the customer, in any language.")],
        limit: Annotated[int | None, Field(ge=1, le=50)] = None,
        kinds: Annotated[
            list[Literal["fact", "topic", "event", "instruction", "task", "message"]] | None,
            Field(description="Only these kinds."),
        ] = None,
        provenance: Annotated[
            bool, Field(description="Add each memory's source: session, message id, turn, when it was said.")
        ] = False,
        max_chars: RoomForMemories = None,
    ) -> dict[str, Any]:
        """Look up what Engram knows about the customer that is relevant to `query`. Returns `memories` (each with
        `score`: distance and per-strategy ranks) and a `prompt` block; `memories` is empty when nothing is close
        enough — then do not guess. take_turn already recalls for the customer's message; use this for other
        questions."""
        return call(
            ctx, "recall", space, query, limit=limit, kinds=kinds, provenance=provenance or None, max_chars=max_chars
        )

    @tool()
    def forget_memories(
        ctx: Context,
        space: Space,
        utterance: Annotated[str, Field(description="The customer's request, e.g. 'forget my old address'.")],
        dry_run: Annotated[bool, Field(description="true: only show what would be deleted.")] = False,
    ) -> dict[str, Any]:
        """Delete what the customer asks to be forgotten (take_turn already does this for their messages; call
        this for a request that reached you another way). Deletions are audited. With dry_run, nothing is deleted
        and `candidates` lists what would match, with distances."""
        return call(ctx, "forget", space, utterance, dry_run=dry_run)

    @tool()
    def list_memories(
        ctx: Context,
        space: Space,
        kind: Literal["fact", "topic", "event", "instruction", "task"] | None = None,
        topic: str | None = None,
        limit: Annotated[int, Field(ge=1, le=LIST_LIMIT_MAX)] = 50,
    ) -> dict[str, Any]:
        """List the customer's current memories, newest first (for review, not for answering: use
        recall_memories to find what is relevant)."""
        return {"memories": first_items(ctx, "iter_memories", limit, space, kind=kind, topic=topic)}

    @tool()
    def get_memory(
        ctx: Context,
        space: Space,
        memory_id: Annotated[str, Field(description="A memory's id.")],
    ) -> dict[str, Any]:
        """One memory with its `history`: this version and the earlier ones it superseded, newest first."""
        memory = call(ctx, "get_memory", space, memory_id)
        memory["history"] = call(ctx, "memory_history", space, memory_id)
        return memory

    @tool()
    def update_memory(
        ctx: Context,
        space: Space,
        memory_id: Annotated[str, Field(description="A memory's id (from list_memories or recall_memories).")],
        content: Annotated[str | None, Field(description="The corrected wording, in the customer's words.")] = None,
        topic: Annotated[str | None, Field(description="What the memory is about, e.g. 'residence'.")] = None,
        importance: Annotated[float | None, Field(ge=0.0, le=1.0)] = None,
    ) -> dict[str, Any]:
        """Correct one memory by hand when you know it is wrong (needs an admin key). The earlier wording is kept
        in its history (restore_memory brings it back). A customer correcting themselves in a message needs no
        call: take_turn already updates what they restate or correct."""
        return call(ctx, "update_memory", space, memory_id, content=content, topic=topic, importance=importance)

    @tool()
    def delete_memory(
        ctx: Context,
        space: Space,
        memory_id: Annotated[str, Field(description="A memory's id (from list_memories or recall_memories).")],
    ) -> dict[str, Any]:
        """Delete one memory and the earlier versions it replaced, permanently (needs an admin key; audited without
        its content). To honour a customer's request in words ("forget my address"), use forget_memories."""
        call(ctx, "delete_memory", space, memory_id)
        return {"deleted": memory_id}

    @tool()
    def restore_memory(
        ctx: Context,
        space: Space,
        memory_id: Annotated[str, Field(description="An earlier version's id, from get_memory's `history`.")],
    ) -> dict[str, Any]:
        """Make an earlier, replaced version of a memory current again (needs an admin key): the version that
        replaced it becomes history. An error `conflict` means the version is already current."""
        return call(ctx, "restore_memory", space, memory_id)

    @tool()
    def list_spaces(
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=LIST_LIMIT_MAX)] = 50,
    ) -> dict[str, Any]:
        """The spaces your key can use: each customer's space and the shared spaces of past cases, with their
        `external_id` (the `space` argument of the other tools), `display_name` and `kind`."""
        return {"spaces": first_items(ctx, "iter_spaces", limit)}

    @tool()
    def get_turn(ctx: Context, turn_id: str) -> dict[str, Any]:
        """What a turn learnt: its status and the memories it `created`, `merged`, `superseded` and `rejected`
        (with reasons)."""
        return call(ctx, "get_turn", turn_id)

    @tool()
    def recall_episodes(
        ctx: Context,
        space: Annotated[str, Field(description="A shared space (kind 'shared') of past cases.")],
        inputs: Annotated[dict[str, Any], Field(description="The current case's arguments, e.g. {'question': ...}.")],
        agent: str | None = None,
        limit: Annotated[int | None, Field(ge=1, le=50)] = None,
    ) -> dict[str, Any]:
        """Find past cases (episodes) similar to the current one in a shared space, to reuse what worked: each
        with its `output`, `outcome`, feedback and `score`. Empty when nothing is close enough."""
        return call(ctx, "recall_episodes", space, inputs, agent=agent, limit=limit)

    @tool()
    def match_escalation(
        ctx: Context,
        space: Annotated[str, Field(description="A shared space (kind 'shared') of resolved escalations.")],
        input: Annotated[Any, Field(description="The case you would escalate to a person.")],
        agent: str | None = None,
    ) -> dict[str, Any]:
        """Before escalating to a person, check whether a person already resolved a near-identical case. `apply`
        true gives the `outcome` and `resolution_comment` to follow; false means escalate."""
        return call(ctx, "match_escalation", space, input, agent=agent)

    return server, functions
