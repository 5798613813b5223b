"""REST API of planning: a plan from expected figures, and a validation study's plan and precision so far.

Both are scoped to a study the caller is a researcher of (annotators 403, anyone else 404, anonymous 401).
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication.analysis import planning
from adjudication.selectors import pool_get_for_researcher, study_get_for_researcher
from adjudication.validation import studies as validation

FIELDS = ("auc", "prevalence", "kappa", "alpha", "raters", "categories", "half_width", "confidence", "seed")


class _PlanningApi(APIView):
    access_policy = "researcher"


class PlanApi(_PlanningApi):
    """GET the items a wanted precision needs: ``auc`` + ``prevalence``, or ``kappa``/``alpha`` + ``raters``
    + ``categories``; ``half_width`` (default 0.05). The same plan as ``manage.py plan_validation``."""

    @extend_schema(
        parameters=[OpenApiParameter(f, str, required=False) for f in FIELDS], responses={200: OpenApiTypes.OBJECT}
    )
    def get(self, request: Request, slug: str) -> Response:
        study_get_for_researcher(user=request.user, slug=slug)
        return Response(planning.plan_request({f: request.query_params.get(f) for f in FIELDS}))


class PoolPlanApi(_PlanningApi):
    @extend_schema(
        parameters=[OpenApiParameter("half_width", str, required=False)], responses={200: OpenApiTypes.OBJECT}
    )
    def get(self, request: Request, pk: int) -> Response:
        pool = pool_get_for_researcher(user=request.user, pool_id=pk)
        half_width = planning.parse_half_width(request.query_params.get("half_width"))
        out = planning.pool_plan(pool=pool, half_width=half_width)
        out["line"] = planning.pool_plan_line(out)
        out["stop_at_half_width"] = pool.stop_at_half_width
        out["closed_at"] = pool.closed_at
        out["closed_reason"] = pool.closed_reason or None
        return Response(out)


class ValidationPlanApi(_PlanningApi):
    """GET a validation study's plan and monitoring: the half-width of each headline figure as pool B's
    items were completed, and at the current pace the items and days still needed."""

    @extend_schema(
        parameters=[OpenApiParameter("half_width", str, required=False)], responses={200: OpenApiTypes.OBJECT}
    )
    def get(self, request: Request, pk: int) -> Response:
        vs = validation.validation_study_get_for_researcher(user=request.user, pk=pk)
        half_width = planning.parse_half_width(request.query_params.get("half_width"))
        out = planning.validation_monitoring(vs=vs, half_width=half_width)
        out["validation_study"] = {"id": vs.pk, "name": vs.name, "study": vs.study.slug}
        out["not_independent"] = vs.not_independent
        return Response(out)
