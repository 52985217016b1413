import getpass

from django.contrib.auth import get_user_model
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.management.base import BaseCommand, CommandError

from tenants.models import Membership
from tenants.tenant_admin import create_operator, tenant_by_slug


class Command(BaseCommand):
    help = (
        "Create a console user with a role in a tenant, or give an existing user a role in one more tenant "
        "(an existing user's password is never changed here)."
    )

    def add_arguments(self, parser):
        parser.add_argument("tenant", help="tenant slug")
        parser.add_argument("username")
        parser.add_argument("--role", default=Membership.Role.OPERATOR, choices=Membership.Role.values)
        parser.add_argument("--password", default=None, help="omit to be asked")

    def handle(self, *args, tenant, username, role, password, **options):
        exists = get_user_model().objects.filter(username=username).exists()
        if password is None and not exists:
            password = getpass.getpass(f"Password for {username}: ")
        try:
            membership = create_operator(
                tenant=tenant_by_slug(tenant), username=username, password=password or "", role=role
            )
        except (ObjectDoesNotExist, ValidationError) as exc:
            raise CommandError(str(exc)) from exc
        if exists and password:
            self.stderr.write(
                f"{username} already existed: the password was left unchanged (manage.py changepassword {username})."
            )
        self.stdout.write(f"{username} is {membership.role} of {tenant}")
