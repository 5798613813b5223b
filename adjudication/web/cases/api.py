"""REST API of the cases, proposed aspects, consensus rules and human measures: one class per operation, the same
selectors and services as the pages."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication import selectors, services
from adjudication.models import CaseStatus, GoldLabel
from adjudication.web.cases.views import parse_decision
from annotation.access import get_study_for_adjudicator
from concord.errors import NotFound
from concord.params import MAX_ID


def _gold(g: GoldLabel) -> dict[str, Any]:
    return {
        "version": g.version,
        "is_current": g.is_current,
        "value": g.value,
        "source": g.source,
        "adjudicator": g.adjudicator.get_username() if g.adjudicator else (g.adjudicator_name or None),
        "rationale": g.rationale,
        "confidence": g.confidence,
        "guideline_gap": g.guideline_gap,
        "created_at": g.created_at.isoformat(),
    }


class _GoldOut(serializers.Serializer):
    version = serializers.IntegerField()
    is_current = serializers.BooleanField()
    value = serializers.JSONField(allow_null=True)
    source = serializers.CharField()
    adjudicator = serializers.CharField(allow_null=True)
    rationale = serializers.CharField(allow_blank=True)
    confidence = serializers.IntegerField(allow_null=True)
    guideline_gap = serializers.BooleanField()
    created_at = serializers.DateTimeField()


class CaseListApi(APIView):
    access_policy = "adjudicator"

    @extend_schema(
        operation_id="adjudication_cases_list",
        parameters=[OpenApiParameter("status", str, required=False, enum=[*CaseStatus.values, "all"])],
        responses=inline_serializer(
            "CaseRowOut",
            {
                "id": serializers.IntegerField(),
                "item": serializers.CharField(),
                "pool": serializers.CharField(),
                "question": serializers.CharField(),
                "unit": serializers.CharField(),
                "status": serializers.CharField(),
                "n_labels": serializers.IntegerField(),
                "opened_at": serializers.DateTimeField(),
            },
            many=True,
        ),
    )
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_adjudicator(request.user, slug)
        wanted = request.query_params.get("status", CaseStatus.OPEN)
        cases = selectors.case_queue(study=study, status="" if wanted == "all" else wanted)[:1000]
        return Response(
            [
                {
                    "id": c.pk,
                    "item": c.item.external_id,
                    "pool": c.pool.name,
                    "question": c.question.key,
                    "unit": c.unit_key,
                    "status": c.status,
                    "n_labels": c.n_labels,
                    "opened_at": c.opened_at.isoformat(),
                }
                for c in cases
            ]
        )


class CaseDetailApi(APIView):
    access_policy = "adjudicator"

    @extend_schema(
        operation_id="adjudication_case_read",
        responses=inline_serializer(
            "CaseDetailOut",
            {
                "id": serializers.IntegerField(),
                "status": serializers.CharField(),
                "item": serializers.CharField(),
                "pool": serializers.CharField(),
                "question": serializers.CharField(),
                "unit": serializers.CharField(),
                "unit_description": serializers.CharField(allow_blank=True),
                "answers": inline_serializer(
                    "CaseAnswerOut",
                    {
                        "annotator": serializers.CharField(),
                        "value": serializers.JSONField(allow_null=True),
                        "answered": serializers.BooleanField(),
                        "active_seconds": serializers.FloatField(),
                    },
                    many=True,
                ),
                "gold_history": _GoldOut(many=True),
                "current_version": serializers.IntegerField(allow_null=True),
                # Only where the study shows adjudicators the system scores.
                "scores": inline_serializer(
                    "CaseScoreOut",
                    {
                        "metric": serializers.CharField(),
                        "metric_version": serializers.CharField(),
                        "backend": serializers.CharField(),
                        "unit": serializers.CharField(),
                        "value": serializers.FloatField(allow_null=True),
                        "state": serializers.CharField(),
                    },
                    many=True,
                    required=False,
                ),
            },
        ),
    )
    def get(self, request: Request, pk: int) -> Response:
        case = selectors.get_case_for_adjudicator(request.user, pk)
        d = selectors.case_detail(case=case)
        body: dict[str, Any] = {
            "id": case.pk,
            "status": case.status,
            "item": d.item.external_id,
            "pool": case.pool.name,
            "question": d.question.key,
            "unit": case.unit_key,
            "unit_description": d.unit.description,
            "answers": [
                {"annotator": a.pseudonym, "value": a.value, "answered": a.answered, "active_seconds": a.active_seconds}
                for a in d.answers
            ],
            "gold_history": [_gold(g) for g in d.gold_history],
            "current_version": d.current_version,
        }
        if d.scores_shown:
            body["scores"] = [
                {
                    "metric": s.run.metric,
                    "metric_version": s.run.metric_version,
                    "backend": s.run.backend,
                    "unit": s.unit_key,
                    "value": s.value,
                    "state": s.state,
                }
                for s in d.scores
            ]
        return Response(body)


class CaseDecideApi(APIView):
    """POST {"value": …, "rationale": "", "confidence": 1-5, "guideline_gap": false,
    "unresolved": false, "expected_version": n, "revise_reason": ""} → the new gold version (409 when stale,
    and when the case is already decided and no revise_reason says why it changes)."""

    access_policy = "adjudicator"

    @extend_schema(
        operation_id="adjudication_case_decide",
        request=inline_serializer(
            "CaseDecisionIn",
            {
                "value": serializers.JSONField(required=False, allow_null=True),
                "rationale": serializers.CharField(required=False, allow_blank=True),
                "confidence": serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=5),
                "guideline_gap": serializers.BooleanField(required=False),
                "unresolved": serializers.BooleanField(required=False),
                "expected_version": serializers.IntegerField(
                    required=False, allow_null=True, min_value=0, max_value=MAX_ID
                ),
                "revise_reason": serializers.CharField(
                    required=False, allow_blank=True,
                    help_text="Required to decide a case that is already decided: why the gold changes.",
                ),
            },
        ),
        responses={201: _GoldOut},
    )
    def post(self, request: Request, pk: int) -> Response:
        case = selectors.get_case_for_adjudicator(request.user, pk)
        gold = services.case_resolve(
            case_id=case.pk, actor=request.user, **parse_decision(request.data, case.question.kind)
        )
        return Response(_gold(gold), status=status.HTTP_201_CREATED)


class AspectDecideApi(APIView):
    access_policy = "adjudicator"

    class Input(serializers.Serializer):
        decision = serializers.ChoiceField(choices=["accept", "reject"])

        class Meta:
            ref_name = "AspectDecisionIn"

    @extend_schema(
        operation_id="adjudication_aspect_decide",
        request=Input,
        responses=inline_serializer(
            "AspectDecisionOut",
            {
                "id": serializers.IntegerField(),
                "status": serializers.CharField(),
                "version": serializers.IntegerField(),
            },
        ),
    )
    def post(self, request: Request, pk: int) -> Response:
        aspect = selectors.get_aspect_for_adjudicator(request.user, pk)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        aspect = services.aspect_decide(
            aspect_id=aspect.pk, actor=request.user, accept=data.validated_data["decision"] == "accept"
        )
        return Response({"id": aspect.pk, "status": aspect.status, "version": aspect.version})


class HumanMeasureApi(APIView):
    """Per-item values of a human measure for one rater (pseudonym) or ``gold`` (researchers)."""

    access_policy = "researcher"

    @extend_schema(
        operation_id="adjudication_human_measure",
        parameters=[
            OpenApiParameter("rater", str, required=False, description="a pool pseudonym, or gold (the default)")
        ],
        responses=inline_serializer(
            "HumanMeasureOut",
            {
                "measure": serializers.CharField(),
                "rater": serializers.CharField(),
                "values": serializers.DictField(child=serializers.FloatField()),
                "undefined": serializers.DictField(child=serializers.CharField()),
            },
        ),
    )
    def get(self, request: Request, pk: int, measure: str) -> Response:
        pool = selectors.get_pool_for_researcher(request.user, pk)
        result = selectors.human_measure_values(
            pool_id=pool.pk, measure=measure, rater=request.query_params.get("rater", "gold")
        )
        return Response(
            {"measure": result.measure, "rater": result.rater, "values": result.values, "undefined": result.undefined}
        )


class ConsensusRuleApi(APIView):
    """POST {"question": key, "majority": true|false}: may a strict majority (k ≥ 3) make gold?"""

    access_policy = "researcher"

    class Input(serializers.Serializer):
        question = serializers.CharField()
        majority = serializers.BooleanField()

        class Meta:
            ref_name = "ConsensusRuleIn"

    @extend_schema(
        operation_id="adjudication_consensus_rule_set",
        request=Input,
        responses=inline_serializer(
            "ConsensusRuleOut",
            {
                "pool": serializers.CharField(),
                "question": serializers.CharField(),
                "majority": serializers.BooleanField(),
            },
        ),
    )
    def post(self, request: Request, pk: int) -> Response:
        pool = selectors.get_pool_for_researcher(request.user, pk)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        question = pool.questions.filter(key=data.validated_data["question"]).first()
        if question is None:
            raise NotFound("the pool answers no such question")
        rule = services.consensus_rule_set(
            pool_id=pool.pk, question_id=question.pk, majority=data.validated_data["majority"], actor=request.user
        )
        return Response({"pool": pool.name, "question": question.key, "majority": rule.majority})
