"""Routes of the per-annotator quality statistics (pages and REST API)."""

from django.urls import path

from adjudication.web.quality import api as quality_api
from adjudication.web.quality import views as quality_views

urlpatterns = [
    path("studies/<slug:slug>/reports/quality/", quality_views.quality_index, name="quality-index"),
    path("studies/<slug:slug>/reports/quality/<int:pool_id>/", quality_views.quality_pool, name="quality-pool"),
    path(
        "studies/<slug:slug>/reports/quality/<int:pool_id>/download.<str:fmt>",
        quality_views.quality_download,
        name="quality-download",
    ),
]

api_urlpatterns = [
    path(
        "studies/<slug:slug>/reports/quality/<int:pool_id>/",
        quality_api.PoolQualityApi.as_view(),
        name="adjudication-api-quality-pool",
    ),
]
