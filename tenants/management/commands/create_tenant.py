from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from tenants.tenant_admin import create_tenant


class Command(BaseCommand):
    help = "Create a tenant."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--slug", default="")

    def handle(self, *args, name, slug, **options):
        try:
            tenant = create_tenant(name=name, slug=slug)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(f"Created tenant {tenant.slug} ({tenant.id})")
