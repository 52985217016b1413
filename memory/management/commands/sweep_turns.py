import time

from django.core.management.base import BaseCommand

from memory.turn_queue import requeue_due_turns


class Command(BaseCommand):
    help = "Queue every turn that is due for a retry or whose worker died; with --every, keep doing it."

    def add_arguments(self, parser):
        parser.add_argument("--every", type=float, default=0, help="seconds between sweeps (0: sweep once)")

    def handle(self, *args, every, **options):
        while True:
            count = requeue_due_turns()
            if count or not every:
                self.stdout.write(f"queued {count} due turn(s)")
            if not every:
                return
            time.sleep(every)
