"""Report pages for researchers: agreement per pool and question, metric vs human, downloads.

Every view parses, authorizes with ``study_get_for_researcher`` (annotators 403, strangers 404),
calls one service of adjudication.reports and responds. Point estimates are computed in the
request; bootstrap intervals are queued as a ReportJob and polled through the ``_report_job.html``
fragment.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_POST

from adjudication import reports
from adjudication.models import ReportJobKind, ReportJobStatus
from adjudication.selectors import study_get_for_researcher
from annotation.models import Study
from concord.access import access_policy
from concord.errors import DomainError, NotFound


def _domain_errors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Answers a DomainError with its status and message (404 and 403 pages say as little as possible)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except DomainError as exc:
            return render(request, "adjudication/report_error.html", {"error": exc}, status=exc.status_code)

    return wrapper


def _download(body: str, *, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _check_format(fmt: str) -> None:
    if fmt not in ("csv", "json"):
        raise NotFound("downloads are .csv or .json")


# --- pages ---------------------------------------------------------------------------------------


@access_policy("researcher")
@require_GET
@_domain_errors
def report_index(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    return render(request, "adjudication/report_index.html", {
        "study": study, "overview": reports.agreement_overview(study=study),
        "pairs": reports.validity_pairs(study=study),
    })


@access_policy("researcher")
@require_GET
@_domain_errors
def report_agreement(request: HttpRequest, slug: str, pool_id: int, question: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    params = reports.agreement_params_parse(pool_id=pool_id, question=question, query=request.GET)
    report, job = reports.agreement_report_with_bootstrap(study=study, params=params)
    context = {
        "study": study, "report": report, "job": job, "params": params, "matrix": reports.pair_matrix(report),
        "options": [{"name": summary["option"], "report": summary, "matrix": reports.pair_matrix(summary)}
                    for summary in report.get("per_option") or []],
        "kind": ReportJobKind.AGREEMENT, "hidden_fields": [("pool", pool_id), ("question", question)],
    }
    return render(request, "adjudication/report_agreement.html", context)


@access_policy("researcher")
@require_GET
@_domain_errors
def report_agreement_download(request: HttpRequest, slug: str, pool_id: int, question: str, fmt: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    _check_format(fmt)
    params = reports.agreement_params_parse(pool_id=pool_id, question=question, query=request.GET)
    report, _ = reports.agreement_report_with_bootstrap(study=study, params=params)
    name = f"{study.slug}-{report['pool']['name']}-{question}-agreement"
    if fmt == "csv":
        return _download(reports.agreement_csv(report), content_type="text/csv; charset=utf-8", filename=f"{name}.csv")
    return _download(json.dumps(report, ensure_ascii=False, indent=1), content_type="application/json",
                     filename=f"{name}.json")


@access_policy("researcher")
@require_GET
@_domain_errors
def report_validity(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    vp = reports.validity_params_parse(study=study, query=request.GET)
    n_boot, seed = reports.bootstrap_params(request.GET.get("n_boot"), request.GET.get("seed"))
    report, job = reports.validity_report_with_bootstrap(study=study, params=vp, n_boot=n_boot, seed=seed)
    pool = reports.pool_get_for_report(study=study, pool_id=vp.pool_id)
    context = {
        "study": study, "report": report, "job": job, "vp": vp, "n_boot": n_boot, "seed": seed,
        "roc_points": reports.roc_svg_points(report.get("roc")), "targets": reports.target_choices(pool=pool),
        "compare_choices": reports.comparison_choices(study=study, source_key=vp.source),
        "query": request.GET.urlencode(), "kind": ReportJobKind.VALIDITY,
        "hidden_fields": [(k, v) for k, v in vp.as_dict().items() if k != "pool"] + [("pool", vp.pool_id)],
    }
    return render(request, "adjudication/report_validity.html", context)


@access_policy("researcher")
@require_GET
@_domain_errors
def report_validity_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    _check_format(fmt)
    vp = reports.validity_params_parse(study=study, query=request.GET)
    n_boot, seed = reports.bootstrap_params(request.GET.get("n_boot"), request.GET.get("seed"))
    report, _ = reports.validity_report_with_bootstrap(study=study, params=vp, n_boot=n_boot, seed=seed)
    name = f"{study.slug}-validity-{vp.source.replace(':', '-')}-{vp.question}"
    if fmt == "csv":
        return _download(reports.validity_csv(report), content_type="text/csv; charset=utf-8", filename=f"{name}.csv")
    return _download(json.dumps(report, ensure_ascii=False, indent=1), content_type="application/json",
                     filename=f"{name}.json")


# --- bootstrap jobs (htmx) -----------------------------------------------------------------------------


def _job_fragment(request: HttpRequest, study: Study, job: Any) -> HttpResponse:
    response = render(request, "adjudication/_report_job.html", {"study": study, "job": job})
    patch_vary_headers(response, ("HX-Request",))
    return response


@access_policy("researcher")
@require_POST
@_domain_errors
def report_job_start(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    kind, params = reports.job_params_parse(study=study, data=request.POST)
    job = reports.report_job_start(study=study, kind=kind, params=params, user=request.user)
    if not request.htmx:
        return redirect(_report_url(study, kind, params))
    response = _job_fragment(request, study, job)
    if job.status == ReportJobStatus.DONE:
        response["HX-Refresh"] = "true"  # these intervals exist already: show them
    return response


def _report_url(study: Study, kind: str, params: dict[str, Any]) -> str:
    query = {"n_boot": params["n_boot"], "seed": params["seed"]}
    if kind == ReportJobKind.AGREEMENT:
        return reverse("adjudication:report-agreement", args=[study.slug, params["pool"], params["question"]]) + "?" + urlencode(query)
    query.update({k: params[k] for k in ("source", "pool", "question", "target", "positive", "compare") if params.get(k)})
    return reverse("adjudication:report-validity", args=[study.slug]) + "?" + urlencode(query)


@access_policy("researcher")
@require_GET
@_domain_errors
def report_job(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    study = study_get_for_researcher(user=request.user, slug=slug)
    job = reports.report_job_get(study=study, job_id=job_id)
    response = _job_fragment(request, study, job)
    if job.status == ReportJobStatus.DONE and request.htmx:
        # The finished bootstrap changes the whole report: reload the page to show its intervals.
        response["HX-Refresh"] = "true"
    return response
