from django.db.backends.postgresql import base
from django.db.backends.postgresql.creation import DatabaseCreation

from config.database_roles import as_owner


class OwnerDatabaseCreation(DatabaseCreation):
    """The owner creates, migrates and drops the test database; the tests then run as the runtime role."""

    def create_test_db(self, *args, **kwargs):
        with as_owner(self.connection):
            return super().create_test_db(*args, **kwargs)

    def destroy_test_db(self, *args, **kwargs):
        with as_owner(self.connection):
            return super().destroy_test_db(*args, **kwargs)


class DatabaseWrapper(base.DatabaseWrapper):
    creation_class = OwnerDatabaseCreation
