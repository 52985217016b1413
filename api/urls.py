from django.urls import path

from api import audit, episodes, forget, memories, recall, transfer, turns

urlpatterns = [
    path("spaces/<str:external_id>/turns", turns.TurnCreate.as_view(), name="turn-create"),
    path("spaces/<str:external_id>/turns/<uuid:turn_id>/reply", turns.TurnReply.as_view(), name="turn-reply"),
    path("spaces/<str:external_id>/ingest", turns.TranscriptIngest.as_view(), name="transcript-ingest"),
    path("spaces/<str:external_id>/memories", memories.MemoryList.as_view(), name="memory-list"),
    path("spaces/<str:external_id>/memories/<uuid:memory_id>", memories.MemoryDetail.as_view(), name="memory-detail"),
    path(
        "spaces/<str:external_id>/memories/<uuid:memory_id>/history",
        memories.MemoryHistory.as_view(),
        name="memory-history",
    ),
    path(
        "spaces/<str:external_id>/memories/<uuid:memory_id>/restore",
        memories.MemoryRestore.as_view(),
        name="memory-restore",
    ),
    path("spaces/<str:external_id>/recall", recall.Recall.as_view(), name="recall"),
    path("spaces/<str:external_id>/forget", forget.Forget.as_view(), name="forget"),
    path("spaces/<str:external_id>/episodes", episodes.EpisodeListCreate.as_view(), name="episode-list"),
    path("spaces/<str:external_id>/episodes/recall", episodes.EpisodeRecall.as_view(), name="episode-recall"),
    path(
        "spaces/<str:external_id>/episodes/<uuid:episode_id>",
        episodes.EpisodeDetail.as_view(),
        name="episode-detail",
    ),
    path(
        "spaces/<str:external_id>/escalations/resolve",
        episodes.EscalationResolve.as_view(),
        name="escalation-resolve",
    ),
    path("spaces/<str:external_id>/escalations/match", episodes.EscalationMatch.as_view(), name="escalation-match"),
    path("spaces/<str:external_id>/export", transfer.SpaceExport.as_view(), name="space-export"),
    path("spaces/<str:external_id>/import", transfer.SpaceImport.as_view(), name="space-import"),
    path("deletions", audit.DeletionList.as_view(), name="deletion-list"),
    path("deletions/check", audit.DeletionCheck.as_view(), name="deletion-check"),
    path("turns/<uuid:turn_id>", turns.TurnDetail.as_view(), name="turn-detail"),
    path("turns/<uuid:turn_id>/retry", turns.TurnRetry.as_view(), name="turn-retry"),
]
