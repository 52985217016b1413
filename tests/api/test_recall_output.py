"""Recall's response is built by hand (api/recall_output.py, for speed); it must be exactly what the documented
schema's serializer writes, for every shape a recall body takes."""

import datetime
import json

import pytest

from api.memory_serializers import RecallOutput
from api.recall_output import recall_output
from memory.provenance import attach_sources
from memory.recall import recall, synthesize
from tenants import scope
from tests.support.recall import tell, tell_at

pytestmark = pytest.mark.django_db


def as_sent(data) -> str:
    return json.dumps(data, sort_keys=False)


def bodies(space):
    with scope.tenant_scope(space.tenant_id, space):
        for query, extra in [
            ("How many vans do you have?", {}),
            ("When did I go to the workshop?", {"max_chars": 300}),
            ("What is the capital of Peru?", {}),
            ("vans", {"kinds": ["fact"]}),
            ("name", {}),
        ]:
            result = recall(space=space, query=query, **extra)
            body = {"memories": result.hits, "prompt": result.prompt}
            yield body
            with_sources = {**body, "memories": [dict(hit) for hit in result.hits]}
            attach_sources(space, with_sources["memories"])
            yield with_sources
            answer, synthesis = synthesize(query, result.hits)
            yield {**body, "answer": answer, "synthesis": synthesis, "warning": "vector search skipped", "left_out": 2}


def test_the_hand_built_body_is_the_serializers_to_the_byte(client_a, space_a):
    tell(client_a, space_a, "Hi, I'm Dana Novak. We run a fleet of four vans.", "Please always answer in French.")
    tell_at(
        client_a,
        space_a,
        "Last Friday I went to a pottery workshop.",
        datetime.datetime(2023, 6, 27, 14, tzinfo=datetime.UTC),
        "s-june",
    )
    seen = 0
    for body in bodies(space_a):
        assert as_sent(recall_output(body)) == as_sent(RecallOutput(body).data), body
        seen += bool(body["memories"])
    assert seen >= 6  # the bodies held memories, sources and answers, not only empty recalls


def test_a_memory_without_a_source_and_a_naive_time_are_written_as_drf_writes_them():
    hit = {
        "id": "0b6f3a2e-2f6b-4a55-9f8e-3b1d2f1b9a10",
        "kind": "message",
        "content": "We run four vans.",
        "topic": None,
        "importance": None,
        "event_at": None,
        "said_at": datetime.datetime(2026, 1, 2, 3, 4, 5),
        "updated_at": datetime.datetime(2026, 1, 2, 3, 4, 5, 678901),
        "score": {"distance": None, "ranks": {"vector": None, "messages": 1}, "fused": 0.016393, "relevance": None},
        "source": None,
    }
    body = {"memories": [hit], "prompt": "", "left_out": 0}
    assert as_sent(recall_output(body)) == as_sent(RecallOutput(body).data)
