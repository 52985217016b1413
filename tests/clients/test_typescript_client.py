"""The TypeScript client (clients/typescript): built with its pinned TypeScript, its types checked against the
server's OpenAPI schema, and its Node tests (`node --test`) run against pytest-django's live server on the test
database, with two tenants' keys handed over in the environment.

Node.js and npm are required, not optional: without them these tests fail, saying what to install."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from django.core.management import call_command

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "typescript"


def need_node_and_npm() -> None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.fail(
            f"{' and '.join(missing)} not found: the TypeScript client's tests need Node.js 18.17 or newer and npm "
            "(Debian: apt-get install nodejs npm; .ci/run installs them when they are missing)",
            pytrace=False,
        )


def run(command: list[str], *, timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=PACKAGE, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def must_succeed(command: list[str], *, timeout: float) -> None:
    done = run(command, timeout=timeout)
    if done.returncode != 0:
        pytest.fail(f"`{' '.join(command)}` failed ({done.returncode}):\n{done.stdout}\n{done.stderr}", pytrace=False)


@pytest.fixture(scope="module")
def compiled() -> Path:
    """node_modules from the lock (`npm ci` only when it is missing or the lock changed), then `tsc` into dist/.
    Under a file lock: two test processes may get here at once."""
    need_node_and_npm()
    lock = PACKAGE / "package-lock.json"
    digest = hashlib.sha256(lock.read_bytes() + (PACKAGE / "package.json").read_bytes()).hexdigest()
    stamp = PACKAGE / "node_modules" / ".installed-from-lock"
    guard = Path(tempfile.gettempdir()) / f"engram-ts-{hashlib.sha256(bytes(PACKAGE)).hexdigest()[:12]}.lock"
    with guard.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not stamp.exists() or stamp.read_text() != digest:
            must_succeed(["npm", "ci", "--no-audit", "--no-fund"], timeout=600)
            stamp.write_text(digest)
        shutil.rmtree(PACKAGE / "dist", ignore_errors=True)  # no compiled test of a deleted source left to run
        must_succeed([str(PACKAGE / "node_modules" / ".bin" / "tsc"), "-p", "."], timeout=300)
    return PACKAGE / "dist"


@pytest.fixture(scope="module")
def schema_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("openapi") / "schema.json"
    call_command("spectacular", "--format", "openapi-json", "--file", str(path))
    return path


@pytest.fixture
def live_server(transactional_db):
    """A live server for this test only, stopped before the test database is dropped."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer("localhost:0")
    yield server
    server.stop()


def test_the_generated_types_are_the_servers_openapi_schema(schema_file):
    """src/schema.ts (types and the operation table) is what scripts/generate-types.mjs makes of today's schema."""
    need_node_and_npm()
    done = run(["node", "scripts/generate-types.mjs", str(schema_file), "--check"], timeout=60)
    assert done.returncode == 0, done.stderr + done.stdout


def test_the_node_tests_pass_against_the_live_server(
    compiled, schema_file, live_server, key_a, key_b, space_a, space_b
):
    """clients/typescript/test: every operation against the live server, the client's operations against the
    schema, retries after Retry-After, idempotent turns, pagination, typed errors, another tenant's ids."""
    env = {
        **os.environ,
        "ENGRAM_URL": live_server.url,
        "ENGRAM_API_KEY": key_a.secret,
        "ENGRAM_OTHER_API_KEY": key_b.secret,
        "ENGRAM_OPENAPI_SCHEMA": str(schema_file),
        "NODE_OPTIONS": "",
    }
    tests = sorted(str(path.relative_to(PACKAGE)) for path in (compiled / "test").glob("*.test.js"))
    assert tests, f"no compiled tests in {compiled / 'test'}"
    done = run(["node", "--test", "--test-reporter=spec", *tests], timeout=600, env=env)
    print(done.stdout, done.stderr)
    assert done.returncode == 0, f"node --test failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
