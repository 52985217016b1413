from django.core.management.base import BaseCommand

from tenants.keyring import generate_entry


class Command(BaseCommand):
    help = "Print a new keyring entry (key-id[@version]=<base64 of 32 random bytes>) for ENGRAM_MASTER_KEY(_FILE)."

    def add_arguments(self, parser):
        parser.add_argument("--key-id", default="default")
        parser.add_argument("--version", type=int, default=1, dest="key_version")

    def handle(self, *args, key_id, key_version, **options):
        self.stdout.write(generate_entry(key_id, key_version))
