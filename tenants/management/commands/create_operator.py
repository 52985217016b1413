import getpass

from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.management.base import BaseCommand, CommandError

from tenants.models import Membership
from tenants.tenant_admin import create_operator, tenant_by_slug


class Command(BaseCommand):
    help = "Create (or update) a console user and give them a role in a tenant."

    def add_arguments(self, parser):
        parser.add_argument("tenant", help="tenant slug")
        parser.add_argument("username")
        parser.add_argument("--role", default=Membership.Role.OPERATOR, choices=Membership.Role.values)
        parser.add_argument("--password", default=None, help="omit to be asked")

    def handle(self, *args, tenant, username, role, password, **options):
        if password is None:
            password = getpass.getpass(f"Password for {username}: ")
        try:
            membership = create_operator(tenant=tenant_by_slug(tenant), username=username, password=password, role=role)
        except (ObjectDoesNotExist, ValidationError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{username} is {membership.role} of {tenant}")
