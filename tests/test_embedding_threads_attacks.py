"""Attacks on choosing an in-process embedding's thread count per call (decision 0019): a fork after
a parallel embedding, threads of one process, odd inputs and batches, the operator's settings."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from memory.text import compute_threads
from memory.text.compute_threads import usable_cores

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
    compute_threads._LOADAVG = sys.argv[1]
    os.sched_getaffinity = lambda pid: {0, 1}
    embedder = LocalEmbedder()
    before = embedder.embed(["The shop opens at nine."], query=True)
    assert embedder._model._lib.omp_get_max_threads() == 2, "the parent did not embed on two threads"

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
    monkeypatch.setattr(compute_threads, "_CGROUP_CPU_MAX", str(tmp_path / "cpu.max"))
    monkeypatch.setattr(compute_threads, "_CGROUP_V1_QUOTA", str(tmp_path / "quota"))
    monkeypatch.setattr(compute_threads, "_CGROUP_V1_PERIOD", str(tmp_path / "period"))


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
