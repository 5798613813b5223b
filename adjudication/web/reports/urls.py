"""Routes of the reports: pages (included by adjudication/web/urls.py) and the REST API (by api_urls.py)."""

from django.urls import path

from adjudication import report_jobs
from adjudication.web import jobs
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
    path("studies/<slug:slug>/reports/estimates/", report_views.report_estimates, name="report-estimates"),
    path(
        "studies/<slug:slug>/reports/estimates/pools/<int:pool_id>/sample/",
        report_views.report_estimates_sample,
        name="report-estimates-sample",
    ),
    path("studies/<slug:slug>/reports/jobs/", jobs.job_start, {"family": report_jobs.REPORT}, name="report-job-start"),
    path(
        "studies/<slug:slug>/reports/jobs/<int:job_id>/",
        jobs.job_poll,
        {"family": report_jobs.REPORT},
        name="report-job",
    ),
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
        "studies/<slug:slug>/reports/estimates/",
        report_api.EstimateReportApi.as_view(),
        name="adjudication-api-report-estimates",
    ),
    path(
        "studies/<slug:slug>/reports/estimates/pools/<int:pool_id>/sample/",
        report_api.PoolSampleApi.as_view(),
        name="adjudication-api-report-estimates-sample",
    ),
    path(
        "studies/<slug:slug>/reports/jobs/",
        jobs.JobStartApi.as_view(),
        {"family": report_jobs.REPORT},
        name="adjudication-api-report-job-start",
    ),
    path(
        "studies/<slug:slug>/reports/jobs/<int:job_id>/",
        jobs.JobApi.as_view(),
        {"family": report_jobs.REPORT},
        name="adjudication-api-report-job",
    ),
]
