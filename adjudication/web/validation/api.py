"""REST API of the validation studies: the same services and the same JSON as the pages' downloads.

One class per operation; each authorizes (annotators 403, strangers 404) and maps domain errors onto
their HTTP status. A refused creation answers 400 with the reason and the checks in ``details``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication.models import ValidationStudy
from adjudication.validation import checks as vc
from adjudication.validation.inputs import validation_checks_preview, validation_inputs_parse
from adjudication.validation.services import (
    get_validation_study_for_researcher,
    validation_study_as_dict,
    validation_study_create,
    validation_study_run,
)
from annotation.access import get_study_for_researcher
from concord.fields import IdField


class _ValidationApi(APIView):
    access_policy = "researcher"


class _Input(serializers.Serializer):
    name = serializers.CharField(required=False, allow_blank=True)
    template = serializers.CharField()
    target_pool = IdField()
    target_question = serializers.CharField()
    target_mode = serializers.CharField(required=False, allow_blank=True)
    positive = serializers.CharField(required=False, allow_blank=True)
    metric_run = IdField(required=False, allow_null=True)
    compare_run = IdField(required=False, allow_null=True)
    metric_pool = IdField(required=False, allow_null=True)
    metric_rater = serializers.CharField(required=False, allow_blank=True)
    n_boot = serializers.IntegerField(required=False)
    seed = serializers.IntegerField(required=False)
    k = serializers.IntegerField(required=False)
    run_anyway = serializers.BooleanField(required=False, default=False)
    override_reason = serializers.CharField(required=False, allow_blank=True, default="")


def _parsed(request: Request) -> dict[str, Any]:
    data = _Input(data=request.data)
    data.is_valid(raise_exception=True)
    return dict(data.validated_data)


class ValidationStudyListCreateApi(_ValidationApi):
    """GET the study's validation studies; POST one (refused with the reason when not independent,
    unless ``run_anyway`` is true — then every output carries ``not_independent`` and the stamp)."""

    @extend_schema(responses={200: {"type": "array", "items": {"type": "object"}}})
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        rows = ValidationStudy.objects.filter(study=study).select_related("study", "target_question")
        return Response([validation_study_as_dict(vs) for vs in rows])

    @extend_schema(request=_Input, responses={201: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT})
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = _parsed(request)
        inputs = validation_inputs_parse(study=study, data=data)
        vs = validation_study_create(
            study=study,
            actor=request.user,
            inputs=inputs,
            run_anyway=data["run_anyway"],
            override_reason=data["override_reason"],
        )
        return Response(validation_study_as_dict(vs), status=status.HTTP_201_CREATED)


class ValidationChecksApi(_ValidationApi):
    """POST the same body as a creation: the checks it would record, nothing written."""

    @extend_schema(request=_Input, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        inputs = validation_inputs_parse(study=study, data=_parsed(request))
        checks = validation_checks_preview(inputs=inputs)
        return Response(
            {"checks": checks, "blocking_failures": [c["key"] for c in vc.blocking_failures(checks)]}
        )


class ValidationStudyDetailApi(_ValidationApi):
    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, pk: int) -> Response:
        vs = get_validation_study_for_researcher(request.user, pk)
        return Response(validation_study_as_dict(vs))


class ValidationStudyRunApi(_ValidationApi):
    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT})
    def post(self, request: Request, pk: int) -> Response:
        vs = get_validation_study_for_researcher(request.user, pk)
        vs = validation_study_run(validation_study=vs, actor=request.user)
        return Response(validation_study_as_dict(vs))
