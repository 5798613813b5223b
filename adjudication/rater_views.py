"""Report pages for researchers: models as raters, backend comparison, outcome prediction.

Every view parses, authorizes with ``study_get_for_researcher`` (annotators 403, strangers 404), calls
one service and responds. Model-as-rater point estimates and the comparison are computed in the
request; bootstrap intervals and the outcome cross-validation run as a ReportJob in a worker, polled
through the ``_analysis_job.html`` fragment.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_POST

from adjudication import model_comparison, outcomes, raters, reports
from adjudication.models import ReportJobKind, ReportJobStatus
from adjudication.report_views import _check_format, _domain_errors, _download
from adjudication.selectors import study_get_for_researcher
from annotation.models import Study
from concord.access import access_policy
from concord.errors import ValidationFailed


def _json(report: dict[str, Any], name: str) -> HttpResponse:
    return _download(json.dumps(report, ensure_ascii=False, indent=1), content_type="application/json",
                     filename=f"{name}.json")


def rater_job_params(params: raters.RaterParams, n_boot: int, seed: int) -> dict[str, Any]:
    return {**params.as_dict(), "n_boot": n_boot, "seed": seed}


def rater_report_current(*, study: Study, query: Any) -> tuple[dict[str, Any], Any, dict[str, Any]]:
    """Point estimates, or the finished bootstrap for these parameters on the current data."""
    params = raters.rater_params_parse(study=study, query=query)
    n_boot, seed = reports.bootstrap_params(query.get("n_boot"), query.get("seed"))
    job_params = rater_job_params(params, n_boot, seed)
    job = outcomes.analysis_job_latest(study=study, kind=ReportJobKind.RATERS, params=job_params)
    if job is not None and job.status == ReportJobStatus.DONE and job.result:
        return {**job.result, "bootstrap_status": "done"}, job, job_params
    report = raters.rater_report(study=study, params=params)
    return {**report, "bootstrap_status": job.status if job else "not requested"}, job, job_params


@access_policy("researcher")
@require_GET
@_domain_errors
def raters_index(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    return render(request, "adjudication/raters_index.html", {
        "study": study, "choices": raters.rater_choices(study=study),
        "pools": study.pools.prefetch_related("questions").order_by("name"),
    })


@access_policy("researcher")
@require_GET
@_domain_errors
def rater_report(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    report, job, job_params = rater_report_current(study=study, query=request.GET)
    hidden = [(k, v) for k, v in job_params.items() if k not in ("n_boot", "seed", "mapping", "threshold")]
    hidden.append(("mapping", ",".join(f"{k}={v}" for k, v in job_params["mapping"].items())))
    if job_params["threshold"] is not None:
        hidden.append(("threshold", job_params["threshold"]))
    return render(request, "adjudication/raters.html", {
        "study": study, "report": report, "job": job, "hidden": hidden, "kind": ReportJobKind.RATERS,
        "n_boot": job_params["n_boot"], "seed": job_params["seed"], "query": request.GET.urlencode(),
    })


@access_policy("researcher")
@require_GET
@_domain_errors
def rater_report_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    _check_format(fmt)
    report, _, _ = rater_report_current(study=study, query=request.GET)
    name = f"{study.slug}-rater-run{report['run']['id']}-{report['question']['key']}"
    if fmt == "csv":
        return _download(raters.rater_csv(report), content_type="text/csv; charset=utf-8", filename=f"{name}.csv")
    return _json(report, name)


@access_policy("researcher")
@require_GET
@_domain_errors
def comparison(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    params = model_comparison.comparison_params_parse(study=study, query=request.GET)
    report = model_comparison.comparison_report(study=study, params=params)
    return render(request, "adjudication/comparison.html", {
        "study": study, "report": report, "chart": model_comparison.chart(report), "query": request.GET.urlencode(),
    })


@access_policy("researcher")
@require_GET
@_domain_errors
def comparison_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    _check_format(fmt)
    params = model_comparison.comparison_params_parse(study=study, query=request.GET)
    report = model_comparison.comparison_report(study=study, params=params)
    name = f"{study.slug}-comparison-{report['metric']}-{params.question}"
    if fmt == "csv":
        return _download(model_comparison.comparison_csv(report), content_type="text/csv; charset=utf-8",
                         filename=f"{name}.csv")
    return _json(report, name)


def outcome_current(*, study: Study, query: Any) -> tuple[outcomes.OutcomeParams, Any]:
    params = outcomes.outcome_params_parse(study=study, query=query)
    return params, outcomes.analysis_job_latest(study=study, kind=ReportJobKind.OUTCOME, params=params.as_dict())


@access_policy("researcher")
@require_GET
@_domain_errors
def outcome(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    params, job = outcome_current(study=study, query=request.GET)
    report = job.result if job is not None and job.status == ReportJobStatus.DONE else None
    hidden = [(k, ",".join(v) if isinstance(v, list) else v) for k, v in params.as_dict().items() if v is not None]
    return render(request, "adjudication/outcome.html", {
        "study": study, "params": params, "job": job, "report": report, "hidden": hidden,
        "kind": ReportJobKind.OUTCOME, "query": request.GET.urlencode(),
    })


@access_policy("researcher")
@require_GET
@_domain_errors
def outcome_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    _check_format(fmt)
    params, job = outcome_current(study=study, query=request.GET)
    if job is None or job.status != ReportJobStatus.DONE:
        raise ValidationFailed("this cross-validation has not been computed yet: start it on the outcome page")
    name = f"{study.slug}-outcome-{params.question}"
    if fmt == "csv":
        return _download(outcomes.outcome_csv(job.result), content_type="text/csv; charset=utf-8", filename=f"{name}.csv")
    return _json(job.result, name)


# --- jobs (htmx) ------------------------------------------------------------------------------------------


def parse_job_request(*, study: Study, data: Any) -> tuple[str, dict[str, Any]]:
    kind = (data.get("kind") or "").strip()
    if kind == ReportJobKind.RATERS:
        n_boot, seed = reports.bootstrap_params(data.get("n_boot"), data.get("seed"))
        return kind, rater_job_params(raters.rater_params_parse(study=study, query=data), n_boot, seed)
    if kind == ReportJobKind.OUTCOME:
        return kind, outcomes.outcome_params_parse(study=study, query=data).as_dict()
    raise ValidationFailed("kind must be raters or outcome")


def _fragment(request: HttpRequest, study: Study, job: Any) -> HttpResponse:
    response = render(request, "adjudication/_analysis_job.html", {"study": study, "job": job})
    patch_vary_headers(response, ("HX-Request",))
    return response


def _page_url(study: Study, kind: str, params: dict[str, Any]) -> str:
    query = {k: (",".join(v) if isinstance(v, list) else v) for k, v in params.items()
             if v not in (None, "") and k not in ("mapping", "data_version")}
    if kind == ReportJobKind.RATERS:
        query["mapping"] = ",".join(f"{k}={v}" for k, v in (params.get("mapping") or {}).items())
        return reverse("adjudication:rater-report", args=[study.slug]) + "?" + urlencode(query)
    return reverse("adjudication:outcome", args=[study.slug]) + "?" + urlencode(query)


@access_policy("researcher")
@require_POST
@_domain_errors
def analysis_job_start(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    kind, params = parse_job_request(study=study, data=request.POST)
    job = outcomes.analysis_job_start(study=study, kind=kind, params=params, user=request.user)
    if not request.htmx:
        return redirect(_page_url(study, kind, params))
    response = _fragment(request, study, job)
    if job.status == ReportJobStatus.DONE:
        response["HX-Refresh"] = "true"
    return response


@access_policy("researcher")
@require_GET
@_domain_errors
def analysis_job(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    job = outcomes.analysis_job_get(study=study, job_id=job_id)
    response = _fragment(request, study, job)
    if job.status == ReportJobStatus.DONE and request.htmx:
        response["HX-Refresh"] = "true"
    return response
