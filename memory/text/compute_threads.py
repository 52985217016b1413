"""How many threads an in-process embedding should run now: as many as the cores nobody else is using.

On an idle machine two OpenMP threads embed a text in about half the time of one (9.5 against 18 ms
here, and bitwise the same vector). But whenever anything else runs — the server's other processes
embedding, the task worker, PostgreSQL — two threads on two cores wait for each other at every
barrier: three processes embedding with two threads each did less than half the work of three with
one thread each, and one beside a busy process had a p95 of 170 ms instead of 39.

So each embedding first looks at the machine: the kernel's count of runnable threads
(``/proc/loadavg``) less this process's own that give their core back (``/proc/self/task``: the
calling thread, the engine's pool; another running Python thread of ours keeps its core) is what others
are running; the embedding takes the remaining cores (at least one, at most the configured limit). It costs about
20 µs. Idle, a recall's embedding gets every core; under any load it gets one, as before. Where
``/proc`` is not there, or it is a container's view of a busier host, it gets one.

The OpenMP runtime (libgomp) does not survive ``fork()``: once a thread has run a team of more than
one thread, its copy in a forked child waits forever for pool threads that were not copied (the
child's first embedding on two threads hangs). A process forked after its parent embedded on several
threads therefore embeds on one (slower, never stuck): a gunicorn master that ran the model before
forking its workers, for one (memory/warmup.py keeps the configured master from doing so).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

_LOADAVG = "/proc/loadavg"
_OWN_THREADS = "/proc/self/task"
# The process in which an embedding was given more than one thread; its forked children inherit it.
_parallel_in_process: int | None = None


def threads_for_now(limit: int, *, waiting_for_it: int | None = None) -> int:
    """The thread count for an embedding about to run (in the calling thread, right away).

    ``waiting_for_it``: the native id of a thread of ours that handed this embedding over and waits
    for it — it gives its core back, though it may still be running for a few microseconds while
    it goes to sleep (counted as someone else's, it halved most embeddings' threads)."""
    global _parallel_in_process
    if limit <= 1 or not hasattr(os, "sched_getaffinity"):
        return 1
    if _parallel_in_process is not None and _parallel_in_process != os.getpid():
        return 1  # forked after the parent ran a team: a team here would wait forever
    cores = len(os.sched_getaffinity(0))
    try:
        # Own threads first: a thread of ours that stops running between the two reads then counts
        # as ours rather than as someone else's, which would take a core from this embedding.
        own = _runnable_threads_of_this_process(waiting_for_it)
        with open(_LOADAVG, "rb") as loadavg:
            runnable = int(loadavg.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return 1
    elsewhere = max(0, runnable - own)
    threads = max(1, min(limit, cores - elsewhere))
    if threads > 1:
        _parallel_in_process = os.getpid()
    return threads


def _runnable_threads_of_this_process(waiting_for_it: int | None = None) -> int:
    """This process's runnable threads that give their core back to the embedding: the calling thread
    and threads Python does not run (the engine's own pool). Another Python thread of ours that is
    running — a request of the same gthread worker, the worker's sweep — keeps its core while the
    embedding runs (the engine releases the GIL): it is someone else here."""
    ours = {str(threading.get_native_id()), str(waiting_for_it)}
    other_python_threads = {str(t.native_id) for t in threading.enumerate()} - ours
    running = 0
    for thread in os.listdir(_OWN_THREADS):
        if thread in other_python_threads:
            continue
        try:
            with open(f"{_OWN_THREADS}/{thread}/stat", "rb") as stat:
                fields = stat.read()
        except OSError:  # the thread ended meanwhile
            continue
        # "pid (name) S ...": the name may hold spaces and parentheses, the state follows the last ")".
        if fields[fields.rindex(b")") + 2 : fields.rindex(b")") + 3] == b"R":
            running += 1
    return running


class OneComputeThread:
    """Runs every in-process embedding of this process on one thread of its own.

    libgomp gives each thread that starts a parallel region its own pool, and once a process holds
    more pool threads than there are cores it stops spinning at barriers and sleeps on every one of
    them. A gunicorn worker's four request threads, each embedding on two threads, made an embedding
    slower on two threads (~30 ms) than on one (~19 ms); run from one thread, it takes ~11 ms. The
    thread is made in the process that uses it (a forked child has none of its parent's threads)."""

    def __init__(self):
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        if hasattr(os, "register_at_fork"):
            # The parent's thread is not in the child, and the lock may have been held when it forked.
            os.register_at_fork(after_in_child=self._forget_the_parents_thread)

    def _forget_the_parents_thread(self) -> None:
        self._executor = None
        self._lock = threading.Lock()

    def run(self, work: Callable[[int], T]) -> T:
        """``work`` runs on the compute thread and is given the native id of the thread that waits for it."""
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-embedding")
            executor = self._executor
        return executor.submit(work, threading.get_native_id()).result()


# One per process: every in-process embedding engine of the process runs its calls here.
COMPUTE_THREAD = OneComputeThread()
