"""An in-process embedding runs on the cores nobody else is using — bounded by a container's CPU quota, in
threads of one process and in a process forked after a parallel embedding (decision 0019) — and the vectors
do not depend on the thread count, the batch or the text's length."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from config import cpu_quota
from config.cpu_quota import usable_cores
from memory.text import compute_threads, embeddings
from memory.text.compute_threads import threads_for_now
from memory.text.embeddings import LocalEmbedder, OpenAIEmbedder
from tests.support.model_servers import embedding_server

ROOT = Path(__file__).resolve().parents[2]
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
    # Its affinity, bounded by a CPU quota where one applies (the cgroup tests below).
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


FORK_AFTER_A_PARALLEL_EMBEDDING = textwrap.dedent(
    """
    import os, signal, sys
    import django
    import numpy as np

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.conf import settings
    from memory.text import compute_threads
    from memory.text.embeddings import LocalEmbedder

    # An idle two-core machine, whatever this one is doing: the parent embeds on two threads.
    settings.ENGRAM_EMBEDDING_THREADS = 2
    compute_threads.LOADAVG_FILE = sys.argv[1]
    os.sched_getaffinity = lambda pid: {0, 1}
    embedder = LocalEmbedder()
    before = embedder.embed(["The shop opens at nine."], query=True)
    assert embedder.threads() == 2, "the parent did not embed on two threads"

    child = os.fork()
    if child == 0:
        signal.alarm(30)  # a stuck child must not outlive the test
        after = embedder.embed(["The shop opens at nine."], query=True)
        os._exit(0 if np.array_equal(before, after) else 3)
    _, status = os.waitpid(child, 0)
    sys.exit(os.waitstatus_to_exitcode(status))
    """
)


def test_a_process_forked_after_a_parallel_embedding_still_embeds(tmp_path):
    # gunicorn --preload without config/gunicorn.py runs the model in the master (config/wsgi.py):
    # libgomp's pool does not survive fork(), and a worker's embedding on two threads waited forever.
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.00 0.00 0.00 1/90 4242\n")
    environment = {**os.environ, "ENGRAM_DEBUG": "1"}
    result = subprocess.run(
        [sys.executable, "-c", FORK_AFTER_A_PARALLEL_EMBEDDING, str(loadavg)],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]


def cgroup_files(monkeypatch, tmp_path, *, cpu_max=None, v1_quota=None, v1_period="100000"):
    tmp_path = tmp_path / f"cgroup{len(list(tmp_path.iterdir()))}"
    tmp_path.mkdir()
    for name, content in (("cpu.max", cpu_max), ("quota", v1_quota), ("period", v1_period)):
        if content is not None:
            (tmp_path / name).write_text(content + "\n")
    monkeypatch.setattr(cpu_quota, "CGROUP_CPU_MAX_FILE", str(tmp_path / "cpu.max"))
    monkeypatch.setattr(cpu_quota, "CGROUP_V1_QUOTA_FILE", str(tmp_path / "quota"))
    monkeypatch.setattr(cpu_quota, "CGROUP_V1_PERIOD_FILE", str(tmp_path / "period"))


def test_a_container_limited_to_one_cpu_embeds_on_one_thread_however_many_cores_it_sees(monkeypatch, tmp_path):
    # Its affinity is the host's every core and the host's /proc/loadavg may be idle: without the
    # quota, each embedding ran as many threads as the host has cores and stalled on the quota.
    cgroup_files(monkeypatch, tmp_path, cpu_max="100000 100000")
    assert usable_cores() == 1
    cgroup_files(monkeypatch, tmp_path, cpu_max="150000 100000")  # one and a half: one whole core
    assert usable_cores() == 1
    cgroup_files(monkeypatch, tmp_path, cpu_max="5000 100000")
    assert usable_cores() == 1


def test_a_cgroup_v1_quota_counts_too(monkeypatch, tmp_path):
    cgroup_files(monkeypatch, tmp_path, v1_quota="100000")
    assert usable_cores() == 1
    cgroup_files(monkeypatch, tmp_path, v1_quota="-1")  # no quota
    assert usable_cores() == CORES


def test_without_a_quota_or_a_cgroup_the_cores_are_the_affinity(monkeypatch, tmp_path):
    cgroup_files(monkeypatch, tmp_path, cpu_max="max 100000")
    assert usable_cores() == CORES
    cgroup_files(monkeypatch, tmp_path, v1_period=None)  # no files at all
    assert usable_cores() == CORES
    cgroup_files(monkeypatch, tmp_path, cpu_max="garbage")
    assert usable_cores() == CORES
    cgroup_files(monkeypatch, tmp_path, cpu_max=f"{64 * 100000} 100000")  # more quota than cores
    assert usable_cores() == CORES


LANGUAGES = [
    "We deliver to Brno every Tuesday.",
    "Doručujeme do Brna každé úterý.",
    "Wir liefern jeden Dienstag nach Brünn.",
    "Мы доставляем в Брно каждый вторник.",
    "私たちは毎週火曜日にブルノへ配達します。",
    "",
    "?",
]


# Past the model's 512 tokens: the engine embeds it in windows and pools them.
LONG = " ".join(f"Order {n} left the Lyon warehouse on pallet {n * 7} with {n % 5} spare tyres." for n in range(32))


def test_the_vectors_are_bitwise_the_same_for_any_thread_count_batch_and_length():
    embedder = LocalEmbedder()
    assert embedder.token_count(LONG) > 512
    batches = [[LANGUAGES[0]], LANGUAGES * 3, [LANGUAGES[1], LONG]]
    results = {}
    # Two threads and more than this machine's cores (an oversubscribed team splits the work unevenly).
    for threads in (1, 2, CORES + 1):
        results[threads] = [
            (embedder.embed(batch, threads=threads), embedder.embed(batch, query=True, threads=threads))
            for batch in batches[: 2 if threads > 2 else 3]
        ]
    for threads in (2, CORES + 1):
        for (passages, queries), (one_passages, one_queries) in zip(results[threads], results[1], strict=False):
            assert np.array_equal(passages, one_passages) and np.array_equal(queries, one_queries)
    # A text's vector does not depend on the batch it was embedded in either.
    alone = np.vstack([embedder.embed([text], threads=2) for text in LANGUAGES])
    assert np.allclose(alone, results[1][1][0][: len(LANGUAGES)], atol=1e-6)


def test_threads_of_one_process_embedding_with_different_counts_get_the_same_vectors(monkeypatch, settings):
    # gunicorn's gthread workers: each request thread sets its own count, and the lock runs one at a time.
    settings.ENGRAM_EMBEDDING_THREADS = 3
    embedder = LocalEmbedder()
    monkeypatch.setattr(embeddings, "threads_for_now", lambda limit: 1 + threading.get_ident() % limit)
    expected = embedder.embed(LANGUAGES)
    results, failures = [], []

    def embed_a_few():
        try:
            for _ in range(3):
                results.append(embedder.embed(LANGUAGES))
        except Exception as exc:  # reported below
            failures.append(exc)

    workers = [threading.Thread(target=embed_a_few) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert not any(worker.is_alive() for worker in workers) and not failures
    assert len(results) == 12 and all(np.array_equal(result, expected) for result in results)


def test_when_this_process_threads_cannot_be_listed_an_embedding_runs_one_thread(monkeypatch, tmp_path):
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.00 0.00 0.00 1/90 4242\n")
    monkeypatch.setattr(compute_threads, "LOADAVG_FILE", str(loadavg))
    monkeypatch.setattr(compute_threads, "OWN_THREADS_DIRECTORY", str(tmp_path / "no-task-directory"))
    assert compute_threads.threads_for_now(limit=64) == 1


def test_the_openai_engine_never_chooses_compute_threads(monkeypatch, settings):
    def refuse(limit):
        raise AssertionError("the openai engine chose compute threads")

    monkeypatch.setattr(compute_threads, "threads_for_now", refuse)
    monkeypatch.setattr(embeddings, "threads_for_now", refuse)
    with embedding_server() as url:
        engine = OpenAIEmbedder(base_url=url, api_key="", model="e5", timeout=30, max_retries=0)
        try:
            vectors = engine.embed(LANGUAGES[:3], query=True)
        finally:
            engine.close()
    assert vectors.shape == (3, 384)


def test_a_busy_request_thread_of_the_same_process_keeps_its_core(monkeypatch, tmp_path):
    # A gthread worker: while one request embeds (the engine releases the GIL), another request thread
    # of the same process runs Python. Counted as "ours" it was ignored, and the embedding took its core.
    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.00 0.00 0.00 2/90 4242\n")  # this thread and the busy one, nothing else
    monkeypatch.setattr(compute_threads, "LOADAVG_FILE", str(loadavg))
    # Four cores whatever the machine has: on one or two the bound below would hold however the busy thread
    # was counted (one thread is always allowed).
    monkeypatch.setattr(compute_threads.os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    stop = threading.Event()

    def busy_request():
        while not stop.is_set():
            sum(range(1000))

    request = threading.Thread(target=busy_request)
    request.start()
    try:
        choices = [compute_threads.threads_for_now(limit=64) for _ in range(20)]
    finally:
        stop.set()
        request.join()
    assert max(choices) == 3  # every core but the busy request's (counted as ours, it was 4)
