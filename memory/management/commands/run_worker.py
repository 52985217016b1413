"""``manage.py run_worker``: the task worker with the retry and retention sweep beside it, in one process.

`make serve` and `make run` used to start ``db_worker`` and ``sweep_turns --every 30`` as two
processes, each with its own copy of Django and the project (about 75 MiB for the sweep alone,
docs/benchmarks.md "Footprint"). The sweep is a few queries every half minute: a thread does it.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from django.db import connections
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorkerCommand

from memory.forgetting.retention import expire_all
from memory.turns.pipeline import requeue_due_turns

logger = logging.getLogger(__name__)


class Command(DatabaseWorkerCommand):
    help = (
        "Run queued tasks (the options of db_worker) and, on a thread beside them, sweep every --sweep-every "
        "seconds as `sweep_turns --every` does: re-queue due turns, expire what retention says has lived long enough."
    )

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--sweep-every", type=float, default=30, help="seconds between sweeps (0: no sweep)")
        parser.add_argument(
            "--retention-every", type=float, default=600, help="seconds between retention passes (0: never)"
        )

    def handle(self, *args, sweep_every: float, retention_every: float, **options):
        # With --reload the parent only watches files and restarts a child that does the work.
        watching_parent = options.get("reload") and os.environ.get(DJANGO_AUTORELOAD_ENV) != "true"
        if sweep_every > 0 and not watching_parent:
            sweep = threading.Thread(
                target=sweep_forever, args=(sweep_every, retention_every), name="sweep", daemon=True
            )
            sweep.start()
        super().handle(*args, **options)


def sweep_forever(every: float, retention_every: float, stop: threading.Event | None = None) -> None:
    """Sweep every ``every`` seconds until ``stop`` is set. A failed pass (the database restarting) is
    logged and the next one runs on time: in its own process the sweep died with it and nobody noticed."""
    stop = stop or threading.Event()
    last_retention = None
    while not stop.is_set():
        try:
            queued = requeue_due_turns()
            if queued:
                logger.info("queued %d due turn(s)", queued)
            if retention_every and (last_retention is None or time.monotonic() - last_retention >= retention_every):
                last_retention = time.monotonic()
                report = expire_all()
                if any((report.tasks, report.events, report.transcript_lines)):
                    logger.info(
                        "retention: %d task(s), %d event(s) deleted; %d transcript line(s) blanked",
                        report.tasks, report.events, report.transcript_lines,
                    )  # fmt: skip
        except Exception:
            logger.exception("the sweep failed; the next one runs in %.0f s", every)
        finally:
            connections.close_all()  # this thread's connections only (they are per thread)
        stop.wait(every)
