"""Forgetting asked for in words, outside a turn (or as a dry run that shows what would go)."""

from __future__ import annotations

import dataclasses

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from api.access import READ, api_actor, space_in_scope
from api.memory_serializers import ForgetInput, ForgetOutput
from memory.forgetting import DeletionContext, forget
from memory.models import DeletionAudit


class Forget(APIView):
    required_scopes = {"POST": READ}

    @extend_schema(request=ForgetInput, responses=ForgetOutput)
    def post(self, request, external_id):
        space = space_in_scope(request, external_id)
        data = ForgetInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        outcome = forget(
            space=space,
            utterance=values["utterance"],
            context=DeletionContext(cause=DeletionAudit.Cause.CUSTOMER_REQUEST, actor=api_actor(request)),
            dry_run=values["dry_run"],
        )
        body = {
            "dry_run": outcome.dry_run,
            "is_forget_request": outcome.is_forget_request,
            "forgotten": [dataclasses.asdict(d) for d in outcome.forgotten],
            "more_matched": outcome.more_matched,
            "confirmation": outcome.confirmation,
            "needs_operator": outcome.needs_operator,
            "limits": outcome.limits,
            "candidates": [
                {
                    "id": c.memory.pk,
                    "kind": c.memory.kind,
                    "content": c.memory.content,
                    "distance": round(c.distance, 4),
                }
                for c in outcome.candidates
            ]
            if outcome.dry_run
            else [],
        }
        return Response(ForgetOutput(body).data)
