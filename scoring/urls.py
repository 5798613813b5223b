from django.urls import include, path

from scoring import views

app_name = "scoring"
urlpatterns = [
    path("studies/<slug:slug>/runs/", views.study_runs, name="runs"),
    path("studies/<slug:slug>/runs/start", views.run_start, name="run-start"),
    path("runs/<int:run_id>/", views.run_detail, name="run"),
    path("runs/<int:run_id>/cancel", views.run_cancel, name="run-cancel"),
    path("runs/<int:run_id>/compare/", views.run_compare, name="run-compare"),
    path("studies/<slug:slug>/items/<path:external_id>/scores", views.item_scores, name="item-scores"),
    path("studies/<slug:slug>/knowledge-bases/", views.knowledge_bases, name="knowledge-bases"),
    path("knowledge-bases/<int:kb_id>/", views.knowledge_base_detail, name="knowledge-base"),
    path("", include("scoring.judges.urls")),
]
