"""Attacks on de-duplication reading its nearest statements without their vectors (``defer("embedding")``
in ``MemoryWriter.updated_by``): no path through an update, a correction, a held-back entry or a merge
may load a deferred vector row by row, and the superseded memory keeps its own vector."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from memory.models import Memory
from tenants import scope
from tests.support.worker import queued, work

pytestmark = pytest.mark.django_db

# The worker's statements for a turn that supersedes one fact with an update (claim; read the turn,
# its messages; lock; de-duplicate, write, supersede; record; drop the text): 27 with the neighbours'
# vectors read and 27 without them.
SUPERSESSION_TURN_STATEMENTS = 27


def vectors_by_content(space) -> dict[str, np.ndarray]:
    with scope.tenant_scope(space.tenant_id, space):
        return {
            m.content: np.asarray(m.embedding, dtype=np.float32)
            for m in Memory.objects.filter(space=space, kind="fact")
        }


def worked(space, message, session_id):
    turn = queued(space, message, session_id=session_id)
    with CaptureQueriesContext(connection) as queries:
        assert work(space, turn) == "done"
    sql = [query["sql"] for query in queries.captured_queries]
    # Django loads a deferred field with its own SELECT of the primary key and that one column.
    deferred_loads = [s for s in sql if s.startswith('SELECT "memory_memory"."id", "memory_memory"."embedding" FROM')]
    assert not deferred_loads, "\n".join(deferred_loads)
    return sql


def current_and_superseded(space):
    with scope.tenant_scope(space.tenant_id, space):
        facts = Memory.objects.filter(space=space, kind="fact")
        return (
            sorted(m.content for m in facts if m.superseded_by_id is None),
            sorted(m.content for m in facts if m.superseded_by_id is not None),
        )


def test_an_update_supersedes_without_loading_a_vector_and_the_old_row_keeps_its_own(space_a):
    worked(space_a, "We have 12 employees.", "s1")
    before = vectors_by_content(space_a)
    sql = worked(space_a, "We have 15 employees.", "s2")
    assert current_and_superseded(space_a) == (["We have 15 employees."], ["We have 12 employees."])
    assert np.array_equal(vectors_by_content(space_a)["We have 12 employees."], before["We have 12 employees."])
    assert len(sql) <= SUPERSESSION_TURN_STATEMENTS, "\n".join(sql)


def test_a_correction_supersedes_without_loading_a_vector(space_a):
    worked(space_a, "I live in Leeds.", "s1")
    worked(space_a, "Correction: I moved to York last month.", "s2")
    current, superseded = current_and_superseded(space_a)
    assert superseded == ["I live in Leeds."], current


@override_settings(ENGRAM_TURN_MAX_SUPERSESSIONS=1)
def test_an_entry_held_back_past_the_turns_limit_loads_no_vector_either(space_a):
    worked(space_a, "We have 12 employees. We run 4 vans.", "s1")
    before = vectors_by_content(space_a)
    worked(space_a, "We have 15 employees. We run 6 vans.", "s2")
    current, superseded = current_and_superseded(space_a)
    assert len(superseded) == 1 and len(current) == 3  # one updated, one written beside its old value
    for content in superseded:
        assert np.array_equal(vectors_by_content(space_a)[content], before[content])


def test_a_restatement_merges_and_keeps_the_earlier_wording_with_its_vector(space_a):
    worked(space_a, "We have 40 employees.", "s1")
    before = vectors_by_content(space_a)
    worked(space_a, "We have 40 employees in total.", "s2")
    current, superseded = current_and_superseded(space_a)
    assert current == ["We have 40 employees in total."] and superseded == ["We have 40 employees."]
    # The history row is a copy of the merged row as it was: its vector is the earlier wording's.
    assert np.array_equal(vectors_by_content(space_a)["We have 40 employees."], before["We have 40 employees."])
