"""Routes of the reports: pages (included by adjudication/web/urls.py) and the REST API (by api_urls.py)."""

from django.urls import path

from adjudication.web.reports import api as report_api
from adjudication.web.reports import views as report_views

urlpatterns = [
    path("studies/<slug:slug>/reports/", report_views.report_index, name="report-index"),
    path(
        "studies/<slug:slug>/reports/agreement/<int:pool_id>/<slug:question>/",
        report_views.report_agreement,
        name="report-agreement",
    ),
    path(
        "studies/<slug:slug>/reports/agreement/<int:pool_id>/<slug:question>/download.<str:fmt>",
        report_views.report_agreement_download,
        name="report-agreement-download",
    ),
    path("studies/<slug:slug>/reports/validity/", report_views.report_validity, name="report-validity"),
    path(
        "studies/<slug:slug>/reports/validity/download.<str:fmt>",
        report_views.report_validity_download,
        name="report-validity-download",
    ),
    path("studies/<slug:slug>/reports/jobs/", report_views.report_job_start, name="report-job-start"),
    path("studies/<slug:slug>/reports/jobs/<int:job_id>/", report_views.report_job, name="report-job"),
]

api_urlpatterns = [
    path("studies/<slug:slug>/reports/", report_api.ReportIndexApi.as_view(), name="adjudication-api-report-index"),
    path(
        "studies/<slug:slug>/reports/agreement/<int:pool_id>/<slug:question>/",
        report_api.AgreementReportApi.as_view(),
        name="adjudication-api-report-agreement",
    ),
    path(
        "studies/<slug:slug>/reports/validity/",
        report_api.ValidityReportApi.as_view(),
        name="adjudication-api-report-validity",
    ),
    path(
        "studies/<slug:slug>/reports/jobs/",
        report_api.ReportJobStartApi.as_view(),
        name="adjudication-api-report-job-start",
    ),
    path(
        "studies/<slug:slug>/reports/jobs/<int:job_id>/",
        report_api.ReportJobApi.as_view(),
        name="adjudication-api-report-job",
    ),
]
