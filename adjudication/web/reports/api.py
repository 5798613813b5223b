"""REST API of the reports: the same services and the same JSON as the pages' downloads.

One class per operation; each authorizes with ``get_study_for_researcher`` (annotators 403,
strangers 404) and maps domain errors onto their HTTP status.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from adjudication import report_jobs
from adjudication.analysis.access import get_pool_for_report
from adjudication.analysis.agreement import agreement_overview, agreement_params_parse
from adjudication.analysis.estimates import estimate_choices, estimate_params_parse, estimate_report, pool_sample_info
from adjudication.analysis.params import bootstrap_params
from adjudication.analysis.validity import validity_pairs, validity_params_parse
from adjudication.sampling import pool_sample_draw, pool_sample_parse
from adjudication.web.common import ResearcherApi, flat
from annotation.access import get_study_for_researcher

BOOTSTRAP_PARAMETERS = [
    OpenApiParameter("n_boot", int, description="bootstrap resamples whose finished job to return (default 2000)"),
    OpenApiParameter("seed", int, description="bootstrap seed (default 0)"),
]
VALIDITY_PARAMETERS = [
    OpenApiParameter(
        "source", str, required=True, description="metric source: run:<id> or measure:<pool>:<measure>:<rater>"
    ),
    OpenApiParameter("pool", int, required=True, description="the pool whose human labels are the target"),
    OpenApiParameter("question", str, required=True, description="key of a categorical question of that pool"),
    OpenApiParameter(
        "target", str, description="gold, majority or rater:<pseudonym> (default: gold if any, else majority)"
    ),
    OpenApiParameter("positive", str, description="the option counted as positive (default: see default_positive)"),
]


class ReportIndexApi(ResearcherApi):
    """What can be reported for a study: every (pool, question) and every (metric source, question)."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        agreement = [
            {
                "pool": {"id": row["pool"].pk, "name": row["pool"].name},
                "question": row["question"].key,
                "n_units": row["report"]["n_units"],
                "n_raters": row["report"]["n_raters"],
            }
            for row in agreement_overview(study=study)
        ]
        validity = [
            {"source": p["source"].key, "label": p["source"].label, "pool": p["pool"].pk, "question": p["question"].key}
            for p in validity_pairs(study=study)
        ]
        return Response({"study": study.slug, "agreement": agreement, "validity": validity})


class AgreementReportApi(ResearcherApi):
    """Point estimates, or the finished bootstrap for ``n_boot`` and ``seed`` when one was computed."""

    @extend_schema(parameters=BOOTSTRAP_PARAMETERS, responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str, pool_id: int, question: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        report, job = report_jobs.agreement_report_with_bootstrap(
            study=study, params=agreement_params_parse(pool_id=pool_id, question=question, query=request.query_params)
        )
        return Response({**report, "bootstrap_job": job.pk if job else None})


class ValidityReportApi(ResearcherApi):
    """Query: source, pool, question, and optionally target, positive, n_boot, seed."""

    @extend_schema(parameters=VALIDITY_PARAMETERS + BOOTSTRAP_PARAMETERS, responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        vp = validity_params_parse(study=study, query=request.query_params)
        n_boot, seed = bootstrap_params(request.query_params.get("n_boot"), request.query_params.get("seed"))
        report, job = report_jobs.validity_report_with_bootstrap(study=study, params=vp, n_boot=n_boot, seed=seed)
        return Response({**report, "bootstrap_job": job.pk if job else None})


ESTIMATE_PARAMETERS = [
    OpenApiParameter("pool", int, required=True, description="the pool whose gold or majority labels are the truth"),
    OpenApiParameter(
        "question", str, required=True, description="key of a binary, nominal or ordinal question about whole items"
    ),
    OpenApiParameter("run", int, required=True, description="the score run whose item-level values are the metric"),
    OpenApiParameter(
        "positive",
        str,
        description="the option counted as positive (for an ordinal question: that option or any later one; "
        "default: the first option of a binary or nominal question)",
    ),
    OpenApiParameter("invert", bool, description="use 1 − score (a score that is high where the label is negative)"),
    OpenApiParameter("alpha", str, enum=["0.1", "0.05", "0.01"], description="1 − the confidence (default 0.05)"),
    OpenApiParameter(
        "compare",
        int,
        description="a second score run of the study: the paired difference of the two systems' shares (items "
        "paired by their question text), in ``comparison``",
    ),
    OpenApiParameter(
        "half_width",
        str,
        description="planning's target half-width of the interval, 0.005 to 0.5 (default 0.05): labels needed "
        "with and without the metric, in ``plan``",
    ),
]


class EstimateReportApi(ResearcherApi):
    """The prediction-powered share of positive answers over a score run's items (PPI++, plain PPI and the
    classical interval), or ``valid: false`` with the ``refusal``; without parameters, the choices."""

    @extend_schema(parameters=ESTIMATE_PARAMETERS, responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        query = request.query_params
        if not any(query.get(name) for name in ("pool", "question", "run")):
            return Response({"study": study.slug, "choices": estimate_choices(study=study)})
        return Response(estimate_report(study=study, params=estimate_params_parse(study=study, query=query)))


SAMPLE_FIELDS = {
    "run": {"type": "integer", "description": "the score run whose items with an ok item-level value are drawn from"},
    "design": {"type": "string", "enum": ["uniform", "probability"]},
    "n": {"type": "integer", "description": "items to draw (uniform) or expected to be drawn (probability)"},
    "seed": {"type": "integer", "description": "seed of numpy's default_rng (default 0)"},
    "floor": {
        "type": "string",
        "enum": ["0.05", "0.1", "0.2", "0.5"],
        "description": "probability design: the lowest probability as a share of n/N (default 0.1)",
    },
}


class PoolSampleApi(ResearcherApi):
    """The pool's recorded sample (GET: ``sample`` is null when none was drawn); POST draws and records it,
    before the pool has handed out any item (409 otherwise, and for a second draw)."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str, pool_id: int) -> Response:
        study = get_study_for_researcher(request.user, slug)
        pool = get_pool_for_report(study, pool_id)
        return Response({"pool": pool.pk, "sample": pool_sample_info(pool=pool)})

    @extend_schema(
        request={
            "application/json": {"type": "object", "properties": SAMPLE_FIELDS, "required": ["run", "design", "n"]}
        },
        responses={201: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request, slug: str, pool_id: int) -> Response:
        study = get_study_for_researcher(request.user, slug)
        pool = get_pool_for_report(study, pool_id)
        pool_sample_draw(**pool_sample_parse(study=study, pool=pool, data=flat(request.data)), actor=request.user)
        return Response({"pool": pool.pk, "sample": pool_sample_info(pool=pool)}, status=201)
