"""Planning fragments: the pool's plan and stopping rule (loaded into the console's pool page) and a
validation study's precision over time (loaded into its report). Researchers only.

The plans simulate (seconds for large designs), so each is a planning job (``adjudication.report_jobs``):
the fragment shows the finished plan, or the job's progress, polled by htmx until it is done, in the same
``_job.html`` fragment as the report pages' jobs (adjudication.web.jobs). Too many running planning jobs:
429 with the reason.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from adjudication import report_jobs
from adjudication.analysis import planning
from adjudication.models import ReportJob, ReportJobKind, ReportJobStatus
from adjudication.selectors import get_pool_for_researcher
from adjudication.validation.services import get_validation_study_for_researcher, pool_reopen, pool_stop_rule_set
from adjudication.web.common import report_errors
from adjudication.web.jobs import planning_fragment
from annotation.models import Pool
from concord.access import access_policy
from concord.errors import ValidationFailed
from concord.http import htmx_render, vary_on_htmx


def _progress(request: HttpRequest, job: ReportJob) -> HttpResponse:
    """The job's progress, polling the same address; a failed job's reason as a 400."""
    if job.status == ReportJobStatus.FAILED:
        raise ValidationFailed(f"the plan could not be computed: {job.error}")
    context = {"fragment": planning_fragment(job=job, poll=request.get_full_path())}
    return _fragment_or_page(request, "adjudication/_job.html", context, title="Pool plan")


def _pool_context(pool: Pool, half_width: float, plan: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "pool": pool,
        "plan": plan,
        "line": planning.pool_plan_line(plan) if plan else "",
        "half_width": half_width,
    }


@access_policy("researcher")
@require_GET
@report_errors
def pool_plan(request: HttpRequest, pk: int) -> HttpResponse:
    pool = get_pool_for_researcher(request.user, pk)
    half_width = planning.parse_half_width(request.GET.get("half_width"))
    job = report_jobs.pool_plan_job(pool=pool, half_width=half_width, user=request.user)
    if job.status != ReportJobStatus.DONE:
        return _progress(request, job)
    context = _pool_context(pool, half_width, job.result)
    return _fragment_or_page(request, "adjudication/_pool_plan.html", context, title=f"Plan of pool {pool.name}")


def _fragment_or_page(request: HttpRequest, fragment: str, context: dict[str, Any], *, title: str) -> HttpResponse:
    """The fragment for htmx (the console's pool page loads it); opened directly, a whole page around it."""
    page = {**context, "fragment_template": fragment, "page_title": title}
    return htmx_render(request, "fragment_page.html", page, fragment=fragment)


@access_policy("researcher")
@require_POST
@report_errors
def pool_stop_rule(request: HttpRequest, pk: int) -> HttpResponse:
    pool = get_pool_for_researcher(request.user, pk)
    try:
        if request.POST.get("action") == "reopen":
            pool_reopen(pool=pool)
        else:
            pool_stop_rule_set(pool=pool, half_width=request.POST.get("stop_at_half_width", ""))
    except ValidationFailed as exc:
        # The form again with the reason; the plan only if it was computed already (nothing is started here).
        done = ReportJob.objects.filter(
            study=pool.study, kind=ReportJobKind.PLANNING, status=ReportJobStatus.DONE, params__pool=pool.pk
        ).order_by("-finished_at").first()
        context = _pool_context(pool, planning.DEFAULT_HALF_WIDTH, done.result if done else None)
        context["error"] = exc.message
        return render(request, "adjudication/_pool_plan.html", context, status=400)
    return redirect(reverse("console:pool", args=[pool.study.slug, pool.pk]))


@access_policy("researcher")
@require_GET
@report_errors
def validation_precision(request: HttpRequest, pk: int) -> HttpResponse:
    vs = get_validation_study_for_researcher(request.user, pk)
    half_width = planning.parse_half_width(
        request.GET.get("half_width") or vs.target_pool.stop_at_half_width or planning.DEFAULT_HALF_WIDTH
    )
    job = report_jobs.validation_plan_job(vs=vs, half_width=half_width, user=request.user)
    if job.status != ReportJobStatus.DONE:
        return _progress(request, job)
    monitoring = job.result
    context = {"vs": vs, "m": monitoring, "chart": planning.precision_chart(monitoring)}
    return vary_on_htmx(render(request, "adjudication/_validation_precision.html", context))
