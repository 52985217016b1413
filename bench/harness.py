"""Shared pieces of the benchmarks: Django on a throw-away database, timing, and the report file."""

from __future__ import annotations

import contextlib
import datetime
import os
import platform
import re
import statistics
import subprocess
import time
from pathlib import Path

REPORT = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def setup_django():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
    # The production ceiling, not the test suite's: servers a benchmark starts inherit this environment.
    os.environ.setdefault("ENGRAM_DB_CONNECTIONS", "6")
    import django

    django.setup()


@contextlib.contextmanager
def throwaway_database(name: str = "engram_bench"):
    """A fresh migrated database (the test database), dropped afterwards."""
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    # Not the test suite's database: a benchmark and `make test` may run side by side.
    connection.settings_dict.setdefault("TEST", {})["NAME"] = name
    config = setup_databases(verbosity=0, interactive=False)
    try:
        yield
    finally:
        teardown_databases(config, verbosity=0)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_server(port: int, seconds: float = 90) -> None:
    """Until ``/healthz`` on loopback answers 200 (a server started by a benchmark)."""
    import http.client

    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the server did not come up")


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def median(values: list[float]) -> float:
    return statistics.median(values)


def machine_line() -> str:
    cpu = platform.processor() or ""
    with contextlib.suppress(OSError):
        match = re.search(r"model name\s*:\s*(.+)", Path("/proc/cpuinfo").read_text())
        cpu = match.group(1).strip() if match else cpu
    memory = ""
    with contextlib.suppress(OSError):
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        memory = f", {kb / 1024 / 1024:.0f} GiB RAM"
    return f"{cpu}, {os.cpu_count()} cores{memory}, Python {platform.python_version()}, {platform.system()}"


def git_revision() -> str:
    with contextlib.suppress(Exception):
        return subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], text=True).strip()
    return "unknown"


def write_section(name: str, body: str) -> None:
    """Replace (or add) the section ``## name`` of docs/benchmarks.md."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = f"## {name}\n\nMeasured {stamp} on {machine_line()}, revision {git_revision()}.\n\n{body.strip()}\n"
    text = (
        REPORT.read_text()
        if REPORT.exists()
        else "# Benchmarks\n\nWritten by `make bench`; each section by its own script.\n"
    )
    pattern = re.compile(rf"^## {re.escape(name)}\n.*?(?=^## |\Z)", re.S | re.M)
    text = pattern.sub(section + "\n", text) if pattern.search(text) else text.rstrip() + "\n\n" + section
    REPORT.write_text(text)
