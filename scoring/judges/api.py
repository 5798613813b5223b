"""REST API of the trained-judge registry: the same services and access rule as the pages."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import get_study_for_researcher
from concord.errors import ValidationFailed
from scoring.judges import selectors, services
from scoring.models import JudgeTask, JudgeTrainJob, TrainedJudge


class JudgeOutput(serializers.ModelSerializer):
    owner = serializers.SlugRelatedField(source="study", slug_field="slug", read_only=True)
    source = serializers.CharField(source="source_label", read_only=True)
    trained_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    class_balance = serializers.SerializerMethodField()
    retired = serializers.BooleanField(source="is_retired", read_only=True)

    class Meta:
        model = TrainedJudge
        fields = ["id", "name", "owner", "task", "source_kind", "source", "source_question", "source_file_sha256",
                  "n", "n_positive", "class_balance", "model_type", "feature_set", "embedding_identity", "data_hash",
                  "cv", "comparison", "trained_by", "trained_at", "retired", "retired_at"]

    def get_class_balance(self, judge: TrainedJudge) -> float:
        return judge.n_positive / judge.n if judge.n else 0.0


class JobOutput(serializers.ModelSerializer):
    judge = serializers.SlugRelatedField(slug_field="name", read_only=True)
    progress = serializers.FloatField(read_only=True)

    class Meta:
        model = JudgeTrainJob
        fields = ["id", "name", "question_key", "task", "status", "n_done", "n_total", "progress", "error", "judge",
                  "created_at", "finished_at"]


class JudgeListApi(APIView):
    access_policy = "researcher"

    class Input(serializers.Serializer):
        name = serializers.CharField()
        question = serializers.CharField()
        task = serializers.ChoiceField(choices=JudgeTask.choices)
        positive = serializers.ListField(child=serializers.CharField(), required=False, default=list)
        exclude = serializers.ListField(child=serializers.CharField(), required=False, default=list)
        options = serializers.DictField(required=False, default=dict)

        class Meta:
            ref_name = "JudgeTrainIn"

    @extend_schema(operation_id="scoring_judges_list", responses=JudgeOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        return Response(JudgeOutput(selectors.judges_for_study(study), many=True).data)

    @extend_schema(operation_id="scoring_judge_train", request=Input, responses={202: JobOutput})
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = self.Input(data=request.data)
        if not data.is_valid():
            raise ValidationFailed("Invalid training request.", details=data.errors)
        args: dict[str, Any] = dict(data.validated_data)
        job = services.judge_train_job_start(
            study=study, question_key=args["question"], task=args["task"], name=args["name"], actor=request.user,
            positive=args["positive"], exclude=args["exclude"], options=args["options"],
        )
        return Response(JobOutput(job).data, status=status.HTTP_202_ACCEPTED)


class JudgeJobApi(APIView):
    access_policy = "researcher"

    @extend_schema(operation_id="scoring_judge_job", responses=JobOutput)
    def get(self, request: Request, slug: str, job_id: int) -> Response:
        study = get_study_for_researcher(request.user, slug)
        return Response(JobOutput(selectors.get_train_job_for_researcher(request.user, study, job_id)).data)


class JudgeDetailApi(APIView):
    access_policy = "researcher"

    @extend_schema(operation_id="scoring_judge_detail", responses=JudgeOutput)
    def get(self, request: Request, slug: str, judge_id: int) -> Response:
        study = get_study_for_researcher(request.user, slug)
        return Response(JudgeOutput(selectors.get_judge_for_researcher(request.user, study, judge_id)).data)


class JudgeRetireApi(APIView):
    access_policy = "researcher"

    @extend_schema(operation_id="scoring_judge_retire", request=None, responses=JudgeOutput)
    def post(self, request: Request, slug: str, judge_id: int) -> Response:
        study = get_study_for_researcher(request.user, slug)
        judge = selectors.get_judge_for_researcher(request.user, study, judge_id)
        if judge.study_id != study.pk:
            raise ValidationFailed("only the owning study retires a judge")
        return Response(JudgeOutput(services.judge_retire(judge=judge, actor=request.user)).data)


class JudgeShareApi(APIView):
    access_policy = "researcher"

    class Input(serializers.Serializer):
        study = serializers.CharField()

        class Meta:
            ref_name = "JudgeShareIn"

    @extend_schema(operation_id="scoring_judge_share", request=Input, responses=JudgeOutput)
    def post(self, request: Request, slug: str, judge_id: int) -> Response:
        study = get_study_for_researcher(request.user, slug)
        judge = selectors.get_judge_for_researcher(request.user, study, judge_id)
        if judge.study_id != study.pk:
            raise ValidationFailed("only the owning study shares a judge")
        data = self.Input(data=request.data)
        if not data.is_valid():
            raise ValidationFailed("Invalid share request.", details=data.errors)
        services.judge_share(judge=judge, target_slug=data.validated_data["study"], actor=request.user)
        return Response(JudgeOutput(judge).data)
