from django.urls import path

from tenants import api

urlpatterns = [
    path("spaces", api.SpaceListCreate.as_view(), name="space-list"),
    path("spaces/<str:external_id>", api.SpaceDetail.as_view(), name="space-detail"),
]
