"""Django's ``migrate``, run as the database owner: the runtime role may not change the schema."""

from django.core.management.commands.migrate import Command as DjangoMigrateCommand
from django.db import connections

from database.roles import as_owner


class Command(DjangoMigrateCommand):
    def handle(self, *args, **options):
        with as_owner(connections[options["database"]]):
            return super().handle(*args, **options)
