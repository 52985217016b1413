import sys

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError

from memory.text.reembedding import reembed_tenant
from tenants.tenant_admin import all_tenant_ids, tenant_by_slug


class Command(BaseCommand):
    help = "Re-embed every memory (of one tenant, or all) with the configured embedding engine."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="tenant slug (default: every tenant)")

    def handle(self, *args, tenant, **options):
        try:
            tenant_ids = [tenant_by_slug(tenant).id] if tenant else all_tenant_ids()
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from exc
        total = 0
        for tenant_id in tenant_ids:

            def progress(done, count, tenant_id=tenant_id):
                self.stdout.write(f"\rtenant {tenant_id}: re-embedded {done}/{count}", ending="")
                sys.stdout.flush()

            total += reembed_tenant(tenant_id, progress)
            self.stdout.write("")
        self.stdout.write(f"Done: {total} memories re-embedded.")
