from django.contrib.auth import views as auth_views
from django.urls import path

from console import (
    audit_views,
    customer_views,
    episode_views,
    key_views,
    member_views,
    playground_views,
    settings_views,
    tenant_switcher,
    turn_views,
    views,
)
from console.login_throttle import ThrottledLoginView

app_name = "console"

urlpatterns = [
    path("login/", ThrottledLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("tenant/", tenant_switcher.choose_tenant, name="choose-tenant"),
    path("", views.overview, name="overview"),
    path("turns/requeue-failed/", views.requeue_failed_turns, name="requeue-failed-turns"),
    path("spaces/", views.space_list, name="spaces"),
    path("spaces/<str:external_id>/", views.space_detail, name="space"),
    path("spaces/<str:external_id>/export/", customer_views.space_export, name="space-export"),
    path("spaces/<str:external_id>/erase/", customer_views.space_erase, name="space-erase"),
    path("spaces/<str:external_id>/memories/<uuid:memory_id>/delete/", views.memory_delete, name="memory-delete"),
    path("spaces/<str:external_id>/memories/<uuid:memory_id>/restore/", views.memory_restore, name="memory-restore"),
    path("spaces/<str:external_id>/memories/<uuid:memory_id>/edit/", views.memory_edit, name="memory-edit"),
    path("spaces/<str:external_id>/turns/<uuid:turn_id>/", turn_views.turn_detail, name="turn"),
    path("spaces/<str:external_id>/sessions/<str:session_id>/", turn_views.session_transcript, name="transcript"),
    path("spaces/<str:external_id>/episodes/add/", episode_views.episode_add, name="episode-add"),
    path(
        "spaces/<str:external_id>/episodes/<uuid:episode_id>/delete/",
        episode_views.episode_delete,
        name="episode-delete",
    ),
    path("spaces/<str:external_id>/thresholds/", settings_views.space_thresholds, name="thresholds"),
    path("spaces/<str:external_id>/thresholds/preview/", settings_views.threshold_preview, name="threshold-preview"),
    path("spaces/<str:external_id>/thresholds/marks/", settings_views.mark_pair, name="mark-pair"),
    path("settings/", settings_views.tenant_defaults, name="tenant-defaults"),
    path("playground/", playground_views.playground, name="playground"),
    path("keys/", key_views.api_keys, name="api-keys"),
    path("keys/<uuid:key_id>/revoke/", key_views.revoke_key, name="revoke-key"),
    path("members/", member_views.members, name="members"),
    path("members/<int:membership_id>/", member_views.change_member, name="change-member"),
    path("deletions/", audit_views.deletions, name="deletions"),
    path("deletions/export.csv", audit_views.deletions_csv, name="deletions-csv"),
    path("deletions/check/", audit_views.deletion_check, name="deletion-check"),
]
