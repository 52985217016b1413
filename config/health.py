"""``GET /healthz``: the database answers and every migration is applied."""

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.migrations.executor import MigrationExecutor
from django.db.utils import DatabaseError
from django.http import JsonResponse
from django.views.decorators.http import require_GET


@transaction.non_atomic_requests  # it must answer itself when the database cannot open a transaction
@require_GET
def healthz(request):
    checks = {"database": "ok", "migrations": "ok"}
    status = 200
    try:
        connection = connections[DEFAULT_DB_ALIAS]
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
        if pending:
            checks["migrations"] = f"{len(pending)} pending"
            status = 503
    except DatabaseError as exc:
        checks["database"] = f"unreachable: {exc.__class__.__name__}"
        checks["migrations"] = "unknown"
        status = 503
    return JsonResponse({"status": "ok" if status == 200 else "unavailable", **checks}, status=status)
