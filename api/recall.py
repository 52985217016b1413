"""Recall for a query at turn start, and a synthesized answer from what was recalled."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from api.access import READ
from api.memory_serializers import RecallInput, RecallOutput
from api.recall_output import recall_output
from api.server_timing import ServerTimingMixin
from memory.provenance import attach_sources
from memory.recall import recall, synthesize
from tenants import scope, spaces


class Recall(ServerTimingMixin, APIView):
    required_scopes = {"POST": READ}

    @extend_schema(request=RecallInput, responses=RecallOutput)
    def post(self, request, external_id):
        space = spaces.find_space(tenant=request.auth.tenant_id, external_id=external_id)
        data = RecallInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        # The space's scope travels in the round trip of recall's own statement (tenants/scope.py).
        with scope.scope_with_next_statement(space.tenant_id, space):
            result = recall(
                space=space,
                query=values["query"],
                limit=values.get("limit"),
                kinds=values.get("kinds"),
                max_chars=values.get("max_chars"),
            )
        request.server_timing = result.timings
        if values["provenance"]:
            attach_sources(space, result.hits)
        body = {"memories": result.hits, "prompt": result.prompt}
        if result.warning:
            body["warning"] = result.warning
        if "max_chars" in values:
            body["left_out"] = result.left_out
        if values["synthesize"]:
            body["answer"], body["synthesis"] = synthesize(values["query"], result.hits)
        return Response(recall_output(body))
