from django.core.management.base import BaseCommand, CommandError

from memory.management.commands.export_space import find_space, passphrase_from
from memory.transfer.importing import import_export, read_export
from memory.transfer.sealing import TransferError

BAR_WIDTH = 30


class Command(BaseCommand):
    help = (
        "Load an export into a space (re-encrypted under its key, re-embedded if the model differs). "
        "Idempotent: records already imported are skipped, so an interrupted import can simply be rerun."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True, help="tenant slug of the target space")
        parser.add_argument("--space", required=True, help="the target space's external id (it must exist)")
        parser.add_argument("file", help="the export file (JSON lines)")
        parser.add_argument("--passphrase-env", help="environment variable holding the export's passphrase")

    def handle(self, *args, tenant, space, file, passphrase_env, **options):
        target = find_space(tenant, space)
        try:
            with open(file, "rb") as handle:
                export = read_export(handle, passphrase=passphrase_from(passphrase_env))
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}") from exc
        except TransferError as exc:
            raise CommandError(" ".join(exc.messages)) from exc

        def progress(done, total):
            filled = BAR_WIDTH * done // total if total else BAR_WIDTH
            self.stderr.write(f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}", ending="")

        try:
            report = import_export(target, export, progress=progress, batch_transactions=True)
        except TransferError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stderr.write("")
        self.stdout.write(
            f"Imported {report.memories} memories and {report.episodes} episodes into {tenant}/{space}; "
            f"skipped {report.skipped} already imported"
            + ("; re-embedded with this server's model." if report.reembedded else ".")
        )
