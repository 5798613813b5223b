"""REST API of planning: a plan from expected figures, a pool's plan, and a validation study's plan and
precision so far.

All are scoped to a study the caller is a researcher of (annotators 403, anyone else 404, anonymous 401).
The plans simulate, so each is a planning job (``adjudication.report_jobs``): a GET answers 200 with the
plan once it is computed, and otherwise 202 with the job's state and progress (the same GET, repeated,
polls it); a failed job answers 400 with its reason, and too many running planning jobs 429.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication import report_jobs
from adjudication.analysis import planning
from adjudication.models import ReportJob, ReportJobStatus
from adjudication.selectors import get_pool_for_researcher
from adjudication.validation.services import get_validation_study_for_researcher
from annotation.access import get_study_for_researcher
from concord.errors import ValidationFailed

FIELDS = ("auc", "prevalence", "kappa", "alpha", "raters", "categories", "half_width", "confidence", "seed")
RESPONSES = {200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT}


def _pending(job: ReportJob) -> Response | None:
    """202 with the job's state while it is queued or running; None once it is done."""
    if job.status == ReportJobStatus.FAILED:
        raise ValidationFailed(f"the plan could not be computed: {job.error}")
    if job.status == ReportJobStatus.DONE:
        return None
    body: dict[str, Any] = {
        "status": job.status,
        "job": job.pk,
        "n_done": job.n_done,
        "n_total": job.n_total,
        "progress": job.progress,
        "detail": "the plan is being computed; repeat this request to follow it",
    }
    return Response(body, status=202)


class _PlanningApi(APIView):
    access_policy = "researcher"


class PlanApi(_PlanningApi):
    """GET the items a wanted precision needs: ``auc`` + ``prevalence``, or ``kappa``/``alpha`` + ``raters``
    + ``categories``; ``half_width`` (default 0.05). The same plan as ``manage.py plan_validation``."""

    @extend_schema(parameters=[OpenApiParameter(f, str, required=False) for f in FIELDS], responses=RESPONSES)
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = {f: request.query_params.get(f) for f in FIELDS}
        job = report_jobs.figures_plan_job(study=study, data=data, user=request.user)
        return _pending(job) or Response(job.result)


class PoolPlanApi(_PlanningApi):
    @extend_schema(parameters=[OpenApiParameter("half_width", str, required=False)], responses=RESPONSES)
    def get(self, request: Request, pk: int) -> Response:
        pool = get_pool_for_researcher(request.user, pk)
        half_width = planning.parse_half_width(request.query_params.get("half_width"))
        job = report_jobs.pool_plan_job(pool=pool, half_width=half_width, user=request.user)
        pending = _pending(job)
        if pending is not None:
            return pending
        out = dict(job.result)
        out["line"] = planning.pool_plan_line(out)
        out["stop_at_half_width"] = pool.stop_at_half_width
        out["closed_at"] = pool.closed_at
        out["closed_reason"] = pool.closed_reason or None
        return Response(out)


class ValidationPlanApi(_PlanningApi):
    """GET a validation study's plan and monitoring: the half-width of each headline figure as pool B's
    items were completed, and at the current pace the items and days still needed."""

    @extend_schema(parameters=[OpenApiParameter("half_width", str, required=False)], responses=RESPONSES)
    def get(self, request: Request, pk: int) -> Response:
        vs = get_validation_study_for_researcher(request.user, pk)
        half_width = planning.parse_half_width(request.query_params.get("half_width"))
        job = report_jobs.validation_plan_job(vs=vs, half_width=half_width, user=request.user)
        pending = _pending(job)
        if pending is not None:
            return pending
        out = dict(job.result)
        out["validation_study"] = {"id": vs.pk, "name": vs.name, "study": vs.study.slug}
        out["not_independent"] = vs.not_independent
        return Response(out)
