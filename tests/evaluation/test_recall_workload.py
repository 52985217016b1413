"""The mem0 comparison's workload and its reading of responses: a benchmark that counts misses must ask
answerable questions, and a fact the pipeline never stores must not hide behind the recall figure."""

import json
import sys
from pathlib import Path

import pytest

from bench.mem0_compare import Mem0Side, parse_server_timing
from bench.recall_workload import FACT_KINDS, VALUES, build_workload


def test_the_same_seed_gives_the_same_workload_and_another_seed_another():
    assert build_workload(seed=3) == build_workload(seed=3)
    assert build_workload(seed=3)["spaces"] != build_workload(seed=4)["spaces"]


def test_every_question_aims_at_one_fact_of_its_own_space_and_none_twice():
    workload = build_workload()
    facts = {space["name"]: space["facts"] for space in workload["spaces"]}
    assert len(workload["spaces"]) == 50
    assert all(len(space_facts) == 40 for space_facts in facts.values())
    assert len(workload["questions"]) == 200
    aimed = [(q["space"], q["fact"]) for q in workload["questions"]]
    assert len(set(aimed)) == len(aimed)
    assert {space for space, _ in aimed} == set(facts)  # every space is asked about
    for question in workload["questions"]:
        fact = facts[question["space"]][question["fact"]]
        assert question["question"].lower() != fact.lower()
        assert question["question"].endswith("?") and not fact.endswith("?")


def test_a_space_holds_each_kind_of_fact_at_most_once_so_a_question_has_one_answer():
    for space in build_workload()["spaces"]:
        assert len(set(space["facts"])) == len(space["facts"])
        # Kinds never repeat: no two facts of a space come from the same kind's statements.
        kinds = []
        for fact in space["facts"]:
            kinds.append(next(i for i, (statements, _) in enumerate(FACT_KINDS) if _says(statements, fact)))
        assert len(set(kinds)) == len(kinds)


def _says(statements: list[str], fact: str) -> bool:
    import re

    for statement in statements:
        pattern = re.escape(statement)
        for name in VALUES:
            pattern = pattern.replace(re.escape("{" + name + "}"), ".+?")
        if re.fullmatch(pattern, fact):
            return True
    return False


@pytest.mark.parametrize(
    ("size", "problem"),
    [
        ({"facts_per_space": len(FACT_KINDS) + 1}, "facts_per_space"),
        ({"facts_per_space": 0}, "facts_per_space"),
        ({"spaces": 2, "facts_per_space": 3, "questions": 7}, "more questions than facts"),
    ],
)
def test_an_impossible_size_is_refused_rather_than_quietly_repeating_facts(size, problem):
    with pytest.raises(ValueError, match=problem):
        build_workload(**size)


def test_server_timing_is_read_by_name_and_malformed_entries_are_skipped():
    header = 'embed;dur=9.5, db;desc="sql";dur=2.25, cache, broken;dur=abc, total;dur=12'
    assert parse_server_timing(header) == {"embed": 9.5, "db": 2.25, "total": 12.0}
    assert parse_server_timing(None) == {}
    assert parse_server_timing("") == {}


def test_a_mem0_side_that_cannot_start_says_why(tmp_path):
    """Engram's own environment has no mem0: the side dies at import, and the error carries its reason."""
    workload = tmp_path / "workload.json"
    workload.write_text(json.dumps(build_workload(spaces=1, facts_per_space=1, questions=1)))
    config = {"conninfo": "", "embedding_url": "", "history_db_path": str(tmp_path / "history.db")}
    with pytest.raises(RuntimeError, match="No module named 'mem0'"):
        Mem0Side(Path(sys.executable), str(workload), config, str(tmp_path))


@pytest.mark.django_db
def test_every_statement_of_the_workload_is_stored_by_the_offline_pipeline(client_a, space_a):
    """Each way the workload states a fact becomes an entry (created, or merged into an earlier one), so the
    benchmark's recall@10 measures recall, not the extractor dropping sentences."""
    values = {name: options[0] for name, options in VALUES.items()}
    for index, (statements, _) in enumerate(FACT_KINDS):
        for variant, statement in enumerate(statements):
            message = statement.format(**values)
            response = client_a.post(
                f"/api/v1/spaces/{space_a.external_id}/turns?wait=true",
                {"message": message, "session_id": "onboarding", "message_id": f"{index}-{variant}"},
                format="json",
            )
            assert response.status_code == 201, response.content
            body = response.json()
            entries = [item for item in body["created"] + body["merged"] if item["kind"] != "topic"]
            assert entries, f"nothing stored for {message!r}: {body}"
