"""The deletion audit for support staff and admins: filter, export the same rows as CSV, check a text.

One parser for the filters serves the table, the CSV and the check form, so the three always agree
on which rows match (an export that ignored ``since`` once held every row while the table said none).
"""

from __future__ import annotations

import csv

from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from console.access import AUDIT_ROLES, console_view, may_see_distances
from console.form_input import BadInput, bad_request, error_status, parse_filter_time
from core.spreadsheet_cells import safe_row
from memory.forgetting import deletions as audited_deletions
from memory.forgetting import was_deleted
from memory.models import DeletionAudit

PAGE_SIZE = 25
FILTER_FIELDS = ("space", "cause", "since", "until")
CSV_COLUMNS = ["occurred_at", "space", "memory_id", "memory_kind", "cause", "turn_id", "actor", "matched_distance",
               "limits"]  # fmt: skip


def readable_limits(limits: dict | None) -> str:
    """The limits in force at a deletion, as "name: value" pairs.

    >>> readable_limits({"max_memories": 500, "ttl_days": 30})
    'max_memories: 500; ttl_days: 30'
    """
    return "; ".join(f"{name}: {value}" for name, value in sorted((limits or {}).items()))


def _filters(params, *, space_field: str = "space") -> tuple[dict, dict, list[str]]:
    """(the filters as typed, keyword arguments for the audit selector, error messages)."""
    typed = {field: params.get(space_field if field == "space" else field, "").strip() for field in FILTER_FIELDS}
    errors = []
    selector = {"space_external_id": typed["space"] or None, "cause": typed["cause"] or None}
    for field in ("since", "until"):
        try:
            selector[field] = parse_filter_time(typed[field], field)
        except BadInput as exc:
            errors.append(str(exc))
    if typed["cause"] and typed["cause"] not in DeletionAudit.Cause.values:
        errors.append(f"cause: choose from {', '.join(DeletionAudit.Cause.values)}.")
    return typed, selector, errors


def _rows(request, selector, errors):
    if errors:
        return DeletionAudit.objects.none()
    return audited_deletions(tenant_id=request.membership.tenant_id, **selector)


def _page(request, *, typed, selector, errors, check=None, page_number=None, status=None):
    rows = _rows(request, selector, errors)
    page = Paginator(rows, PAGE_SIZE).get_page(page_number)
    export_query = urlencode({k: v for k, v in typed.items() if v})
    context = {
        "page": page, "causes": DeletionAudit.Cause.values, "filters": typed, "errors": errors, "check": check,
        "show_distances": may_see_distances(request), "export_query": export_query,
        "rows": [_row(r, may_see_distances(request)) for r in page],
    }  # fmt: skip
    return render(request, "console/deletions.html", context, status=status or error_status(request, errors))


def _row(audit: DeletionAudit, show_distances: bool) -> dict:
    return {
        "occurred_at": audit.occurred_at,
        "space": audit.space_external_id,
        "memory_id": str(audit.memory_id),
        "memory_kind": audit.memory_kind,
        "cause": audit.cause,
        "turn_id": str(audit.turn_id) if audit.turn_id else "",
        "actor": audit.actor,
        "matched_distance": audit.matched_distance if show_distances else None,
        "limits": readable_limits(audit.limits),
    }


@console_view(roles=AUDIT_ROLES)
def deletions(request):
    typed, selector, errors = _filters(request.GET)
    return _page(request, typed=typed, selector=selector, errors=errors, page_number=request.GET.get("page"))


@console_view(roles=AUDIT_ROLES)
def deletions_csv(request):
    """Every row the table's filters match (not one page of them); a bad filter is a 400 that says why."""
    typed, selector, errors = _filters(request.GET)
    if errors:
        return bad_request(" ".join(errors))
    show_distances = may_see_distances(request)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="deletions.csv"'
    writer = csv.DictWriter(response, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    for record in _rows(request, selector, errors).iterator():
        row = _row(record, show_distances)
        row["occurred_at"] = record.occurred_at.isoformat(timespec="seconds")
        row["matched_distance"] = "" if row["matched_distance"] is None else f"{row['matched_distance']:.4f}"
        writer.writerow(safe_row(row))
    return response


@console_view(roles=AUDIT_ROLES)
@require_POST
def deletion_check(request):
    """Whether an exact text was deleted from a space: every matching record, the table's filters kept."""
    space, text = request.POST.get("space", "").strip(), request.POST.get("text", "")
    if not space or not text.strip():
        return bad_request("Give a space and the text to check.")
    # The table's filters ride along as hidden fields; its space filter is named apart from the checked space.
    typed, selector, errors = _filters(request.POST, space_field="filter_space")
    found = was_deleted(tenant_id=request.membership.tenant_id, space_external_id=space, text=text)
    check = {"space": space, "found": [_row(r, may_see_distances(request)) for r in found]}
    return _page(request, typed=typed, selector=selector, errors=errors, check=check)
