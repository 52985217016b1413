import time

from django.core.management.base import BaseCommand

from memory.forgetting.retention import expire_all
from memory.turns.pipeline import requeue_due_turns


class Command(BaseCommand):
    help = (
        "Queue every turn that is due for a retry or whose worker died, and expire what the retention settings "
        "say has lived long enough; with --every, keep doing it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--every", type=float, default=0, help="seconds between sweeps (0: sweep once)")
        parser.add_argument(
            "--retention-every", type=float, default=600, help="seconds between retention passes (0: never)"
        )

    def handle(self, *args, every, retention_every, **options):
        last_retention = None
        while True:
            count = requeue_due_turns()
            if count or not every:
                self.stdout.write(f"queued {count} due turn(s)")
            if retention_every and (last_retention is None or time.monotonic() - last_retention >= retention_every):
                last_retention = time.monotonic()
                report = expire_all()
                if any((report.tasks, report.events, report.transcript_lines)) or not every:
                    self.stdout.write(
                        f"retention: {report.tasks} task(s), {report.events} event(s) deleted; "
                        f"{report.transcript_lines} transcript line(s) blanked"
                    )
            if not every:
                return
            time.sleep(every)
