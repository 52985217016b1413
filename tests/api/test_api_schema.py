"""The OpenAPI schema a user reads in Swagger UI or feeds to a client generator: every operation has a summary and
a description written for callers, and generating it prints no warnings (a warning there used to show at every
start-up and hid the one that mattered)."""

from __future__ import annotations

import pytest
import yaml
from django.core.management import call_command

from api.operation_docs import OPERATIONS


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    path = tmp_path_factory.mktemp("schema") / "schema.yml"
    call_command("spectacular", "--fail-on-warn", "--file", str(path))  # exits non-zero on any warning
    return yaml.safe_load(path.read_text())


def operations(schema):
    return {
        operation["operationId"]: (method.upper(), path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
    }


def test_every_operation_has_a_summary_and_a_description_for_its_callers(schema):
    found = operations(schema)
    undocumented = sorted(
        f"{m} {p}" for m, p, op in found.values() if not (op.get("summary") and op.get("description"))
    )
    assert not undocumented, undocumented
    assert not sorted(set(OPERATIONS) - set(found)), "described operations the API no longer has"
    # The recall operation's description used to be a decorator's docstring about request timing.
    assert "APIView" not in found["spaces_recall_create"][2]["description"]


def test_each_model_kind_has_its_own_named_enum(schema):
    enums = schema["components"]["schemas"]
    assert enums["MemoryKindEnum"]["enum"] == ["fact", "topic", "event", "instruction", "task"]
    assert enums["SpaceKindEnum"]["enum"] == ["end_user", "shared"]
    assert enums["EpisodeKindEnum"]["enum"] == ["episode", "resolution"]
    assert not [name for name in enums if name.startswith("Kind") and name.endswith("Enum")]


def test_the_console_session_is_a_documented_way_to_read_the_deletion_audit(schema):
    schemes = schema["components"]["securitySchemes"]
    assert schemes["ConsoleSession"]["in"] == "cookie"
    audit = operations(schema)["deletions_list"][2]
    assert {"ConsoleSession": []} in audit["security"] and {"ApiKey": []} in audit["security"]


def test_json_bodies_say_they_take_only_their_documented_fields(schema):
    components = schema["components"]["schemas"]
    for name in ("TurnInputRequest", "RecallInputRequest", "IngestInputRequest", "ForgetInputRequest"):
        assert components[name]["additionalProperties"] is False, name
    # Shared with a multipart body whose files come as parts named after their argument ("inputs.question").
    assert "additionalProperties" not in components["EpisodeInputRequest"]
