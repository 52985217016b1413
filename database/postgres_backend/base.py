"""Django's PostgreSQL backend, with the test database created and dropped by the owner role, and
connections beside the request's that are always in autocommit (``autocommit_side_connection``)."""

import contextlib

import psycopg
import psycopg.sql
from django.conf import settings
from django.db.backends.postgresql import base
from django.db.backends.postgresql.creation import DatabaseCreation
from psycopg_pool import ConnectionPool
from psycopg_pool.base import AttemptWithBackoff

from database.roles import as_owner

# psycopg_pool retries a failed connection after 1 s, doubling each time: after a minute's database restart
# it would wait half a minute more before trying again, and every request meanwhile is a 503. Retrying twice
# a second, never slower, costs one connection attempt per pool and half second while the server is down.
AttemptWithBackoff.INITIAL_DELAY = 0.5
AttemptWithBackoff.DELAY_BACKOFF = 1.0


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
    # One per process and alias, like Django's own pools (class attribute: every thread's wrapper shares it).
    _rate_limit_pools: dict[str, ConnectionPool] = {}

    @contextlib.contextmanager
    def autocommit_side_connection(self):
        """A connection beside the request's, each statement committed on its own, for one short use.

        For counters that every process must see at once and that must not wait for the request's
        transaction: a row updated inside that transaction stays locked until the request ends, so
        every other request touching the row (the same API key's rate limit) would queue behind it.
        Same database, role and parameters (``assume_role`` too, as Django sets it on the main one),
        from a pool of the process's own that the request threads share, so a process never holds
        more than ``ENGRAM_DB_CONNECTIONS`` connections however many threads it runs. A connection
        that broke while in use is not given back (psycopg_pool drops it).
        """
        with self.rate_limit_pool().connection() as side:
            yield side

    def rate_limit_pool(self) -> ConnectionPool:
        pool = self._rate_limit_pools.get(self.alias)
        if pool is None:
            parameters = self.get_connection_params()
            parameters.pop("pool", None)
            pool = ConnectionPool(
                kwargs={**parameters, "autocommit": True},
                min_size=0,
                max_size=settings.ENGRAM_DB_RATE_LIMIT_CONNECTIONS,
                timeout=settings.ENGRAM_DB_POOL_TIMEOUT,
                max_idle=60.0,
                configure=self._configure_side_connection,
                num_workers=1,
                open=True,  # before it is stored: another thread may take it from there at once
            )
            # Two threads may build one at once: the first stored wins, the other is closed (it opened none:
            # min_size is 0). Opening here, not per use, keeps the pool's lock off every request's path.
            stored = self._rate_limit_pools.setdefault(self.alias, pool)
            if stored is not pool:
                pool.close()
            pool = stored
        return pool

    def _configure_side_connection(self, connection):
        """The rate limit's count need not survive a crash of the database server: not waiting for its
        commit to reach the disk took a third off the statement (0.33 → 0.21 ms). After a crash a key may
        get back the last fraction of a second's requests; nothing else is written on these connections."""
        connection.execute("SET synchronous_commit = off")
        self._configure_role(connection)
        return True

    def _configure_role(self, connection):
        """``SET ROLE`` for ``OPTIONS["assume_role"]``, composed on the new connection itself: a pool
        configures connections on its own thread, where Django's version (which borrows this wrapper's
        cursor to quote the name) fails, and no connection is ever made."""
        if new_role := self.settings_dict["OPTIONS"].get("assume_role"):
            connection.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(new_role)))
            return True
        return False

    def close_side_connection(self):
        """Close the process's rate-limit connections (a test database is about to be dropped, or
        credentials changed); the next use opens new ones."""
        pool = self._rate_limit_pools.pop(self.alias, None)
        if pool is not None:
            pool.close()

    def close_pool(self):
        super().close_pool()
        self.close_side_connection()
