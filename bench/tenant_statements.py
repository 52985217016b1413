"""Which statements of Engram's tenant operations name their tenant: the measure behind decision 0030.

``python -m bench.tenant_statements`` runs one of each operation through the real code paths in a
throwaway database — a queued turn, the worker processing it, a turn with ``?wait=true``, a recall, a
forget in conversation, a memory list, an edit, a version restored, a settings change, a shared space's case
stored, recalled and deleted, an export, an import, erasing a space, the console's
tenant pages (overview, spaces, a space, a turn, a transcript, thresholds and their preview, the
playground, the deletion audit, a pair marked, a memory deleted) and the worker's sweep —
and EXPLAINs every statement just before it runs, as a role row-level security does not apply to. A statement
names its tenant where every scan of a tenant-owned table in its plan has ``tenant_id = '<uuid>'`` in its
conditions (written in it, or derived by the planner from an equality written in it) and an INSERT lists
the ``tenant_id`` column. The row-level-security predicate does not count: a distributed PostgreSQL routes a
statement on a filter written in it, never on a policy. Reference tables (decision 0030: API keys,
memberships, tenants) are reported apart: every node holds them whole.

Prints the statements per operation and the code sites of those that do not name their tenant.
"""

from __future__ import annotations

import abc
import collections
import json
import os
import re
import sys
import traceback
from pathlib import Path

from bench.harness import setup_django, throwaway_database
from database.prepared_statements import written_as

ROOT = str(Path(__file__).resolve().parent.parent) + "/"
REFERENCE_TABLES = {"tenants_tenant", "tenants_apikey", "tenants_membership"}
UUID = r"'[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}'::uuid"
NAMES_TENANT = re.compile(rf"\btenant_id = {UUID}|{UUID} = (?:\w+\.)?tenant_id\b|\btenant_id = ANY \('\{{")
CONDITIONS = ("Index Cond", "Filter", "Recheck Cond", "TID Cond", "One-Time Filter")
NOT_EXPLAINED = (
    "SAVEPOINT", "RELEASE", "ROLLBACK", "SET ", "BEGIN", "COMMIT", "SHOW", "DECLARE", "FETCH", "CLOSE", "PREPARE",
)  # fmt: skip


def tenant_owned_tables() -> set[str]:
    from django.apps import apps

    return {
        model._meta.db_table
        for model in apps.get_models()
        if any(field.column == "tenant_id" for field in model._meta.concrete_fields)
    } - REFERENCE_TABLES


def code_site() -> str:
    """The innermost frame of Engram's own code that issued the statement."""
    for frame in reversed(traceback.extract_stack()[:-3]):
        if frame.filename.startswith(ROOT) and "/.venv/" not in frame.filename and "/bench/" not in frame.filename:
            return f"{frame.filename[len(ROOT) :]}:{frame.name}"
    return "?"


class Planner:
    """EXPLAIN on a connection of a role row-level security does not apply to: the plan without the policies'
    conditions, as a distributed PostgreSQL routes it. Under the runtime role the planner would carry a
    tenant written for one table to a table joined on something else, through the policies' equal
    conditions, and read the join as naming the tenant on both sides."""

    def __init__(self, conninfo: str):
        import psycopg

        # Client-side binding: the plan shows the values, as the statement names them.
        self.connection = psycopg.connect(conninfo, autocommit=True, cursor_factory=psycopg.ClientCursor)

    def plan(self, sql: str, params=None):
        import psycopg

        head = sql.lstrip().upper()
        if head.startswith(NOT_EXPLAINED) or not re.search(r"\b(FROM|INTO|UPDATE)\b", head):
            return None
        try:
            with self.connection.cursor() as cursor:
                cursor.execute("EXPLAIN (VERBOSE, FORMAT JSON) " + sql, params)
                return cursor.fetchone()[0][0]["Plan"]
        except psycopg.Error:  # a statement EXPLAIN cannot take is not counted
            return None

    def close(self) -> None:
        self.connection.close()


def plan_nodes(node):
    yield node
    for child in node.get("Plans", []):
        yield from plan_nodes(child)


def _conditions(node) -> str:
    scans = list(plan_nodes(node)) if node.get("Node Type") == "Bitmap Heap Scan" else [node]
    return " ".join(str(scan.get(key, "")) for scan in scans for key in CONDITIONS)


def unnamed_tables(sql: str, plan, tables: set[str]) -> tuple[set[str], set[str]]:
    """The tenant-owned tables the statement touches, and those of them it does not name the tenant for."""
    touched, unnamed = set(), set()
    for node in plan_nodes(plan):
        table = node.get("Relation Name")
        if table not in tables or node.get("Node Type") == "Bitmap Index Scan":
            continue
        touched.add(table)
        if node.get("Node Type") == "ModifyTable":
            if node.get("Operation") == "Insert":
                columns = re.search(r"INSERT INTO\s+\S+\s*\(([^)]*)\)", sql, flags=re.IGNORECASE)
                if not (columns and "tenant_id" in columns.group(1)):
                    unnamed.add(table)
            continue  # an UPDATE's or DELETE's rows are found by the scan under it
        if not NAMES_TENANT.search(_conditions(node)):
            unnamed.add(table)
    return touched, unnamed


class PlanRecorder(abc.ABC):
    """An execute wrapper that EXPLAINs each statement of the operations (not of their setup) before it runs
    and hands its plan to ``record``, while ``operation`` names what is running."""

    def __init__(self, tables: set[str], planner: Planner):
        self.tables = tables
        self.planner = planner
        self.operation = "setup"

    def __call__(self, execute, sql, params, many, context):
        if not many and self.operation != "setup":
            # A prepared statement is EXPLAINed as written, with the values it is executed with.
            written = written_as(sql) or sql
            plan = self.planner.plan(written, params)
            if plan is not None:
                self.record(written, plan)
        return execute(sql, params, many, context)

    @abc.abstractmethod
    def record(self, sql: str, plan) -> None:
        """What the recorder keeps of one statement and its plan."""


class Recorder(PlanRecorder):
    """Each statement on tenant-owned tables, with the tables it does not name the tenant for."""

    def __init__(self, tables: set[str], planner: Planner):
        super().__init__(tables, planner)
        self.rows: list[dict] = []

    def record(self, sql: str, plan) -> None:
        touched, unnamed = unnamed_tables(sql, plan, self.tables)
        if touched:
            self.rows.append(
                {"operation": self.operation, "site": code_site(), "unnamed": sorted(unnamed), "sql": sql[:200]}
            )


def run_operations(recorder: PlanRecorder) -> None:
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse
    from django_tasks_db.management.commands.db_worker import Worker
    from rest_framework.test import APIClient

    from memory.forgetting.retention import expire_all
    from memory.turns.pipeline import requeue_due_turns
    from tenants import scope, spaces
    from tenants.api_keys import issue_api_key
    from tenants.tenant_admin import create_operator, create_tenant

    setup_test_environment()  # the test client's hosts
    tenant = create_tenant(name="Statements A", slug="statements-a")
    other = create_tenant(name="Statements B", slug="statements-b")
    with scope.tenant_scope(tenant):
        space = spaces.create_space(tenant=tenant, external_id="customer-1", display_name="Customer one")
        spaces.create_space(tenant=tenant, external_id="customer-2")
        spaces.create_space(tenant=tenant, external_id="support-agents", kind="shared")
    with scope.tenant_scope(other):
        spaces.create_space(tenant=other, external_id="customer-1")
    api = APIClient()
    api.credentials(
        HTTP_AUTHORIZATION=f"Bearer {issue_api_key(tenant=tenant, name='bench', scopes=['turns', 'admin']).secret}"
    )
    turns = reverse("turn-create", args=[space.external_id])

    def worker(max_tasks):
        return Worker(
            queue_names=["*"], interval=0, batch=True, backend_name="default", startup_delay=False,
            max_tasks=max_tasks, worker_id="tenant-statements", excluded_queue_names=[],
        )  # fmt: skip

    def turn(message: str, session: str, wait: bool = True):
        response = api.post(
            turns + ("?wait=true" if wait else ""), {"message": message, "session_id": session}, format="json"
        )
        assert response.status_code in (200, 201, 202), response.content
        return response.json()

    for number, message in enumerate(
        ["I live in Leeds and I drive a Skoda Octavia.", "We run a fleet of four vans.", "Our company makes furniture."]
    ):
        turn(message, f"warm-{number}")
    worker(None).run()
    console = Client()
    console.force_login(
        create_operator(tenant=tenant, username="bench-admin", password="a-long-password", role="admin").user
    )

    def operation(name: str):
        recorder.operation = name

    with connection.execute_wrapper(recorder):
        operation("a turn, queued")
        turn_id = turn("Our office moved to Harrogate last week.", "s1", wait=False)["turn_id"]
        operation("the worker processes it")
        worker(1).run()
        operation("a turn with ?wait=true")
        turn("I prefer to be contacted by email.", "s2")
        operation("recall")
        assert (
            api.post(
                reverse("recall", args=[space.external_id]),
                {"query": "What car does the customer drive?"},
                format="json",
            ).status_code
            == 200
        )
        operation("forget in conversation")
        turn("Forget what you know about our furniture.", "s3")
        operation("memory list")
        listing = api.get(reverse("memory-list", args=[space.external_id])).json()["results"]
        operation("edit")
        fact = next(m for m in listing if m["kind"] == "fact")
        assert (
            api.patch(
                reverse("memory-detail", args=[space.external_id, fact["id"]]),
                {"content": "We run a fleet of five vans."},
                format="json",
            ).status_code
            == 200
        )
        operation("history and restore")
        detail = [space.external_id, fact["id"]]
        versions = api.get(reverse("memory-history", args=detail)).json()
        earlier = next(v for v in versions if v["id"] != fact["id"])
        response = api.post(reverse("memory-restore", args=[space.external_id, earlier["id"]]))
        assert response.status_code == 200, response.content
        operation("settings change")
        response = api.patch(
            reverse("space-detail", args=[space.external_id]), {"settings": {"recall_limit": 7}}, format="json"
        )
        assert response.status_code == 200, response.content
        operation("shared space: a case stored, recalled and deleted")
        cases = reverse("episode-list", args=["support-agents"])
        case = {"inputs": {"question": "The parcel arrived damaged"}, "output": "Refund issued", "outcome": "resolved"}
        response = api.post(cases, case, format="json")
        assert response.status_code == 201, response.content
        response = api.post(
            reverse("episode-recall", args=["support-agents"]), {"inputs": case["inputs"]}, format="json"
        )
        assert response.status_code == 200, response.content
        case_id = api.get(cases).json()["results"][0]["id"]
        assert api.delete(reverse("episode-detail", args=["support-agents", case_id])).status_code == 204
        operation("export")
        response = api.get(reverse("space-export", args=[space.external_id]))
        assert response.status_code == 200
        exported = b"".join(response.streaming_content)  # the export's statements run as it streams
        operation("import")
        response = api.generic(
            "POST", reverse("space-import", args=["customer-2"]), exported, content_type="application/x-ndjson"
        )
        assert response.status_code == 200, response.content
        operation("erase a space")
        assert api.delete(reverse("space-detail", args=["customer-2"])).status_code == 204
        for name, url in [
            ("console: overview", reverse("console:overview")),
            ("console: spaces", reverse("console:spaces")),
            ("console: a space", reverse("console:space", args=[space.external_id])),
            ("console: a turn", reverse("console:turn", args=[space.external_id, turn_id])),
            ("console: a transcript", reverse("console:transcript", args=[space.external_id, "s1"])),
            ("console: thresholds", reverse("console:thresholds", args=[space.external_id])),
            ("console: threshold preview", reverse("console:threshold-preview", args=[space.external_id])),
            ("console: playground", reverse("console:playground") + "?space=customer-1&message=What+car+do+I+drive"),
            ("console: deletion audit", reverse("console:deletions")),
        ]:
            operation(name)
            assert console.get(url).status_code == 200, url
        first, second, *_ = [
            m["id"] for m in api.get(reverse("memory-list", args=[space.external_id])).json()["results"]
        ]
        operation("console: a pair marked")
        marked = console.post(
            reverse("console:mark-pair", args=[space.external_id]),
            {"first": first, "second": second, "label": "different"},
            HTTP_HX_REQUEST="true",
        )
        assert marked.status_code == 200, marked.content
        operation("console: a memory deleted")
        deleted = console.post(reverse("console:memory-delete", args=[space.external_id, first]))
        assert deleted.status_code in (200, 302), deleted.content
        operation("the worker's sweep")
        requeue_due_turns()
        expire_all()


def report(rows: list[dict]) -> str:
    lines = ["| operation | statements on tenant-owned tables | not naming the tenant |", "|---|---:|---:|"]
    for name in dict.fromkeys(r["operation"] for r in rows):
        mine = [r for r in rows if r["operation"] == name]
        lines.append(f"| {name} | {len(mine)} | {sum(1 for r in mine if r['unnamed'])} |")
    unnamed = [r for r in rows if r["unnamed"]]
    lines.append(f"| all | {len(rows)} | {len(unnamed)} |")
    lines += ["", "Not naming the tenant, by code site:", ""]
    by_site = collections.Counter((r["site"], ", ".join(r["unnamed"])) for r in unnamed)
    lines += [f"- {count} × `{site}` ({tables})" for (site, tables), count in by_site.most_common()]
    return "\n".join(lines)


def main() -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"  # the database task queue, as deployed
    setup_django()
    from database.roles import superuser_conninfo

    with throwaway_database("engram_bench_statements"):
        planner = Planner(superuser_conninfo())
        try:
            recorder = Recorder(tenant_owned_tables(), planner)
            run_operations(recorder)
        finally:
            planner.close()
    rows = recorder.rows
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
    print(report(rows))


if __name__ == "__main__":
    main()
