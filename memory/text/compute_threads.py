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

# Where the kernel counts the runnable threads of the machine, and where it lists this process's threads.
LOADAVG_FILE = "/proc/loadavg"
OWN_THREADS_DIRECTORY = "/proc/self/task"
# The process in which an embedding was given more than one thread; its forked children inherit it.
_parallel_in_process: int | None = None


def threads_for_now(limit: int) -> int:
    """The thread count for an embedding about to run (in the calling thread, right away)."""
    global _parallel_in_process
    if limit <= 1 or not hasattr(os, "sched_getaffinity"):
        return 1
    if _parallel_in_process is not None and _parallel_in_process != os.getpid():
        return 1  # forked after the parent ran a team: a team here would wait forever
    cores = len(os.sched_getaffinity(0))
    try:
        # Own threads first: a thread of ours that stops running between the two reads then counts
        # as ours rather than as someone else's, which would take a core from this embedding.
        own = _runnable_threads_of_this_process()
        with open(LOADAVG_FILE, "rb") as loadavg:
            runnable = int(loadavg.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return 1
    elsewhere = max(0, runnable - own)
    threads = max(1, min(limit, cores - elsewhere))
    if threads > 1:
        _parallel_in_process = os.getpid()
    return threads


def _runnable_threads_of_this_process() -> int:
    """This process's runnable threads that give their core back to the embedding: the calling thread
    and threads Python does not run (the engine's own pool). Another Python thread of ours that is
    running — a request of the same gthread worker, the worker's sweep — keeps its core while the
    embedding runs (the engine releases the GIL): it is someone else here."""
    other_python_threads = {str(t.native_id) for t in threading.enumerate()} - {str(threading.get_native_id())}
    running = 0
    for thread in os.listdir(OWN_THREADS_DIRECTORY):
        if thread in other_python_threads:
            continue
        try:
            with open(f"{OWN_THREADS_DIRECTORY}/{thread}/stat", "rb") as stat:
                fields = stat.read()
        except OSError:  # the thread ended meanwhile
            continue
        # "pid (name) S ...": the name may hold spaces and parentheses, the state follows the last ")".
        if fields[fields.rindex(b")") + 2 : fields.rindex(b")") + 3] == b"R":
            running += 1
    return running
