import sys

from django.core.management.base import BaseCommand

from tenants.key_rotation import count_outdated, rotate_all
from tenants.keyring import get_keyring


class Command(BaseCommand):
    help = (
        "Re-wrap every space key under the newest version of its key-encryption key "
        "(add e.g. 'default@2=<base64>' to the keyring first). Safe to re-run after an interruption."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="only count the space keys still to re-wrap")

    def handle(self, *args, dry_run, **options):
        keyring = get_keyring()
        newest = ", ".join(f"{key_id}@{keyring.newest(key_id)[0]}" for key_id in keyring.key_ids())
        self.stdout.write(f"Newest key versions: {newest}")
        if dry_run:
            self.stdout.write(f"{count_outdated()} space key(s) to re-wrap")
            return

        def progress(done, total):
            self.stdout.write(f"\rre-wrapped {done}/{total}", ending="")
            sys.stdout.flush()

        done = rotate_all(progress)
        self.stdout.write(f"\nDone: {done} space key(s) re-wrapped; every row is unchanged.")
