"""An in-process embedding runs on the cores nobody else is using, and the vectors do not depend on it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from config.cpu_quota import usable_cores
from memory.text.compute_threads import threads_for_now
from memory.text.embeddings import LocalEmbedder

ROOT = Path(__file__).resolve().parent.parent
CORES = len(os.sched_getaffinity(0))
TEXTS = [
    "I moved to Berlin last spring with my wife.",
    "私は東京に住んでいます。",
    "Jsem alergický na ořechy.",
    "x " * 300,  # past the model's 512 tokens
]


@contextmanager
def busy_processes(count: int):
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.3)  # started and spinning
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def test_the_vectors_are_the_same_with_one_thread_or_several():
    # What makes choosing the thread count per call safe: recall and de-duplication compare vectors
    # made at different times under different loads.
    embedder = LocalEmbedder()
    one = (embedder.embed(TEXTS, threads=1), embedder.embed(TEXTS, query=True, threads=1))
    two = (embedder.embed(TEXTS, threads=2), embedder.embed(TEXTS, query=True, threads=2))
    assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])


def test_beside_a_busy_process_on_every_core_an_embedding_runs_one_thread():
    with busy_processes(CORES):
        assert [threads_for_now(limit=64) for _ in range(20)] == [1] * 20


def test_an_embedding_never_takes_a_core_another_process_is_running_on():
    with busy_processes(1):
        assert max(threads_for_now(limit=64) for _ in range(20)) <= max(1, CORES - 1)


def test_on_an_idle_machine_an_embedding_takes_every_core_up_to_the_limit(tmp_path, monkeypatch):
    # The kernel's count of runnable threads is this test's own thread alone.
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.00 0.00 0.00 1/90 4242\n")
    monkeypatch.setattr("memory.text.compute_threads.LOADAVG_FILE", str(loadavg))
    assert threads_for_now(limit=64) == CORES
    assert threads_for_now(limit=1) == 1
    if CORES > 1:
        assert threads_for_now(limit=CORES - 1) == CORES - 1


def test_without_the_kernels_count_an_embedding_runs_one_thread(tmp_path, monkeypatch):
    monkeypatch.setattr("memory.text.compute_threads.LOADAVG_FILE", str(tmp_path / "absent"))
    assert threads_for_now(limit=64) == 1
    (tmp_path / "garbled").write_text("not a load line")
    monkeypatch.setattr("memory.text.compute_threads.LOADAVG_FILE", str(tmp_path / "garbled"))
    assert threads_for_now(limit=64) == 1


def test_a_limit_of_one_is_one_thread_whatever_the_machine_does():
    assert threads_for_now(limit=1) == 1


def test_the_embedder_sets_the_count_for_the_calling_thread(settings):
    embedder = LocalEmbedder()
    settings.ENGRAM_EMBEDDING_THREADS = 2
    embedder.embed(["a question"], query=True, threads=2)
    assert embedder.threads() == 2
    with busy_processes(CORES):
        embedder.embed(["a question"], query=True)
        assert embedder.threads() == 1
    settings.ENGRAM_EMBEDDING_THREADS = 1
    embedder.embed(["a question"], query=True, threads=2)
    embedder.embed(["a question"], query=True)
    assert embedder.threads() == 1


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_a_bad_thread_limit_stops_the_configuration_with_a_message_naming_it(value):
    environment = {**os.environ, "ENGRAM_DEBUG": "1", "ENGRAM_EMBEDDING_THREADS": value}
    result = subprocess.run(
        [sys.executable, "-c", "import config.settings"], cwd=ROOT, env=environment, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "ENGRAM_EMBEDDING_THREADS must be a whole number of at least 1" in result.stderr


def test_an_unset_limit_is_the_cores_this_process_may_use():
    # Its affinity, bounded by a CPU quota where one applies (tests/test_embedding_threads_attacks.py).
    environment = {**os.environ, "ENGRAM_DEBUG": "1"}
    environment.pop("ENGRAM_EMBEDDING_THREADS", None)
    result = subprocess.run(
        [sys.executable, "-c", "import config.settings as s; print(s.ENGRAM_EMBEDDING_THREADS)"],
        cwd=ROOT, env=environment, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert int(result.stdout) == usable_cores() <= CORES


IDLE_AFTER_PARALLEL_EMBEDDINGS = """
import os, sys, threading, time
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()
from memory.text.embeddings import LocalEmbedder

embedder = LocalEmbedder()

def embed_on_two_threads():
    for _ in range(5):
        embedder.embed(["Which region is the server in?"], query=True, threads=2)

# Several threads of one process, each with its own OpenMP pool (as a gunicorn worker's request threads).
askers = [threading.Thread(target=embed_on_two_threads) for _ in range(4)]
for asker in askers:
    asker.start()
for asker in askers:
    asker.join()
print(os.environ["OMP_WAIT_POLICY"], os.environ["GOMP_SPINCOUNT"])
started = time.process_time()
time.sleep(1.0)
print(round((time.process_time() - started) * 1000))
"""


def test_the_openmp_threads_keep_spinning_briefly_and_an_idle_process_sleeps():
    # ACTIVE keeps the short spin when pool threads outnumber the cores (libgomp would otherwise sleep at
    # every barrier and two threads were slower than one); the bounded spin count lets an idle process
    # sleep: ACTIVE without it spins a core forever.
    environment = {**os.environ, "ENGRAM_DEBUG": "1"}
    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        environment.pop(name, None)
    result = subprocess.run(
        [sys.executable, "-c", IDLE_AFTER_PARALLEL_EMBEDDINGS],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    policy_line, idle_cpu_ms = result.stdout.strip().splitlines()
    assert policy_line == "ACTIVE 20000"
    assert int(idle_cpu_ms) < 200  # a spinning pool thread would burn ~1,000 ms of CPU in that second
