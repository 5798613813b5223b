from django.urls import include, path

from scoring import api

urlpatterns = [
    path("studies/<slug:slug>/runs/", api.RunStartApi.as_view(), name="scoring-api-run-start"),
    path("runs/<int:run_id>/", api.RunStatusApi.as_view(), name="scoring-api-run"),
    path("runs/<int:run_id>/cancel/", api.RunCancelApi.as_view(), name="scoring-api-run-cancel"),
    path("runs/<int:run_id>/scores/", api.RunScoresApi.as_view(), name="scoring-api-run-scores"),
    path("studies/<slug:slug>/knowledge-bases/", api.KnowledgeBaseCreateApi.as_view(), name="scoring-api-kb-create"),
    path("knowledge-bases/<int:kb_id>/documents/", api.KnowledgeBaseUploadApi.as_view(), name="scoring-api-kb-upload"),
    path("", include("scoring.judges.api_urls")),
]
