"""The deletion audit for support staff and admin keys: list, filter, export as CSV, check a text."""

from __future__ import annotations

import csv
import datetime
import io

from django.core.exceptions import ValidationError
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.generics import GenericAPIView
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from api.authentication import ApiKeyAuthentication, ConsoleSessionAuthentication
from api.memory_serializers import DeletionCheckInput, DeletionOutput
from core.spreadsheet_cells import safe_row
from memory.forgetting import deletions, was_deleted
from memory.models import DeletionAudit
from tenants.models import Membership

CSV_COLUMNS = [
    "id", "occurred_at", "space", "memory_id", "memory_kind", "cause", "turn_id", "actor", "matched_distance",
    "limits", "content_digest",
]  # fmt: skip


class CsvRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        rows = data if isinstance(data, list) else data.get("results", [data])
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(safe_row(row))
        return out.getvalue().encode()


def _time(value: str | None, field: str):
    if value is None:
        return None
    try:
        parsed = parse_datetime(value)
    except ValueError:
        parsed = None
    if parsed is None:
        raise ValidationError({field: ["Use an ISO 8601 date-time, e.g. 2026-11-29T12:00:00Z."]})
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=datetime.UTC)
    try:
        # In UTC: PostgreSQL refuses offsets beyond ±15:59 that Python accepts.
        return parsed.astimezone(datetime.UTC)
    except OverflowError:
        raise ValidationError({field: ["Out of range."]}) from None


class DeletionCheckOutput(serializers.Serializer):
    deleted = serializers.BooleanField(help_text="Whether this exact text (after normalisation) was deleted there.")
    records = DeletionOutput(many=True)


AUDIT_READERS = {"admin", "audit"}  # admin API keys; support and admin console users


def audit_rows(request, rows) -> list[dict]:
    """Serialised audit rows; support staff get no distances (a distance says how close content came)."""
    data = DeletionOutput(rows, many=True).data
    if getattr(request.auth, "role", None) == Membership.Role.SUPPORT:
        for row in data:
            row["matched_distance"] = None
    return data


class DeletionList(GenericAPIView):
    authentication_classes = [ApiKeyAuthentication, ConsoleSessionAuthentication]
    required_scopes = {"GET": AUDIT_READERS}
    serializer_class = DeletionOutput
    renderer_classes = [JSONRenderer, CsvRenderer]

    def handle_exception(self, exc):
        # Errors keep the API's one JSON error shape, also when the caller asked for CSV.
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return response

    @extend_schema(
        parameters=[
            OpenApiParameter("space", str),
            OpenApiParameter("cause", str, enum=DeletionAudit.Cause.values),
            OpenApiParameter("since", OpenApiTypes.DATETIME, description="ISO 8601"),
            OpenApiParameter("until", OpenApiTypes.DATETIME, description="ISO 8601"),
            OpenApiParameter("format", str, enum=["json", "csv"]),
        ],
        responses=DeletionOutput(many=True),
    )
    def get(self, request):
        params = request.query_params
        cause = params.get("cause") or None
        if cause and cause not in DeletionAudit.Cause.values:
            raise ValidationError({"cause": [f"Choose from {', '.join(DeletionAudit.Cause.values)}."]})
        rows = deletions(
            tenant_id=request.auth.tenant_id,
            space_external_id=params.get("space") or None,
            cause=cause,
            since=_time(params.get("since"), "since"),
            until=_time(params.get("until"), "until"),
        )
        if getattr(request, "accepted_renderer", None) and request.accepted_renderer.format == "csv":
            # The whole audit by default; ``limit``/``offset`` (validated like every list's) narrow it.
            offset = self.paginator.get_offset(request)
            if "limit" in params:
                rows = rows[offset : offset + self.paginator.get_limit(request)]
            elif offset:
                rows = rows[offset:]
            response = Response(audit_rows(request, rows))
            response["Content-Disposition"] = 'attachment; filename="deletions.csv"'
            return response
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(audit_rows(request, page))


class DeletionCheck(APIView):
    authentication_classes = [ApiKeyAuthentication, ConsoleSessionAuthentication]
    required_scopes = {"POST": AUDIT_READERS}

    @extend_schema(request=DeletionCheckInput, responses=DeletionCheckOutput)
    def post(self, request):
        data = DeletionCheckInput(data=request.data)
        data.is_valid(raise_exception=True)
        rows = was_deleted(
            tenant_id=request.auth.tenant_id,
            space_external_id=data.validated_data["space"],
            text=data.validated_data["text"],
        )
        return Response({"deleted": bool(rows), "records": audit_rows(request, rows)})
