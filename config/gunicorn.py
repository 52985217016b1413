"""gunicorn's settings for `make serve` and the load and footprint benchmarks.

``preload_app``: the master imports the application once (Django, the API, the language data, the
embedding model mapped from its file) and forks the workers from it, so they share those pages
copy-on-write instead of each loading its own copy. config/wsgi.py closes its database connections
before the fork and leaves running the model to each worker (``post_fork``; see memory/warmup.py).
Any setting can be overridden on the command line or in ``GUNICORN_CMD_ARGS``.

``ENGRAM_WEB_NICENESS`` (default 10): the workers run at this lower CPU priority than the task worker.
When the machine is short of CPU, the turn pipeline keeps pace and the requests wait instead:
otherwise eight request threads crowd out the one worker process, turns are stored faster than they
are processed and the queue grows for as long as the load lasts (docs/operations.md, "Priorities").
Without contention priorities change nothing.
"""

import gc
import os

bind = "127.0.0.1:8000"
workers = 2
threads = 4
worker_class = "gthread"
preload_app = True


def _web_niceness() -> int:
    text = os.environ.get("ENGRAM_WEB_NICENESS", "10")
    try:
        return int(text)
    except ValueError:
        raise SystemExit(f"ENGRAM_WEB_NICENESS must be a whole number (0 for none), not {text!r}") from None


# Read when gunicorn loads this file, so a bad value stops it before anything is served.
web_niceness = _web_niceness()
# Read by config/wsgi.py while the master preloads the application.
os.environ["ENGRAM_PRELOADED_BY_GUNICORN"] = "1"


def pre_fork(server, worker):
    # Objects the master made are never collected in a worker; without this the workers' collector
    # would write to their headers and copy every page it touched.
    gc.freeze()


def post_fork(server, worker):
    os.nice(web_niceness)
    if server.cfg.preload_app:
        from memory.warmup import warm_up_embeddings

        warm_up_embeddings()
