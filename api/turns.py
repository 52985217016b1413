"""The turn loop's endpoints. Thin: validate, resolve the space, take the turn, shape the answer."""

from __future__ import annotations

import dataclasses

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from api.access import ADMIN, READ, api_actor, space_in_scope, wants_wait
from api.memory_serializers import IngestInput, ReplyInput, ReplyOutput, TurnInput, TurnOutput
from core.errors import Conflict
from memory.models import Turn
from memory.turns import (
    IncomingMessage,
    TakenTurn,
    find_turn,
    requeue_failed,
    store_reply,
    take_transcript,
    take_turn,
    turn_result,
)
from tenants import scope
from tenants.space_settings import effective_settings

WAIT_PARAMETER = OpenApiParameter("wait", bool, description="Run the pipeline inline and return its result.")


def turn_response(taken: TakenTurn, *, wait: bool, budgeted: bool = False) -> Response:
    """The turn's receipt; for a single message also what is recalled for it, at turn start."""
    body = turn_result(taken.turn, detailed=wait)
    forgot, recalled = taken.forgot, taken.recalled
    if forgot is not None:
        body["forgotten"] = [dataclasses.asdict(d) for d in forgot.forgotten]
        body["confirmation"] = forgot.confirmation
        if forgot.more_matched:
            body["more_matched"] = forgot.more_matched
        if forgot.needs_operator:
            body["needs_operator"] = True
    if recalled is not None:
        body.update(memories=recalled.hits, prompt=recalled.prompt)
        if budgeted:
            body["left_out"] = recalled.left_out
        if recalled.warning:
            body["recall_warning"] = recalled.warning
    code = status.HTTP_201_CREATED if taken.receipt.is_new else status.HTTP_200_OK
    return Response(TurnOutput(body).data, status=code)


class TurnCreate(APIView):
    required_scopes = {"POST": READ}

    @extend_schema(request=TurnInput, responses={201: TurnOutput, 200: TurnOutput}, parameters=[WAIT_PARAMETER])
    def post(self, request, external_id):
        data = TurnInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        space = space_in_scope(request, external_id, create=values.pop("create_space"))
        sources = values.pop("provenance")
        wait = wants_wait(request)
        taken = take_turn(space=space, actor=api_actor(request), wait=wait, sources=sources, **values)
        return turn_response(taken, wait=wait, budgeted="max_chars" in values)


class TranscriptIngest(APIView):
    required_scopes = {"POST": READ}

    @extend_schema(request=IngestInput, responses={201: TurnOutput, 200: TurnOutput}, parameters=[WAIT_PARAMETER])
    def post(self, request, external_id):
        data = IngestInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        space = space_in_scope(request, external_id, create=values["create_space"])
        messages = [
            IncomingMessage(role=m["role"], content=m["content"], message_id=m["id"], sent_at=m.get("at"))
            for m in values["messages"]
        ]
        wait = wants_wait(request)
        taken = take_transcript(space=space, messages=messages, session_id=values.get("session_id"), wait=wait)
        return turn_response(taken, wait=wait)


class TurnReply(APIView):
    required_scopes = {"POST": READ}

    @extend_schema(request=ReplyInput, responses={201: ReplyOutput})
    def post(self, request, external_id, turn_id):
        space = space_in_scope(request, external_id)
        turn = find_turn(space=space, turn_id=turn_id)
        data = ReplyInput(data=request.data)
        data.is_valid(raise_exception=True)
        message = store_reply(
            space=space,
            turn=turn,
            content=data.validated_data["content"],
            keep_transcripts=effective_settings(space)["keep_transcripts"],
        )
        body = {"message_id": message.id, "session_id": turn.session.external_id}
        return Response(ReplyOutput(body).data, status=status.HTTP_201_CREATED)


class TurnDetail(APIView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=TurnOutput)
    def get(self, request, turn_id):
        turn = find_turn(turn_id=turn_id)
        if turn.tenant_id != request.auth.tenant_id:
            raise Http404
        scope.enter_scope(turn.tenant_id, turn.space_id)
        return Response(TurnOutput(turn_result(turn)).data)


class TurnRetry(APIView):
    """A failed turn queued again (admin keys): after a fix, or when its error was outside Engram."""

    required_scopes = {"POST": ADMIN}

    @extend_schema(request=None, responses={202: TurnOutput}, summary="Queue a failed turn again")
    def post(self, request, turn_id):
        turn = find_turn(turn_id=turn_id)
        if turn.tenant_id != request.auth.tenant_id:
            raise Http404
        scope.enter_scope(turn.tenant_id, turn.space_id)
        if turn.status != Turn.Status.FAILED:
            raise Conflict(f"Only a failed turn can be queued again; this one is {turn.status}.")
        requeue_failed(Turn.objects.filter(pk=turn.pk))
        turn.refresh_from_db()
        return Response(TurnOutput(turn_result(turn)).data, status=status.HTTP_202_ACCEPTED)
