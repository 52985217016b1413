from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from memory.models import Turn
from memory.turns.pipeline import requeue_failed
from tenants import scope
from tenants.tenant_admin import all_tenant_ids, tenant_by_slug


class Command(BaseCommand):
    help = "Queue failed turns again, due now, with a fresh count of attempts: every tenant's, or one tenant's."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="the tenant's slug (default: every tenant)")

    def handle(self, *args, tenant=None, **options):
        if tenant:
            try:
                tenant_ids = [tenant_by_slug(tenant).id]
            except ObjectDoesNotExist as exc:
                raise CommandError(f"No tenant with the slug {tenant!r}.") from exc
        else:
            tenant_ids = all_tenant_ids()
        total = 0
        for tenant_id in tenant_ids:
            with scope.tenant_scope(tenant_id), transaction.atomic():
                total += requeue_failed(Turn.objects.all())
        self.stdout.write(f"queued {total} failed turn(s) again")
