"""Routes of models as raters, backend comparison and outcome prediction (pages and REST API)."""

from django.urls import path

from adjudication import report_jobs
from adjudication.web import jobs
from adjudication.web.raters import api as rater_api
from adjudication.web.raters import views as rater_views

urlpatterns = [
    path("studies/<slug:slug>/reports/raters/", rater_views.raters_index, name="raters-index"),
    path("studies/<slug:slug>/reports/raters/report/", rater_views.rater_report, name="rater-report"),
    path(
        "studies/<slug:slug>/reports/raters/report/download.<str:fmt>",
        rater_views.rater_report_download,
        name="rater-report-download",
    ),
    path("studies/<slug:slug>/reports/comparison/", rater_views.comparison, name="comparison"),
    path(
        "studies/<slug:slug>/reports/comparison/download.<str:fmt>",
        rater_views.comparison_download,
        name="comparison-download",
    ),
    path("studies/<slug:slug>/reports/outcome/", rater_views.outcome, name="outcome"),
    path(
        "studies/<slug:slug>/reports/outcome/download.<str:fmt>", rater_views.outcome_download, name="outcome-download"
    ),
    path(
        "studies/<slug:slug>/reports/analysis-jobs/",
        jobs.job_start,
        {"family": report_jobs.ANALYSIS},
        name="analysis-job-start",
    ),
    path(
        "studies/<slug:slug>/reports/analysis-jobs/<int:job_id>/",
        jobs.job_poll,
        {"family": report_jobs.ANALYSIS},
        name="analysis-job",
    ),
]

api_urlpatterns = [
    path("studies/<slug:slug>/reports/raters/", rater_api.RaterChoicesApi.as_view(), name="adjudication-api-raters"),
    path(
        "studies/<slug:slug>/reports/raters/report/",
        rater_api.RaterReportApi.as_view(),
        name="adjudication-api-rater-report",
    ),
    path(
        "studies/<slug:slug>/reports/comparison/", rater_api.ComparisonApi.as_view(), name="adjudication-api-comparison"
    ),
    path("studies/<slug:slug>/reports/outcome/", rater_api.OutcomeApi.as_view(), name="adjudication-api-outcome"),
    path(
        "studies/<slug:slug>/reports/analysis-jobs/",
        jobs.JobStartApi.as_view(),
        {"family": report_jobs.ANALYSIS},
        name="adjudication-api-analysis-job-start",
    ),
    path(
        "studies/<slug:slug>/reports/analysis-jobs/<int:job_id>/",
        jobs.JobApi.as_view(),
        {"family": report_jobs.ANALYSIS},
        name="adjudication-api-analysis-job",
    ),
]
