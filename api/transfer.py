"""Export and import of a space over the API. Thin: the format and the work live in memory.transfer."""

from __future__ import annotations

import io

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import BaseParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from api.access import ADMIN, space_in_scope
from memory.transfer import TransferError, export_lines, import_into

PASSPHRASE_HEADER = OpenApiParameter(
    "X-Engram-Passphrase",
    str,
    location=OpenApiParameter.HEADER,
    required=False,
    description="Export: encrypt every record under this passphrase. Import: the passphrase of an encrypted file.",
)


class JsonLinesParser(BaseParser):
    """The raw body of an import: one JSON object per line, read as bytes (the service parses it)."""

    media_type = "application/x-ndjson"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream.read() if stream is not None else b""


class JsonLinesTextParser(JsonLinesParser):
    media_type = "application/jsonl"


class ImportOutput(serializers.Serializer):
    memories = serializers.IntegerField(help_text="Memories written.")
    episodes = serializers.IntegerField(help_text="Episodes and resolutions written.")
    skipped = serializers.IntegerField(help_text="Records already imported before (the import is idempotent).")
    reembedded = serializers.BooleanField(help_text="The file's embedding model differs, so texts were re-embedded.")


def passphrase_of(request) -> str | None:
    return request.headers.get("X-Engram-Passphrase") or None


class SpaceExport(APIView):
    required_scopes = {"GET": ADMIN}

    @extend_schema(
        parameters=[PASSPHRASE_HEADER],
        responses={(200, "application/x-ndjson"): OpenApiResponse(OpenApiTypes.STR, description="JSON lines")},
    )
    def get(self, request, external_id):
        space = space_in_scope(request, external_id)
        lines = export_lines(space, passphrase=passphrase_of(request))
        response = StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{space.external_id}.jsonl"'
        response["Cache-Control"] = "no-store"
        return response


class SpaceImport(APIView):
    required_scopes = {"POST": ADMIN}
    parser_classes = [JsonLinesParser, JsonLinesTextParser, MultiPartParser]

    @extend_schema(
        parameters=[PASSPHRASE_HEADER],
        request={
            "application/x-ndjson": OpenApiTypes.BINARY,
            "multipart/form-data": {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}},
        },
        responses=ImportOutput,
    )
    def post(self, request, external_id):
        space = space_in_scope(request, external_id)
        if request.content_type.startswith("multipart/"):
            upload = request.FILES.get("file")
            if upload is None:
                raise TransferError("Send the export as the multipart part 'file'.")
            body = upload.read()
        else:
            body = request.data if isinstance(request.data, bytes) else b""
        if not body.strip():
            raise TransferError("The request has no export file.")
        report = import_into(space, io.BytesIO(body), passphrase=passphrase_of(request))
        return Response(ImportOutput(report).data)
