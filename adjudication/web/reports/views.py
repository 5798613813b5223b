"""Report pages for researchers: agreement per pool and question, metric vs human, prediction-powered
estimates, downloads.

Every view parses, authorizes with ``get_study_for_researcher`` (annotators 403, strangers 404),
calls one service of adjudication.analysis and responds. Point estimates are computed in the
request; bootstrap intervals are a report job (family ``report``), started and polled through
adjudication.web.jobs and shown by the ``_job.html`` fragment.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from adjudication import report_jobs
from adjudication.analysis.access import get_pool_for_report
from adjudication.analysis.agreement import agreement_overview, agreement_params_parse, pair_matrix
from adjudication.analysis.estimates import (
    estimate_choices,
    estimate_params_parse,
    estimate_report,
    pool_samples,
    trajectory_plot,
)
from adjudication.analysis.loading import target_choices
from adjudication.analysis.params import bootstrap_params
from adjudication.analysis.rendering import agreement_csv, roc_svg_points, validity_csv
from adjudication.analysis.validity import comparison_choices, validity_pairs, validity_params_parse
from adjudication.models import ReportJobKind
from adjudication.sampling import DEFAULT_FLOOR, FLOORS, pool_sample_draw, pool_sample_parse
from adjudication.web.common import check_format, report_download, report_errors
from adjudication.web.jobs import job_fragment
from annotation.access import get_study_for_researcher
from concord.access import access_policy

# --- pages ---------------------------------------------------------------------------------------


def _quality_fields(params: dict) -> list[tuple[str, str]]:
    """The reports' quality options as the query fields a bootstrap job's form posts back."""
    fields = []
    if params.get("include_controls"):
        fields.append(("controls", "include"))
    if params.get("exclude_flagged"):
        fields.append(("flagged", "exclude"))
    return fields


@access_policy("researcher")
@require_GET
@report_errors
def report_index(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    return render(
        request,
        "adjudication/report_index.html",
        {
            "study": study,
            "overview": agreement_overview(study=study),
            "pairs": validity_pairs(study=study),
        },
    )


@access_policy("researcher")
@require_GET
@report_errors
def report_agreement(request: HttpRequest, slug: str, pool_id: int, question: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    params = agreement_params_parse(pool_id=pool_id, question=question, query=request.GET)
    report, job = report_jobs.agreement_report_with_bootstrap(study=study, params=params)
    context = {
        "study": study,
        "report": report,
        "job": job,
        "fragment": job_fragment(study=study, job=job, family=report_jobs.REPORT),
        "params": params,
        "matrix": pair_matrix(report),
        "options": [
            {"name": summary["option"], "report": summary, "matrix": pair_matrix(summary)}
            for summary in report.get("per_option") or []
        ],
        "kind": ReportJobKind.AGREEMENT,
        "hidden_fields": [("pool", pool_id), ("question", question), *_quality_fields(params)],
    }
    return render(request, "adjudication/report_agreement.html", context)


@access_policy("researcher")
@require_GET
@report_errors
def report_agreement_download(request: HttpRequest, slug: str, pool_id: int, question: str, fmt: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    check_format(fmt)
    params = agreement_params_parse(pool_id=pool_id, question=question, query=request.GET)
    report, _ = report_jobs.agreement_report_with_bootstrap(study=study, params=params)
    name = f"{study.slug}-{report['pool']['name']}-{question}-agreement"
    return report_download(fmt, report, name, agreement_csv)


@access_policy("researcher")
@require_GET
@report_errors
def report_validity(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    vp = validity_params_parse(study=study, query=request.GET)
    n_boot, seed = bootstrap_params(request.GET.get("n_boot"), request.GET.get("seed"))
    report, job = report_jobs.validity_report_with_bootstrap(study=study, params=vp, n_boot=n_boot, seed=seed)
    pool = get_pool_for_report(study, vp.pool_id)
    context = {
        "study": study,
        "report": report,
        "job": job,
        "fragment": job_fragment(study=study, job=job, family=report_jobs.REPORT),
        "vp": vp,
        "n_boot": n_boot,
        "seed": seed,
        "roc_points": roc_svg_points(report.get("roc")),
        "targets": target_choices(pool=pool),
        "compare_choices": comparison_choices(study=study, source_key=vp.source),
        "query": request.GET.urlencode(),
        "kind": ReportJobKind.VALIDITY,
        "hidden_fields": [
            (k, v) for k, v in vp.as_dict().items() if k not in ("pool", "include_controls", "exclude_flagged")
        ]
        + [("pool", vp.pool_id), *_quality_fields(vp.as_dict())],
    }
    return render(request, "adjudication/report_validity.html", context)


@access_policy("researcher")
@require_GET
@report_errors
def report_validity_download(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    check_format(fmt)
    vp = validity_params_parse(study=study, query=request.GET)
    n_boot, seed = bootstrap_params(request.GET.get("n_boot"), request.GET.get("seed"))
    report, _ = report_jobs.validity_report_with_bootstrap(study=study, params=vp, n_boot=n_boot, seed=seed)
    name = f"{study.slug}-validity-{vp.source.replace(':', '-')}-{vp.question}"
    return report_download(fmt, report, name, validity_csv)


# Query parameters whose presence asks for an estimate (without them the page is the empty form).
ESTIMATE_FIELDS = ("pool", "question", "run")


@access_policy("researcher")
@require_GET
@report_errors
def report_estimates(request: HttpRequest, slug: str) -> HttpResponse:
    """The prediction-powered share of a question's positive answers over a score run's items (the form, and
    with ``pool``, ``question`` and ``run`` the estimate or the reason it is refused)."""
    study = get_study_for_researcher(request.user, slug)
    choices = estimate_choices(study=study)
    params = report = None
    if any(request.GET.get(name) for name in ESTIMATE_FIELDS):
        params = estimate_params_parse(study=study, query=request.GET)
        report = estimate_report(study=study, params=params)
    chosen = next(
        (
            q
            for pool in choices["pools"]
            if params is not None and pool["id"] == params.pool_id
            for q in pool["questions"]
            if q["key"] == params.question
        ),
        None,
    )
    questions = sorted({q["key"] for pool in choices["pools"] for q in pool["questions"]})
    context = {
        "study": study,
        "choices": choices,
        "questions": questions,
        "params": params,
        "chosen_question": chosen,
        "report": report,
        "plot": trajectory_plot(report["trajectory"]["steps"]) if report else None,
        "samples": pool_samples(study=study),
        "floors": list(FLOORS),
        "default_floor": str(DEFAULT_FLOOR),
    }
    return render(request, "adjudication/report_estimates.html", context)


@access_policy("researcher")
@require_POST
@report_errors
def report_estimates_sample(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    """Draw and record the pool's sample (``adjudication.sampling``), then back to the estimates page."""
    study = get_study_for_researcher(request.user, slug)
    pool = get_pool_for_report(study, pool_id)
    pool_sample_draw(**pool_sample_parse(study=study, pool=pool, data=request.POST), actor=request.user)
    return redirect(reverse("adjudication:report-estimates", args=[study.slug]) + "#samples")
