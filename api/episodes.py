"""Episodic and escalation memory endpoints for agents in shared spaces. Thin: validate, call memory.shared."""

from __future__ import annotations

import json

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from api.access import ADMIN, READ, api_actor, space_in_scope
from api.episode_serializers import (
    EpisodeInput,
    EpisodeOutput,
    EpisodeRecallInput,
    EpisodeRecallOutput,
    EpisodeUpdateInput,
    EscalationMatchInput,
    EscalationMatchOutput,
    ResolveInput,
    StoreOutput,
)
from api.parsers import SafeJSONParser
from memory import shared
from memory.models import Episode

FILE_FIELD_PREFIX = "inputs."


def request_data(request) -> dict:
    """The JSON body; or, for multipart, the form fields with ``inputs``/``feedback`` as JSON text and
    every file part named ``inputs.<argument>`` added to the inputs."""
    if not request.content_type.startswith("multipart/"):
        return request.data
    data = {key: request.data.get(key) for key in request.data if key not in request.FILES}
    for name in ("inputs", "feedback"):
        if isinstance(data.get(name), str):
            try:
                data[name] = json.loads(data[name])
            except json.JSONDecodeError:
                raise ValidationError({name: ["Must be a JSON object."]}) from None
    inputs = data.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise ValidationError({"inputs": ["Must be a JSON object."]})
    for field, upload in request.FILES.items():
        if not field.startswith(FILE_FIELD_PREFIX):
            raise ValidationError({field: [f"Name file parts '{FILE_FIELD_PREFIX}<argument>'."]})
        inputs[field[len(FILE_FIELD_PREFIX) :]] = shared.UploadedFile(
            filename=upload.name or "upload", content_type=upload.content_type or "text/plain", data=upload.read()
        ).as_input()
    data["inputs"] = inputs
    return data


def agent_for(request, requested: str) -> str:
    """The agent the caller speaks for: a key bound to an agent cannot speak for another."""
    bound = getattr(request.user, "agent", "") or ""
    if bound and requested and requested != bound:
        raise PermissionDenied(f"This API key speaks for agent {bound!r}.")
    return requested or bound


def acting_agent(request) -> str | None:
    """Whose cases the caller may change: any with the admin scope, else only its key's agent's."""
    if "admin" in set(request.auth.scopes):
        return shared.ANY_AGENT
    return getattr(request.user, "agent", "") or ""


def shared_space(request, external_id):
    space = space_in_scope(request, external_id)
    shared.require_shared(space)
    return space


def store_response(result: shared.StoreResult) -> Response:
    body = {
        "action": result.action,
        "episode": shared.describe(result.episode),
        "duplicates": [shared.describe_match(m) for m in result.duplicates[: shared.MAX_DUPLICATES_SHOWN]],
    }
    if result.replaced_id:
        body["replaced_id"] = str(result.replaced_id)
    code = status.HTTP_200_OK if result.action == "merged" else status.HTTP_201_CREATED
    return Response(StoreOutput(body).data, status=code)


def duplicate_choice(values: dict) -> shared.DuplicateChoice:
    return shared.DuplicateChoice(
        on_duplicate=values.get("on_duplicate"),
        target_id=values.get("target_id"),
        sentiment_wins=values.get("sentiment_wins"),
    )


class EpisodeListCreate(GenericAPIView):
    required_scopes = {"GET": READ, "POST": READ}
    parser_classes = [SafeJSONParser, MultiPartParser]
    serializer_class = EpisodeOutput

    @extend_schema(
        parameters=[OpenApiParameter("kind", str, enum=["episode", "resolution"])],
        responses=EpisodeOutput(many=True),
    )
    def get(self, request, external_id):
        space = shared_space(request, external_id)
        queryset = Episode.objects.filter(space=space).order_by("-created_at", "id")
        kind = request.query_params.get("kind")
        if kind:
            if kind not in Episode.Kind.values:
                raise ValidationError({"kind": [f"Choose from {', '.join(Episode.Kind.values)}."]})
            queryset = queryset.filter(kind=kind)
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(EpisodeOutput([shared.describe(e) for e in page], many=True).data)

    @extend_schema(request=EpisodeInput, responses={201: StoreOutput, 200: StoreOutput})
    def post(self, request, external_id):
        space = shared_space(request, external_id)
        data = EpisodeInput(data=request_data(request))
        data.is_valid(raise_exception=True)
        values = data.validated_data
        feedback = values.get("feedback") or {}
        case = shared.NewCase(
            kind=Episode.Kind.EPISODE,
            inputs=values["inputs"],
            output=values["output"],
            outcome=values["outcome"],
            sentiment=feedback.get("sentiment") or "",
            feedback_comment=feedback.get("comment") or None,
            agent=agent_for(request, values["agent"]),
        )
        return store_response(
            shared.store_case(
                space, case, duplicate_choice(values), actor=api_actor(request), acting_agent=acting_agent(request)
            )
        )


class EpisodeDetail(APIView):
    required_scopes = {"GET": READ, "PATCH": READ, "DELETE": ADMIN}

    def episode(self, space, episode_id) -> Episode:
        episode = Episode.objects.filter(space=space, pk=episode_id).first()
        if episode is None:
            raise Http404("No such episode.")
        return episode

    @extend_schema(responses=EpisodeOutput)
    def get(self, request, external_id, episode_id):
        space = shared_space(request, external_id)
        return Response(EpisodeOutput(shared.describe(self.episode(space, episode_id))).data)

    @extend_schema(request=EpisodeUpdateInput, responses=EpisodeOutput)
    def patch(self, request, external_id, episode_id):
        space = shared_space(request, external_id)
        episode = self.episode(space, episode_id)
        data = EpisodeUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        feedback = fields.pop("feedback", None)
        if feedback is not None:
            fields.update({f"feedback_{k}" if k == "comment" else k: v for k, v in feedback.items()})
        return Response(
            EpisodeOutput(
                shared.describe(shared.update_feedback(episode, fields=fields, acting_agent=acting_agent(request)))
            ).data
        )

    @extend_schema(responses={204: None})
    def delete(self, request, external_id, episode_id):
        space = shared_space(request, external_id)
        episode = self.episode(space, episode_id)
        shared.delete_episode(space, episode, actor=api_actor(request), acting_agent=acting_agent(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class EpisodeRecall(APIView):
    required_scopes = {"POST": READ}
    parser_classes = [SafeJSONParser, MultiPartParser]

    @extend_schema(request=EpisodeRecallInput, responses=EpisodeRecallOutput)
    def post(self, request, external_id):
        space = shared_space(request, external_id)
        data = EpisodeRecallInput(data=request_data(request))
        data.is_valid(raise_exception=True)
        values = data.validated_data
        result = shared.recall_episodes(
            space, inputs=values["inputs"], agent=agent_for(request, values["agent"]), limit=values.get("limit")
        )
        body = {
            "episodes": [shared.describe_match(m) for m in result.matches],
            "threshold": result.threshold,
            "search_keys": result.weights,
        }
        return Response(EpisodeRecallOutput(body).data)


class EscalationResolve(APIView):
    required_scopes = {"POST": READ}

    @extend_schema(request=ResolveInput, responses={201: StoreOutput, 200: StoreOutput})
    def post(self, request, external_id):
        space = shared_space(request, external_id)
        data = ResolveInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        case = shared.NewCase(
            kind=Episode.Kind.RESOLUTION,
            inputs={shared.ESCALATION_ARGUMENT: values["input"]},
            outcome=values["outcome"],
            resolution_comment=values["resolution_comment"],
            agent=agent_for(request, values["agent"]),
        )
        return store_response(
            shared.store_case(
                space, case, duplicate_choice(values), actor=api_actor(request), acting_agent=acting_agent(request)
            )
        )


class EscalationMatch(APIView):
    required_scopes = {"POST": READ}

    @extend_schema(request=EscalationMatchInput, responses=EscalationMatchOutput)
    def post(self, request, external_id):
        space = shared_space(request, external_id)
        data = EscalationMatchInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        result = shared.match_escalation(space, text=values["input"], agent=agent_for(request, values["agent"]))
        if result.apply:
            best = result.best.episode
            body = {
                "apply": True,
                "outcome": best.outcome,
                "resolution_comment": best.resolution_comment,
                "score": result.best.score,
                "episode_id": best.pk,
                "threshold": result.threshold,
            }
        else:
            body = {
                "apply": False,
                "best_score": result.best.score if result.best else None,
                "threshold": result.threshold,
            }
        return Response(EscalationMatchOutput(body).data)
