"""MCP over stdio that answers every request it has read, even once the client has closed its input.

A client closes stdin when it has nothing more to ask, not because it stopped reading: a batch piped in from a
file ends exactly so, and the spec's shutdown closes stdin and then waits for the server to exit. mcp 2.3.0
cancels its request handlers as soon as the read stream ends (``JSONRPCDispatcher.run`` in
``mcp/shared/jsonrpc_dispatcher.py``); our tools run in worker threads, which that cannot stop, so the cancel
lands on the answer being written once the tool returns, and the client gets neither the answer nor an error
(python-sdk issue #2678). So the server is handed a read stream that ends only once every request read has
been answered, or the drain time is up and the rest have been told they were not completed.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage
from mcp_types import (
    REQUEST_TIMEOUT,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)

# A tool call is one or two in-process API requests, and the longest wait in one is for a chat model
# (ENGRAM_MODEL_TIMEOUT_SECONDS, 30 s by default): long enough for that, and no longer, because the client is
# waiting for the process to exit and will kill it if that takes too long. A call answered as not completed
# still runs to its end in its thread before the process exits: Python cannot stop a thread.
DRAIN_SECONDS = 30.0


async def serve_stdio(server: MCPServer, drain_seconds: float = DRAIN_SECONDS) -> None:
    """``MCPServer.run_stdio_async`` with the streams wrapped (it offers no way to pass them in)."""
    async with stdio_server() as (read_stream, write_stream):
        answers = Answers(write_stream)
        lowlevel = server._lowlevel_server
        options = lowlevel.create_initialization_options()
        await lowlevel.run(UntilAnswered(read_stream, answers, drain_seconds), answers, options)


class Answers:
    """The server's write stream, keeping the ids of the requests read and not yet answered."""

    def __init__(self, write_stream):
        self._write_stream = write_stream
        self._owed: set[RequestId] = set()
        self._being_sent: set[RequestId] = set()  # giving up on an answer half sent could make it a second one
        self._given_up: set[RequestId] = set()
        self._changed = anyio.Event()

    def expect(self, message) -> None:
        if isinstance(message, JSONRPCRequest):
            self._owed.add(message.id)
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            # The server never answers a request its client cancelled, so waiting for one would be in vain.
            request_id = (message.params or {}).get("requestId")
            if request_id is not None:
                self._owed -= {request_id, coerce_request_id(request_id)}
                self._note_change()

    async def send(self, session_message: SessionMessage) -> None:
        message = session_message.message
        if not isinstance(message, JSONRPCResponse | JSONRPCError) or message.id is None:
            await self._write_stream.send(session_message)
            return
        if message.id in self._given_up:
            return  # the client was already told it was not completed; a second answer would break JSON-RPC
        self._owed.discard(message.id)
        self._being_sent.add(message.id)
        try:
            await self._write_stream.send(session_message)
        finally:
            self._being_sent.discard(message.id)
            self._note_change()

    async def settle(self, drain_seconds: float) -> None:
        """Wait up to ``drain_seconds`` for the answers still owed, then answer the rest as not completed."""
        with anyio.move_on_after(drain_seconds):
            while self._owed or self._being_sent:
                await self._changed.wait()
        not_completed = ErrorData(
            code=REQUEST_TIMEOUT,
            message=f"Not completed: the client closed its input and this request was still running "
            f"{drain_seconds:g} s later; it may still take effect.",
        )
        # All given up before the first await, so an answer finishing meanwhile is dropped, not sent twice.
        given_up, self._owed = self._owed, set()
        self._given_up |= given_up
        for request_id in given_up:
            await self._write_stream.send(
                SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=not_completed))
            )

    def _note_change(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def aclose(self) -> None:
        await self._write_stream.aclose()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()


class UntilAnswered:
    """The client's read stream, whose end is held back until ``answers`` owes nothing."""

    def __init__(self, read_stream, answers: Answers, drain_seconds: float):
        self._read_stream = read_stream
        self._answers = answers
        self._drain_seconds = drain_seconds

    @property
    def last_context(self):
        """The sender's context variables, which the server looks for on its read stream."""
        return getattr(self._read_stream, "last_context", None)

    async def receive(self):
        try:
            item = await self._read_stream.receive()
        except anyio.EndOfStream:
            await self._answers.settle(self._drain_seconds)
            raise
        if isinstance(item, SessionMessage):
            self._answers.expect(item.message)
        return item

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._read_stream.aclose()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()
