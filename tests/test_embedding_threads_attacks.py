"""Attacks on choosing an in-process embedding's thread count per call (decision 0019): a fork after
a parallel embedding, threads of one process, odd inputs and batches, the operator's settings."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np

from config import cpu_quota
from config.cpu_quota import usable_cores
from memory.text import compute_threads, embeddings
from memory.text.embeddings import LocalEmbedder, OpenAIEmbedder
from tests.support.model_servers import embedding_server

ROOT = Path(__file__).resolve().parent.parent

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


CORES = len(os.sched_getaffinity(0))


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
