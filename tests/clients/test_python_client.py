"""The Python client (clients/python) against the real server: pytest-django's live server on the test database."""

from __future__ import annotations

import asyncio
import datetime
import http.server
import threading
import time

import httpx2
import pytest
from engram_client import AsyncEngram, AuthenticationFailed, Conflict, Engram, InvalidRequest, NotFound, RateLimited

from tests.conftest import make_space

FACT = "Hi! We run a fleet of four vans. Can you check my invoice?"


@pytest.fixture
def live_server(transactional_db):
    """A live server for this test only, stopped before the test database is dropped."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer("localhost:0")
    yield server
    server.stop()


class CountingTransport(httpx2.HTTPTransport):
    """The real HTTP transport, recording each answer's status so a test can see the retries."""

    def __init__(self):
        super().__init__()
        self.statuses: list[int] = []

    def handle_request(self, request):
        response = super().handle_request(request)
        self.statuses.append(response.status_code)
        return response


@pytest.fixture
def engram_a(live_server, key_a, space_a):
    with Engram(live_server.url, api_key=key_a.secret, backoff=0.05) as client:
        yield client


@pytest.fixture
def engram_b(live_server, key_b, space_b):
    with Engram(live_server.url, api_key=key_b.secret, backoff=0.05) as client:
        yield client


def test_a_turn_stores_what_the_customer_said_and_recall_finds_it(engram_a):
    turn = engram_a.post_turn("customer-1", FACT, wait=True)
    assert turn["status"] == "done"
    assert ("fact", "We run a fleet of four vans.") in [(m["kind"], m["content"]) for m in turn["created"]]
    recalled = engram_a.recall("customer-1", "How many vans does the customer have?", provenance=True)
    vans = next(m for m in recalled["memories"] if m["content"] == "We run a fleet of four vans.")
    assert vans["source"]["turn_id"] == turn["turn_id"] and vans["source"]["message_id"].startswith("client-")
    assert recalled["memories"][0]["score"]["distance"] is not None
    assert engram_a.get_turn(turn["turn_id"])["turn_id"] == turn["turn_id"]
    reply = engram_a.post_reply("customer-1", turn["turn_id"], "Four vans, noted.")
    assert reply["session_id"] == turn["session_id"]


def test_recall_and_turns_take_the_room_for_memories(engram_a):
    engram_a.post_turn("customer-1", FACT, wait=True)
    recalled = engram_a.recall("customer-1", "How many vans does the customer have?", max_chars=120)
    assert [m["content"] for m in recalled["memories"] if m["kind"] != "topic"] == ["We run a fleet of four vans."]
    assert recalled["left_out"] == 0
    turn = engram_a.post_turn("customer-1", "How many vans do we have again?", max_chars=100)
    assert turn["left_out"] == 0 and "We run a fleet of four vans." in turn["prompt"]


def test_posting_the_same_message_id_twice_stores_it_once(engram_a):
    first = engram_a.post_turn("customer-1", FACT, message_id="m-1", wait=True)
    again = engram_a.post_turn("customer-1", FACT, message_id="m-1", wait=True)
    assert again["turn_id"] == first["turn_id"]
    facts = [m for m in engram_a.iter_memories("customer-1", kind="fact")]
    assert [m["content"] for m in facts] == ["We run a fleet of four vans."]


def test_iterators_walk_every_page(engram_a):
    for n in range(6):
        engram_a.create_space(f"paged-{n}")
    ids = [s["external_id"] for s in engram_a.iter_spaces(page_size=2)]
    assert sorted(ids) == sorted(["customer-1", *(f"paged-{n}" for n in range(6))])
    assert len(ids) == len(set(ids))


def test_another_tenants_key_sees_nothing(engram_a, engram_b):
    turn = engram_a.post_turn("customer-1", FACT, wait=True)
    memory_id = turn["created"][0]["id"]
    # Bob's tenant has a space with the same external id: it is his own, and empty.
    assert list(engram_b.iter_memories("customer-1")) == []
    assert engram_b.recall("customer-1", "How many vans?")["memories"] == []
    with pytest.raises(NotFound) as caught:
        engram_b.get_memory("customer-1", memory_id)
    assert caught.value.code == "not_found" and caught.value.status == 404
    with pytest.raises(NotFound):
        engram_b.get_turn(turn["turn_id"])
    engram_a.create_space("only-in-alices-tenant")
    with pytest.raises(NotFound):
        engram_b.get_space("only-in-alices-tenant")
    assert engram_b.forget("customer-1", "Forget that I have four vans.")["forgotten"] == []
    assert [m["id"] for m in engram_a.iter_memories("customer-1", kind="fact")] == [memory_id]


def test_errors_carry_the_apis_code_and_details(engram_a, live_server):
    with pytest.raises(InvalidRequest) as caught:
        engram_a.recall("customer-1", "vans", limit=500)
    assert caught.value.code == "invalid_request" and "limit" in caught.value.details
    with Engram(live_server.url, api_key="eng_wrong_key", max_retries=0) as stranger:
        with pytest.raises(AuthenticationFailed) as caught:
            list(stranger.iter_spaces())
    assert caught.value.status == 401


def test_a_rate_limited_call_waits_for_retry_after_and_then_succeeds(settings, live_server, key_a, space_a):
    settings.ENGRAM_API_RATE_LIMIT = "2/second"
    transport = CountingTransport()
    with Engram(live_server.url, api_key=key_a.secret, transport=transport, max_retries=4) as client:
        for _ in range(4):
            assert client.get_space("customer-1")["external_id"] == "customer-1"
    assert 429 in transport.statuses
    assert transport.statuses.count(200) == 4


def test_a_rate_limited_call_without_retries_raises_with_the_servers_advice(settings, live_server, key_a, space_a):
    settings.ENGRAM_API_RATE_LIMIT = "1/minute"
    with Engram(live_server.url, api_key=key_a.secret, max_retries=0) as client:
        client.get_space("customer-1")
        with pytest.raises(RateLimited) as caught:
            client.get_space("customer-1")
    assert caught.value.code == "rate_limited" and caught.value.retry_after and caught.value.retry_after > 0


def test_forget_dry_run_deletes_nothing_and_the_real_one_is_audited(engram_a):
    engram_a.post_turn("customer-1", FACT, wait=True)
    dry = engram_a.forget("customer-1", "Please forget that we have four vans.", dry_run=True)
    assert dry["dry_run"] is True and dry["candidates"]
    assert len(list(engram_a.iter_memories("customer-1", kind="fact"))) == 1
    done = engram_a.forget("customer-1", "Please forget that we have four vans.")
    assert [f["content"] for f in done["forgotten"]] == ["We run a fleet of four vans.", "vehicle"]
    assert list(engram_a.iter_memories("customer-1", kind="fact")) == []
    assert engram_a.check_deletion("customer-1", "We run a fleet of four vans.")["deleted"] is True
    # The statement and the topic tag that went with it, each audited (#25).
    assert [d["cause"] for d in engram_a.iter_deletions(space="customer-1")] == ["customer_request"] * 2


def test_export_and_import_round_trip(engram_a, tenant_a):
    engram_a.post_turn("customer-1", FACT, wait=True)
    make_space(tenant_a, "customer-copy")
    exported = engram_a.export_space("customer-1")
    assert exported.startswith(b"{")
    assert engram_a.import_space("customer-copy", exported)["memories"] >= 1
    assert [m["content"] for m in engram_a.iter_memories("customer-copy", kind="fact")] == [
        "We run a fleet of four vans."
    ]


def test_shared_space_cases_and_escalations(engram_a):
    engram_a.create_space("support-agents", kind="shared")
    refund = "The customer wants a refund because the parcel arrived damaged."
    stored = engram_a.resolve_escalation(
        "support-agents", input=refund, resolution_comment="Refund under 50 EUR", outcome="refund"
    )
    match = engram_a.match_escalation("support-agents", refund)
    assert match["apply"] is True and match["episode_id"] == stored["episode"]["id"]
    assert [e["id"] for e in engram_a.iter_episodes("support-agents", kind="resolution")] == [stored["episode"]["id"]]
    case = engram_a.create_episode("support-agents", inputs={"question": refund}, output="Refunded", outcome="resolved")
    recalled = engram_a.recall_episodes("support-agents", {"question": refund})
    assert [e["id"] for e in recalled["episodes"]] == [case["episode"]["id"]]


def test_the_async_client_does_the_same(live_server, key_a, key_b, space_a, space_b):
    async def scenario():
        async with (
            AsyncEngram(live_server.url, api_key=key_a.secret) as alice,
            AsyncEngram(live_server.url, api_key=key_b.secret) as bob,
        ):
            turn = await alice.post_turn("customer-1", FACT, message_id="same", wait=True)
            again = await alice.post_turn("customer-1", FACT, message_id="same", wait=True)
            recalled = await alice.recall("customer-1", "How many vans?")
            facts = [m async for m in alice.iter_memories("customer-1", kind="fact", page_size=1)]
            bobs = [m async for m in bob.iter_memories("customer-1")]
            try:
                await bob.get_turn(turn["turn_id"])
                bob_error = None
            except NotFound as error:
                bob_error = error.code
            return turn, again, recalled, facts, bobs, bob_error

    turn, again, recalled, facts, bobs, bob_error = asyncio.run(scenario())
    assert turn["status"] == "done" and again["turn_id"] == turn["turn_id"]
    assert "We run a fleet of four vans." in [m["content"] for m in recalled["memories"]]
    assert [m["content"] for m in facts] == ["We run a fleet of four vans."]
    assert bobs == [] and bob_error == "not_found"


def test_retry_after_is_read_as_seconds_or_a_date_and_bounded():
    from email.utils import format_datetime

    from engram_client.retries import retry_after_seconds

    now = 1_800_000_000.0
    in_ten_seconds = format_datetime(datetime.datetime.fromtimestamp(now + 10, tz=datetime.UTC), usegmt=True)
    assert retry_after_seconds("5") == 5.0
    assert retry_after_seconds(in_ten_seconds, now=now) == pytest.approx(10.0)
    assert retry_after_seconds("3600") == 60.0  # a hostile or broken server cannot park the client for an hour
    assert retry_after_seconds("-4") == 0.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


def test_an_id_that_names_another_path_is_refused_before_anything_is_sent(live_server, key_a, space_a):
    transport = CountingTransport()
    with Engram(live_server.url, api_key=key_a.secret, transport=transport) as client:
        for space, memory_id in (("customer-1/memories", "x"), ("customer-1", "../../deletions"), ("..", "x")):
            with pytest.raises(ValueError):
                client.get_memory(space, memory_id)
        assert client.get_space("customer-1")["external_id"] == "customer-1"
    assert transport.statuses == [200]


def test_the_remaining_operations_round_trip(engram_a):
    turn = engram_a.ingest(
        "customer-1",
        [{"role": "agent", "content": "How can I help?"}, {"role": "customer", "content": FACT, "id": "line-2"}],
        session_id="import-1",
        wait=True,
    )
    assert turn["status"] == "done"
    again = engram_a.ingest(
        "customer-1",
        [{"role": "agent", "content": "How can I help?"}, {"role": "customer", "content": FACT, "id": "line-2"}],
        session_id="import-1",
    )
    assert again["turn_id"] == turn["turn_id"]
    [fact] = engram_a.iter_memories("customer-1", kind="fact")
    edited = engram_a.update_memory("customer-1", fact["id"], content="We run a fleet of five vans.")
    assert edited["content"] == "We run a fleet of five vans."
    # The history lists the current version first, then the ones it superseded.
    [earlier] = [v for v in engram_a.memory_history("customer-1", edited["id"]) if v["superseded_by"] == edited["id"]]
    assert (earlier["content"], earlier["superseded_reason"]) == (fact["content"], "edited")
    restored = engram_a.restore_memory("customer-1", earlier["id"])
    assert (restored["content"], restored["superseded_by"]) == (fact["content"], None)
    with pytest.raises(Conflict):
        engram_a.restore_memory("customer-1", restored["id"])
    assert [m["content"] for m in engram_a.iter_memories("customer-1", kind="fact")] == [fact["content"]]
    fact = restored
    assert engram_a.delete_memory("customer-1", fact["id"]) is None
    assert list(engram_a.iter_memories("customer-1", kind="fact")) == []
    assert engram_a.update_space("customer-1", display_name="First customer")["display_name"] == "First customer"

    engram_a.create_space("support-agents", kind="shared")
    stored = engram_a.create_episode("support-agents", inputs={"question": "Where is my parcel?"}, output="Tracked",
                                     outcome="resolved")  # fmt: skip
    episode_id = stored["episode"]["id"]
    assert engram_a.get_episode("support-agents", episode_id)["output"] == "Tracked"
    assert engram_a.update_episode("support-agents", episode_id, output="Tracked it")["output"] == "Tracked it"
    engram_a.delete_episode("support-agents", episode_id)
    with pytest.raises(NotFound):
        engram_a.get_episode("support-agents", episode_id)
    engram_a.delete_space("support-agents")
    with pytest.raises(NotFound):
        engram_a.get_space("support-agents")


class FlakyApi(http.server.BaseHTTPRequestHandler):
    """A local server that answers 503 with Retry-After a set number of times, then the API's JSON."""

    unavailable_left = 0
    seen: list = []

    def answer(self):
        FlakyApi.seen.append((self.command, self.path, time.monotonic()))
        if FlakyApi.unavailable_left > 0:
            FlakyApi.unavailable_left -= 1
            body = b'{"error": {"code": "service_unavailable", "message": "restarting", "details": null}}'
            self.send_response(503)
            self.send_header("Retry-After", "1")
        else:
            body = b'{"external_id": "customer-1"}'
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = answer

    def log_message(self, *args):
        pass


@pytest.fixture
def flaky_api():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FlakyApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    FlakyApi.seen = []
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_a_503_is_retried_after_the_servers_retry_after(flaky_api):
    FlakyApi.unavailable_left = 2
    with Engram(flaky_api, api_key="eng_x_y", backoff=0) as client:
        assert client.get_space("customer-1") == {"external_id": "customer-1"}
    times = [t for _, _, t in FlakyApi.seen]
    assert len(times) == 3 and all(later - earlier >= 0.95 for earlier, later in zip(times, times[1:], strict=False))


def test_when_retries_run_out_the_503_is_raised_with_its_code(flaky_api):
    from engram_client import ServiceUnavailable

    FlakyApi.unavailable_left = 5
    with Engram(flaky_api, api_key="eng_x_y", max_retries=1) as client:
        with pytest.raises(ServiceUnavailable) as caught:
            client.get_space("customer-1")
    assert caught.value.code == "service_unavailable" and caught.value.retry_after == 1.0
    assert len(FlakyApi.seen) == 2
