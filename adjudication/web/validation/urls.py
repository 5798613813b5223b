"""Routes of the validation studies: pages (included by adjudication/web/urls.py) and the REST API (by api_urls.py)."""

from django.urls import path

from adjudication.web.validation import api as validation_api
from adjudication.web.validation import views as validation_views

urlpatterns = [
    path("studies/<slug:slug>/validation/", validation_views.validation_index, name="validation-index"),
    path("studies/<slug:slug>/validation/new/", validation_views.validation_new, name="validation-new"),
    path("validation/<int:pk>/", validation_views.validation_report, name="validation-report"),
    path("validation/<int:pk>/run/", validation_views.validation_run, name="validation-run"),
    path("validation/<int:pk>/download.<str:fmt>", validation_views.validation_download, name="validation-download"),
]

api_urlpatterns = [
    path(
        "studies/<slug:slug>/validation-studies/",
        validation_api.ValidationStudyListCreateApi.as_view(),
        name="adjudication-api-validation-studies",
    ),
    path(
        "studies/<slug:slug>/validation-studies/checks/",
        validation_api.ValidationChecksApi.as_view(),
        name="adjudication-api-validation-checks",
    ),
    path(
        "validation-studies/<int:pk>/",
        validation_api.ValidationStudyDetailApi.as_view(),
        name="adjudication-api-validation-study",
    ),
    path(
        "validation-studies/<int:pk>/run/",
        validation_api.ValidationStudyRunApi.as_view(),
        name="adjudication-api-validation-run",
    ),
]
