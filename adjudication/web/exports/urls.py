"""Routes of the exports: pages (included by adjudication/web/urls.py) and the REST API (by api_urls.py)."""

from django.urls import path

from adjudication.web.exports import api, views

urlpatterns = [
    path("studies/<slug:slug>/exports/", views.exports, name="exports"),
    path("exports/<int:pk>/download/", views.export_download, name="export-download"),
]

api_urlpatterns = [
    path("studies/<slug:slug>/exports/", api.ExportListCreateApi.as_view(), name="adjudication-api-exports"),
    path("exports/<int:pk>/", api.ExportDetailApi.as_view(), name="adjudication-api-export"),
]
