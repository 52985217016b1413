"""One set of input rules for every way in (#28): an id matches the whole string (a trailing newline is not
part of an id), and text that is not valid Unicode — a lone surrogate, which JSON lets a client send as
"\\ud800" — is a 400 that names the field, wherever it sits in the body, never a 500 and never half stored."""

from __future__ import annotations

import json

import pytest

from memory.models import Episode, Memory, Message, Turn
from tenants import scope
from tenants.models import Space
from tests.conftest import make_space

pytestmark = pytest.mark.django_db

LONE = "\ud800"


def raw_post(client, url: str, body: dict):
    """A JSON body as a client writes it: json.dumps escapes a lone surrogate as \\ud800, which is valid JSON."""
    return client.generic("POST", url, json.dumps(body), content_type="application/json")


@pytest.fixture
def shared_a(tenant_a):
    return make_space(tenant_a, "support-agents", kind="shared")


@pytest.mark.parametrize(
    "path, body",
    [
        ("spaces/customer-1/turns", {"message": f"We run four vans {LONE} in Brno."}),
        ("spaces/customer-1/ingest", {"messages": [{"role": "customer", "content": f"Hi {LONE}"}]}),
        ("spaces/customer-1/recall", {"query": f"vans {LONE}"}),
        ("spaces/customer-1/forget", {"message": f"Forget my phone {LONE}"}),
        ("spaces/support-agents/episodes", {"inputs": {"question": f"refund {LONE}"}, "output": "ok",
                                            "outcome": "resolved"}),
        ("spaces/support-agents/episodes", {"inputs": {"nested": {"deeper": [f"x{LONE}"]}}, "output": "ok",
                                            "outcome": "resolved"}),
        ("spaces/support-agents/episodes", {"inputs": {f"key{LONE}": "x"}, "output": "ok", "outcome": "resolved"}),
        ("spaces", {"external_id": "customer-9", "display_name": f"Ann {LONE}"}),
    ],
)  # fmt: skip
def test_a_lone_surrogate_anywhere_in_a_body_is_a_400_and_stores_nothing(client_a, space_a, shared_a, path, body):
    response = raw_post(client_a, f"/api/v1/{path}", body)
    assert response.status_code == 400, response.content
    assert "surrogate" in response.json()["error"]["message"]
    with scope.tenant_scope(space_a.tenant_id):
        assert not Message.objects.exists() and not Turn.objects.exists()
        assert not Memory.objects.exists() and not Episode.objects.exists()
        assert not Space.objects.filter(external_id="customer-9").exists()


@pytest.mark.parametrize(
    "body",
    [
        {"message": "We run four vans.", "session_id": "chat-7\n"},
        {"message": "We run four vans.", "session_id": "chat-7\r\n"},
    ],
)
def test_an_id_with_a_trailing_newline_is_refused(client_a, space_a, body):
    response = raw_post(client_a, "/api/v1/spaces/customer-1/turns", body)
    assert response.status_code == 400, response.content
    assert "session_id" in response.json()["error"]["details"]


def test_a_space_id_with_a_trailing_newline_is_refused(client_a):
    response = raw_post(client_a, "/api/v1/spaces", {"external_id": "customer-9\n"})
    assert response.status_code == 400, response.content
    assert "external_id" in response.json()["error"]["details"]


def test_an_agent_name_with_a_trailing_newline_is_refused(client_a, shared_a):
    body = {"inputs": {"question": "refund"}, "output": "ok", "outcome": "resolved", "agent": "bot-1\n"}
    response = raw_post(client_a, "/api/v1/spaces/support-agents/episodes", body)
    assert response.status_code == 400, response.content
    assert "agent" in response.json()["error"]["details"]


# --- the console keeps the API's rules -----------------------------------------------------------------


def console_login(client, tenant, role="admin"):
    from tenants.tenant_admin import create_operator

    membership = create_operator(tenant=tenant, username=role, password="a-long-password", role=role)
    client.force_login(membership.user)


@pytest.mark.parametrize("agent", ["bot✓", "bot<script>", "x" * 101])
def test_the_console_key_form_refuses_an_agent_name_the_api_refuses(client, tenant_a, agent):
    from tenants.models import ApiKey

    console_login(client, tenant_a)
    response = client.post("/console/keys/", {"name": "bot key", "scopes": ["turns"], "agent": agent})
    assert response.status_code == 400
    with scope.tenant_scope(tenant_a):
        assert not ApiKey.objects.filter(name="bot key").exists()


def test_a_console_memory_edit_is_held_to_the_apis_length(client, client_a, tenant_a, space_a):
    client_a.post("/api/v1/spaces/customer-1/turns?wait=true", {"message": "We run four vans."}, format="json")
    with scope.tenant_scope(tenant_a, space_a):
        memory = Memory.objects.get(kind="fact")
    console_login(client, tenant_a, role="operator")
    url = f"/console/spaces/customer-1/memories/{memory.id}/edit/"
    response = client.post(url, {"content": "x" * 4001, "topic": "", "importance": "0.5"})
    assert response.status_code == 400
    api = client_a.patch(f"/api/v1/spaces/customer-1/memories/{memory.id}", {"content": "x" * 4001}, format="json")
    assert api.status_code == 400
    with scope.tenant_scope(tenant_a, space_a):
        assert Memory.objects.get(pk=memory.pk).content == "We run four vans."


# --- CSV cells a spreadsheet will not run ------------------------------------------------------------


def test_deletion_audit_csv_cells_that_look_like_formulas_are_neutralised(client, client_a, tenant_a):
    """A space id may start with '-' or '@' (both are id characters): in the audit's CSV, from the API and the
    console, such a cell starts with a quote so a spreadsheet shows it as text instead of running it."""
    import csv
    import io

    from tests.conftest import make_space
    from tests.support.turns import say

    for external_id in ("@SUM-1", "-2-3"):
        space = make_space(tenant_a, external_id)
        say(client_a, space, "We have four vans.", session="a")
        say(client_a, space, "Forget that we have four vans.", session="b")
    exported = client_a.get("/api/v1/deletions", {"format": "csv"}).content.decode()
    console_login(client, tenant_a)
    console = client.get("/console/deletions/export.csv").content.decode()
    for text in (exported, console):
        spaces = {row["space"] for row in csv.DictReader(io.StringIO(text))}
        assert spaces == {"'@SUM-1", "'-2-3"}, text


def test_an_import_whose_file_name_holds_a_lone_surrogate_is_a_400(client_a, space_a):
    """A multipart part's file name is not JSON: its invalid UTF-8 is not decoded into a surrogate that a later
    write would choke on; the upload is refused as not the part 'file'."""
    boundary = "XyZ"
    head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="f'.encode()
    tail = (f'.jsonl"\r\nContent-Type: application/x-ndjson\r\n\r\n{{}}\r\n--{boundary}--\r\n').encode()
    body = head + "\ud800".encode("utf-8", "surrogatepass") + tail
    response = client_a.generic(
        "POST", "/api/v1/spaces/customer-1/import", body, content_type=f"multipart/form-data; boundary={boundary}"
    )
    assert response.status_code == 400, response.content
    with scope.tenant_scope(space_a.tenant_id, space_a):
        assert not Memory.objects.exists()
