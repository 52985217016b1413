from django.urls import path

from api import spaces

urlpatterns = [
    path("spaces", spaces.SpaceListCreate.as_view(), name="space-list"),
    path("spaces/<str:external_id>", spaces.SpaceDetail.as_view(), name="space-detail"),
]
