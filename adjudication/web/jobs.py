"""One way to start and follow a report job (:mod:`adjudication.report_jobs`) from a page or the API.

The routes of a job family — ``reports/jobs/`` for the agreement and validity bootstraps (family
``report``), ``reports/analysis-jobs/`` for model-as-rater bootstraps and outcome cross-validations
(family ``analysis``) — are these views, told their family by the URL configuration:

* :func:`job_start` / :class:`JobStartApi` read the request (``kind`` and that report's parameters), queue
  the job or find the one that has (or is computing) this result, and answer the polling fragment (htmx),
  a redirect to the report's page (a plain form), or 202 with the job (API);
* :func:`job_poll` / :class:`JobApi` answer the job's state; the fragment reloads the page once it is done.

Every page shows a job through one fragment, ``adjudication/_job.html``, given a :class:`JobFragment`
(:func:`job_fragment`): the report pages and the planning fragments alike. It polls its address while the
job is queued or running.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from adjudication import report_jobs
from adjudication.models import ReportJob, ReportJobKind, ReportJobStatus
from adjudication.web.common import ResearcherApi, flat, report_errors
from annotation.access import get_study_for_researcher
from annotation.models import Study
from concord.access import access_policy
from concord.http import vary_on_htmx

PLANNING_TITLE = "Computing the plan (a simulation, in the background)"


@dataclass(frozen=True)
class JobFragment:
    """What ``adjudication/_job.html`` shows: the job (None: not asked for yet), the address it polls while
    the job is queued or running, its element id and the address that starts it (``_job_form.html``), what
    the job is, how often it polls, and whether a browser without JavaScript gets a link to reload."""

    job: ReportJob | None
    poll: str | None
    target: str = ""
    start: str | None = None
    title: str = ""
    every: str = "2s"
    reload: bool = False


def _title(job: ReportJob) -> str:
    if job.kind in report_jobs.family_kinds(report_jobs.REPORT):
        return f"Bootstrap ({job.params.get('n_boot')} resamples, seed {job.params.get('seed')})"
    return job.get_kind_display()


def job_fragment(*, study: Study, job: ReportJob | None, family: str) -> JobFragment:
    """The fragment of a job of ``family`` (report or analysis) on a report page, polling its job route."""
    return JobFragment(
        job=job,
        poll=reverse(f"adjudication:{family}-job", args=[study.slug, job.pk]) if job is not None else None,
        target=f"{family}-job",
        start=reverse(f"adjudication:{family}-job-start", args=[study.slug]),
        title=_title(job) if job is not None else "",
    )


def planning_fragment(*, job: ReportJob, poll: str) -> JobFragment:
    """A planning simulation's progress, polling the plan's own address (the plan replaces it once done)."""
    return JobFragment(job=job, poll=poll, title=PLANNING_TITLE, every="1s", reload=True)


def _fragment(request: HttpRequest, study: Study, job: ReportJob, family: str) -> HttpResponse:
    context = {"fragment": job_fragment(study=study, job=job, family=family)}
    return vary_on_htmx(render(request, "adjudication/_job.html", context))


def _page_url(study: Study, kind: str, params: dict[str, Any]) -> str:
    """The page of the report a job belongs to, for these parameters (where a plain form returns)."""
    if kind == ReportJobKind.AGREEMENT:
        page = reverse("adjudication:report-agreement", args=[study.slug, params["pool"], params["question"]])
        return page + "?" + urlencode({"n_boot": params["n_boot"], "seed": params["seed"]})
    if kind == ReportJobKind.VALIDITY:
        query = {"n_boot": params["n_boot"], "seed": params["seed"]}
        query.update(
            {k: params[k] for k in ("source", "pool", "question", "target", "positive", "compare") if params.get(k)}
        )
        return reverse("adjudication:report-validity", args=[study.slug]) + "?" + urlencode(query)
    query = {
        k: (",".join(v) if isinstance(v, list) else v)
        for k, v in params.items()
        if v not in (None, "") and k not in ("mapping", "data_version")
    }
    if kind == ReportJobKind.RATERS:
        query["mapping"] = ",".join(f"{k}={v}" for k, v in (params.get("mapping") or {}).items())
        return reverse("adjudication:rater-report", args=[study.slug]) + "?" + urlencode(query)
    return reverse("adjudication:outcome", args=[study.slug]) + "?" + urlencode(query)


def _polled(family: str) -> tuple[str, ...]:
    """The kinds a family's job route answers: the reports route has always answered any job of the study
    (the kinds are no secret to its researchers); the analysis route only its own."""
    return () if family == report_jobs.REPORT else report_jobs.family_kinds(family)


def _job_get(study: Study, job_id: int, family: str) -> ReportJob:
    return report_jobs.job_get(study=study, job_id=job_id, kinds=_polled(family), what=f"{family} job")


# --- pages (htmx) -----------------------------------------------------------------------------------------


@access_policy("researcher")
@require_POST
@report_errors
def job_start(request: HttpRequest, slug: str, family: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    kind, params = report_jobs.job_params_parse(study=study, family=family, data=request.POST)
    job = report_jobs.job_request(study=study, family=family, kind=kind, params=params, user=request.user)
    if not request.htmx:
        return redirect(_page_url(study, kind, params))
    response = _fragment(request, study, job, family)
    if job.status == ReportJobStatus.DONE:
        response["HX-Refresh"] = "true"  # this result exists already: show it
    return response


@access_policy("researcher")
@require_GET
@report_errors
def job_poll(request: HttpRequest, slug: str, job_id: int, family: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    job = _job_get(study, job_id, family)
    response = _fragment(request, study, job, family)
    if job.status == ReportJobStatus.DONE and request.htmx:
        # The finished job changes the whole report: reload the page to show it.
        response["HX-Refresh"] = "true"
    return response


# --- REST API ---------------------------------------------------------------------------------------------


class JobStartApi(ResearcherApi):
    """Body: ``kind`` — agreement | validity on ``reports/jobs/``, raters | outcome on
    ``reports/analysis-jobs/`` — and that report's parameters (``n_boot`` and ``seed`` for a bootstrap).
    202 with the job."""

    @extend_schema(request=OpenApiTypes.OBJECT, responses={202: OpenApiTypes.OBJECT})
    def post(self, request: Request, slug: str, family: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        kind, params = report_jobs.job_params_parse(study=study, family=family, data=flat(request.data))
        job = report_jobs.job_request(study=study, family=family, kind=kind, params=params, user=request.user)
        return Response(report_jobs.job_as_dict(job), status=status.HTTP_202_ACCEPTED)


class JobApi(ResearcherApi):
    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str, job_id: int, family: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        return Response(report_jobs.job_as_dict(_job_get(study, job_id, family)))
