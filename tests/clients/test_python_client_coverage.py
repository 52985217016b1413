"""The Python client covers every operation of the API's OpenAPI schema, as its README says: each operation is
named here with the client method that sends it, and calling that method sends exactly that method and path. A
new API operation without a client method fails here instead of surfacing as a missing feature to a user."""

from __future__ import annotations

import re

import httpx2
import pytest
from drf_spectacular.generators import SchemaGenerator
from engram_client import Engram

SPACE, OTHER_ID, TURN_ID = "customer-1", "6f1c2a9e-0d1b-4c4e-9a53-2b8f0c7d1e11", "0a7d5c3e-51f2-4b7a-8c9d-3e4f5a6b7c8d"
PATH_VALUES = {"external_id": SPACE, "memory_id": OTHER_ID, "episode_id": OTHER_ID, "turn_id": TURN_ID}

# operationId → how the client sends it
CALLS = {
    "deletions_list": lambda c: list(c.iter_deletions(space=SPACE)),
    "deletions_check_create": lambda c: c.check_deletion(SPACE, "my address"),
    "spaces_list": lambda c: list(c.iter_spaces()),
    "spaces_create": lambda c: c.create_space(SPACE),
    "spaces_retrieve": lambda c: c.get_space(SPACE),
    "spaces_partial_update": lambda c: c.update_space(SPACE, display_name="Jana"),
    "spaces_destroy": lambda c: c.delete_space(SPACE),
    "spaces_episodes_list": lambda c: list(c.iter_episodes(SPACE)),
    "spaces_episodes_create": lambda c: c.create_episode(SPACE, inputs={"q": "x"}, output="y"),
    "spaces_episodes_retrieve": lambda c: c.get_episode(SPACE, OTHER_ID),
    "spaces_episodes_partial_update": lambda c: c.update_episode(SPACE, OTHER_ID, output="z"),
    "spaces_episodes_destroy": lambda c: c.delete_episode(SPACE, OTHER_ID),
    "spaces_episodes_recall_create": lambda c: c.recall_episodes(SPACE, {"question": "parcel"}),
    "spaces_escalations_match_create": lambda c: c.match_escalation(SPACE, "parcel"),
    "spaces_escalations_resolve_create": lambda c: c.resolve_escalation(SPACE, input="parcel", resolution="found"),
    "spaces_export_retrieve": lambda c: c.export_space(SPACE),
    "spaces_forget_create": lambda c: c.forget(SPACE, "Forget my address."),
    "spaces_import_create": lambda c: c.import_space(SPACE, b"{}"),
    "spaces_ingest_create": lambda c: c.ingest(SPACE, [{"role": "customer", "content": "Hi"}]),
    "spaces_memories_list": lambda c: list(c.iter_memories(SPACE)),
    "spaces_memories_retrieve": lambda c: c.get_memory(SPACE, OTHER_ID),
    "spaces_memories_partial_update": lambda c: c.update_memory(SPACE, OTHER_ID, content="x"),
    "spaces_memories_destroy": lambda c: c.delete_memory(SPACE, OTHER_ID),
    "spaces_memories_history_list": lambda c: c.memory_history(SPACE, OTHER_ID),
    "spaces_memories_restore_create": lambda c: c.restore_memory(SPACE, OTHER_ID),
    "spaces_recall_create": lambda c: c.recall(SPACE, "vans"),
    "spaces_turns_create": lambda c: c.post_turn(SPACE, "We run four vans."),
    "spaces_turns_reply_create": lambda c: c.post_reply(SPACE, TURN_ID, "Noted."),
    "turns_retrieve": lambda c: c.get_turn(TURN_ID),
    "turns_retry_create": lambda c: c.retry_turn(TURN_ID),
}


def schema_operations() -> dict[str, tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return {
        operation["operationId"]: (method.upper(), re.sub(r"\{(\w+)\}", lambda m: PATH_VALUES[m.group(1)], path))
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
    }


def test_every_operation_of_the_schema_has_a_client_method():
    missing = sorted(set(schema_operations()) - set(CALLS))
    assert not missing, f"API operations the Python client does not send: {missing}"
    assert not sorted(set(CALLS) - set(schema_operations())), "client calls for operations the API no longer has"


@pytest.mark.parametrize("operation_id", sorted(CALLS))
def test_each_client_method_sends_its_operations_method_and_path(operation_id):
    sent: list[httpx2.Request] = []

    def answer(request):
        sent.append(request)
        if request.url.path.endswith("/export"):
            return httpx2.Response(200, content=b"{}")
        if request.method == "DELETE":
            return httpx2.Response(204)
        return httpx2.Response(200, json={"results": [], "next": None})

    with Engram("http://engram.test", api_key="eng_x_y", transport=httpx2.MockTransport(answer)) as client:
        CALLS[operation_id](client)
    method, path = schema_operations()[operation_id]
    assert [(r.method, r.url.path) for r in sent] == [(method, path)]
