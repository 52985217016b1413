"""A space's memories: list, read, edit, delete, history, restore. Thin: every rule is in memory.dedup.edits."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from api.access import ADMIN, READ, api_actor, space_in_scope
from api.memory_serializers import MemoryOutput, MemoryUpdateInput
from memory.dedup import edit_memory, restore_memory
from memory.forgetting import DeletionContext, delete_memory
from memory.models import DeletionAudit
from memory.store import find_memory, history_of, memories_of


class MemoryList(GenericAPIView):
    required_scopes = {"GET": READ}
    serializer_class = MemoryOutput

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", str, enum=["fact", "topic", "event", "instruction", "task"]),
            OpenApiParameter("topic", str),
            OpenApiParameter("include_superseded", bool),
        ],
        responses=MemoryOutput(many=True),
    )
    def get(self, request, external_id):
        space = space_in_scope(request, external_id)
        params = request.query_params
        queryset = memories_of(
            space,
            kind=params.get("kind") or None,
            topic=params.get("topic") or None,
            include_superseded=params.get("include_superseded", "").lower() in ("1", "true", "yes"),
        )
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(MemoryOutput(page, many=True).data)


class MemoryDetail(APIView):
    required_scopes = {"GET": READ, "PATCH": ADMIN, "DELETE": ADMIN}

    @extend_schema(responses=MemoryOutput)
    def get(self, request, external_id, memory_id):
        space = space_in_scope(request, external_id)
        return Response(MemoryOutput(find_memory(space=space, memory_id=memory_id)).data)

    @extend_schema(request=MemoryUpdateInput, responses=MemoryOutput)
    def patch(self, request, external_id, memory_id):
        space = space_in_scope(request, external_id)
        memory = find_memory(space=space, memory_id=memory_id)
        data = MemoryUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(MemoryOutput(edit_memory(memory=memory, **data.validated_data)).data)

    @extend_schema(responses={204: None})
    def delete(self, request, external_id, memory_id):
        space = space_in_scope(request, external_id)
        delete_memory(
            memory=find_memory(space=space, memory_id=memory_id),
            space=space,
            context=DeletionContext(cause=DeletionAudit.Cause.API_KEY, actor=api_actor(request)),
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemoryHistory(APIView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=MemoryOutput(many=True))
    def get(self, request, external_id, memory_id):
        space = space_in_scope(request, external_id)
        memory = find_memory(space=space, memory_id=memory_id)
        return Response(MemoryOutput(history_of(memory), many=True).data)


class MemoryRestore(APIView):
    required_scopes = {"POST": ADMIN}

    @extend_schema(
        request=None,
        responses={200: MemoryOutput},
        description="Make an earlier (superseded) version current again; the version that replaced it becomes "
        "its history. 409 when the memory is already current.",
    )
    def post(self, request, external_id, memory_id):
        space = space_in_scope(request, external_id)
        memory = find_memory(space=space, memory_id=memory_id)
        return Response(MemoryOutput(restore_memory(memory=memory)).data)
