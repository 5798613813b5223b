"""REST API of the per-annotator quality statistics: the page's figures as JSON (annotators 403, strangers
and other studies' pools 404)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from adjudication.analysis.access import get_pool_for_report
from adjudication.analysis.quality import pool_quality
from adjudication.web.common import ResearcherApi
from adjudication.web.quality.views import window_param
from annotation.access import get_study_for_researcher


class PoolQualityApi(ResearcherApi):
    """Query: window (control judgements per drift window, default 10)."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, slug: str, pool_id: int) -> Response:
        study = get_study_for_researcher(request.user, slug)
        pool = get_pool_for_report(study, pool_id)
        report = pool_quality(pool=pool, window=window_param(request.query_params.get("window")))
        for row in report["annotators"]:
            row.pop("user_id")  # pseudonyms only, as every report
        return Response(report)
