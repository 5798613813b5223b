"""Report pages for researchers: models as raters, backend comparison, outcome prediction.

Every view parses, authorizes with ``get_study_for_researcher`` (annotators 403, strangers 404), calls
one service and responds. Model-as-rater point estimates and the comparison are computed in the
request; bootstrap intervals and the outcome cross-validation are report jobs (family ``analysis``) run
in a worker, started and polled through adjudication.web.jobs and shown by the ``_job.html`` fragment.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from adjudication import report_jobs
from adjudication.analysis import model_comparison, raters
from adjudication.analysis.rendering import comparison_csv, outcome_csv, rater_csv
from adjudication.models import ReportJobKind, ReportJobStatus
from adjudication.web.common import check_format, report_download, report_errors
from adjudication.web.jobs import job_fragment
from annotation.access import get_study_for_researcher
from concord.access import access_policy
from concord.errors import ValidationFailed


@access_policy("researcher")
@require_GET
@report_errors
def raters_index(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    return render(
        request,
        "adjudication/raters_index.html",
        {
            "study": study,
            "choices": raters.rater_choices(study=study),
            "pools": study.pools.prefetch_related("questions").order_by("name"),
        },
    )


@access_policy("researcher")
@require_GET
@report_errors
def rater_report(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    report, job, job_params = report_jobs.rater_report_current(study=study, query=request.GET)
    hidden = [(k, v) for k, v in job_params.items() if k not in ("n_boot", "seed", "mapping", "threshold")]
    hidden.append(("mapping", ",".join(f"{k}={v}" for k, v in job_params["mapping"].items())))
    if job_params["threshold"] is not None:
        hidden.append(("threshold", job_params["threshold"]))
    return render(
        request,
        "adjudication/raters.html",
        {
            "study": study,
            "report": report,
            "job": job,
            "fragment": job_fragment(study=study, job=job, family=report_jobs.ANALYSIS),
            "hidden": hidden,
            "kind": ReportJobKind.RATERS,
            "n_boot": job_params["n_boot"],
            "seed": job_params["seed"],
            "query": request.GET.urlencode(),
        },
    )


@access_policy("researcher")
@require_GET
@report_errors
def rater_report_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    check_format(fmt)
    report, _, _ = report_jobs.rater_report_current(study=study, query=request.GET)
    name = f"{study.slug}-rater-run{report['run']['id']}-{report['question']['key']}"
    return report_download(fmt, report, name, rater_csv)


@access_policy("researcher")
@require_GET
@report_errors
def comparison(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    params = model_comparison.comparison_params_parse(study=study, query=request.GET)
    report = model_comparison.comparison_report(study=study, params=params)
    return render(
        request,
        "adjudication/comparison.html",
        {
            "study": study,
            "report": report,
            "chart": model_comparison.chart(report),
            "query": request.GET.urlencode(),
        },
    )


@access_policy("researcher")
@require_GET
@report_errors
def comparison_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    check_format(fmt)
    params = model_comparison.comparison_params_parse(study=study, query=request.GET)
    report = model_comparison.comparison_report(study=study, params=params)
    name = f"{study.slug}-comparison-{report['metric']}-{params.question}"
    return report_download(fmt, report, name, comparison_csv)


@access_policy("researcher")
@require_GET
@report_errors
def outcome(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    params, job = report_jobs.outcome_current(study=study, query=request.GET)
    report = job.result if job is not None and job.status == ReportJobStatus.DONE else None
    hidden = [(k, ",".join(v) if isinstance(v, list) else v) for k, v in params.as_dict().items() if v is not None]
    return render(
        request,
        "adjudication/outcome.html",
        {
            "study": study,
            "params": params,
            "job": job,
            "fragment": job_fragment(study=study, job=job, family=report_jobs.ANALYSIS),
            "report": report,
            "hidden": hidden,
            "kind": ReportJobKind.OUTCOME,
            "query": request.GET.urlencode(),
        },
    )


@access_policy("researcher")
@require_GET
@report_errors
def outcome_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    check_format(fmt)
    params, job = report_jobs.outcome_current(study=study, query=request.GET)
    if job is None or job.status != ReportJobStatus.DONE:
        raise ValidationFailed("this cross-validation has not been computed yet: start it on the outcome page")
    name = f"{study.slug}-outcome-{params.question}"
    return report_download(fmt, job.result, name, outcome_csv)
