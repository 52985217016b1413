"""Django's PostgreSQL backend, with the test database created and dropped by the owner role, a
second connection per thread that is always in autocommit (``autocommit_side_connection``), and
prepared statements where a caller asks for them (``prepared_statements``)."""

import contextlib

import psycopg
from django.db.backends.postgresql import base
from django.db.backends.postgresql.creation import DatabaseCreation
from django.db.backends.postgresql.operations import DatabaseOperations

from config.database_roles import as_owner


class OwnerDatabaseCreation(DatabaseCreation):
    """The owner creates, migrates and drops the test database; the tests then run as the runtime role."""

    def create_test_db(self, *args, **kwargs):
        with as_owner(self.connection):
            return super().create_test_db(*args, **kwargs)

    def destroy_test_db(self, *args, **kwargs):
        with as_owner(self.connection):
            return super().destroy_test_db(*args, **kwargs)


class PreparedStatementCursor(base.ServerBindingCursor):
    """Parameters bound on the server, and each statement prepared on its first use on a connection."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True, binary=binary)


class Operations(DatabaseOperations):
    def last_executed_query(self, cursor, sql, params):
        if isinstance(cursor, PreparedStatementCursor):
            # Sent with its parameters apart: shown (debug logs, captured queries) as Django shows the rest.
            try:
                return self.compose_sql(sql, params)
            except psycopg.errors.DataError:
                return sql
        return super().last_executed_query(cursor, sql, params)


# psycopg prepares nothing at all when its threshold is None (Django's default); with a threshold no
# statement reaches, it prepares only what a cursor asks for (and Django's cursors never ask).
PREPARE_ONLY_WHEN_ASKED = 2**31 - 1


class DatabaseWrapper(base.DatabaseWrapper):
    creation_class = OwnerDatabaseCreation
    ops_class = Operations
    _side_connection = None
    _preparing = False

    def get_connection_params(self):
        params = super().get_connection_params()
        if params.get("prepare_threshold") is None:
            params["prepare_threshold"] = PREPARE_ONLY_WHEN_ASKED
        return params

    @contextlib.contextmanager
    def prepared_statements(self):
        """Statements run in the block are planned once per connection and then only executed.

        For a statement sent on every request whose planning costs more than its execution (recall's
        candidate statement: about 1.5 ms to plan, 0.8 ms to run on a small space). Django binds
        parameters on the client (each statement's text differs, so none could be prepared); here
        they are bound on the server, so the text repeats. Row-level security still holds: its
        policies read the scope with ``current_setting`` when the statement runs, not when it is
        planned, and PostgreSQL re-plans when the role or the table changes."""
        previous, self._preparing = self._preparing, True
        try:
            yield
        finally:
            self._preparing = previous

    def create_cursor(self, name=None):
        if not self._preparing or name:
            return super().create_cursor(name)
        cursor = PreparedStatementCursor(self.connection)
        loader = self.connection.adapters.get_loader(base.TIMESTAMPTZ_OID, base.Format.TEXT)
        if self.timezone != loader.timezone:
            base.register_tzloader(self.timezone, cursor)
        return cursor

    def autocommit_side_connection(self):
        """A connection of this thread's beside the main one, each statement committed on its own.

        For counters that every process must see at once and that must not wait for the request's
        transaction: a row updated inside that transaction stays locked until the request ends, so
        every other request touching the row (the same API key's rate limit) would queue behind it.
        Same database, same role and parameters; it lives and dies with the main connection (closed
        with it, so a test database can be dropped), and a broken one is replaced on the next use.
        """
        side = self._side_connection
        if side is None or side.closed or side.broken:
            side = self.Database.connect(**self.get_connection_params(), autocommit=True)
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
