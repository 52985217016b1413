"""Django's ``flush``, run as the database owner: the runtime role may not TRUNCATE."""

from django.core.management.commands.flush import Command as DjangoFlushCommand
from django.db import connections

from database.roles import as_owner


class Command(DjangoFlushCommand):
    def handle(self, *args, **options):
        with as_owner(connections[options["database"]]):
            return super().handle(*args, **options)
