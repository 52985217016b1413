import sys

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from tenants.key_retirement import KekVersion, count_live_keys_under, retire


class Command(BaseCommand):
    help = (
        "Retire a key-encryption key version (e.g. default@1): re-wrap every live space key under the newest "
        "version of its id, then tell whether the old version may be removed from the keyring and destroyed. "
        "After that, what erased spaces left in table pages, WAL and backups cannot be decrypted."
    )

    def add_arguments(self, parser):
        parser.add_argument("key", help="the version to retire, as key-id@version (e.g. default@1)")
        parser.add_argument("--dry-run", action="store_true", help="only count the live space keys still under it")

    def handle(self, *args, key, dry_run, **options):
        try:
            retired = KekVersion.parse(key)
            if dry_run:
                self.stdout.write(
                    f"{count_live_keys_under(retired)} live space key(s) wrapped under {retired} or older"
                )
                return

            def progress(done, total):
                self.stdout.write(f"\rre-wrapped {done}/{total}", ending="")
                sys.stdout.flush()

            done = retire(retired, progress)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        left = count_live_keys_under(retired)
        if left:
            raise CommandError(f"{left} live space key(s) are still wrapped under {retired}; run the command again.")
        self.stdout.write(
            f"\nDone: {done} space key(s) re-wrapped. No live space key uses {retired} or older any more: remove "
            f"it from the keyring, deploy, and destroy every copy. From then on, the residue of spaces erased "
            f"under it cannot be decrypted."
        )
