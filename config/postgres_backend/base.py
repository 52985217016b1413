"""Django's PostgreSQL backend, with the test database created and dropped by the owner role, and a
second connection per thread that is always in autocommit (``autocommit_side_connection``)."""

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
    _side_connection = None

    def autocommit_side_connection(self):
        """A connection of this thread's beside the main one, each statement committed on its own.

        For counters that every process must see at once and that must not wait for the request's
        transaction: a row updated inside that transaction stays locked until the request ends, so
        every other request touching the row (the same API key's rate limit) would queue behind it.
        Same database, same role and parameters (``assume_role`` too, as Django sets it on the main
        one); it lives and dies with the main connection (closed with it, so a test database can be
        dropped), and a broken one is replaced on the next use.
        """
        side = self._side_connection
        if side is None or side.closed or side.broken:
            side = self.Database.connect(**self.get_connection_params(), autocommit=True)
            self._configure_role(side)  # Django's own SET ROLE for OPTIONS["assume_role"]
            self._side_connection = side
        return side

    def has_side_connection(self) -> bool:
        return self._side_connection is not None and not self._side_connection.closed

    def close_side_connection(self):
        side, self._side_connection = self._side_connection, None
        if side is not None and not side.closed:
            side.close()

    def close(self):
        try:
            super().close()
        finally:
            self.close_side_connection()
