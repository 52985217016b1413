"""The spaces list as an operator scans it: how much each space holds, when it was last active, and
filters by kind and by turns that need attention. Reads only, in the request's tenant scope."""

from __future__ import annotations

from django.db.models import Count, IntegerField, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce, Greatest

from memory.models import Memory, Turn
from tenants.models import Space

TURN_STATES = (Turn.Status.FAILED, Turn.Status.QUEUED)


def spaces_listed(*, tenant_id, query: str = "", kind: str = "", turns: str = ""):
    """The tenant's spaces with ``memory_count`` and ``last_activity`` (the latest turn or memory change)."""
    current = Memory.objects.filter(space=OuterRef("pk"), superseded_by__isnull=True)
    memory_count = current.order_by().values("space").annotate(n=Count("id")).values("n")
    last_turn = Turn.objects.filter(space=OuterRef("pk")).order_by("-created_at").values("created_at")[:1]
    last_change = Memory.objects.filter(space=OuterRef("pk")).order_by("-updated_at").values("updated_at")[:1]
    rows = Space.objects.filter(tenant_id=tenant_id).annotate(
        memory_count=Coalesce(Subquery(memory_count, output_field=IntegerField()), 0),
        # PostgreSQL's GREATEST skips NULLs: a space with turns but no memories still has an activity time.
        last_activity=Greatest(Subquery(last_turn), Subquery(last_change)),
    )
    if query:
        rows = rows.filter(Q(external_id__icontains=query) | Q(display_name__icontains=query))
    if kind:
        rows = rows.filter(kind=kind)
    if turns:
        rows = rows.filter(pk__in=Turn.objects.filter(status=turns).values("space_id"))
    return rows.order_by("external_id")
