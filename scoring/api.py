"""REST API for score runs and knowledge bases: one class per operation, the same services as the pages."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import get_study_for_researcher
from concord import pagination
from concord.errors import ValidationFailed
from concord.fields import IdField, WholeNumberField
from concord.parsers import JSONParser
from scoring import selectors, services
from scoring.models import KnowledgeBase, ScoreRun, ScoreState


class RunOutput(serializers.ModelSerializer):
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    progress = serializers.SerializerMethodField()

    class Meta:
        model = ScoreRun
        fields = [
            "id",
            "study",
            "metric",
            "metric_version",
            "backend",
            "model_identity",
            "parameters",
            "backend_options",
            "knowledge_base",
            "retrieval_alpha",
            "batch_size",
            "status",
            "n_total",
            "n_done",
            "n_failed",
            "llm_requests",
            "llm_tokens",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "progress",
        ]

    def get_progress(self, run: ScoreRun) -> dict[str, Any]:
        p = selectors.run_progress(run)
        return {
            "percent": p.percent,
            "eta_seconds": p.eta.total_seconds() if p.eta is not None else None,
            "items_per_second": p.items_per_second,
        }


class RunStartApi(APIView):
    access_policy = "researcher"

    class Input(serializers.Serializer):
        metric = serializers.CharField()
        backend = serializers.CharField()
        parameters = serializers.DictField(required=False, default=dict)
        backend_options = serializers.DictField(required=False, default=dict)
        knowledge_base = IdField(required=False, allow_null=True, default=None)
        retrieval_alpha = serializers.FloatField(required=False, default=0.5)
        batch_size = WholeNumberField(required=False, allow_null=True, default=None, min_value=1, max_value=10_000)

        class Meta:
            ref_name = "RunStartIn"

    @extend_schema(operation_id="scoring_run_start", request=Input, responses={201: RunOutput})
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = self.Input(data=request.data)
        if not data.is_valid():
            raise ValidationFailed("Invalid run request.", details=data.errors)
        # The knowledge base goes by its id: the service looks it up in the study and refuses an unavailable
        # backend, as it does for the console form.
        run = services.score_run_start(study=study, actor=request.user, **data.validated_data)
        return Response(RunOutput(run).data, status=status.HTTP_201_CREATED)


class RunStatusApi(APIView):
    access_policy = "researcher"

    @extend_schema(operation_id="scoring_run_status", responses=RunOutput)
    def get(self, request: Request, run_id: int) -> Response:
        run = selectors.get_run_for_researcher(request.user, run_id)
        return Response(RunOutput(run).data)


class RunCancelApi(APIView):
    access_policy = "researcher"

    @extend_schema(operation_id="scoring_run_cancel", request=None, responses=RunOutput)
    def post(self, request: Request, run_id: int) -> Response:
        run = selectors.get_run_for_researcher(request.user, run_id)
        run = services.score_run_cancel(run=run, actor=request.user)
        return Response(RunOutput(run).data)


class RunScoresApi(APIView):
    access_policy = "researcher"

    class Output(serializers.Serializer):
        item = serializers.CharField(source="item.external_id")
        unit_key = serializers.CharField()
        value = serializers.FloatField(allow_null=True)
        state = serializers.CharField()
        details = serializers.JSONField()
        computed_at = serializers.DateTimeField()

    @extend_schema(
        operation_id="scoring_run_scores",
        parameters=[
            OpenApiParameter("state", str, enum=list(ScoreState.values), required=False),
            *pagination.schema_parameters(),
        ],
        responses=inline_serializer(
            "PaginatedScores",
            {
                "count": serializers.IntegerField(),
                "next": serializers.URLField(allow_null=True),
                "previous": serializers.URLField(allow_null=True),
                "results": Output(many=True),
            },
        ),
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = selectors.get_run_for_researcher(request.user, run_id)
        scores = selectors.run_scores(run)
        state = request.query_params.get("state")
        if state:
            if state not in ScoreState.values:
                raise ValidationFailed(f"state must be one of {ScoreState.values}")
            scores = scores.filter(state=state)
        paginator = pagination.LimitOffsetPagination()
        page = paginator.paginate_queryset(scores, request, view=self)
        return paginator.get_paginated_response(self.Output(page, many=True).data)


class KnowledgeBaseOutput(serializers.ModelSerializer):
    n_passages = serializers.SerializerMethodField()

    class Meta:
        model = KnowledgeBase
        fields = ["id", "name", "chunk_size", "chunk_overlap", "embedding_model", "version", "created_at", "n_passages"]

    def get_n_passages(self, kb: KnowledgeBase) -> int:
        return kb.passages.count()


class KnowledgeBaseCreateApi(APIView):
    access_policy = "researcher"

    class Input(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        chunk_size = WholeNumberField(required=False, default=200, min_value=1, max_value=10_000)
        chunk_overlap = WholeNumberField(required=False, default=40, min_value=0, max_value=10_000)

        class Meta:
            ref_name = "KnowledgeBaseCreateIn"

    @extend_schema(operation_id="scoring_knowledge_base_create", request=Input, responses={201: KnowledgeBaseOutput})
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = self.Input(data=request.data)
        if not data.is_valid():
            raise ValidationFailed("Invalid knowledge base.", details=data.errors)
        kb = services.knowledge_base_create(study=study, actor=request.user, **data.validated_data)
        return Response(KnowledgeBaseOutput(kb).data, status=status.HTTP_201_CREATED)


class KnowledgeBaseUploadApi(APIView):
    """A multipart ``file`` (.txt or .jsonl), or JSON ``{"filename": ..., "content": ...}``."""

    access_policy = "researcher"
    parser_classes = [MultiPartParser, FormParser, JSONParser]

    @extend_schema(
        operation_id="scoring_knowledge_base_upload",
        request={
            "multipart/form-data": inline_serializer("KnowledgeBaseFileIn", {"file": serializers.FileField()}),
            "application/json": inline_serializer(
                "KnowledgeBaseTextIn",
                {"filename": serializers.CharField(required=False), "content": serializers.CharField()},
            ),
        },
        responses={
            201: inline_serializer(
                "KnowledgeBaseUploadOut",
                {
                    "passages_added": serializers.IntegerField(),
                    "knowledge_base": KnowledgeBaseOutput(),
                },
            )
        },
    )
    def post(self, request: Request, kb_id: int) -> Response:
        kb = selectors.get_knowledge_base_for_researcher(request.user, kb_id)
        upload = request.FILES.get("file")
        if upload is not None:
            filename, content = upload.name, upload.read(services.KB_MAX_BYTES + 1)
        else:
            filename = str(request.data.get("filename") or "document.txt")
            raw = request.data.get("content")
            if not isinstance(raw, str):
                raise ValidationFailed("Send a multipart 'file', or JSON with 'filename' and 'content'.")
            content = raw.encode()
        added = services.knowledge_base_add_documents(
            knowledge_base=kb, filename=filename, content=content, actor=request.user
        )
        kb.refresh_from_db()
        return Response(
            {"passages_added": added, "knowledge_base": KnowledgeBaseOutput(kb).data}, status=status.HTTP_201_CREATED
        )
