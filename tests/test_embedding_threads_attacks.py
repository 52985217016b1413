"""Attacks on choosing an in-process embedding's thread count per call (decision 0019): a fork after
a parallel embedding, threads of one process, odd inputs and batches, the operator's settings."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

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
