from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.management.base import BaseCommand, CommandError

from tenants.api_keys import issue_api_key
from tenants.tenant_admin import tenant_by_slug


class Command(BaseCommand):
    help = "Create an API key for a tenant and print its secret once."

    def add_arguments(self, parser):
        parser.add_argument("tenant", help="tenant slug")
        parser.add_argument("--name", default="api key")
        parser.add_argument("--scope", action="append", dest="scopes", choices=["turns", "admin"])
        parser.add_argument("--agent", default="")

    def handle(self, *args, tenant, name, scopes, agent, **options):
        try:
            issued = issue_api_key(tenant=tenant_by_slug(tenant), name=name, scopes=scopes or ["turns"], agent=agent)
        except (ObjectDoesNotExist, ValidationError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"API key {issued.api_key.name!r} scopes={','.join(issued.api_key.scopes)}")
        self.stdout.write("The secret is shown only now; store it:")
        self.stdout.write(issued.secret)
