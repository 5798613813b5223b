"""REST API of the annotator workspace: the same services as the htmx pages, for scripts.

One class per operation, nested input/output serializers, one access helper per resource (404 for
anything that is not the caller's own). Token authentication (``Authorization: Token …``) works
alongside the session. Errors, the domain's (``concord.errors``) and DRF's alike, are left to the project's one
API error handler (``concord.api_errors``), which answers each with ``{"error", "detail", "details"?}``; a 409
on a label carries the newer value, whether you set it (never who else did) and when.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils import json as drf_json
from rest_framework.views import APIView

from annotation import labels, quality, selectors, services
from annotation.accounts import tokens
from annotation.labels.questions import get_pool_question
from annotation.mfa.models import TokenOrigin
from annotation.mfa.signin import mfa_applies
from annotation.models import Assignment, AssignmentStatus, ExposureKind, Importance
from annotation.workspace import Workspace
from concord.api_errors import ErrorSerializer
from concord.errors import Forbidden, NotFound, ValidationFailed
from concord.fields import JSONField, WholeNumberField
from concord.params import MAX_BIGINT, parse_id


class ConflictDetailsSerializer(serializers.Serializer):
    question = serializers.CharField()
    unit_key = serializers.CharField()
    value = serializers.JSONField(allow_null=True, help_text="The newer value now stored.")
    version = serializers.IntegerField()
    updated_by = serializers.CharField(
        allow_null=True,
        help_text='"you" when your own earlier save set the newer value (another tab, window or script); null '
        "otherwise. No other person is ever named.",
    )
    updated_at = serializers.DateTimeField(allow_null=True)
    your_value = serializers.JSONField(allow_null=True, help_text="The value you tried to save (not stored).")


class ConflictSerializer(ErrorSerializer):
    details = ConflictDetailsSerializer()


class WorkspaceApi(APIView):
    """Base of the workspace API classes: annotator policy, domain errors mapped once, and exempt
    from the site's login-required middleware because DRF authenticates (session or token)."""

    access_policy = "annotator"

    @classmethod
    def as_view(cls, **initkwargs: Any):
        view = super().as_view(**initkwargs)
        view.login_required = False
        return view


# --- Assignments -------------------------------------------------------------------------------


class AssignmentOutput(serializers.ModelSerializer):
    """No external item id: researchers' ids often encode the system (``gpt4-017``), which a study
    blind to systems must not reveal; the item id is enough to work with."""

    pool_name = serializers.CharField(source="pool.name")
    study = serializers.IntegerField(source="pool.study_id")

    class Meta:
        model = Assignment
        fields = ["id", "pool", "pool_name", "study", "item", "status", "order_key",
                  "reserved_until", "started_at", "submitted_at", "active_seconds"]


class AssignmentListApi(WorkspaceApi, ListAPIView):
    """My assignments, in my queue order (filter with ?pool= and ?status=)."""

    serializer_class = AssignmentOutput

    def get_queryset(self):
        queryset = selectors.annotator_assignments(user=self.request.user)
        pool = self.request.query_params.get("pool")
        if pool:
            pool_id = parse_id(pool)
            if pool_id is None:
                raise ValidationFailed("pool must be a pool id")
            queryset = queryset.filter(pool_id=pool_id)
        wanted = self.request.query_params.get("status")
        if wanted:
            if wanted not in AssignmentStatus.values:
                raise ValidationFailed(f"status must be one of {', '.join(AssignmentStatus.values)}")
            queryset = queryset.filter(status=wanted)
        return queryset

    @extend_schema(parameters=[
        OpenApiParameter("pool", int, description="only this pool"),
        OpenApiParameter("status", str, enum=AssignmentStatus.values),
    ])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class PoolNextApi(WorkspaceApi):
    @extend_schema(
        request=None,
        responses={
            200: AssignmentOutput, 204: OpenApiResponse(description="Nothing left in this pool."), 404: ErrorSerializer
        },
        summary="Reserve my next item in a pool",
    )
    def post(self, request: Request, pool_id: int) -> Response:
        pool = selectors.get_pool_for_annotator(request.user, pool_id)
        assignment = services.assignment_reserve_next(pool=pool, annotator=request.user)
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(AssignmentOutput(assignment).data)


# --- The item as the annotator may see it ----------------------------------------------------


class QuestionOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    key = serializers.CharField()
    scope = serializers.CharField()
    kind = serializers.CharField()
    prompt = serializers.CharField()
    help_text = serializers.CharField()
    options = serializers.JSONField()
    condition = serializers.JSONField()
    required = serializers.BooleanField()
    min_value = serializers.FloatField(allow_null=True)
    max_value = serializers.FloatField(allow_null=True)


class AnswerOutput(serializers.Serializer):
    question = serializers.CharField(source="question.key")
    unit_key = serializers.CharField()
    value = serializers.JSONField(allow_null=True)
    version = serializers.IntegerField(help_text="Send this as base_version when changing the answer; 0 = none yet.")
    applicable = serializers.BooleanField(help_text="False when the question's condition does not hold for this unit.")


class UnitOutput(serializers.Serializer):
    unit_key = serializers.CharField(source="key")
    kind = serializers.CharField()
    number = serializers.IntegerField()
    text = serializers.CharField()


class ProposalOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    text = serializers.CharField()
    importance = serializers.CharField()
    status = serializers.CharField()


class SourceSentenceOutput(serializers.Serializer):
    index = serializers.IntegerField()
    text = serializers.CharField()


class OtherLabelOutput(serializers.Serializer):
    pseudonym = serializers.CharField()
    question = serializers.CharField(source="question_key")
    unit_key = serializers.CharField()
    value = serializers.JSONField()


class WorkspaceOutput(serializers.Serializer):
    assignment = AssignmentOutput()
    question = serializers.CharField(source="item_question", help_text="The patient's question.")
    answer = serializers.CharField()
    source = serializers.CharField()
    system = serializers.CharField(allow_null=True, help_text="Null when the study is blind to systems.")
    metadata = serializers.JSONField(help_text="Only the item metadata keys the researcher marked visible.")
    sentences = UnitOutput(many=True)
    source_sentences = serializers.SerializerMethodField()
    chunks = UnitOutput(many=True)
    aspects = UnitOutput(many=True)
    own_proposals = ProposalOutput(many=True)
    questions = serializers.SerializerMethodField()
    answers = serializers.SerializerMethodField()
    others = OtherLabelOutput(many=True, help_text="Calibration pools only, after you submitted.")

    @extend_schema_field(SourceSentenceOutput(many=True))
    def get_source_sentences(self, ws: Workspace) -> list[dict[str, Any]]:
        return [{"index": i, "text": t} for i, t in ws.source_sentences]

    @extend_schema_field(QuestionOutput(many=True))
    def get_questions(self, ws: Workspace) -> list[dict[str, Any]]:
        return QuestionOutput(list(ws.pool.questions.all()), many=True).data

    @extend_schema_field(AnswerOutput(many=True))
    def get_answers(self, ws: Workspace) -> list[dict[str, Any]]:
        return AnswerOutput([s for u in ws.units for s in u.questions], many=True).data


class AssignmentDetailApi(WorkspaceApi):
    @extend_schema(responses={200: WorkspaceOutput, 404: ErrorSerializer}, summary="One of my items, blinded")
    def get(self, request: Request, pk: int) -> Response:
        assignment = selectors.get_assignment_for_annotator(request.user, pk, with_item=True)
        # Built and recorded in one step that a reopening cannot interleave with (services.assignment_reopen).
        workspace = services.assignment_workspace_shown(assignment=assignment, user=request.user, kind=ExposureKind.API)
        return Response(WorkspaceOutput(workspace).data)


# --- Labels ------------------------------------------------------------------------------------


class LabelOutput(serializers.Serializer):
    question = serializers.CharField(source="question.key")
    unit_key = serializers.CharField()
    value = serializers.JSONField(allow_null=True)
    version = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


class LabelInput(serializers.Serializer):
    question = serializers.CharField(help_text="The question's key (or id).")
    unit_key = serializers.CharField(help_text="item, s:<index>, c:<rank> or a:<aspect id>.")
    value = JSONField(allow_null=True, help_text="Null clears the answer.")
    base_version = WholeNumberField(
        min_value=0, max_value=MAX_BIGINT, help_text="The version you last saw; 0 when there was no answer."
    )


def _own_assignment(request: Request, pk: int) -> Assignment:
    """The caller's assignment ``pk`` (404 otherwise): as token authentication already read it, or read now."""
    assignment = tokens.token_assignment(request, pk)
    if assignment is tokens.NOT_LOOKED_UP:
        return selectors.get_assignment_for_annotator(request.user, pk)
    if assignment is None:
        raise NotFound("No such assignment.")
    quality.ensure_qualified(assignment)
    return assignment


class LabelApi(WorkspaceApi):
    # A save authenticated by token reads the token, the person and this assignment in one statement.
    assignment_from_token = True

    @extend_schema(responses={200: LabelOutput(many=True), 404: ErrorSerializer}, summary="My answers on one item")
    def get(self, request: Request, pk: int) -> Response:
        assignment = _own_assignment(request, pk)
        return Response(LabelOutput(selectors.assignment_labels(assignment=assignment), many=True).data)

    @extend_schema(
        request=LabelInput,
        responses={200: LabelOutput, 400: ErrorSerializer, 404: ErrorSerializer, 409: ConflictSerializer},
        summary="Save one answer (409 when based on an old version)",
    )
    def put(self, request: Request, pk: int) -> Response:
        assignment = _own_assignment(request, pk)
        data = label_input(request.data)
        question = get_pool_question(assignment.pool, data["question"])
        label = labels.label_save(
            assignment=assignment, question=question, unit_key=data["unit_key"],
            value=data["value"], base_version=data["base_version"], actor=request.user,
        )
        return Response(label_output(label, question.key))


# The most frequent request's input and output without building a serializer (its fields are deep-copied per
# instance: about 400 function calls a save). What they accept and answer is LabelInput's and LabelOutput's,
# which tests/annotation/test_api_label_io.py checks on generated bodies.
_UPDATED_AT = LabelOutput().fields["updated_at"]
_BIGINT_MAX = MAX_BIGINT


def _plain_text(value: Any) -> bool:
    """A string that LabelInput's CharField keeps unchanged: not blank, no surrounding white space (it
    trims), no NUL or surrogate (it refuses them), nothing else unprintable."""
    return type(value) is str and value != "" and value.isprintable() and value == value.strip()


def label_input(data: Any) -> dict[str, Any]:
    """LabelInput's validated data of a request body. A well-formed body is taken as it is; any other goes
    through LabelInput, whose errors are the answer (400)."""
    if type(data) is dict and "value" in data:
        question, unit_key, base = data.get("question"), data.get("unit_key"), data.get("base_version")
        if _plain_text(question) and _plain_text(unit_key) and type(base) is int and 0 <= base <= _BIGINT_MAX:
            try:
                drf_json.dumps(data["value"])  # LabelInput's JSONField check: no NaN or infinity
            except (TypeError, ValueError):
                pass
            else:
                return {"question": question, "unit_key": unit_key, "value": data["value"], "base_version": base}
    serializer = LabelInput(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def label_output(label: Any, question_key: str) -> dict[str, Any]:
    """``LabelOutput`` of a label of the question ``question_key``."""
    return {
        "question": question_key, "unit_key": label.unit_key, "value": label.value, "version": label.version,
        "updated_at": _UPDATED_AT.to_representation(label.updated_at),
    }


# --- Submit, skip, proposals, time ----------------------------------------------------------


class SubmitApi(WorkspaceApi):
    @extend_schema(
        request=None,
        responses={
            200: AssignmentOutput,
            400: OpenApiResponse(ErrorSerializer, description="details: the missing answers"),
            404: ErrorSerializer,
        },
        summary="Submit an item (idempotent)",
    )
    def post(self, request: Request, pk: int) -> Response:
        assignment = selectors.get_assignment_for_annotator(request.user, pk)
        submitted = services.assignment_submit(assignment=assignment, actor=request.user)
        return Response(AssignmentOutput(submitted).data)


class SkipApi(WorkspaceApi):
    class SkipInput(serializers.Serializer):
        reason = serializers.CharField(max_length=2000)

    @extend_schema(
        request=SkipInput, responses={200: AssignmentOutput, 400: ErrorSerializer, 404: ErrorSerializer},
        summary="Skip an item with a reason",
    )
    def post(self, request: Request, pk: int) -> Response:
        assignment = selectors.get_assignment_for_annotator(request.user, pk)
        reason = str(request.data.get("reason", ""))
        skipped = services.assignment_skip(assignment=assignment, actor=request.user, reason=reason)
        return Response(AssignmentOutput(skipped).data)


class ReopenApi(WorkspaceApi):
    @extend_schema(
        request=None, responses={200: AssignmentOutput, 400: ErrorSerializer, 404: ErrorSerializer},
        summary="Reopen an item I submitted (where the pool allows it; recorded)",
    )
    def post(self, request: Request, pk: int) -> Response:
        assignment = selectors.get_assignment_for_annotator(request.user, pk)
        reopened = services.assignment_reopen(assignment=assignment, actor=request.user)
        return Response(AssignmentOutput(reopened).data)


class UndoApi(WorkspaceApi):
    class UndoOutput(serializers.Serializer):
        question = serializers.CharField()
        unit_key = serializers.CharField()
        value = serializers.JSONField(allow_null=True, help_text="The value restored (a new version).")

    @extend_schema(
        request=None, responses={200: UndoOutput(many=True), 400: ErrorSerializer, 404: ErrorSerializer},
        summary="Undo my last change on an open item (kept in the history as a new version)",
    )
    def post(self, request: Request, pk: int) -> Response:
        assignment = selectors.get_assignment_for_annotator(request.user, pk)
        undone = labels.label_undo(assignment=assignment, actor=request.user)
        return Response([{"question": q.key, "unit_key": u, "value": v} for q, u, v in undone.restored])


class AspectProposalApi(WorkspaceApi):
    class AspectProposalInput(serializers.Serializer):
        text = serializers.CharField(max_length=1000)
        importance = serializers.ChoiceField(choices=Importance.choices)

    @extend_schema(
        request=AspectProposalInput, responses={201: ProposalOutput, 400: ErrorSerializer, 404: ErrorSerializer},
        summary="Propose a missing aspect",
    )
    def post(self, request: Request, pk: int) -> Response:
        assignment = selectors.get_assignment_for_annotator(request.user, pk)
        aspect = services.aspect_propose(
            assignment=assignment, actor=request.user,
            text=str(request.data.get("text", "")), importance=str(request.data.get("importance", "")),
        )
        return Response(ProposalOutput(aspect).data, status=status.HTTP_201_CREATED)


class ActiveTimeApi(WorkspaceApi):
    class ActiveTimeInput(serializers.Serializer):
        seconds = serializers.FloatField(
            help_text=f"Active seconds since the last report; clamped to 0–{services.MAX_ACTIVE_SECONDS_PER_BEAT:g}."
        )

    @extend_schema(
        request=ActiveTimeInput,
        responses={
            200: inline_serializer("ActiveTimeOutput", {"added": serializers.FloatField()}), 404: ErrorSerializer
        },
        summary="Report active time on task",
    )
    def post(self, request: Request, pk: int) -> Response:
        assignment = selectors.get_assignment_for_annotator(request.user, pk)
        added = services.assignment_time_record(
            assignment=assignment, actor=request.user, seconds=request.data.get("seconds")
        )
        return Response({"added": added})


# --- Token for scripts -------------------------------------------------------------------------


class TokenApi(WorkspaceApi):
    """Exchange a username and password for an API token (``Authorization: Token <key>``)."""

    access_policy = "public"
    authentication_classes: list = []
    permission_classes = [AllowAny]

    class TokenInput(serializers.Serializer):
        username = serializers.CharField()
        password = serializers.CharField(style={"input_type": "password"})

    @extend_schema(
        request=TokenInput,
        responses={
            200: inline_serializer(
                "TokenOutput", {"token": serializers.CharField(), "expires_at": serializers.DateTimeField()}
            ),
            400: ErrorSerializer,
            403: ErrorSerializer,
        },
        summary="Get an API token",
    )
    def post(self, request: Request) -> Response:
        data = self.TokenInput(data=request.data)
        if not data.is_valid():
            raise ValidationFailed("username and password are required")
        credentials = data.validated_data
        user = authenticate(request._request, username=credentials["username"], password=credentials["password"])
        if user is None or not user.is_active:
            raise ValidationFailed("Unknown username or wrong password.")
        if mfa_applies(user):
            raise Forbidden(tokens.MFA_FIRST)
        token = tokens.token_issue(user=user, request=request._request, via=TokenOrigin.VIA_PASSWORD)
        return Response({"token": token.key, "expires_at": tokens.token_expires_at(token)})
