"""The spaces endpoints. Thin: validate, call tenants.spaces, render."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from api.authentication import actor_of
from api.space_serializers import SpaceCreateInput, SpaceOutput, SpaceUpdateInput
from tenants import spaces
from tenants.key_retirement import residue_key
from tenants.models import Space

READ_OR_ADMIN = {"turns", "admin"}
ADMIN = {"admin"}
ERASURE_RESIDUE_HEADER = OpenApiParameter(
    "Engram-Erasure-Residue",
    str,
    location=OpenApiParameter.HEADER,
    response=[204],
    description=(
        "How long the erased space's residue (dead copies in table pages, WAL and backups) stays decryptable: "
        "'until default@1 is retired', i.e. until that key-encryption key version is retired "
        "(manage.py retire_master_key default@1) and destroyed."
    ),
)


class SpaceListCreate(GenericAPIView):
    required_scopes = {"GET": READ_OR_ADMIN, "POST": ADMIN}
    serializer_class = SpaceOutput

    def get_queryset(self):
        return (
            Space.objects.select_related("tenant")
            .filter(tenant_id=self.request.user.tenant_id)
            .order_by("created_at", "id")
        )

    @extend_schema(responses=SpaceOutput(many=True))
    def get(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(SpaceOutput(page, many=True).data)

    @extend_schema(request=SpaceCreateInput, responses={201: SpaceOutput})
    def post(self, request):
        data = SpaceCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        space = spaces.create_space(tenant=request.auth.tenant, **data.validated_data)
        return Response(SpaceOutput(space).data, status=status.HTTP_201_CREATED)


class SpaceDetail(GenericAPIView):
    required_scopes = {"GET": READ_OR_ADMIN, "PATCH": ADMIN, "DELETE": ADMIN}
    serializer_class = SpaceOutput
    lookup_url_kwarg = "external_id"

    def space(self) -> Space:
        return spaces.find_space(tenant=self.request.user.tenant_id, external_id=self.kwargs["external_id"])

    @extend_schema(responses=SpaceOutput)
    def get(self, request, external_id):
        return Response(SpaceOutput(self.space()).data)

    @extend_schema(request=SpaceUpdateInput, responses=SpaceOutput)
    def patch(self, request, external_id):
        space = self.space()
        data = SpaceUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        space = spaces.update_space(space=space, actor=actor_of(request), **data.validated_data)
        return Response(SpaceOutput(space).data)

    @extend_schema(responses={204: None}, parameters=[ERASURE_RESIDUE_HEADER])
    def delete(self, request, external_id):
        from memory.forgetting import erase_space  # the memory app audits what the erasure deletes

        space = self.space()
        residue = residue_key(space)
        erase_space(space=space, actor=actor_of(request))
        response = Response(status=status.HTTP_204_NO_CONTENT)
        if residue is not None:
            response[ERASURE_RESIDUE_HEADER.name] = f"until {residue} is retired"
        return response
