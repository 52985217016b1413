"""The MCP server end to end: streamable HTTP on a real port and stdio with the SDK's own client, and stdio by hand."""

from __future__ import annotations

import asyncio
import json
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest
import uvicorn
from django.db import connection
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import REQUEST_TIMEOUT

from mcp_server.gateway import engram_for
from mcp_server.http_app import http_app
from mcp_server.tools import build_server
from tenants.api_keys import issue_api_key
from tests.support.concurrency import space_locked

FACT = "Hi! We run a fleet of four vans. Can you check my invoice?"
VANS = "We run a fleet of four vans."
PROJECT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def mcp_url(transactional_db):
    """The MCP server's streamable-HTTP app under uvicorn on a free loopback port, for this test only."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(http_app(build_server()), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the MCP server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    thread.join(timeout=10)


def remember_vans(key) -> str:
    with engram_for(key.secret) as engram:
        return engram.post_turn("customer-1", FACT, wait=True)["created"][0]["id"]


async def call_tools(url: str, api_key: str, calls: list[tuple[str, dict]]):
    headers = {"Authorization": f"Bearer {api_key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
    return tools, results


def test_an_agent_takes_a_turn_recalls_and_reviews_memories_over_http(mcp_url, key_a, space_a):
    memory_id = remember_vans(key_a)
    tools, results = asyncio.run(
        call_tools(
            mcp_url,
            key_a.secret,
            [
                ("take_turn", {"space": "customer-1", "message": "How many vans do we have again?"}),
                ("recall_memories", {"space": "customer-1", "query": "How many vans?"}),
                ("list_memories", {"space": "customer-1", "kind": "fact"}),
                ("get_memory", {"space": "customer-1", "memory_id": memory_id}),
                ("forget_memories", {"space": "customer-1", "utterance": "Forget our vans.", "dry_run": True}),
            ],
        )
    )
    assert {"take_turn", "ingest_transcript", "recall_memories", "forget_memories", "list_memories",
            "get_memory", "recall_episodes", "match_escalation"} <= set(tools)  # fmt: skip
    turn, recalled, listed, memory, dry_run = (r.structured_content for r in results)
    assert not any(r.is_error for r in results)
    assert VANS in [m["content"] for m in turn["memories"]] and VANS in turn["prompt"]
    assert turn["confirmation"] == "" and turn["turn_id"]
    assert recalled["memories"][0]["content"] == VANS and recalled["memories"][0]["score"]["distance"] < 0.5
    assert [m["id"] for m in listed["memories"]] == [memory_id]
    assert memory["content"] == VANS and [h["id"] for h in memory["history"]] == [memory_id]
    assert dry_run["dry_run"] is True and [c["id"] for c in dry_run["candidates"]] == [memory_id]
    with engram_for(key_a.secret) as engram:
        assert [m["id"] for m in engram.iter_memories("customer-1", kind="fact")] == [memory_id]


def test_a_forget_request_in_a_turn_is_confirmed_and_deleted(mcp_url, key_a, space_a):
    remember_vans(key_a)
    _, [result] = asyncio.run(
        call_tools(
            mcp_url,
            key_a.secret,
            [("take_turn", {"space": "customer-1", "message": "Please forget that we have four vans."})],
        )
    )
    turn = result.structured_content
    assert [f["content"] for f in turn["forgotten"]] == [VANS, "vehicle"] and turn["confirmation"]
    with engram_for(key_a.secret) as engram:
        assert list(engram.iter_memories("customer-1", kind="fact")) == []


def test_another_tenants_key_sees_nothing_over_mcp(mcp_url, key_a, key_b, space_a, space_b):
    memory_id = remember_vans(key_a)
    _, results = asyncio.run(
        call_tools(
            mcp_url,
            key_b.secret,
            [
                ("list_memories", {"space": "customer-1"}),
                ("recall_memories", {"space": "customer-1", "query": "How many vans?"}),
                ("get_memory", {"space": "customer-1", "memory_id": memory_id}),
                ("forget_memories", {"space": "customer-1", "utterance": "Forget that we have four vans."}),
                (
                    "get_memory",
                    {"space": "customer-1", "memory_id": f"../../../spaces/customer-1/memories/{memory_id}"},
                ),
                ("take_turn", {"space": "x" * 100_000, "message": "We run four vans."}),
            ],
        )
    )
    listed, recalled, stolen, forgot, traversal, unaddressable = results
    assert traversal.is_error and "invalid_request" in traversal.content[0].text
    assert unaddressable.is_error and "invalid_request" in unaddressable.content[0].text
    assert listed.structured_content == {"memories": []}
    assert recalled.structured_content["memories"] == []
    assert stolen.is_error and "not_found" in stolen.content[0].text and VANS not in stolen.content[0].text
    assert forgot.structured_content["forgotten"] == []
    with engram_for(key_a.secret) as engram:
        assert [m["id"] for m in engram.iter_memories("customer-1", kind="fact")] == [memory_id]


def test_the_http_endpoint_refuses_requests_without_a_key_and_tools_refuse_a_wrong_key(mcp_url, space_a):
    refused = httpx2.post(mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "not_authenticated"
    _, [result] = asyncio.run(call_tools(mcp_url, "eng_forged_key", [("list_memories", {"space": "customer-1"})]))
    assert result.is_error and "authentication_failed" in result.content[0].text


def test_shared_space_tools_find_past_cases_and_resolutions(mcp_url, key_a, tenant_a):
    refund = "The customer wants a refund because the parcel arrived damaged."
    with engram_for(key_a.secret) as engram:
        engram.create_space("support-agents", kind="shared")
        engram.create_episode("support-agents", inputs={"question": refund}, output="Refunded", outcome="resolved")
        engram.resolve_escalation(
            "support-agents", input=refund, resolution_comment="Refund under 50 EUR", outcome="refund"
        )
    _, (episodes, escalation, wrong_kind) = asyncio.run(
        call_tools(
            mcp_url,
            key_a.secret,
            [
                ("recall_episodes", {"space": "support-agents", "inputs": {"question": refund}}),
                ("match_escalation", {"space": "support-agents", "input": refund}),
                ("recall_episodes", {"space": "customer-1", "inputs": {"question": refund}}),
            ],
        )
    )
    assert [e["output"] for e in episodes.structured_content["episodes"]] == ["Refunded"]
    assert escalation.structured_content["apply"] is True and escalation.structured_content["outcome"] == "refund"
    assert wrong_kind.is_error and "not_found" in wrong_kind.content[0].text


def stdio_environment(key) -> dict[str, str]:
    """What ``manage.py mcp`` needs to serve ``key`` from this test's database."""
    return {
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "ENGRAM_DATABASE_NAME": connection.settings_dict["NAME"],
        "ENGRAM_API_KEY": key.secret,
    }


def test_the_stdio_server_answers_with_the_key_from_the_environment(transactional_db, key_a, space_a, settings):
    remember_vans(key_a)
    parameters = StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp"], env=stdio_environment(key_a), cwd=str(PROJECT)
    )

    async def recall():
        async with Client(stdio_client(parameters)) as client:
            return await client.call_tool("recall_memories", {"space": "customer-1", "query": "How many vans?"})

    result = asyncio.run(recall())
    assert not result.is_error, result.content
    assert result.structured_content["memories"][0]["content"] == VANS


@pytest.fixture
def start_stdio_server(transactional_db):
    """``manage.py mcp`` driven by hand, as a client that pipes its requests in; killed if a test leaves it."""
    servers = []

    def start(key, *options: str) -> subprocess.Popen:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "mcp", *options],
            cwd=PROJECT,
            env={**get_default_environment(), **stdio_environment(key)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        servers.append(server)
        return server

    yield start
    for server in servers:
        if server.poll() is None:
            server.kill()
            server.wait()


def tool_call(request_id: int, name: str, arguments: dict) -> dict:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def send_then_close_input(server: subprocess.Popen, requests: list[dict]) -> queue.Queue:
    """Initialize, send ``requests`` and close the server's input at once; returns what it writes, then None."""
    client = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    opening = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": client},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    written = queue.Queue()

    def read():
        for line in server.stdout:
            written.put(json.loads(line))
        written.put(None)

    threading.Thread(target=read, daemon=True).start()
    server.stdin.write(b"".join(json.dumps(message).encode() + b"\n" for message in opening + requests))
    server.stdin.close()
    return written


def next_written(written: queue.Queue, seconds: float = 120) -> dict:
    message = written.get(timeout=seconds)
    assert message is not None, "the server closed its output"
    return message


def until_output_ends(written: queue.Queue, seconds: float) -> list[dict]:
    deadline = time.monotonic() + seconds
    messages = []
    while (message := written.get(timeout=max(0.0, deadline - time.monotonic()))) is not None:
        messages.append(message)
    return messages


def test_the_stdio_server_answers_every_call_it_read_before_its_input_closed(start_stdio_server, key_a, space_a):
    """A batch piped in and the input closed at once: the calls still running then are answered, not dropped."""
    memory_id = remember_vans(key_a)
    server = start_stdio_server(key_a)
    written = send_then_close_input(
        server,
        [
            tool_call(1, "recall_memories", {"space": "customer-1", "query": "How many vans?"}),
            tool_call(2, "take_turn", {"space": "customer-1", "message": "We also bought two cargo bikes."}),
            tool_call(3, "get_memory", {"space": "customer-1", "memory_id": memory_id}),
        ],
    )
    messages = until_output_ends(written, seconds=120)
    assert server.wait(timeout=30) == 0
    assert sorted(message["id"] for message in messages) == [0, 1, 2, 3], messages
    results = {message["id"]: message["result"] for message in messages}
    assert not any(results[request_id]["isError"] for request_id in (1, 2, 3)), results
    assert results[1]["structuredContent"]["memories"][0]["content"] == VANS
    assert results[2]["structuredContent"]["turn_id"]
    assert results[3]["structuredContent"]["content"] == VANS


def test_a_call_still_running_when_the_drain_time_is_up_is_answered_as_not_completed(
    start_stdio_server, key_a, space_a
):
    """A forget queued behind a writer of the same space outlasts the drain time: it is answered with an error
    then, nothing more is written for it once it does finish, and the server exits cleanly."""
    remember_vans(key_a)
    with space_locked(space_a):
        server = start_stdio_server(key_a, "--drain-seconds", "1")
        written = send_then_close_input(
            server, [tool_call(1, "forget_memories", {"space": "customer-1", "utterance": "Forget our vans."})]
        )
        initialized, not_completed = next_written(written), next_written(written)
        assert initialized["id"] == 0 and "result" in initialized
        assert not_completed["id"] == 1 and not_completed["error"]["code"] == REQUEST_TIMEOUT, not_completed
        assert "Not completed" in not_completed["error"]["message"]
    assert until_output_ends(written, seconds=120) == []
    assert server.wait(timeout=30) == 0


def tool_results(url: str, api_key: str, *calls: tuple[str, dict]):
    return asyncio.run(call_tools(url, api_key, list(calls)))[1]


def test_an_agent_waits_for_a_turn_then_corrects_restores_and_deletes_a_memory(mcp_url, key_a, space_a):
    tools, results = asyncio.run(
        call_tools(
            mcp_url,
            key_a.secret,
            [
                ("take_turn", {"space": "customer-1", "message": FACT, "wait": True}),
                ("recall_memories", {"space": "customer-1", "query": "How many vans?"}),
                ("list_spaces", {}),
            ],
        )
    )
    assert {"update_memory", "delete_memory", "restore_memory", "list_spaces"} <= set(tools)
    assert not any(r.is_error for r in results)
    turn, recalled, listed = (r.structured_content for r in results)
    # Waiting, the turn's own facts are there for the very next recall.
    [created] = [m for m in turn["created"] if m["kind"] == "fact"]
    assert created["content"] == VANS and recalled["memories"][0]["id"] == created["id"]
    assert [(s["external_id"], s["kind"]) for s in listed["spaces"]] == [("customer-1", "end_user")]
    space, memory_id = "customer-1", created["id"]

    edited, shown = tool_results(
        mcp_url,
        key_a.secret,
        ("update_memory", {"space": space, "memory_id": memory_id, "content": "We run a fleet of five vans."}),
        ("get_memory", {"space": space, "memory_id": memory_id}),
    )
    assert edited.structured_content["content"] == "We run a fleet of five vans."
    [earlier] = [v for v in shown.structured_content["history"] if v["superseded_by"] == memory_id]
    assert earlier["content"] == VANS

    restored, already_current = tool_results(
        mcp_url,
        key_a.secret,
        ("restore_memory", {"space": space, "memory_id": earlier["id"]}),
        ("restore_memory", {"space": space, "memory_id": earlier["id"]}),
    )
    assert restored.structured_content["content"] == VANS and restored.structured_content["superseded_by"] is None
    assert already_current.is_error and "conflict" in already_current.content[0].text

    deleted, gone = tool_results(
        mcp_url,
        key_a.secret,
        ("delete_memory", {"space": space, "memory_id": earlier["id"]}),
        ("get_memory", {"space": space, "memory_id": earlier["id"]}),
    )
    assert deleted.structured_content == {"deleted": earlier["id"]}
    assert gone.is_error and "not_found" in gone.content[0].text
    with engram_for(key_a.secret) as engram:
        assert list(engram.iter_memories(space, kind="fact")) == []


def test_the_editing_tools_refuse_another_tenant_and_a_key_without_admin(mcp_url, key_a, key_b, space_a, space_b):
    memory_id = remember_vans(key_a)
    turns_only = issue_api_key(tenant=key_a.api_key.tenant, name="turns only", scopes=["turns"])
    edit = {"space": "customer-1", "memory_id": memory_id, "content": "We run no vans."}
    target = {"space": "customer-1", "memory_id": memory_id}
    for key in (key_b, turns_only):
        edited, restored, deleted, spaces = tool_results(
            mcp_url,
            key.secret,
            ("update_memory", edit),
            ("restore_memory", target),
            ("delete_memory", target),
            ("list_spaces", {}),
        )
        assert edited.is_error and restored.is_error and deleted.is_error, key.api_key.name
        assert VANS not in edited.content[0].text
        if key is key_b:  # its own customer-1, never Alice's
            assert [s["display_name"] for s in spaces.structured_content["spaces"]] == ["Bob's customer"]
    with engram_for(key_a.secret) as engram:
        [fact] = engram.iter_memories("customer-1", kind="fact")
        assert (fact["id"], fact["content"]) == (memory_id, VANS)
        assert [v["id"] for v in engram.memory_history("customer-1", memory_id)] == [memory_id]


def readme_stdio_config() -> dict:
    """The stdio client configuration README.md gives, as a user pastes it."""
    readme = (PROJECT / "README.md").read_text()
    [block] = [b for b in readme.split("```json\n")[1:] if '"mcpServers"' in b.split("```", 1)[0]]
    return json.loads(block.split("```", 1)[0])["mcpServers"]["engram"]


def test_the_readmes_stdio_configuration_works_in_the_sdks_client(transactional_db, key_a, space_a, tmp_path):
    remember_vans(key_a)
    pasted = json.loads(
        json.dumps(readme_stdio_config()).replace("/path/to/engram", str(PROJECT)).replace("eng_...", key_a.secret)
    )
    assert pasted["env"]["ENGRAM_API_KEY"] == key_a.secret and Path(pasted["command"]).exists()
    # Only where this test's database is, and the test keyring its spaces were sealed with, are added: the
    # README's configuration points at the development database `make run` made.
    own_database = {
        "ENGRAM_DATABASE_NAME": connection.settings_dict["NAME"],
        "ENGRAM_MASTER_KEY": settings_master_key(),
        "ENGRAM_DEFAULT_KEY_ID": "default",
    }
    parameters = StdioServerParameters(
        command=pasted["command"], args=pasted["args"], env={**pasted["env"], **own_database}, cwd=str(tmp_path)
    )  # a client starts the server from its own directory, not the project's

    async def use():
        async with Client(stdio_client(parameters)) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            recalled = await client.call_tool("recall_memories", {"space": "customer-1", "query": "How many vans?"})
            return tools, recalled

    tools, recalled = asyncio.run(use())
    assert {"take_turn", "recall_memories", "update_memory", "delete_memory", "list_spaces"} <= set(tools)
    assert not recalled.is_error, recalled.content
    assert recalled.structured_content["memories"][0]["content"] == VANS


def settings_master_key() -> str:
    from django.conf import settings

    return settings.ENGRAM_MASTER_KEY
