from django.urls import path

from memory import api, audit_api, episode_api, transfer_api

urlpatterns = [
    path("spaces/<str:external_id>/turns", api.TurnCreate.as_view(), name="turn-create"),
    path("spaces/<str:external_id>/turns/<uuid:turn_id>/reply", api.TurnReply.as_view(), name="turn-reply"),
    path("spaces/<str:external_id>/ingest", api.TranscriptIngest.as_view(), name="transcript-ingest"),
    path("spaces/<str:external_id>/memories", api.MemoryList.as_view(), name="memory-list"),
    path("spaces/<str:external_id>/memories/<uuid:memory_id>", api.MemoryDetail.as_view(), name="memory-detail"),
    path(
        "spaces/<str:external_id>/memories/<uuid:memory_id>/history",
        api.MemoryHistory.as_view(),
        name="memory-history",
    ),
    path(
        "spaces/<str:external_id>/memories/<uuid:memory_id>/restore",
        api.MemoryRestore.as_view(),
        name="memory-restore",
    ),
    path("spaces/<str:external_id>/recall", api.Recall.as_view(), name="recall"),
    path("spaces/<str:external_id>/forget", api.Forget.as_view(), name="forget"),
    path("spaces/<str:external_id>/episodes", episode_api.EpisodeListCreate.as_view(), name="episode-list"),
    path("spaces/<str:external_id>/episodes/recall", episode_api.EpisodeRecall.as_view(), name="episode-recall"),
    path(
        "spaces/<str:external_id>/episodes/<uuid:episode_id>",
        episode_api.EpisodeDetail.as_view(),
        name="episode-detail",
    ),
    path(
        "spaces/<str:external_id>/escalations/resolve",
        episode_api.EscalationResolve.as_view(),
        name="escalation-resolve",
    ),
    path("spaces/<str:external_id>/escalations/match", episode_api.EscalationMatch.as_view(), name="escalation-match"),
    path("spaces/<str:external_id>/export", transfer_api.SpaceExport.as_view(), name="space-export"),
    path("spaces/<str:external_id>/import", transfer_api.SpaceImport.as_view(), name="space-import"),
    path("deletions", audit_api.DeletionList.as_view(), name="deletion-list"),
    path("deletions/check", audit_api.DeletionCheck.as_view(), name="deletion-check"),
    path("turns/<uuid:turn_id>", api.TurnDetail.as_view(), name="turn-detail"),
]
