from django.core.management.base import BaseCommand, CommandError

from tenants.keyring import KEY_ID_PATTERN, generate_entry


class Command(BaseCommand):
    help = "Print a new keyring entry (key-id[@version]=<base64 of 32 random bytes>) for ENGRAM_MASTER_KEY(_FILE)."

    def add_arguments(self, parser):
        parser.add_argument("--key-id", default="default")
        # Not --version: Django's own --version (print Django's version) owns that name.
        parser.add_argument("--key-version", type=int, default=1, dest="key_version", help="e.g. 2 for default@2")

    def handle(self, *args, key_id, key_version, **options):
        if not KEY_ID_PATTERN.match(key_id) or key_version < 1:
            raise CommandError("Give a key id of A-Z a-z 0-9 . _ : - (at most 64) and a version of 1 or more.")
        self.stdout.write(generate_entry(key_id, key_version))
