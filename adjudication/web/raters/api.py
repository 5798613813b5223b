"""REST API of models as raters, backend comparison and outcome prediction: the same services and the
same JSON as the pages' downloads. One class per operation, each with ``access_policy = "researcher"``
(annotators 403, strangers 404)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from adjudication import report_jobs
from adjudication.analysis import model_comparison, raters
from adjudication.models import ReportJobStatus
from adjudication.web.common import ResearcherApi
from annotation.access import get_study_for_researcher


class RaterChoicesApi(ResearcherApi):
    """Score runs of the study and the (pool, question) pairs of the same unit scope each could rate."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        return Response(
            {
                "study": study.slug,
                "runs": [
                    {
                        "run": c["run"].pk,
                        "metric": c["run"].metric,
                        "backend": c["run"].backend,
                        "questions": [{"pool": p.pk, "question": q.key, "scope": q.scope} for p, q in c["pairs"]],
                    }
                    for c in raters.rater_choices(study=study)
                ],
            }
        )


class RaterReportApi(ResearcherApi):
    """Query: run, pool, question, field (value | details.<path>), threshold, mapping (cat=option,…),
    target (gold | majority), n_boot and seed of a finished bootstrap to return."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        report, job, _ = report_jobs.rater_report_current(study=study, query=request.query_params)
        return Response({**report, "bootstrap_job": job.pk if job else None})


class ComparisonApi(ResearcherApi):
    """Query: runs (ids of one metric, comma-separated or repeated), pool, question, target, positive,
    threshold."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        params = model_comparison.comparison_params_parse(study=study, query=request.query_params)
        return Response(model_comparison.comparison_report(study=study, params=params))


class OutcomeApi(ResearcherApi):
    """Query: pool, question, features, target, models, n_splits, n_repeats, seed, n_boot, subgroup.
    The finished cross-validation for exactly these parameters, or its job's state."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        params, job = report_jobs.outcome_current(study=study, query=request.query_params)
        done = job is not None and job.status == ReportJobStatus.DONE
        return Response(
            {
                "params": params.as_dict(),
                "job": report_jobs.job_as_dict(job) if job else None,
                "result": job.result if done else None,
            }
        )
