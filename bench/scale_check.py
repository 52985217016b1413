"""Citus-ready, proved without Citus (issue #29, decision 0030): ``make scale-check``.

In a throwaway database of the embedded PostgreSQL:

1. The keys. Every primary key, unique constraint and foreign key of a tenant-owned table includes
   ``tenant_id``, a foreign key between two of them pairs ``tenant_id`` with ``tenant_id`` and none sets NULL
   or a default when the row it points at goes: what a distributed PostgreSQL requires of tables it shards
   on that column. Reference tables (every node holds
   them whole) may be pointed at; nothing but a tenant-owned table points at a tenant-owned one.
2. The shards. Every tenant-owned table is rebuilt hash-partitioned by ``tenant_id`` (its keys, indexes,
   policies, grants and triggers as before), then one of each operation runs through the real code — a
   queued turn, the worker, a turn with ``?wait=true``, recall, a forget, a list, an edit, an export, an
   import, erasing a space, the console's tenant pages and the worker's sweep — and every statement is EXPLAINed as it runs, as a
   role row-level security does not apply to. Each must touch the partitions of one tenant only: at most
   one partition, the same one in every table it reads or writes, pruned when it is planned. Pruning done
   only when the plan starts (``Subplans Removed``) is refused: it comes from a value known at run time,
   such as the row-level-security setting, and a distributed PostgreSQL routes on the statement's own
   filter, never on a policy.

Each run also EXPLAINs statements that reach every tenant (a canary): the check fails if it does not see
them, so it cannot pass by seeing no partitions at all. ``--with-cross-tenant-query`` adds such a statement
to the operations, as the test suite does to show the check failing. Exit status 0 when every statement
keeps to one tenant, 1 otherwise, with the statements and their code sites.
"""

from __future__ import annotations

import collections
import os
import re
import sys

from bench.harness import setup_django, throwaway_database
from bench.tenant_statements import (
    REFERENCE_TABLES,
    Planner,
    PlanRecorder,
    code_site,
    plan_nodes,
    run_operations,
    tenant_owned_tables,
)

PARTITIONS = 8
PARTITION_NAME = re.compile(r"^(?P<table>\w+)__shard(?P<number>\d+)$")
CANARIES = [
    "SELECT count(*) FROM memory_memory",
    "SELECT m.id FROM memory_memory m JOIN memory_session s ON s.id = m.source_session_id "
    "WHERE m.tenant_id = '00000000-0000-0000-0000-000000000001'",
    "SELECT id FROM memory_turn WHERE tenant_id = current_setting('engram.tenant_id', true)::uuid",
]


def key_problems(cursor, tables: set[str]) -> list[str]:
    """What a distributed PostgreSQL would refuse of the keys: every one must carry ``tenant_id``."""
    cursor.execute(
        """SELECT c.conrelid::regclass::text, c.conname, c.contype, c.confrelid::regclass::text,
                  c.confdeltype IN ('n', 'd') OR c.confupdtype IN ('n', 'd'),
                  ARRAY(SELECT attname FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                        JOIN pg_attribute ON attrelid = c.conrelid AND attnum = k.n ORDER BY k.i)::text[],
                  ARRAY(SELECT attname FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                        JOIN pg_attribute ON attrelid = c.confrelid AND attnum = k.n ORDER BY k.i)::text[]
           FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid
           WHERE c.contype IN ('p', 'u', 'f', 'x') AND r.relnamespace = 'public'::regnamespace"""
    )
    problems = []
    for table, name, kind, target, sets_null, columns, target_columns in cursor.fetchall():
        if kind == "f" and table not in tables:
            if target in tables:
                problems.append(f"{table}.{name}: a table that is not sharded points at tenant-owned {target}")
            continue
        if table not in tables:
            continue
        if "tenant_id" not in columns:
            problems.append(f"{table}.{name}: a key without tenant_id ({', '.join(columns)})")
        elif sets_null:
            # Citus refuses SET NULL / SET DEFAULT on a key holding the distribution column (citusdata/citus#7132).
            problems.append(f"{table}.{name}: sets NULL or DEFAULT on delete or update, which Citus refuses")
        elif kind == "f" and target in tables:
            pairs = dict(zip(columns, target_columns, strict=True))
            if pairs["tenant_id"] != "tenant_id":
                problems.append(f"{table}.{name}: tenant_id is not paired with {target}.tenant_id")
        elif kind == "f" and target not in REFERENCE_TABLES:
            problems.append(f"{table}.{name}: points at {target}, neither sharded nor a reference table")
    cursor.execute(
        """SELECT r.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class r ON r.oid = i.indrelid
           WHERE i.indisunique AND r.relnamespace = 'public'::regnamespace
             AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conindid = i.indexrelid)"""
    )
    problems += [
        f"{table}: a unique index without tenant_id ({definition})"
        for table, definition in cursor.fetchall()
        if table in tables and "tenant_id" not in definition
    ]
    return problems


def _capture(cursor, table: str) -> dict:
    def rows(sql):
        cursor.execute(sql, [table])
        return cursor.fetchall()

    return {
        "constraints": rows(
            "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = %s::regclass AND contype IN ('p', 'u', 'f', 'c', 'x') ORDER BY conname"
        ),
        "indexes": rows(
            "SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = %s::regclass "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conindid = indexrelid)"
        ),
        "policies": rows(
            "SELECT policyname, permissive, cmd, roles::text[], qual, with_check FROM pg_policies WHERE tablename = %s"
        ),
        "security": rows(
            "SELECT relrowsecurity, relforcerowsecurity, pg_get_userbyid(relowner) FROM pg_class WHERE oid = %s::regclass"
        )[0],
        "grants": rows(
            "SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END, "
            "a.privilege_type FROM pg_class, aclexplode(relacl) a WHERE oid = %s::regclass"
        ),
        "triggers": rows(
            "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal"
        ),
    }


def shard_by_tenant(cursor, tables: set[str], partitions: int = PARTITIONS) -> None:
    """Rebuild each table hash-partitioned by ``tenant_id``, as a distributed PostgreSQL shards it."""
    captured = {table: _capture(cursor, table) for table in sorted(tables)}
    for table in captured:
        cursor.execute(f"ALTER TABLE {table} RENAME TO {table}__plain")
        cursor.execute(
            f"CREATE TABLE {table} (LIKE {table}__plain INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING GENERATED "
            f"INCLUDING STORAGE) PARTITION BY HASH (tenant_id)"
        )
        for number in range(partitions):
            cursor.execute(
                f"CREATE TABLE {table}__shard{number} PARTITION OF {table} "
                f"FOR VALUES WITH (MODULUS {partitions}, REMAINDER {number})"
            )
    cursor.execute("DROP TABLE " + ", ".join(f"{table}__plain" for table in captured) + " CASCADE")
    # Keys first, foreign keys once every key they point at exists.
    for foreign in (False, True):
        for table, parts in captured.items():
            for name, kind, definition in parts["constraints"]:
                if (kind == "f") == foreign:
                    cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}")
    for table, parts in captured.items():
        for (definition,) in parts["indexes"] + parts["triggers"]:
            cursor.execute(definition)
        for name, permissive, command, roles, qual, with_check in parts["policies"]:
            cursor.execute(
                f"CREATE POLICY {name} ON {table} AS {permissive} FOR {command} TO {', '.join(roles)}"
                + (f" USING ({qual})" if qual else "")
                + (f" WITH CHECK ({with_check})" if with_check else "")
            )
        row_security, forced, owner = parts["security"]
        cursor.execute(f"ALTER TABLE {table} OWNER TO {owner}")
        if row_security:
            cursor.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        if forced:
            cursor.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
        for grantee, privilege in parts["grants"]:
            cursor.execute(f"GRANT {privilege} ON {table} TO {grantee}")


def shards_touched(plan, tables: set[str]) -> tuple[dict[str, set[int]], bool]:
    """The partitions of each sharded table the plan reads or writes, and whether any were pruned only at run
    time. A row inserted goes to its own tenant's shard, routed by the ``tenant_id`` it carries (every row
    has one: the column is NOT NULL); the table is listed with no partition of its own."""
    touched: dict[str, set[int]] = collections.defaultdict(set)
    pruned_at_run_time = False
    for node in plan_nodes(plan):
        pruned_at_run_time |= bool(node.get("Subplans Removed"))
        relation = node.get("Relation Name") or ""
        found = PARTITION_NAME.match(relation)
        if found:
            touched[found["table"]].add(int(found["number"]))
        elif node.get("Operation") == "Insert" and relation in tables:
            touched.setdefault(relation, set())
    return dict(touched), pruned_at_run_time


def crossing(plan, tables: set[str]) -> str | None:
    """Why a statement is not one tenant's, or None when it is."""
    return why_crossing(*shards_touched(plan, tables))


def why_crossing(touched: dict[str, set[int]], pruned_at_run_time: bool) -> str | None:
    if pruned_at_run_time:
        return "pruned only at run time (a value the statement does not write)"
    if len(set().union(*touched.values())) > 1:
        return "; ".join(f"{table}: {len(shards)} shards" for table, shards in sorted(touched.items()))
    return None


class ShardRecorder(PlanRecorder):
    """Each statement on sharded tables, and those that reach more than one tenant's shard."""

    def __init__(self, tables: set[str], planner: Planner):
        super().__init__(tables, planner)
        self.statements: collections.Counter = collections.Counter()
        self.crossings: list[dict] = []

    def record(self, sql: str, plan) -> None:
        touched, pruned_at_run_time = shards_touched(plan, self.tables)
        if not touched:
            return
        self.statements[self.operation] += 1
        reason = why_crossing(touched, pruned_at_run_time)
        if reason:
            self.crossings.append(
                {"operation": self.operation, "site": code_site(), "why": reason, "sql": " ".join(sql.split())[:240]}
            )


def cross_tenant_query(recorder: ShardRecorder) -> None:
    """A statement that reads every tenant's memories: what the check exists to catch."""
    from django.db import connection

    recorder.operation = "a deliberately cross-tenant query"
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_memory WHERE kind = %s", ["fact"])


def check(*, with_cross_tenant_query: bool = False) -> tuple[list[str], ShardRecorder]:
    """Problems with the keys and the canaries, and the recorder holding the statements that cross tenants."""
    from django.db import connections

    from database.roles import superuser_conninfo

    tables = tenant_owned_tables()
    planner = Planner(superuser_conninfo())
    try:
        with planner.connection.cursor() as cursor:
            problems = key_problems(cursor, tables)
            if problems:
                return problems, ShardRecorder(tables, planner)
            with planner.connection.transaction():
                shard_by_tenant(cursor, tables)
        connections.close_all()  # nothing cached of the tables as they were
        problems += [f"the canary was not caught: {sql}" for sql in CANARIES if not crossing(planner.plan(sql), tables)]
        recorder = ShardRecorder(tables, planner)
        run_operations(recorder)  # EXPLAINs each statement through the recorder
        if with_cross_tenant_query:
            with connections["default"].execute_wrapper(recorder):
                cross_tenant_query(recorder)
        return problems, recorder
    finally:
        planner.close()


def report(problems: list[str], recorder: ShardRecorder) -> str:
    lines = [f"Tenant-owned tables hash-partitioned by tenant_id into {PARTITIONS} shards.", ""]
    lines += ["| operation | statements on sharded tables | crossing tenants |", "|---|---:|---:|"]
    for name, count in recorder.statements.items():
        lines.append(f"| {name} | {count} | {sum(1 for c in recorder.crossings if c['operation'] == name)} |")
    lines.append(f"| all | {sum(recorder.statements.values())} | {len(recorder.crossings)} |")
    for crossed in recorder.crossings:
        lines += ["", f"CROSSES TENANTS ({crossed['operation']}, {crossed['site']}): {crossed['why']}", crossed["sql"]]
    lines += [f"PROBLEM: {problem}" for problem in problems]
    return "\n".join(lines)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with-cross-tenant-query", action="store_true", help="add one, to see the check fail")
    parser.add_argument("--database", default="engram_scale_check", help="the throwaway database's name")
    arguments = parser.parse_args()
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"  # the database task queue, as deployed
    setup_django()
    with throwaway_database(arguments.database):
        problems, recorder = check(with_cross_tenant_query=arguments.with_cross_tenant_query)
    print(report(problems, recorder))
    failed = problems or recorder.crossings or not recorder.statements
    print("scale-check: " + ("FAILED" if failed else "every statement keeps to one tenant's shard"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
