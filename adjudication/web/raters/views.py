"""Report pages for researchers: models as raters, backend comparison, outcome prediction.

Every view parses, authorizes with ``study_get_for_researcher`` (annotators 403, strangers 404), calls
one service and responds. Model-as-rater point estimates and the comparison are computed in the
request; bootstrap intervals and the outcome cross-validation run as a ReportJob in a worker, polled
through the ``_analysis_job.html`` fragment.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from adjudication.analysis import jobs, model_comparison, raters
from adjudication.analysis.rendering import comparison_csv, outcome_csv, rater_csv
from adjudication.models import ReportJobKind, ReportJobStatus
from adjudication.selectors import study_get_for_researcher
from adjudication.web.common import check_format, report_download, report_errors
from annotation.models import Study
from concord.access import access_policy
from concord.errors import ValidationFailed
from concord.http import vary_on_htmx


@access_policy("researcher")
@require_GET
@report_errors
def raters_index(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
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
    study = study_get_for_researcher(user=request.user, slug=slug)
    report, job, job_params = jobs.rater_report_current(study=study, query=request.GET)
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
    study = study_get_for_researcher(user=request.user, slug=slug)
    check_format(fmt)
    report, _, _ = jobs.rater_report_current(study=study, query=request.GET)
    name = f"{study.slug}-rater-run{report['run']['id']}-{report['question']['key']}"
    return report_download(fmt, report, name, rater_csv)


@access_policy("researcher")
@require_GET
@report_errors
def comparison(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
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
    study = study_get_for_researcher(user=request.user, slug=slug)
    check_format(fmt)
    params = model_comparison.comparison_params_parse(study=study, query=request.GET)
    report = model_comparison.comparison_report(study=study, params=params)
    name = f"{study.slug}-comparison-{report['metric']}-{params.question}"
    return report_download(fmt, report, name, comparison_csv)


@access_policy("researcher")
@require_GET
@report_errors
def outcome(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    params, job = jobs.outcome_current(study=study, query=request.GET)
    report = job.result if job is not None and job.status == ReportJobStatus.DONE else None
    hidden = [(k, ",".join(v) if isinstance(v, list) else v) for k, v in params.as_dict().items() if v is not None]
    return render(
        request,
        "adjudication/outcome.html",
        {
            "study": study,
            "params": params,
            "job": job,
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
    study = study_get_for_researcher(user=request.user, slug=slug)
    check_format(fmt)
    params, job = jobs.outcome_current(study=study, query=request.GET)
    if job is None or job.status != ReportJobStatus.DONE:
        raise ValidationFailed("this cross-validation has not been computed yet: start it on the outcome page")
    name = f"{study.slug}-outcome-{params.question}"
    return report_download(fmt, job.result, name, outcome_csv)


# --- jobs (htmx) ------------------------------------------------------------------------------------------


def _fragment(request: HttpRequest, study: Study, job: Any) -> HttpResponse:
    return vary_on_htmx(render(request, "adjudication/_analysis_job.html", {"study": study, "job": job}))


def _page_url(study: Study, kind: str, params: dict[str, Any]) -> str:
    query = {
        k: (",".join(v) if isinstance(v, list) else v)
        for k, v in params.items()
        if v not in (None, "") and k not in ("mapping", "data_version")
    }
    if kind == ReportJobKind.RATERS:
        query["mapping"] = ",".join(f"{k}={v}" for k, v in (params.get("mapping") or {}).items())
        return reverse("adjudication:rater-report", args=[study.slug]) + "?" + urlencode(query)
    return reverse("adjudication:outcome", args=[study.slug]) + "?" + urlencode(query)


@access_policy("researcher")
@require_POST
@report_errors
def analysis_job_start(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    kind, params = jobs.analysis_params_parse(study=study, data=request.POST)
    job = jobs.analysis_job_start(study=study, kind=kind, params=params, user=request.user)
    if not request.htmx:
        return redirect(_page_url(study, kind, params))
    response = _fragment(request, study, job)
    if job.status == ReportJobStatus.DONE:
        response["HX-Refresh"] = "true"
    return response


@access_policy("researcher")
@require_GET
@report_errors
def analysis_job(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    job = jobs.analysis_job_get(study=study, job_id=job_id)
    response = _fragment(request, study, job)
    if job.status == ReportJobStatus.DONE and request.htmx:
        response["HX-Refresh"] = "true"
    return response
