"""The LangGraph store (clients/python-langgraph) against the real server: pytest-django's live server."""

from __future__ import annotations

import asyncio
from typing import TypedDict

import pytest
from engram_client import AsyncEngram, AuthenticationFailed, Engram, InvalidRequest, PermissionDenied
from engram_langgraph import SPACE, EngramStore
from langgraph.store.base import GetOp, InvalidNamespaceError, Item, ListNamespacesOp, PutOp, SearchItem, SearchOp

from tenants.api_keys import issue_api_key

FACT = "Hi! We run a fleet of four vans. Can you check my invoice?"
VANS = "We run a fleet of four vans."
QUESTION = "How many vans does the customer have?"
ALICE = ("memories", "customer-1")


@pytest.fixture
def live_server(transactional_db):
    """A live server for this test only, stopped before the test database is dropped."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer("localhost:0")
    yield server
    server.stop()


def client_for(live_server, secret: str, **options) -> Engram:
    return Engram(live_server.url, api_key=secret, backoff=0.05, **options)


@pytest.fixture
def store_a(live_server, key_a, space_a):
    with client_for(live_server, key_a.secret) as client:
        yield EngramStore(client)


@pytest.fixture
def store_b(live_server, key_b, space_b):
    with client_for(live_server, key_b.secret) as client:
        yield EngramStore(client)


def vans_item(store: EngramStore, namespace=ALICE) -> SearchItem:
    found = store.search(namespace, query=QUESTION)
    return next(item for item in found if item.value["content"] == VANS)


def test_a_put_is_what_the_customer_said_and_search_finds_what_engram_derived(store_a):
    assert store_a.put(ALICE, "note-1", {"content": FACT}) is None
    item = vans_item(store_a)
    assert item.namespace == ALICE and item.value["kind"] == "fact" and isinstance(item.score, float)
    assert item.value["source"]["message_id"].startswith("langgraph:note-1:")
    # The key is the derived memory's id, not the put's: get finds the memory by it, and nothing by "note-1".
    got = store_a.get(ALICE, item.key)
    assert isinstance(got, Item) and got.value["content"] == VANS and got.created_at <= got.updated_at
    assert store_a.get(ALICE, "note-1") is None
    # Without a query, a search lists the space's memories, filtered by kind (or topic) on the server.
    listed = store_a.search(ALICE, filter={"kind": "fact"})
    assert [(i.key, i.value["content"]) for i in listed] == [(item.key, VANS)]
    assert {i.value["kind"] for i in store_a.search(ALICE)} >= {"fact", "topic"}
    assert store_a.search(ALICE, filter={"kind": {"$eq": "fact"}}, offset=1) == []
    # The same put again (a retry) stores nothing new.
    store_a.put(ALICE, "note-1", {"content": FACT})
    assert len(store_a.search(ALICE, filter={"kind": "fact"})) == 1


def test_a_put_under_a_memorys_id_changes_it_and_delete_removes_it(store_a):
    store_a.put(ALICE, "note-1", {"content": FACT})
    item = vans_item(store_a)
    # An item read back can be changed and put back: the fields only Engram sets are ignored.
    store_a.put(ALICE, item.key, {**item.value, "content": "We run a fleet of five vans.", "importance": 0.4})
    changed = store_a.get(ALICE, item.key)
    assert changed.value["content"] == "We run a fleet of five vans." and changed.value["importance"] == 0.4
    assert changed.value["superseded_reason"] == ""
    store_a.delete(ALICE, item.key)
    assert store_a.get(ALICE, item.key) is None
    store_a.delete(ALICE, item.key)  # deleting what is not there is a no-op
    store_a.delete(ALICE, "not-a-memory-id")


def test_batch_runs_each_operation_in_order_and_answers_in_order(store_a):
    put = PutOp(ALICE, "note-1", {"content": FACT})
    search = SearchOp(ALICE, filter={"kind": "fact"})
    results = store_a.batch([put, search, GetOp(ALICE, "note-1"), ListNamespacesOp(limit=5)])
    assert results[0] is None and [i.value["content"] for i in results[1]] == [VANS]
    assert results[2] is None and results[3] == [ALICE]


def test_namespaces_are_spaces(store_a, live_server, key_a):
    store_a.put(("memories", "customer-9"), "first", {"content": "I moved to Lyon last month."})
    with client_for(live_server, key_a.secret) as engram:
        assert engram.get_space("customer-9")["external_id"] == "customer-9"
    assert store_a.list_namespaces() == [("memories", "customer-1"), ("memories", "customer-9")]
    assert store_a.list_namespaces(prefix=("memories",), limit=1, offset=1) == [("memories", "customer-9")]
    assert store_a.list_namespaces(suffix=("customer-1",)) == [ALICE]
    assert store_a.list_namespaces(prefix=("*", "customer-9")) == [("memories", "customer-9")]
    assert store_a.list_namespaces(max_depth=1) == [("memories",)]
    assert store_a.list_namespaces(prefix=("other",)) == []
    # Another template puts the customer first; the space is the same.
    customer_first = EngramStore(store_a.client, namespace=(SPACE, "memories"))
    assert ("customer-9", "memories") in customer_first.list_namespaces()
    assert customer_first.search(("customer-9", "memories"))
    # A search or get needs one customer's whole namespace: Engram recalls one space at a time.
    for prefix in [("memories",), (), ("memories", "customer-1", "extra"), ("other", "customer-1")]:
        with pytest.raises(InvalidNamespaceError, match="names no Engram space"):
            store_a.search(prefix, query="Where do I live?")
    # A namespace without a space yet holds nothing.
    assert store_a.search(("memories", "nobody"), query="anything?") == []
    assert store_a.search(("memories", "nobody")) == []


def test_another_tenants_key_sees_nothing_through_the_store(store_a, store_b, live_server, key_b):
    store_a.put(ALICE, "note-1", {"content": FACT})
    item = vans_item(store_a)
    store_a.put(("memories", "only-alice"), "x", {"content": "We sell bread in Brno."})
    # Bob's tenant has a space with the same external id: it is his own, and empty.
    assert store_b.get(ALICE, item.key) is None
    assert store_b.search(ALICE, query=QUESTION) == []
    assert store_b.search(ALICE) == []
    assert store_b.search(("memories", "only-alice"), query="What do we sell?") == []
    assert store_b.list_namespaces() == [ALICE]
    store_b.delete(ALICE, item.key)
    # Alice's memory id is no memory of Bob's: his put under it is a new message in his own space.
    store_b.put(ALICE, item.key, {"content": "We have no vans."})
    assert store_a.get(ALICE, item.key).value["content"] == VANS
    with client_for(live_server, key_b.secret) as bob:
        assert not any(m["id"] == item.key for m in bob.iter_memories("customer-1"))


def test_api_errors_reach_the_caller_as_the_clients_typed_errors(store_a, live_server, tenant_a, space_a):
    store_a.put(ALICE, "note-1", {"content": FACT})
    item = vans_item(store_a)
    with client_for(live_server, "eng_wrong_key", max_retries=0) as stranger:
        with pytest.raises(AuthenticationFailed):
            EngramStore(stranger).list_namespaces()
        with pytest.raises(AuthenticationFailed):
            EngramStore(stranger).search(ALICE, query=QUESTION)
    agent_key = issue_api_key(tenant=tenant_a, name="agent", scopes=["turns"])
    with client_for(live_server, agent_key.secret) as agent:
        agent_store = EngramStore(agent)
        assert vans_item(agent_store).key == item.key  # reading is the turns scope's
        with pytest.raises(PermissionDenied):  # changing a memory is the admin scope's
            agent_store.put(ALICE, item.key, {"content": "We run a fleet of six vans."})
        with pytest.raises(PermissionDenied):
            agent_store.delete(ALICE, item.key)
    with pytest.raises(InvalidRequest) as caught:
        store_a.search(ALICE, query="   ")
    assert "query" in caught.value.details
    # What Engram cannot store or filter is refused before any request, not dropped.
    with pytest.raises(ValueError, match="stores no"):
        store_a.put(ALICE, "note-2", {"content": "x", "metadata": {"a": 1}})
    with pytest.raises(ValueError, match="needs 'content'"):
        store_a.put(ALICE, "note-2", {"content": 4})
    with pytest.raises(ValueError, match="can only change a memory that exists"):
        store_a.put(ALICE, "note-2", {"content": "We have a depot in Leeds.", "topic": "depot"})
    with pytest.raises(ValueError, match="cannot filter"):
        store_a.search(ALICE, filter={"importance": {"$gt": 0.5}})
    assert store_a.get(ALICE, item.key).value["content"] == VANS


def test_the_async_methods_use_the_async_client(live_server, key_a, space_a):
    async def scenario():
        async with AsyncEngram(live_server.url, api_key=key_a.secret, backoff=0.05) as client:
            store = EngramStore(async_client=client)
            await store.aput(ALICE, "note-1", {"content": FACT})
            found = await store.asearch(ALICE, query=QUESTION)
            vans = next(i for i in found if i.value["content"] == VANS)
            assert (await store.aget(ALICE, vans.key)).value["content"] == VANS
            assert [i.key for i in await store.asearch(ALICE, filter={"kind": "fact"})] == [vans.key]
            assert await store.alist_namespaces() == [ALICE]
            await store.adelete(ALICE, vans.key)
            assert await store.aget(ALICE, vans.key) is None
            with pytest.raises(TypeError, match="only an async client"):
                store.get(ALICE, vans.key)

    asyncio.run(scenario())


def test_without_an_async_client_the_async_methods_run_the_sync_one_in_a_thread(store_a):
    async def scenario():
        await store_a.aput(ALICE, "note-1", {"content": FACT})
        return await store_a.asearch(ALICE, query=QUESTION)

    assert VANS in [i.value["content"] for i in asyncio.run(scenario())]


class State(TypedDict, total=False):
    customer: str
    question: str
    memories: list[str]


def test_a_graph_node_reads_the_customers_memories_through_the_store(store_a):
    from langgraph.graph import StateGraph
    from langgraph.runtime import Runtime

    def remember(state: State, runtime: Runtime) -> State:
        namespace = ("memories", state["customer"])
        runtime.store.put(namespace, "opening", {"content": FACT})
        return {}

    def recall(state: State, runtime: Runtime) -> State:
        found = runtime.store.search(("memories", state["customer"]), query=state["question"], limit=3)
        return {"memories": [item.value["content"] for item in found]}

    graph = (
        StateGraph(State)
        .add_node("remember", remember)
        .add_node("recall", recall)
        .add_edge("remember", "recall")
        .set_entry_point("remember")
        .set_finish_point("recall")
        .compile(store=store_a)
    )
    result = graph.invoke({"customer": "customer-1", "question": QUESTION})
    assert VANS in result["memories"]
