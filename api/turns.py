"""The turn-loop and memory endpoints. Thin: validate, resolve the space (and its RLS scope), call a service."""

from __future__ import annotations

import dataclasses

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from api.authentication import actor_of
from api.memory_serializers import (
    ForgetInput,
    ForgetOutput,
    IngestInput,
    MemoryOutput,
    MemoryUpdateInput,
    RecallInput,
    RecallOutput,
    ReplyInput,
    ReplyOutput,
    TurnInput,
    TurnOutput,
)
from api.server_timing import ServerTimingMixin
from memory.dedup import edits
from memory.forgetting import conversational, deletion
from memory.forgetting.deletion import DeletionContext
from memory.forgetting.judge import read_intent
from memory.models import DeletionAudit, Turn
from memory.provenance import attach_sources
from memory.recall import search, synthesis
from memory.text.embeddings import EmbeddingUnavailable
from memory.turns import intake, pipeline
from memory.turns.results import turn_result
from tenants import scope, spaces
from tenants.space_settings import effective_settings

READ = {"turns", "admin"}
ADMIN = {"admin"}
WAIT_PARAMETER = OpenApiParameter("wait", bool, description="Run the pipeline inline and return its result.")


def space_in_scope(request, external_id: str, *, create: bool = False):
    """The tenant's space from the URL, with the transaction scoped to it; 404 unless ``create``."""
    try:
        space = spaces.find_space(tenant=request.auth.tenant_id, external_id=external_id)
    except Http404:
        if not create:
            raise
        space = spaces.create_space(tenant=request.auth.tenant, external_id=external_id)
    scope.enter_scope(space.tenant_id, space)
    return space


def wants_wait(request) -> bool:
    return request.query_params.get("wait", "").lower() in ("1", "true", "yes")


def api_actor(request) -> str:
    return actor_of(request)


def forget_in_turn(request, receipt: intake.TurnReceipt, message: str):
    """Check a new customer message for a forget request or correction, before anything is recalled."""
    if not receipt.is_new:
        return None
    try:
        outcome = conversational.forget(
            space=receipt.turn.space,
            utterance=message,
            context=DeletionContext(
                cause=DeletionAudit.Cause.CUSTOMER_REQUEST, actor=api_actor(request), turn_id=receipt.turn.id
            ),
        )
    except EmbeddingUnavailable:
        # Nothing can be matched right now; an explicit request is still never mined as a fact.
        if read_intent(message).kind == "explicit":
            intake.mark_forget_handled(receipt.turn)
        return None
    if outcome.handled:
        intake.mark_forget_handled(receipt.turn)
    intake.record_forget_reply(receipt.turn, outcome)
    return outcome


def respond_with_turn(
    request, receipt: intake.TurnReceipt, *, recall_query: str | None = None, forgot=None, sources=False
) -> Response:
    """The turn's receipt; for a single message also what is recalled for it, at turn start."""
    turn = receipt.turn
    recalled = None
    if recall_query is not None:
        recalled = search.recall(space=turn.space, query=recall_query, current_session=receipt.session)
        if sources:
            attach_sources(turn.space, recalled.hits)
    wait = wants_wait(request)
    if wait and turn.status == Turn.Status.QUEUED:
        turn = pipeline.attempt_turn(turn)
    body = turn_result(turn, detailed=wait)
    if forgot is not None:
        body["forgotten"] = [dataclasses.asdict(d) for d in forgot.forgotten]
        body["confirmation"] = forgot.confirmation
        if forgot.more_matched:
            body["more_matched"] = forgot.more_matched
        if forgot.needs_operator:
            body["needs_operator"] = True
    if recalled is not None:
        body.update(memories=recalled.hits, prompt=recalled.prompt)
        if recalled.warning:
            body["recall_warning"] = recalled.warning
    code = status.HTTP_201_CREATED if receipt.is_new else status.HTTP_200_OK
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
        receipt = intake.receive_turn(space=space, **values)
        forgot = forget_in_turn(request, receipt, values["message"])
        return respond_with_turn(request, receipt, recall_query=values["message"], forgot=forgot, sources=sources)


class TranscriptIngest(APIView):
    required_scopes = {"POST": READ}

    @extend_schema(request=IngestInput, responses={201: TurnOutput, 200: TurnOutput}, parameters=[WAIT_PARAMETER])
    def post(self, request, external_id):
        data = IngestInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        space = space_in_scope(request, external_id, create=values["create_space"])
        messages = [
            intake.IncomingMessage(role=m["role"], content=m["content"], message_id=m["id"], sent_at=m.get("at"))
            for m in values["messages"]
        ]
        receipt = intake.receive_transcript(space=space, messages=messages, session_id=values.get("session_id"))
        return respond_with_turn(request, receipt)


class TurnReply(APIView):
    required_scopes = {"POST": READ}

    @extend_schema(request=ReplyInput, responses={201: ReplyOutput})
    def post(self, request, external_id, turn_id):
        space = space_in_scope(request, external_id)
        turn = intake.find_turn(space=space, turn_id=turn_id)
        data = ReplyInput(data=request.data)
        data.is_valid(raise_exception=True)
        message = intake.store_reply(
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
        turn = intake.find_turn(turn_id=turn_id)
        if turn.tenant_id != request.auth.tenant_id:
            raise Http404
        scope.enter_scope(turn.tenant_id, turn.space_id)
        return Response(TurnOutput(turn_result(turn)).data)


@dataclasses.dataclass
class MemoryFilters:
    kind: str | None
    topic: str | None
    include_superseded: bool


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
        queryset = edits.memories_of(
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
        return Response(MemoryOutput(edits.find_memory(space=space, memory_id=memory_id)).data)

    @extend_schema(request=MemoryUpdateInput, responses=MemoryOutput)
    def patch(self, request, external_id, memory_id):
        space = space_in_scope(request, external_id)
        memory = edits.find_memory(space=space, memory_id=memory_id)
        data = MemoryUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(MemoryOutput(edits.edit_memory(memory=memory, **data.validated_data)).data)

    @extend_schema(responses={204: None})
    def delete(self, request, external_id, memory_id):
        space = space_in_scope(request, external_id)
        deletion.delete_memory(
            memory=edits.find_memory(space=space, memory_id=memory_id),
            space=space,
            context=DeletionContext(cause=DeletionAudit.Cause.API_KEY, actor=api_actor(request)),
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemoryHistory(APIView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=MemoryOutput(many=True))
    def get(self, request, external_id, memory_id):
        space = space_in_scope(request, external_id)
        memory = edits.find_memory(space=space, memory_id=memory_id)
        return Response(MemoryOutput(edits.history_of(memory), many=True).data)


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
        memory = edits.find_memory(space=space, memory_id=memory_id)
        return Response(MemoryOutput(edits.restore_memory(memory=memory)).data)


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
            result = search.recall(
                space=space, query=values["query"], limit=values.get("limit"), kinds=values.get("kinds")
            )
        request.server_timing = result.timings
        if values["provenance"]:
            attach_sources(space, result.hits)
        body = {"memories": result.hits, "prompt": result.prompt}
        if result.warning:
            body["warning"] = result.warning
        if values["synthesize"]:
            body["answer"], body["synthesis"] = synthesis.synthesize(values["query"], result.hits)
        return Response(RecallOutput(body).data)


class Forget(APIView):
    required_scopes = {"POST": READ}

    @extend_schema(request=ForgetInput, responses=ForgetOutput)
    def post(self, request, external_id):
        space = space_in_scope(request, external_id)
        data = ForgetInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        outcome = conversational.forget(
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
