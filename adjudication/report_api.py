"""REST API of the reports: the same services and the same JSON as the pages' downloads.

One class per operation; each authorizes with ``study_get_for_researcher`` (annotators 403,
strangers 404) and maps domain errors onto their HTTP status.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication import reports
from adjudication.selectors import study_get_for_researcher

BOOTSTRAP_PARAMETERS = [
    OpenApiParameter("n_boot", int, description="bootstrap resamples whose finished job to return (default 2000)"),
    OpenApiParameter("seed", int, description="bootstrap seed (default 0)"),
]
VALIDITY_PARAMETERS = [
    OpenApiParameter("source", str, required=True, description="metric source: run:<id> or measure:<pool>:<measure>:<rater>"),
    OpenApiParameter("pool", int, required=True, description="the pool whose human labels are the target"),
    OpenApiParameter("question", str, required=True, description="key of a categorical question of that pool"),
    OpenApiParameter("target", str, description="gold, majority or rater:<pseudonym> (default: gold if any, else majority)"),
    OpenApiParameter("positive", str, description="the option counted as positive (default: see reports.default_positive)"),
]


class _ReportApi(APIView):
    access_policy = "researcher"


class ReportIndexApi(_ReportApi):
    """What can be reported for a study: every (pool, question) and every (metric source, question)."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str) -> Response:
        study = study_get_for_researcher(user=request.user, slug=slug)
        agreement = [
            {"pool": {"id": row["pool"].pk, "name": row["pool"].name}, "question": row["question"].key,
             "n_units": row["report"]["n_units"], "n_raters": row["report"]["n_raters"]}
            for row in reports.agreement_overview(study=study)
        ]
        validity = [
            {"source": p["source"].key, "label": p["source"].label, "pool": p["pool"].pk, "question": p["question"].key}
            for p in reports.validity_pairs(study=study)
        ]
        return Response({"study": study.slug, "agreement": agreement, "validity": validity})


class AgreementReportApi(_ReportApi):
    """Point estimates, or the finished bootstrap for ``n_boot`` and ``seed`` when one was computed."""

    @extend_schema(parameters=BOOTSTRAP_PARAMETERS, responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str, pool_id: int, question: str) -> Response:
        study = study_get_for_researcher(user=request.user, slug=slug)
        report, job = reports.agreement_report_with_bootstrap(
            study=study, params=reports.agreement_params_parse(pool_id=pool_id, question=question, query=request.query_params)
        )
        return Response({**report, "bootstrap_job": job.pk if job else None})


class ValidityReportApi(_ReportApi):
    """Query: source, pool, question, and optionally target, positive, n_boot, seed."""

    @extend_schema(parameters=VALIDITY_PARAMETERS + BOOTSTRAP_PARAMETERS, responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str) -> Response:
        study = study_get_for_researcher(user=request.user, slug=slug)
        vp = reports.validity_params_parse(study=study, query=request.query_params)
        n_boot, seed = reports.bootstrap_params(request.query_params.get("n_boot"), request.query_params.get("seed"))
        report, job = reports.validity_report_with_bootstrap(study=study, params=vp, n_boot=n_boot, seed=seed)
        return Response({**report, "bootstrap_job": job.pk if job else None})


class ReportJobStartApi(_ReportApi):
    """Body: kind (agreement | validity), the report's parameters, n_boot, seed. 202 with the job."""

    @extend_schema(request=OpenApiTypes.OBJECT, responses={202: OpenApiTypes.OBJECT})
    def post(self, request: Request, slug: str) -> Response:
        study = study_get_for_researcher(user=request.user, slug=slug)
        kind, params = reports.job_params_parse(study=study, data=_flat(request.data))
        job = reports.report_job_start(study=study, kind=kind, params=params, user=request.user)
        return Response(reports.job_as_dict(job), status=status.HTTP_202_ACCEPTED)


class ReportJobApi(_ReportApi):
    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str, job_id: int) -> Response:
        study = study_get_for_researcher(user=request.user, slug=slug)
        return Response(reports.job_as_dict(reports.report_job_get(study=study, job_id=job_id)))


def _flat(data: Any) -> dict[str, Any]:
    """Form or JSON bodies alike as a mapping of single values."""
    if hasattr(data, "dict"):
        return data.dict()
    return {k: v for k, v in dict(data).items()}
