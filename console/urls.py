from django.contrib.auth import views as auth_views
from django.urls import path

from console import views

app_name = "console"

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(template_name="console/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", views.overview, name="overview"),
    path("spaces/", views.space_list, name="spaces"),
    path("spaces/<str:external_id>/", views.space_detail, name="space"),
    path("spaces/<str:external_id>/memories/<uuid:memory_id>/delete/", views.memory_delete, name="memory-delete"),
    path("deletions/", views.deletions, name="deletions"),
    path("deletions/check/", views.deletion_check, name="deletion-check"),
]
