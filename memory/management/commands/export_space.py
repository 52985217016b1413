import os
import sys

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError
from django.http import Http404

from memory.transfer.export import export_lines
from tenants import scope, spaces
from tenants.tenant_admin import tenant_by_slug


def find_space(tenant_slug: str, external_id: str):
    try:
        tenant = tenant_by_slug(tenant_slug)
        with scope.tenant_scope(tenant):
            return spaces.find_space(tenant=tenant, external_id=external_id)
    except (ObjectDoesNotExist, Http404) as exc:
        raise CommandError(f"No space {external_id!r} in tenant {tenant_slug!r}.") from exc


def passphrase_from(variable: str | None) -> str | None:
    if not variable:
        return None
    value = os.environ.get(variable)
    if not value:
        raise CommandError(f"The environment variable {variable} is empty or not set.")
    return value


class Command(BaseCommand):
    help = "Write a space (memories and episodes, decrypted for transfer) as JSON lines."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True, help="tenant slug")
        parser.add_argument("--space", required=True, help="the space's external id")
        parser.add_argument("--output", "-o", required=True, help="file to write ('-' for standard output)")
        parser.add_argument(
            "--passphrase-env", help="encrypt every record under the passphrase in this environment variable"
        )

    def handle(self, *args, tenant, space, output, passphrase_env, **options):
        found = find_space(tenant, space)
        passphrase = passphrase_from(passphrase_env)
        target = sys.stdout if output == "-" else open(output, "w", encoding="utf-8")
        written = 0
        try:
            for line in export_lines(found, passphrase=passphrase):
                target.write(line)
                written += 1
                if written % 500 == 0:
                    self.stderr.write(f"\rexported {written - 1} records", ending="")
        finally:
            if target is not sys.stdout:
                target.close()
        self.stderr.write(f"\rexported {written - 2} records to {output}" + (" (encrypted)" if passphrase else ""))
