"""REST API of the researcher console: every console action, calling the same services as the pages.

One class per resource operation, with its input and output serializers nested. Access: the
study's researchers only — annotators and adjudicators of the study get 403, everyone else 404
(``annotation.console.access``). Refusals, the domain's and DRF's alike, come back as
``{"error", "detail", "details"?}`` (``concord.api_errors``) with the status of the error.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import get_study_for_researcher, require_study_creator
from annotation.console import selectors as sel
from annotation.console import services as svc
from annotation.console.access import (
    get_import_job_for_researcher,
    get_invitation_for_researcher,
    get_membership_for_researcher,
    get_pool_for_researcher,
    get_question_for_researcher,
)
from annotation.imports import jobs
from annotation.models import (
    ImportJob,
    Pool,
    PoolMembership,
    Question,
    QuestionKind,
    Role,
    Scope,
    Study,
    StudyInvitation,
    Visibility,
)
from annotation.presets import PRESET_ORDER
from annotation.protocols import study_protocol_apply
from concord.errors import NotFound
from concord.fields import IdField, WholeNumberField
from concord.params import MAX_ID, MAX_INT, parse_int


class ConsoleApi(APIView):
    access_policy = "researcher"


# --- Output shapes ----------------------------------------------------------------------------


class ConsoleStudyOut(serializers.ModelSerializer):
    fingerprint = serializers.SerializerMethodField(
        help_text="Send back as `base` when updating: a stale one is refused (409)."
    )

    def get_fingerprint(self, study: Study) -> str:
        return svc.study_fingerprint(study)

    class Meta:
        model = Study
        fields = [
            "slug", "name", "guidelines", "protocol_presets", "blind_system", "visible_metadata_fields",
            "hidden_metadata_fields", "independent_pools", "created_at", "fingerprint",
        ]


class ConsoleQuestionOut(serializers.ModelSerializer):
    fingerprint = serializers.SerializerMethodField(
        help_text="Send back as `base` when updating: a stale one is refused (409)."
    )

    def get_fingerprint(self, question: Question) -> str:
        return svc.question_fingerprint(question)

    class Meta:
        model = Question
        fields = [
            "key", "order", "scope", "kind", "prompt", "help_text", "options", "condition", "required", "min_value",
            "max_value", "fingerprint",
        ]


class ConsolePoolOut(serializers.ModelSerializer):
    questions = serializers.SlugRelatedField(slug_field="key", many=True, read_only=True)
    fingerprint = serializers.SerializerMethodField(
        help_text="Send back as `base` when updating: a stale one is refused (409)."
    )

    def get_fingerprint(self, pool: Pool) -> str:
        return svc.pool_fingerprint(pool)

    class Meta:
        model = Pool
        fields = [
            "id", "name", "questions", "overlap", "visibility", "reopen_allowed", "seed", "reservation_minutes",
            "fingerprint",
        ]


class ConsoleMembershipOut(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")
    pool = serializers.IntegerField(source="pool_id")

    class Meta:
        model = PoolMembership
        fields = ["id", "pool", "username", "pseudonym", "active"]


class ConsoleInvitationOut(serializers.ModelSerializer):
    """An invitation as the researcher sees it: the name as typed, never the account it was bound to."""

    pool = serializers.IntegerField(source="pool_id", allow_null=True)
    pool_name = serializers.CharField(source="pool.name", allow_null=True, default=None)
    invited_by = serializers.CharField(source="invited_by.username")
    status = serializers.SerializerMethodField(help_text="pending, expired, accepted, declined or withdrawn.")

    def get_status(self, invitation: StudyInvitation) -> str:
        return invitation.status(timezone.now())

    class Meta:
        model = StudyInvitation
        fields = [
            "id", "invited", "role", "pool", "pool_name", "invited_by", "created_at", "expires_at", "decided_at",
            "status",
        ]


class ConsoleInvitationSentOut(serializers.Serializer):
    detail = serializers.CharField(help_text="The same words whether or not the name has an account.")
    invitation = ConsoleInvitationOut()


def _invitation_sent(invited: str, invitation: StudyInvitation, *, address: bool = False) -> Response:
    """The answer to adding someone outside the study: 202, the same whether or not the name has an account."""
    return Response(
        {
            "detail": svc.invitation_sent_message(invited, address=address),
            "invitation": ConsoleInvitationOut(invitation).data,
        },
        status=status.HTTP_202_ACCEPTED,
    )


class ConsoleImportJobOut(serializers.ModelSerializer):
    progress_done = serializers.IntegerField(source="n_done", read_only=True)
    progress_total = serializers.IntegerField(source="n_total", read_only=True)

    class Meta:
        model = ImportJob
        fields = [
            "id", "filename", "size_bytes", "status", "progress_done", "progress_total", "summary", "errors",
            "created_at",
        ]


# --- Studies ----------------------------------------------------------------------------------


class StudyListCreateApi(ConsoleApi):
    access_policy = "authenticated"

    class ConsoleStudyCreateIn(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        slug = serializers.SlugField(max_length=80, required=False, default="")
        presets = serializers.ListField(child=serializers.ChoiceField(choices=PRESET_ORDER), allow_empty=False)
        guidelines = serializers.CharField(required=False, default="", allow_blank=True)
        blind_system = serializers.BooleanField(required=False, default=True)
        independent_pools = serializers.BooleanField(required=False, default=True)
        hidden_metadata_fields = serializers.ListField(child=serializers.CharField(), required=False, default=list)

    @extend_schema(operation_id="console_studies_list", responses=ConsoleStudyOut(many=True))
    def get(self, request: Request) -> Response:
        return Response(ConsoleStudyOut(sel.researcher_studies(request.user), many=True).data)

    @extend_schema(operation_id="console_study_create", request=ConsoleStudyCreateIn, responses={201: ConsoleStudyOut})
    def post(self, request: Request) -> Response:
        require_study_creator(request.user)
        data = self.ConsoleStudyCreateIn(data=request.data)
        data.is_valid(raise_exception=True)
        study = svc.study_create(owner=request.user, **data.validated_data)
        return Response(ConsoleStudyOut(study).data, status=status.HTTP_201_CREATED)


class StudyDetailApi(ConsoleApi):
    class ConsoleStudyUpdateIn(serializers.Serializer):
        name = serializers.CharField(max_length=200, required=False)
        guidelines = serializers.CharField(required=False, allow_blank=True)
        blind_system = serializers.BooleanField(required=False)
        independent_pools = serializers.BooleanField(required=False)
        hidden_metadata_fields = serializers.ListField(child=serializers.CharField(), required=False)
        visible_metadata_fields = serializers.ListField(
            child=serializers.CharField(), required=False,
            help_text="The metadata keys annotators see; every other key is hidden from them.",
        )
        base = serializers.CharField(
            required=False, help_text="The fingerprint you read; omit to overwrite unconditionally."
        )

    @extend_schema(operation_id="console_study_read", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        return Response(
            {**ConsoleStudyOut(study).data, "questions": ConsoleQuestionOut(study.questions.all(), many=True).data}
        )

    @extend_schema(operation_id="console_study_update", request=ConsoleStudyUpdateIn, responses=ConsoleStudyOut)
    def patch(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = self.ConsoleStudyUpdateIn(data=request.data)
        data.is_valid(raise_exception=True)
        study = svc.study_update(study=study, actor=request.user, **data.validated_data)
        return Response(ConsoleStudyOut(study).data)


# --- Protocol ---------------------------------------------------------------------------------


class ConsoleOptionIn(serializers.Serializer):
    value = serializers.CharField(max_length=100)
    label = serializers.CharField(max_length=200, required=False, allow_blank=True)
    key = serializers.CharField(max_length=1, required=False, allow_blank=True)


class ConsoleConditionIn(serializers.Serializer):
    question = serializers.CharField()
    values = serializers.ListField(child=serializers.CharField(), allow_empty=False, source="in")


class ConsoleQuestionIn(serializers.Serializer):
    key = serializers.SlugField(max_length=60)
    prompt = serializers.CharField(max_length=300)
    scope = serializers.ChoiceField(choices=Scope.values)
    kind = serializers.ChoiceField(choices=QuestionKind.values)
    help_text = serializers.CharField(required=False, allow_blank=True)
    options = ConsoleOptionIn(many=True, required=False)
    condition = ConsoleConditionIn(required=False, allow_null=True)
    required = serializers.BooleanField(required=False)
    min_value = serializers.FloatField(required=False, allow_null=True)
    max_value = serializers.FloatField(required=False, allow_null=True)
    base = serializers.CharField(required=False, help_text="The fingerprint you read (updates only).")


def _spec(validated: dict[str, Any]) -> dict[str, Any]:
    spec = dict(validated)
    if "options" in spec:
        spec["options"] = [dict(o) for o in spec["options"]]
    if "condition" in spec:
        spec["condition"] = dict(spec["condition"]) if spec["condition"] else {}
    return spec


class QuestionListCreateApi(ConsoleApi):
    @extend_schema(operation_id="console_questions_list", responses=ConsoleQuestionOut(many=True))
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        return Response(ConsoleQuestionOut(study.questions.all(), many=True).data)

    @extend_schema(operation_id="console_question_add", request=ConsoleQuestionIn, responses={201: ConsoleQuestionOut})
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = ConsoleQuestionIn(data=request.data)
        data.is_valid(raise_exception=True)
        spec = _spec(data.validated_data)
        spec.pop("base", None)
        question = svc.question_add(study=study, actor=request.user, spec=spec)
        return Response(ConsoleQuestionOut(question).data, status=status.HTTP_201_CREATED)


class PresetApplyApi(ConsoleApi):
    class ConsolePresetsIn(serializers.Serializer):
        presets = serializers.ListField(child=serializers.ChoiceField(choices=PRESET_ORDER), allow_empty=False)

    @extend_schema(
        operation_id="console_presets_apply", request=ConsolePresetsIn, responses={201: ConsoleQuestionOut(many=True)}
    )
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = self.ConsolePresetsIn(data=request.data)
        data.is_valid(raise_exception=True)
        created = study_protocol_apply(study=study, presets=data.validated_data["presets"])
        return Response(ConsoleQuestionOut(created, many=True).data, status=status.HTTP_201_CREATED)


class QuestionDetailApi(ConsoleApi):
    @extend_schema(operation_id="console_question_update", request=ConsoleQuestionIn, responses=ConsoleQuestionOut)
    def patch(self, request: Request, slug: str, key: str) -> Response:
        question = get_question_for_researcher(request.user, slug, key)
        data = ConsoleQuestionIn(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        spec = _spec(data.validated_data)
        base = spec.pop("base", None)
        question = svc.question_update(question=question, actor=request.user, spec=spec, base=base)
        return Response(ConsoleQuestionOut(question).data)

    @extend_schema(operation_id="console_question_remove", responses={204: None})
    def delete(self, request: Request, slug: str, key: str) -> Response:
        question = get_question_for_researcher(request.user, slug, key)
        svc.question_remove(question=question, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class QuestionReorderApi(ConsoleApi):
    class ConsoleReorderIn(serializers.Serializer):
        keys = serializers.ListField(child=serializers.CharField(), allow_empty=False)

    @extend_schema(
        operation_id="console_questions_reorder", request=ConsoleReorderIn, responses=ConsoleQuestionOut(many=True)
    )
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = self.ConsoleReorderIn(data=request.data)
        data.is_valid(raise_exception=True)
        questions = svc.question_reorder(study=study, actor=request.user, keys=data.validated_data["keys"])
        return Response(ConsoleQuestionOut(questions, many=True).data)


# --- Items and uploads ------------------------------------------------------------------------


class ItemListApi(ConsoleApi):
    @extend_schema(
        operation_id="console_items_list",
        parameters=[
            OpenApiParameter(
                "page", {"type": "integer", "minimum": 1, "maximum": MAX_ID}, required=False,
                description=f"Page number, from 1 (the default); {sel.ITEMS_PER_PAGE} items a page, and a page past "
                "the last is the last. Anything else answers 400.",
            ),
            OpenApiParameter("q", str, required=False, description="Items whose id, question or answer hold this."),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        page_number = parse_int(request.query_params.get("page"), name="page", minimum=1, maximum=MAX_ID, default=1)
        page, rows = sel.item_page(study, query=request.query_params.get("q", ""), page=page_number)
        return Response(
            {
                "count": page.paginator.count,
                "page": page.number,
                "pages": page.paginator.num_pages,
                "results": [
                    {
                        "id": row.item.external_id,
                        "question": row.item.question,
                        "pools": {
                            s.pool.name: {
                                "assigned": s.assigned,
                                "done": s.done,
                                "skipped": s.skipped,
                                "in_progress": s.in_progress,
                                "status": s.label,
                            }
                            for s in row.statuses
                        },
                    }
                    for row in rows
                ],
            }
        )


class ImportJobListCreateApi(ConsoleApi):
    parser_classes = [MultiPartParser, FormParser]

    class ConsoleUploadIn(serializers.Serializer):
        file = serializers.FileField()

    @extend_schema(operation_id="console_imports_list", responses=ConsoleImportJobOut(many=True))
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        return Response(ConsoleImportJobOut(sel.import_jobs(study, limit=50), many=True).data)

    @extend_schema(operation_id="console_import_upload", request=ConsoleUploadIn, responses={202: ConsoleImportJobOut})
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = self.ConsoleUploadIn(data=request.data)
        data.is_valid(raise_exception=True)
        job = jobs.import_job_create(study=study, actor=request.user, upload=data.validated_data["file"])
        return Response(ConsoleImportJobOut(job).data, status=status.HTTP_202_ACCEPTED)


class ImportJobDetailApi(ConsoleApi):
    @extend_schema(operation_id="console_import_read", responses=ConsoleImportJobOut)
    def get(self, request: Request, slug: str, job_id: int) -> Response:
        return Response(ConsoleImportJobOut(get_import_job_for_researcher(request.user, slug, job_id)).data)


class ImportJobConfirmApi(ConsoleApi):
    @extend_schema(operation_id="console_import_confirm", request=None, responses={202: ConsoleImportJobOut})
    def post(self, request: Request, slug: str, job_id: int) -> Response:
        job = get_import_job_for_researcher(request.user, slug, job_id)
        job = jobs.import_job_confirm(job=job, actor=request.user)
        return Response(ConsoleImportJobOut(job).data, status=status.HTTP_202_ACCEPTED)


# --- Pools and members ------------------------------------------------------------------------


class ConsolePoolIn(serializers.Serializer):
    name = serializers.CharField(max_length=120)
    questions = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    overlap = WholeNumberField(min_value=1, max_value=MAX_INT, required=False)
    visibility = serializers.ChoiceField(choices=Visibility.values, required=False)
    reopen_allowed = serializers.BooleanField(required=False, help_text="Annotators may reopen submitted items.")
    base = serializers.CharField(required=False, help_text="The fingerprint you read (updates only).")


def _questions(study: Study, keys: list[str]) -> list[Question]:
    found = {q.key: q for q in study.questions.filter(key__in=keys)}
    unknown = [k for k in keys if k not in found]
    if unknown:
        raise NotFound(f"unknown question(s): {', '.join(unknown)}")
    return [found[k] for k in keys]


class PoolListCreateApi(ConsoleApi):
    @extend_schema(operation_id="console_pools_list", responses=ConsolePoolOut(many=True))
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        return Response(ConsolePoolOut(study.pools.prefetch_related("questions"), many=True).data)

    @extend_schema(operation_id="console_pool_create", request=ConsolePoolIn, responses={201: ConsolePoolOut})
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = ConsolePoolIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        pool = svc.pool_create(
            study=study, actor=request.user, name=v["name"], questions=_questions(study, v["questions"]),
            overlap=v.get("overlap", 1), visibility=v.get("visibility", Visibility.NOTHING),
            reopen_allowed=v.get("reopen_allowed", False),
        )
        return Response(ConsolePoolOut(pool).data, status=status.HTTP_201_CREATED)


class PoolDetailApi(ConsoleApi):
    @extend_schema(operation_id="console_pool_read", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, slug: str, pool_id: int) -> Response:
        pool = get_pool_for_researcher(request.user, slug, pool_id)
        members = ConsoleMembershipOut(pool.memberships.select_related("user"), many=True).data
        return Response({**ConsolePoolOut(pool).data, "members": members})

    @extend_schema(operation_id="console_pool_update", request=ConsolePoolIn, responses=ConsolePoolOut)
    def patch(self, request: Request, slug: str, pool_id: int) -> Response:
        pool = get_pool_for_researcher(request.user, slug, pool_id)
        data = ConsolePoolIn(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        pool = svc.pool_update(
            pool=pool, actor=request.user, name=v.get("name"), overlap=v.get("overlap"), visibility=v.get("visibility"),
            reopen_allowed=v.get("reopen_allowed"),
            questions=_questions(pool.study, v["questions"]) if "questions" in v else None, base=v.get("base"),
        )
        return Response(ConsolePoolOut(pool).data)


class PoolMemberAddApi(ConsoleApi):
    class ConsoleMemberAddIn(serializers.Serializer):
        username = serializers.CharField(max_length=150)

    @extend_schema(
        operation_id="console_pool_member_add", request=ConsoleMemberAddIn,
        responses={201: ConsoleMembershipOut, 202: ConsoleInvitationSentOut},
        description="Someone already in the study is added at once (201). Anyone else is invited (202), with the "
        "same answer whether or not an account of that name exists; they join when they accept.",
    )
    def post(self, request: Request, slug: str, pool_id: int) -> Response:
        pool = get_pool_for_researcher(request.user, slug, pool_id)
        data = self.ConsoleMemberAddIn(data=request.data)
        data.is_valid(raise_exception=True)
        username = data.validated_data["username"]
        added = svc.pool_member_add_or_invite(pool=pool, username=username, actor=request.user)
        if isinstance(added, StudyInvitation):
            return _invitation_sent(username.strip(), added)
        return Response(ConsoleMembershipOut(added).data, status=status.HTTP_201_CREATED)


class MembershipMoveApi(ConsoleApi):
    class ConsoleMoveIn(serializers.Serializer):
        to_pool = IdField()

    @extend_schema(operation_id="console_member_move", request=ConsoleMoveIn, responses=ConsoleMembershipOut)
    def post(self, request: Request, slug: str, membership_id: int) -> Response:
        membership = get_membership_for_researcher(request.user, slug, membership_id)
        data = self.ConsoleMoveIn(data=request.data)
        data.is_valid(raise_exception=True)
        to_pool = get_pool_for_researcher(request.user, slug, data.validated_data["to_pool"])
        moved = svc.pool_membership_move(membership=membership, to_pool=to_pool, actor=request.user)
        return Response(ConsoleMembershipOut(moved).data)


class MembershipDetailApi(ConsoleApi):
    @extend_schema(operation_id="console_member_remove", responses={204: None})
    def delete(self, request: Request, slug: str, membership_id: int) -> Response:
        membership = get_membership_for_researcher(request.user, slug, membership_id)
        svc.pool_membership_remove(membership=membership, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- People -----------------------------------------------------------------------------------


class ConsoleRoleIn(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.choices)


class RoleListGrantApi(ConsoleApi):
    @extend_schema(operation_id="console_people_list", responses={200: {"type": "array", "items": {"type": "object"}}})
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        return Response([
            {
                "username": p.user.get_username(), "roles": p.roles,
                "pools": [{"pool": m.pool.name, "pseudonym": m.pseudonym, "active": m.active} for m in p.memberships],
                "must_change_password": p.must_change_password,
            }
            for p in sel.study_people(study)
        ])

    @extend_schema(
        operation_id="console_role_grant", request=ConsoleRoleIn,
        responses={201: OpenApiTypes.OBJECT, 202: ConsoleInvitationSentOut},
        description="Someone already in the study gets the role at once (201). Anyone else is invited (202), with "
        "the same answer whether or not an account of that name exists.",
    )
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = ConsoleRoleIn(data=request.data)
        data.is_valid(raise_exception=True)
        username, role = data.validated_data["username"], data.validated_data["role"]
        granted = svc.study_role_grant_or_invite(study=study, username=username, role=role, actor=request.user)
        if isinstance(granted, StudyInvitation):
            return _invitation_sent(username.strip(), granted)
        return Response({"username": granted.user.get_username(), "role": role}, status=status.HTTP_201_CREATED)


class RoleRevokeApi(ConsoleApi):
    @extend_schema(operation_id="console_role_revoke", request=ConsoleRoleIn, responses={204: None})
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = ConsoleRoleIn(data=request.data)
        data.is_valid(raise_exception=True)
        svc.study_role_revoke_by_username(
            study=study, username=data.validated_data["username"], role=data.validated_data["role"],
            actor=request.user,
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class AccountCreateApi(ConsoleApi):
    class ConsoleAccountIn(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        email = serializers.EmailField(required=False, default="", allow_blank=True)
        role = serializers.ChoiceField(choices=Role.choices, required=False, default=Role.ANNOTATOR)
        pool = IdField(required=False, allow_null=True, default=None)

    @extend_schema(
        operation_id="console_account_create", request=ConsoleAccountIn, responses={201: OpenApiTypes.OBJECT}
    )
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = self.ConsoleAccountIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        pool = get_pool_for_researcher(request.user, slug, v["pool"]) if v["pool"] else None
        account = svc.account_create(
            study=study, actor=request.user, username=v["username"], email=v["email"], role=v["role"], pool=pool
        )
        response = Response(
            {
                "username": account.user.get_username(),
                "one_time_password": account.one_time_password,
                "must_change_password": True,
            },
            status=status.HTTP_201_CREATED,
        )
        response["Cache-Control"] = "no-store"
        return response


class InvitationApi(ConsoleApi):
    class ConsoleInvitationIn(serializers.Serializer):
        email = serializers.EmailField()
        role = serializers.ChoiceField(choices=Role.choices, required=False, default=Role.ANNOTATOR)
        pool = IdField(required=False, allow_null=True, default=None)

    @extend_schema(operation_id="console_invitations_list", responses=ConsoleInvitationOut(many=True))
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        return Response(ConsoleInvitationOut(sel.study_invitations_queryset(study), many=True).data)

    @extend_schema(
        operation_id="console_invitation_send", request=ConsoleInvitationIn,
        responses={201: OpenApiTypes.OBJECT, 202: ConsoleInvitationSentOut},
        description="Someone of the study with that address gets the role (and pool) at once (201). Anyone else is "
        "invited (202; an account is made for an address without one), with the same answer either way.",
    )
    def post(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        data = self.ConsoleInvitationIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        pool = get_pool_for_researcher(request.user, slug, v["pool"]) if v["pool"] else None
        sent = svc.annotator_invite(
            study=study,
            actor=request.user,
            email=v["email"],
            site_url=request.build_absolute_uri("/"),
            role=v["role"],
            pool=pool,
        )
        if isinstance(sent, StudyInvitation):
            return _invitation_sent(v["email"], sent, address=True)
        return Response(
            {"username": sent.get_username(), "email": v["email"], "role": v["role"]}, status=status.HTTP_201_CREATED
        )


class InvitationDetailApi(ConsoleApi):
    @extend_schema(operation_id="console_invitation_read", responses=ConsoleInvitationOut)
    def get(self, request: Request, slug: str, invitation_id: int) -> Response:
        return Response(ConsoleInvitationOut(get_invitation_for_researcher(request.user, slug, invitation_id)).data)

    @extend_schema(
        operation_id="console_invitation_withdraw", responses=ConsoleInvitationOut,
        description="Withdraw a pending invitation: it can no longer be accepted (the row is kept, as withdrawn).",
    )
    def delete(self, request: Request, slug: str, invitation_id: int) -> Response:
        invitation = get_invitation_for_researcher(request.user, slug, invitation_id)
        return Response(ConsoleInvitationOut(svc.invitation_withdraw(invitation=invitation, actor=request.user)).data)


# --- Progress ---------------------------------------------------------------------------------


class ProgressApi(ConsoleApi):
    @extend_schema(operation_id="console_progress_read", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, slug: str) -> Response:
        study = get_study_for_researcher(request.user, slug)
        chart = sel.study_completion_chart(study, timezone.now().date())
        return Response(
            {
                "pools": [
                    {
                        "pool": p.pool.name,
                        "id": p.pool.pk,
                        "items": p.items,
                        "assigned": p.assigned,
                        "done": p.done,
                        "skipped": p.skipped,
                        "median_active_seconds": p.median_seconds,
                        "agreement_url": p.agreement_url or None,
                        "agreement_reports": {key: url for key, url in p.agreement_links},
                        "annotators": [
                            {
                                "username": a.membership.user.get_username(),
                                "pseudonym": a.membership.pseudonym,
                                "active": a.membership.active,
                                "assigned": a.assigned,
                                "done": a.done,
                                "skipped": a.skipped,
                                "median_active_seconds": a.median_seconds,
                                "flag": a.flag or None,
                            }
                            for a in p.annotators
                        ],
                    }
                    for p in sel.study_progress(study)
                ],
                "completion": [{"pool": line.name, "percent_submitted": line.last_percent} for line in chart.lines]
                if chart
                else [],
            }
        )

