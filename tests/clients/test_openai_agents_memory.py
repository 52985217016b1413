"""The OpenAI Agents SDK memory (clients/python-openai-agents) in real ``Runner.run`` calls: Engram on
pytest-django's live server, the agent's model an OpenAI-compatible chat server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from http.server import ThreadingHTTPServer

import httpx2
import pytest
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
from engram_client import AsyncEngram, AuthenticationFailed, Engram, NotFound
from engram_openai_agents import EngramContext, EngramMemory, last_user_message
from openai import AsyncOpenAI

from memory.models import Message
from tenants import scope
from tests.support.model_servers import ModelHandler, completion, serving

FACT = "Hi! We run a fleet of four vans. Can you check my invoice?"
VANS = "We run a fleet of four vans."
BASE = "You answer the customers of Alice Logistics."
NO_TRACES = RunConfig(tracing_disabled=True)  # the SDK would otherwise send its traces to OpenAI


@pytest.fixture
def live_server(transactional_db):
    """A live server for this test only, stopped before the test database is dropped."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer("localhost:0")
    yield server
    server.stop()


class AgentModel:
    """The agent's chat model: answers from a script (a string is a reply, a dict a call of that tool) and
    keeps every request it was sent."""

    def __init__(self, *script):
        self.script = list(script)
        self.requests: list[dict] = []
        model = self

        class Handler(ModelHandler):
            def do_POST(self):
                body = self.read_json()
                model.requests.append(body)
                step = model.script.pop(0) if model.script else "OK."
                if isinstance(step, str):
                    return self.send_json(200, completion(step, body["model"]))
                call = {"id": f"call-{len(model.requests)}", "type": "function", "function": step}
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
                reply = completion("", body["model"])
                reply["choices"][0].update(message=message, finish_reason="tool_calls")
                self.send_json(200, reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    def systems(self) -> list[str]:
        return [m["content"] for r in self.requests for m in r["messages"] if m["role"] == "system"]


@pytest.fixture
def model():
    """``model(*script)``: an agent model serving on 127.0.0.1 until the test ends."""
    with contextlib.ExitStack() as running:

        def serve(*script):
            chat = AgentModel(*script)
            chat.url = running.enter_context(serving(chat.server))
            return chat

        yield serve


class Recording(httpx2.AsyncHTTPTransport):
    """The real transport, keeping each request's method and path."""

    def __init__(self):
        super().__init__()
        self.calls: list[str] = []

    async def handle_async_request(self, request):
        self.calls.append(f"{request.method} {request.url.path}")
        return await super().handle_async_request(request)


@pytest.fixture
def engram_a(live_server, key_a, space_a):
    with Engram(live_server.url, api_key=key_a.secret, backoff=0.05) as client:
        yield client


def support_agent(memory: EngramMemory, chat: AgentModel, **options) -> Agent:
    llm = OpenAIChatCompletionsModel(model="scripted", openai_client=AsyncOpenAI(base_url=chat.url, api_key="test"))
    return Agent(name="Support", instructions=memory.instructions(BASE), model=llm, **options)


async def ask(agent: Agent, message: str, context, memory: EngramMemory):
    return await Runner.run(agent, message, context=context, hooks=memory, run_config=NO_TRACES)


def with_memory(live_server, secret: str, scenario, transport=None, max_retries: int = 3, **options):
    """Run ``scenario(memory)`` in one event loop, with an ``AsyncEngram`` opened and closed in it."""

    async def main():
        client = AsyncEngram(
            live_server.url, api_key=secret, backoff=0.05, transport=transport, max_retries=max_retries
        )
        async with client:
            return await scenario(EngramMemory(client, **options))

    return asyncio.run(main())


def test_memories_are_recalled_before_the_model_is_called_and_the_message_stored_after(
    engram_a, live_server, key_a, model
):
    engram_a.post_turn("customer-1", FACT, wait=True)
    chat = model("You have four vans.", "Your depot is in Leeds.")
    first, second = EngramContext(space="customer-1"), EngramContext(space="customer-1")

    async def scenario(memory):
        agent = support_agent(memory, chat)
        result = await ask(agent, "We opened a depot in Leeds. How many vans do we have?", first, memory)
        await ask(agent, "Where is our depot?", second, memory)
        return result

    result = with_memory(live_server, key_a.secret, scenario, wait=True)
    assert result.final_output == "You have four vans."
    # Turn start: the model's instructions carry what Engram recalled for the message, and only that.
    system, next_system = chat.systems()
    assert system.startswith(BASE) and VANS in system and "Leeds" not in system
    assert VANS in [m["content"] for m in first.recalled["memories"]]
    # Turn end: the message is a turn of the customer's space, its answer the turn's reply.
    turn = engram_a.get_turn(first.turn["turn_id"])
    assert turn["status"] == "done" and any("Leeds" in m["content"] for m in turn["created"])
    assert first.reply["session_id"] == turn["session_id"]
    # The next run recalls what the last one stored.
    assert "Leeds" in next_system


def test_a_run_that_calls_the_model_twice_recalls_once_and_stores_once(engram_a, live_server, key_a, model):
    engram_a.post_turn("customer-1", FACT, wait=True)

    @function_tool
    def open_invoices() -> str:
        """The customer's open invoices."""
        return "Invoice 17: 240 EUR, due Friday."

    chat = model({"name": "open_invoices", "arguments": "{}"}, "Invoice 17 is due on Friday.")
    transport = Recording()
    context = EngramContext(space="customer-1")

    async def scenario(memory):
        agent = support_agent(memory, chat, tools=[open_invoices])
        return await ask(agent, "Which invoices do we still have to pay for our vans?", context, memory)

    result = with_memory(live_server, key_a.secret, scenario, transport=transport)
    assert result.final_output == "Invoice 17 is due on Friday."
    assert len(chat.requests) == 2 and all(VANS in system for system in chat.systems())
    assert transport.calls == [
        "POST /api/v1/spaces/customer-1/recall",
        "POST /api/v1/spaces/customer-1/turns",
        f"POST /api/v1/spaces/customer-1/turns/{context.turn['turn_id']}/reply",
    ]
    assert context.turn["status"] == "queued"  # wait=False: the worker derives the memories


def test_another_tenants_key_recalls_and_stores_in_its_own_space(engram_a, live_server, key_b, space_b, model):
    engram_a.post_turn("customer-1", FACT, wait=True)
    chat = model("I don't know.")
    context = EngramContext(space="customer-1")

    async def scenario(memory):
        await ask(support_agent(memory, chat), "How many vans do we have? We sell bread.", context, memory)

    with_memory(live_server, key_b.secret, scenario, wait=True)
    assert chat.systems() == [BASE] and context.recalled["memories"] == []
    with Engram(live_server.url, api_key=key_b.secret) as bob:
        assert bob.get_turn(context.turn["turn_id"])["status"] == "done"
    # Alice's space did not get Bob's customer's message, nor can her key see his turn.
    assert all("bread" not in m["content"] for m in engram_a.iter_memories("customer-1"))
    with pytest.raises(NotFound):
        engram_a.get_turn(context.turn["turn_id"])


def test_a_new_customer_has_nothing_to_recall_and_the_turn_end_creates_the_space(engram_a, live_server, key_a, model):
    chat = model("Welcome!")
    context = EngramContext(space="customer-new", session_id="chat-1")

    async def scenario(memory):
        await ask(support_agent(memory, chat), "Hello, we run two bakeries in Brno.", context, memory)

    with_memory(live_server, key_a.secret, scenario, wait=True)
    assert chat.systems() == [BASE]
    assert engram_a.get_space("customer-new")["external_id"] == "customer-new"
    assert context.turn["session_id"] == "chat-1"


def test_engram_errors_stop_the_run_before_the_model_as_the_clients_typed_errors(live_server, space_a, model):
    chat = model("never sent")

    async def scenario(memory):
        await ask(support_agent(memory, chat), "How many vans do we have?", EngramContext(space="customer-1"), memory)

    with pytest.raises(AuthenticationFailed):
        with_memory(live_server, "eng_wrong_key", scenario, max_retries=0)
    assert chat.requests == []


@dataclass
class AppContext:
    customer_id: str


def test_the_customer_can_come_from_any_run_context_and_a_sync_client_works(engram_a, live_server, key_a, model):
    engram_a.post_turn("customer-1", FACT, wait=True)
    chat = model("Four.")
    with Engram(live_server.url, api_key=key_a.secret) as client:
        memory = EngramMemory(client, space=lambda context: context.customer_id, record_reply=False)
        asyncio.run(ask(support_agent(memory, chat), "How many vans do we have?", AppContext("customer-1"), memory))
        assert VANS in chat.systems()[0]
        bare = EngramMemory(client)
        with pytest.raises(TypeError, match="EngramContext"):
            asyncio.run(ask(support_agent(bare, chat), "How many vans?", AppContext("customer-1"), bare))


def test_the_user_message_is_the_newest_user_item():
    items = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "input_text", "text": "second"}, {"type": "input_image"}]},
        {"type": "function_call_output", "call_id": "c", "output": json.dumps({"x": 1})},
    ]
    assert last_user_message(items) == "second"
    assert last_user_message([{"role": "assistant", "content": "hi"}]) is None


class Outage(httpx2.AsyncHTTPTransport):
    """The real transport, failing while ``down``: ``"connect"`` refuses the connection, a number answers with
    that status; ``only`` limits the outage to requests whose path ends so."""

    def __init__(self):
        super().__init__()
        self.down: str | int | None = None
        self.only = ""

    async def handle_async_request(self, request):
        if self.down is not None and request.url.path.endswith(self.only):
            if self.down == "connect":
                raise httpx2.ConnectError("connection refused", request=request)
            return httpx2.Response(self.down, json={"error": {"code": "unavailable", "message": "down"}})
        return await super().handle_async_request(request)


def stored_messages(tenant, space, message_id: str) -> int:
    with scope.tenant_scope(tenant, space):
        return Message.objects.filter(space=space, caller_message_id=message_id).count()


def replies_to(tenant, space, turn_id: str) -> int:
    """The agent lines recorded for a turn (their text is dropped once the turn is processed: the space keeps
    no transcripts)."""
    with scope.tenant_scope(tenant, space):
        return Message.objects.filter(space=space, answers_turn_id=turn_id).count()


def test_when_engram_is_down_the_customer_still_gets_the_answer_and_the_turn_is_stored_once_later(
    engram_a, live_server, key_a, tenant_a, space_a, model
):
    engram_a.post_turn("customer-1", FACT, wait=True)
    chat = model("Sorry, I cannot see your history right now.", "You have four vans.")
    outage = Outage()
    during, after = EngramContext(space="customer-1"), EngramContext(space="customer-1")

    async def scenario(memory):
        agent = support_agent(memory, chat)
        outage.down = "connect"
        result = await ask(agent, "We opened a depot in Leeds. How many vans do we have?", during, memory)
        assert len(memory.unsent) == 1 and await memory.resend() == [] and len(memory.unsent) == 1
        kept = memory.unsent[0]
        outage.down = None
        stored = await memory.resend()
        again = await memory.resend()  # nothing left to send
        memory.unsent.append(kept)  # a resend that ran twice (say, two timers): Engram still stores it once
        twice = await memory.resend()
        await ask(agent, "How many vans do we have?", after, memory)
        return result, kept, stored, again, twice, memory

    result, kept, stored, again, twice, memory = with_memory(
        live_server, key_a.secret, scenario, transport=outage, max_retries=0
    )
    # The customer was answered, without memories, and the run says why.
    assert result.final_output == "Sorry, I cannot see your history right now."
    assert chat.systems()[0] == BASE and "connection refused" in during.unreachable
    assert during.turn is None
    # Once Engram is back, the kept turn is stored once, with the answer as its reply.
    assert kept.reply == "Sorry, I cannot see your history right now." and kept.message.startswith("We opened")
    assert len(stored) == 1 and again == [] and memory.unsent == []
    assert [t["turn_id"] for t in twice] == [stored[0]["turn_id"]]
    assert stored_messages(tenant_a, space_a, kept.message_id) == 1
    assert replies_to(tenant_a, space_a, stored[0]["turn_id"]) == 1
    assert after.unreachable is None and VANS in chat.systems()[1]


@pytest.mark.parametrize("status", [503, 500, 429])
def test_a_reply_refused_by_an_overloaded_engram_is_sent_alone_later(
    live_server, key_a, tenant_a, space_a, model, status
):
    chat = model("Noted.")
    outage = Outage()
    context = EngramContext(space="customer-1")

    async def scenario(memory):
        outage.down, outage.only = status, "/reply"
        await ask(support_agent(memory, chat), "We now run five vans.", context, memory)
        kept = list(memory.unsent)
        outage.down = None
        return kept, await memory.resend(), memory

    kept, stored, memory = with_memory(live_server, key_a.secret, scenario, transport=outage, max_retries=0)
    assert [u.reply for u in kept] == ["Noted."] and kept[0].turn_id is not None
    assert [t["turn_id"] for t in stored] == [kept[0].turn_id] and memory.unsent == []
    assert stored_messages(tenant_a, space_a, kept[0].message_id) == 1
    assert replies_to(tenant_a, space_a, kept[0].turn_id) == 1
