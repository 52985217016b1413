"""A new user's first minutes: `make run` prints a demo login and key with a curl that stores what a customer said
and one that recalls it — pasted as printed, they work — on the ports the user chose, and a taken port is named
with the command to use instead, before anything is served."""

from __future__ import annotations

import json
import re
import shlex
import socket
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.conftest import api_client

PROJECT = Path(__file__).resolve().parents[2]


def printed_demo(capsys, *arguments) -> str:
    call_command("setup_demo", *arguments)
    return capsys.readouterr().out


def curl_calls(out: str) -> list[tuple[str, dict]]:
    """Each printed curl as (url, JSON body)."""
    calls = []
    for line in out.splitlines():
        if line.strip().startswith("curl ") and " -d " in line:
            words = shlex.split(line)
            calls.append((words[-1], json.loads(words[words.index("-d") + 1])))
    return calls


@pytest.mark.django_db
def test_the_printed_curls_store_what_the_customer_said_and_recall_it(settings, tmp_path, capsys):
    settings.VAR_DIR = tmp_path
    out = printed_demo(capsys, "--port", "8123", "--mcp-port", "8124")
    assert "http://127.0.0.1:8123/console/" in out and "http://127.0.0.1:8124/mcp" in out
    assert "8000" not in out and "8001" not in out
    key = re.search(r"KEY=(\S+)", out).group(1)
    (store_url, said), (recall_url, asked) = curl_calls(out)
    client = api_client(key)
    stored = client.post(store_url.removeprefix("http://127.0.0.1:8123"), said, format="json")
    assert stored.status_code == 201 and stored.json()["status"] == "done", stored.content
    recalled = client.post(recall_url.removeprefix("http://127.0.0.1:8123"), asked, format="json")
    assert recalled.status_code == 200
    assert [m["content"] for m in recalled.json()["memories"]][:1] == [said["message"]]


@pytest.mark.django_db
def test_a_taken_port_is_named_with_the_command_to_use_instead(settings, tmp_path, capsys):
    settings.VAR_DIR = tmp_path
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(CommandError, match=rf"Port {port} .* in use") as refused:
            call_command("setup_demo", "--port", str(port), "--check-ports")
        suggested = [int(p) for p in re.search(r"PORT=(\d+) MCP_PORT=(\d+)", str(refused.value)).groups()]
        assert port not in suggested and len(set(suggested)) == 2
    assert "Engram demo" not in capsys.readouterr().out


def test_make_run_and_serve_listen_where_the_user_says():
    def planned(target: str) -> str:
        return subprocess.run(
            ["make", "-n", target, "PORT=8123", "MCP_PORT=8124"], cwd=PROJECT, capture_output=True, text=True,
            check=True,
        ).stdout  # fmt: skip

    run, serve = planned("run"), planned("serve")
    assert "setup_demo --port 8123 --mcp-port 8124 --check-ports" in run
    assert "runserver 127.0.0.1:8123" in run and "mcp --http --port 8124" in run
    assert "--bind 127.0.0.1:8123" in serve and "mcp --http --port 8124" in serve
