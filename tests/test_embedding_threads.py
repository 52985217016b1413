"""An in-process embedding runs on the cores nobody else is using, and the vectors do not depend on it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from config.cpu_quota import usable_cores
from memory.text.compute_threads import COMPUTE_THREAD, threads_for_now
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
    model = LocalEmbedder()._model
    model._lib.omp_set_num_threads(1)
    one = (model.passage(TEXTS), model.query(TEXTS))
    model._lib.omp_set_num_threads(2)
    two = (model.passage(TEXTS), model.query(TEXTS))
    assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])


def test_beside_a_busy_process_on_every_core_an_embedding_runs_one_thread():
    with busy_processes(CORES):
        assert [threads_for_now(limit=64) for _ in range(20)] == [1] * 20


@pytest.mark.skipif(CORES < 2, reason="needs two cores to leave one free")
def test_an_embedding_never_takes_a_core_another_process_is_running_on():
    with busy_processes(1):
        assert max(threads_for_now(limit=64) for _ in range(20)) <= CORES - 1


def test_on_an_idle_machine_an_embedding_takes_every_core_up_to_the_limit(tmp_path, monkeypatch):
    # The kernel's count of runnable threads is this test's own thread alone.
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.00 0.00 0.00 1/90 4242\n")
    monkeypatch.setattr("memory.text.compute_threads._LOADAVG", str(loadavg))
    assert threads_for_now(limit=64) == CORES
    assert threads_for_now(limit=1) == 1
    if CORES > 1:
        assert threads_for_now(limit=CORES - 1) == CORES - 1


def test_without_the_kernels_count_an_embedding_runs_one_thread(tmp_path, monkeypatch):
    monkeypatch.setattr("memory.text.compute_threads._LOADAVG", str(tmp_path / "absent"))
    assert threads_for_now(limit=64) == 1
    (tmp_path / "garbled").write_text("not a load line")
    monkeypatch.setattr("memory.text.compute_threads._LOADAVG", str(tmp_path / "garbled"))
    assert threads_for_now(limit=64) == 1


def test_a_limit_of_one_is_one_thread_whatever_the_machine_does():
    assert threads_for_now(limit=1) == 1


def test_the_embedder_sets_the_count_on_the_thread_that_runs_the_model(settings):
    embedder = LocalEmbedder()
    library = embedder._model._lib

    def on_compute_thread(action):
        return COMPUTE_THREAD.run(lambda _: action())

    settings.ENGRAM_EMBEDDING_THREADS = 2
    on_compute_thread(lambda: library.omp_set_num_threads(2))
    with busy_processes(CORES):
        embedder.embed(["a question"], query=True)
        assert on_compute_thread(library.omp_get_max_threads) == 1
    settings.ENGRAM_EMBEDDING_THREADS = 1
    on_compute_thread(lambda: library.omp_set_num_threads(2))
    embedder.embed(["a question"], query=True)
    assert on_compute_thread(library.omp_get_max_threads) == 1


def test_every_embedding_of_a_process_runs_on_one_thread_whichever_thread_asks():
    # libgomp keeps a pool per thread that starts a parallel region; more pool threads than cores and
    # it sleeps at every barrier: request threads each embedding on two threads made it slower than one.
    embedder = LocalEmbedder()
    ran_on = set()
    real = embedder._embed_here

    def recording(texts, query, waiting_for_it):
        ran_on.add(threading.get_native_id())
        assert waiting_for_it != threading.get_native_id()  # the asking thread waits for the compute thread
        return real(texts, query, waiting_for_it)

    embedder._embed_here = recording
    results = []
    askers = [
        threading.Thread(target=lambda n=n: results.append(embedder.embed([f"We have {n} vans."], query=True)))
        for n in range(6)
    ]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()
    assert len(results) == 6 and len(ran_on) == 1


def test_the_thread_waiting_for_an_embedding_leaves_it_its_core(tmp_path, monkeypatch):
    # The asking thread may still be running for a moment while it goes to sleep on the result: the
    # kernel sees it and the compute thread both running, on an otherwise idle machine.
    stop = threading.Event()
    asker = threading.Thread(target=stop.wait)
    asker.start()
    try:
        tasks = tmp_path / "task"
        for thread in (threading.get_native_id(), asker.native_id):
            (tasks / str(thread)).mkdir(parents=True)
            (tasks / str(thread) / "stat").write_text(f"{thread} (python3) R 1 2 3\n")
        loadavg = tmp_path / "loadavg"
        loadavg.write_text("0.00 0.00 0.00 2/90 4242\n")
        monkeypatch.setattr("memory.text.compute_threads._OWN_THREADS", str(tasks))
        monkeypatch.setattr("memory.text.compute_threads._LOADAVG", str(loadavg))

        assert threads_for_now(limit=64) == max(1, CORES - 1)  # another running thread of ours keeps its core
        assert threads_for_now(limit=64, waiting_for_it=asker.native_id) == CORES
    finally:
        stop.set()
        asker.join()


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
