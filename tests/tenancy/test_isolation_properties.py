"""Isolation as a property: random sequences of operations by two tenants over several spaces — turns,
recall, forgetting, memory reads and edits by guessed ids, episodes, export, console pages — and after
every step, nobody has seen, changed or deleted a row of another tenant or another space.

Every stored text carries its owner's tag (tenant and space), so a leak shows up as a foreign tag in a
response; every row is snapshotted before a step and compared after it.
"""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.models import Episode, Memory
from tenants import scope
from tenants.api_keys import issue_api_key
from tenants.tenant_admin import create_operator
from tests.conftest import api_client, make_space

pytestmark = pytest.mark.django_db
TAGS = {("a", "s1"): "Amber11", ("a", "s2"): "Amber22", ("b", "s1"): "Birch11", ("b", "s2"): "Birch22"}
ALL_TAGS = set(TAGS.values())


class World:
    def __init__(self, tenant_a, tenant_b):
        self.tenants = {"a": tenant_a, "b": tenant_b}
        self.clients = {
            name: api_client(issue_api_key(tenant=t, name=f"{name} admin", scopes=["turns", "admin"]).secret)
            for name, t in self.tenants.items()
        }
        self.consoles = {}
        for name, tenant in self.tenants.items():
            membership = create_operator(tenant=tenant, username=f"op-{name}", password="a-long-password")
            client = Client()
            client.force_login(membership.user)
            self.consoles[name] = client
        # Both tenants use the same external ids: only the tenant tells them apart.
        for tenant in self.tenants.values():
            make_space(tenant, "s1")
            make_space(tenant, "s2")
            make_space(tenant, "agents", kind="shared")
        self.counter = 0

    def rows(self) -> dict:
        """Every memory and episode of both tenants: (owner, id) → what it says."""
        snapshot = {}
        for name, tenant in self.tenants.items():
            with scope.tenant_scope(tenant):
                for memory in Memory.objects.select_related("space"):
                    snapshot[(name, memory.space.external_id, "memory", memory.pk)] = (memory.content, memory.kind)
                for episode in Episode.objects.select_related("space"):
                    snapshot[(name, episode.space.external_id, "episode", episode.pk)] = (episode.outcome,)
        return snapshot

    def ids_of(self, tenant: str, space: str) -> list:
        return [key[3] for key in self.rows() if key[0] == tenant and key[1] == space and key[2] == "memory"]


def foreign_tags(text: str, allowed: set[str]) -> set[str]:
    return {tag for tag in ALL_TAGS - allowed if tag in text}


tenant_names = st.sampled_from(["a", "b"])
space_names = st.sampled_from(["s1", "s2"])
operations = st.one_of(
    st.tuples(st.just("turn"), tenant_names, space_names),
    st.tuples(st.just("recall"), tenant_names, space_names),
    st.tuples(st.just("forget"), tenant_names, space_names),
    st.tuples(st.just("list"), tenant_names, space_names),
    st.tuples(
        st.just("guess_id"),
        tenant_names,
        space_names,
        tenant_names,
        space_names,
        st.sampled_from(["get", "patch", "delete", "history"]),
    ),  # fmt: skip
    st.tuples(st.just("random_id"), tenant_names, space_names),
    st.tuples(st.just("export"), tenant_names, space_names),
    st.tuples(st.just("episode"), tenant_names),
    st.tuples(st.just("console"), tenant_names, space_names),
    st.tuples(st.just("other_space_url"), tenant_names),
)


def run(world: World, op: tuple, before: dict) -> set:
    """Perform one operation; return the (tenant, space) pairs it was allowed to change."""
    kind, tenant = op[0], op[1]
    client = world.clients[tenant]
    if kind == "turn":
        space = op[2]
        world.counter += 1
        tag = TAGS[(tenant, space)]
        body = {"message": f"Our warehouse code is {tag}-{world.counter}.", "session_id": f"s{world.counter}"}
        response = client.post(f"/api/v1/spaces/{space}/turns?wait=true", body, format="json")
        assert response.status_code == 201, response.content
        assert not foreign_tags(response.content.decode(), {tag})
        return {(tenant, space)}
    if kind == "recall":
        space = op[2]
        response = client.post(f"/api/v1/spaces/{space}/recall", {"query": "What is the warehouse code?"},
                               format="json")  # fmt: skip
        assert response.status_code == 200
        assert not foreign_tags(response.content.decode(), {TAGS[(tenant, space)]})
        return set()
    if kind == "forget":
        space = op[2]
        response = client.post(f"/api/v1/spaces/{space}/forget",
                               {"utterance": "Forget our warehouse code."}, format="json")  # fmt: skip
        assert response.status_code == 200
        assert not foreign_tags(response.content.decode(), {TAGS[(tenant, space)]})
        return {(tenant, space)}
    if kind == "list":
        space = op[2]
        response = client.get(f"/api/v1/spaces/{space}/memories")
        assert response.status_code == 200
        assert not foreign_tags(response.content.decode(), {TAGS[(tenant, space)]})
        return set()
    if kind == "guess_id":
        _, tenant, space, owner, owner_space, method = op
        targets = world.ids_of(owner, owner_space)
        if not targets:
            return set()
        memory_id = targets[world.counter % len(targets)]
        url = f"/api/v1/spaces/{space}/memories/{memory_id}" + ("/history" if method == "history" else "")
        call = {"get": client.get, "history": client.get, "delete": client.delete,
                "patch": lambda u: client.patch(u, {"content": "hijacked"}, format="json")}[method]  # fmt: skip
        response = call(url)
        if (tenant, space) == (owner, owner_space):
            assert response.status_code in (200, 204)
            return {(tenant, space)}
        assert response.status_code == 404, (op, response.status_code)
        return set()
    if kind == "random_id":
        space = op[2]
        for url in (f"/api/v1/spaces/{space}/memories/{uuid.uuid4()}", f"/api/v1/turns/{uuid.uuid4()}"):
            assert client.get(url).status_code == 404
        return set()
    if kind == "export":
        space = op[2]
        response = client.get(f"/api/v1/spaces/{space}/export")
        text = b"".join(response.streaming_content).decode()
        records = [json.loads(line) for line in text.splitlines()[1:]]
        assert not foreign_tags(text, {TAGS[(tenant, space)]})
        own = {key[3] for key in before if key[0] == tenant and key[1] == space and key[2] == "memory"}
        assert {uuid.UUID(r["id"]) for r in records if r.get("type") == "memory"} == own
        return set()
    if kind == "episode":
        world.counter += 1
        tag = f"{tenant.upper()}-case-{world.counter}"
        body = {"inputs": {"question": f"Case {tag} about a late parcel"}, "output": tag, "outcome": tag,
                "on_duplicate": "add"}  # fmt: skip
        assert client.post("/api/v1/spaces/agents/episodes", body, format="json").status_code == 201
        found = client.post("/api/v1/spaces/agents/episodes/recall",
                            {"inputs": {"question": "a late parcel"}}, format="json").content.decode()  # fmt: skip
        other = "B" if tenant == "a" else "A"
        assert f"{other}-case-" not in found
        return {(tenant, "agents")}
    if kind == "console":
        space = op[2]
        page = world.consoles[tenant].get(f"/console/spaces/{space}/").content.decode()
        assert not foreign_tags(page, {TAGS[(tenant, space)]})
        return set()
    if kind == "other_space_url":
        # The other tenant's external ids exist too; this tenant gets its own space or a 404, never theirs.
        response = client.get("/api/v1/spaces/does-not-exist/memories")
        assert response.status_code == 404
        return set()
    raise AssertionError(op)


@pytest.fixture
def world(tenant_a, tenant_b):
    return World(tenant_a, tenant_b)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(operations, min_size=4, max_size=10))
def test_no_sequence_of_operations_crosses_a_tenant_or_a_space(world, steps):
    for op in steps:
        before = world.rows()
        allowed = run(world, op, before)
        after = world.rows()
        changed_owners = {
            (key[0], key[1])
            for key in set(before) ^ set(after) | {k for k in set(before) & set(after) if before[k] != after[k]}
        }
        assert changed_owners <= allowed, (op, changed_owners)


def test_the_world_really_holds_rows_to_leak(world):
    """The property above is only worth something if there is something to leak: a fixed sequence."""
    for op in [("turn", "a", "s1"), ("turn", "b", "s1"), ("turn", "a", "s2"), ("episode", "a"), ("episode", "b")]:
        run(world, op, world.rows())
    rows = world.rows()
    owners = {(key[0], key[1]) for key in rows}
    assert {("a", "s1"), ("b", "s1"), ("a", "s2"), ("a", "agents"), ("b", "agents")} <= owners
    before = world.rows()
    for op in [("guess_id", "b", "s1", "a", "s1", "delete"), ("guess_id", "a", "s2", "a", "s1", "patch"),
               ("guess_id", "b", "s1", "a", "s1", "get")]:  # fmt: skip
        assert run(world, op, before) == set()
    assert world.rows() == before
