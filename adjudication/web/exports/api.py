"""REST API of the exports: request one, list them, follow a job (the file itself is downloaded from the page
route, ``adjudication:export-download``)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication import selectors
from adjudication.exports import services
from adjudication.exports.filters import ExportFilters
from adjudication.models import ExportJob
from annotation.access import get_study_for_researcher


class _JobOut(serializers.Serializer):
    id = serializers.IntegerField()
    study = serializers.CharField()
    format = serializers.CharField()
    status = serializers.CharField()
    n_done = serializers.IntegerField()
    n_total = serializers.IntegerField()
    progress = serializers.FloatField()
    error = serializers.CharField(allow_blank=True)
    size_bytes = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    download = serializers.CharField(allow_null=True)
    scores_download = serializers.CharField(allow_null=True)
    filters = serializers.DictField()


def _job(job: ExportJob) -> dict[str, Any]:
    return {
        "id": job.pk,
        "study": job.study.slug,
        "format": job.format,
        "status": job.status,
        "n_done": job.n_done,
        "n_total": job.n_total,
        "progress": job.progress,
        "error": job.error,
        "size_bytes": job.size_bytes,
        "created_at": job.created_at.isoformat(),
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "download": reverse("adjudication:export-download", args=[job.pk]) if job.status == "done" else None,
        "scores_download": (
            reverse("adjudication:export-download", args=[job.pk]) + "?part=scores"
            if job.status == "done" and job.format == "csv" else None
        ),
        "filters": job.filters or {},
    }


class ExportListCreateApi(APIView):
    access_policy = "researcher"

    class Input(serializers.Serializer):
        format = serializers.CharField()
        gold_only = serializers.BooleanField(required=False, default=False)
        pools = serializers.ListField(child=serializers.CharField(), required=False, default=list)
        questions = serializers.ListField(child=serializers.CharField(), required=False, default=list)

        class Meta:
            ref_name = "ExportRequestIn"

    @extend_schema(operation_id="adjudication_exports_list", responses=_JobOut(many=True))
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        return Response([_job(j) for j in study.export_jobs.select_related("study")[:100]])

    @extend_schema(operation_id="adjudication_export_request", request=Input, responses={202: _JobOut})
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        filters = ExportFilters(pools=tuple(sorted(set(v["pools"]))), questions=tuple(sorted(set(v["questions"]))),
                                gold_only=v["gold_only"])
        job = services.export_request(study_id=study.pk, fmt=v["format"], actor=request.user, filters=filters)
        return Response(_job(job), status=status.HTTP_202_ACCEPTED)


class ExportDetailApi(APIView):
    access_policy = "researcher"

    @extend_schema(operation_id="adjudication_export_read", responses=_JobOut)
    def get(self, request: Request, pk: int) -> Response:
        return Response(_job(selectors.get_export_for_researcher(request.user, pk)))
