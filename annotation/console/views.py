"""The researcher console: set up and run a study in the browser, without the Django admin.

Every view parses, authorizes through ``annotation.console.access`` (404 for strangers, 403 for
members who are not researchers), calls one service (``annotation.console.services``, or
``annotation.imports.jobs`` for uploads) and responds. A refused action re-renders its page with the
service's reason and the error's HTTP status; htmx requests get the fragment only (``Vary:
HX-Request``, through ``concord.http.htmx_render``). An access refusal raised outside those forms
becomes ``concord/error.html`` (``concord.http.domain_errors``).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.access import can_create_studies, get_study_for_researcher, require_study_creator
from annotation.console import selectors as sel
from annotation.console import services as svc
from annotation.console.access import (
    get_import_job_for_researcher,
    get_invitation_for_researcher,
    get_membership_for_researcher,
    get_pool_for_researcher,
    get_question_for_researcher,
)
from annotation.console.forms import (
    AccountForm,
    InviteForm,
    MemberAddForm,
    MemberMoveForm,
    PoolForm,
    QuestionForm,
    RoleForm,
    StudyCreateForm,
    StudySettingsForm,
    UploadForm,
)
from annotation.imports import jobs, reference
from annotation.markdown import guidelines_check
from annotation.markdown import render_guidelines as render_guidelines_html
from annotation.models import ImportJobStatus, Role, Study, StudyInvitation, StudyRole
from annotation.presets import PRESET_DESCRIPTIONS, PRESET_ORDER
from annotation.protocols import study_protocol_apply
from annotation.templatetags.concord_tags import safe_markdown
from annotation.workspace import preview_workspace
from concord.access import access_policy
from concord.errors import DomainError, Forbidden
from concord.http import attachment, domain_errors, htmx_render, is_htmx

# --- Studies ----------------------------------------------------------------------------------


@access_policy("authenticated")
@require_GET
@domain_errors
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/console/index.html", {
        "studies": sel.researcher_studies(request.user), "can_create": can_create_studies(request.user),
    })


@access_policy("authenticated")
@require_http_methods(["GET", "POST"])
@domain_errors
def study_create(request: HttpRequest) -> HttpResponse:
    require_study_creator(request.user)
    form = StudyCreateForm(request.POST or None, initial={"presets": ["astrid"]})
    status = 200
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            study = svc.study_create(
                owner=request.user, name=data["name"], slug=data["slug"], presets=data["presets"],
                guidelines=data["guidelines"], blind_system=data["blind_system"],
                independent_pools=data["independent_pools"], hidden_metadata_fields=data["hidden_metadata_fields"],
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
            status = exc.status_code
        else:
            messages.success(request, f"Study “{study.name}” created with {study.questions.count()} questions.")
            return redirect("console:protocol", slug=study.slug)
    elif request.method == "POST":
        status = 400
    return render(request, "annotation/console/study_create.html", {"form": form}, status=status)


@access_policy("authenticated")
@require_POST
@domain_errors
def guidelines_preview(request: HttpRequest) -> HttpResponse:
    """Markdown rendered exactly as annotators will see it (sanitised); writes nothing.

    For people who write guidelines: researchers of some study and those allowed to create one (others
    403). Text longer than ``GUIDELINES_MAX_CHARS`` is refused (413), as when guidelines are saved.
    """
    is_researcher = StudyRole.objects.filter(user=request.user, role=Role.RESEARCHER).exists()
    if not (is_researcher or can_create_studies(request.user)):
        raise Forbidden("the guidelines preview is for researchers")
    text = request.POST.get("guidelines", "")
    guidelines_check(text)
    html = mark_safe(render_guidelines_html(text))
    return render(request, "annotation/console/_guidelines_preview.html", {"html": html})


def _study_context(study: Study, **extra: Any) -> dict[str, Any]:
    return {
        "study": study, "section": "study",
        "n_items": study.items.count(), "n_questions": study.questions.count(),
        "pools": list(study.pools.all()), "imports": sel.import_jobs(study, limit=5),
        **extra,
    }


@access_policy("researcher")
@require_http_methods(["GET", "POST"])
@domain_errors
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    form = StudySettingsForm.for_study(study, request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                svc.study_update(
                    study=study, actor=request.user, name=data["name"], guidelines=data["guidelines"],
                    blind_system=data["blind_system"], independent_pools=data["independent_pools"],
                    hidden_metadata_fields=data["hidden_metadata_fields"],
                    visible_metadata_fields=data["visible_metadata_fields"], base=data["base"] or None,
                )
            except DomainError as exc:
                form.add_error(None, exc.message)
                status = exc.status_code
            else:
                messages.success(request, "Study settings saved.")
                return redirect("console:study", slug=study.slug)
        else:
            status = 400
    return render(request, "annotation/console/study.html", _study_context(study, form=form), status=status)


# --- Protocol ---------------------------------------------------------------------------------


def _protocol_context(study: Study, **extra: Any) -> dict[str, Any]:
    return {
        "study": study,
        "section": "protocol",
        # order_by again: a GROUP BY query drops the model's default ordering (Django 3.1+).
        "questions": list(study.questions.annotate(n_labels=Count("labels")).order_by("order", "id")),
        "presets": [(name, PRESET_DESCRIPTIONS[name]) for name in PRESET_ORDER],
        "add_form": extra.pop("add_form", None)
        or QuestionForm(study=study, initial={"scope": "item", "kind": "binary", "required": True}),
        **extra,
    }


def _protocol_response(request: HttpRequest, study: Study, *, status: int = 200, **extra: Any) -> HttpResponse:
    response = htmx_render(
        request, "annotation/console/protocol.html", _protocol_context(study, **extra),
        fragment="annotation/console/_question_list.html", status=status,
    )
    if status < 400:
        # The live preview listens for this event and reloads itself.
        response["HX-Trigger"] = "protocol-changed"
    return response


@access_policy("researcher")
@require_GET
@domain_errors
def protocol(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    return render(request, "annotation/console/protocol.html", _protocol_context(study))


@access_policy("researcher")
@require_POST
@domain_errors
def presets_apply(request: HttpRequest, slug: str) -> HttpResponse:
    """Add the questions of more presets; questions the study already has are left as edited."""
    study = get_study_for_researcher(request.user, slug)
    try:
        created = study_protocol_apply(study=study, presets=request.POST.getlist("presets"))
    except DomainError as exc:
        return render(
            request,
            "annotation/console/protocol.html",
            _protocol_context(study, error=exc.message),
            status=exc.status_code,
        )
    messages.success(request, f"{len(created)} question{'s' if len(created) != 1 else ''} added from the presets.")
    return redirect("console:protocol", slug=study.slug)


@access_policy("researcher")
@require_POST
@domain_errors
def question_add(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    form = QuestionForm(request.POST, study=study)
    if not form.is_valid():
        return render(request, "annotation/console/protocol.html", _protocol_context(study, add_form=form), status=400)
    try:
        question = svc.question_add(study=study, actor=request.user, spec=form.spec())
    except DomainError as exc:
        form.add_error(None, exc.message)
        return render(
            request, "annotation/console/protocol.html", _protocol_context(study, add_form=form), status=exc.status_code
        )
    messages.success(request, f"Question {question.key!r} added.")
    return redirect("console:protocol", slug=study.slug)


@access_policy("researcher")
@require_http_methods(["GET", "POST"])
@domain_errors
def question_edit(request: HttpRequest, slug: str, key: str) -> HttpResponse:
    question = get_question_for_researcher(request.user, slug, key)
    form = QuestionForm.for_question(question, request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                question = svc.question_update(
                    question=question, actor=request.user, spec=form.spec(), base=form.cleaned_data["base"] or None
                )
            except DomainError as exc:
                form.add_error(None, exc.message)
                status = exc.status_code
            else:
                messages.success(request, f"Question {question.key!r} saved.")
                return redirect("console:protocol", slug=question.study.slug)
        else:
            status = 400
    n_labels = question.labels.count()
    return render(request, "annotation/console/question_edit.html", {
        "study": question.study, "section": "protocol", "question": question, "form": form, "n_labels": n_labels,
    }, status=status)


@access_policy("researcher")
@require_POST
@domain_errors
def question_remove(request: HttpRequest, slug: str, key: str) -> HttpResponse:
    question = get_question_for_researcher(request.user, slug, key)
    study = question.study
    try:
        svc.question_remove(question=question, actor=request.user)
    except DomainError as exc:
        return _protocol_response(request, study, status=exc.status_code, error=exc.message)
    if not is_htmx(request):
        messages.success(request, f"Question {key!r} removed.")
        return redirect("console:protocol", slug=study.slug)
    return _protocol_response(request, study, notice=f"Question {key!r} removed.")


@access_policy("researcher")
@require_POST
@domain_errors
def question_move(request: HttpRequest, slug: str, key: str) -> HttpResponse:
    question = get_question_for_researcher(request.user, slug, key)
    direction = "up" if request.POST.get("direction") == "up" else "down"
    try:
        order = svc.question_move(question=question, actor=request.user, offset=-1 if direction == "up" else 1)
    except DomainError as exc:
        return _protocol_response(request, question.study, status=exc.status_code, error=exc.message)
    if not is_htmx(request):
        return redirect("console:protocol", slug=question.study.slug)
    place = [q.key for q in order].index(key)
    # The keyboard stays on the moved question: on the button pressed, or on the other one where the
    # row reached the top or the bottom and the pressed one is now disabled.
    at_end = place == 0 if direction == "up" else place == len(order) - 1
    focus = ("down" if direction == "up" else "up") if at_end and len(order) > 1 else direction
    return _protocol_response(
        request, question.study, notice=f"Question {key!r} moved {direction} to place {place + 1}.",
        moved=key, focus=focus if len(order) > 1 else "",
    )


@access_policy("researcher")
@require_GET
@domain_errors
def preview(request: HttpRequest, slug: str) -> HttpResponse:
    """The item page exactly as an annotator sees it (annotation.workspace.preview_workspace renders it with
    the workspace's own code and blinding), on a sample item; read-only, nothing is saved."""
    study = get_study_for_researcher(request.user, slug)
    item = sel.preview_item(study, request.GET.get("item"))
    pools = list(study.pools.all())
    pool = next((p for p in pools if str(p.pk) == request.GET.get("pool", "")), None)
    ws = None if item is None else preview_workspace(study=study, item=item, user=request.user, pool=pool)
    scopes = sel.protocol_by_scope(study)
    return htmx_render(request, "annotation/console/preview.html", {
        "study": study, "section": "protocol", "item": item, "scopes": scopes, "ws": ws, "pools": pools,
        "pool": pool, "has_chunk_questions": any(questions for scope, _, questions in scopes if scope == "chunk"),
    }, fragment="annotation/console/_preview.html")


# --- Items ------------------------------------------------------------------------------------


def _items_context(request: HttpRequest, study: Study, **extra: Any) -> dict[str, Any]:
    query = request.GET.get("q", "")
    page, rows = sel.item_page(study, query=query, page=request.GET.get("page") or 1)
    import_jobs = sel.import_jobs(study)  # newest first
    return {
        "study": study, "section": "items", "page": page, "rows": rows, "query": query,
        "pools": list(study.pools.all()), "jobs": import_jobs,
        "latest_import_job_id": import_jobs[0].pk if import_jobs else None,
        "upload_form": extra.pop("upload_form", None) or UploadForm(),
        "simple_import_url": _simple_import_url(study),
        "format_html": safe_markdown(reference.format_reference()), "examples": reference.EXAMPLES,
        **extra,
    }


@access_policy("researcher")
@require_GET
@domain_errors
def import_format(request: HttpRequest, slug: str) -> HttpResponse:
    """The import format reference (docs/import-format.md) with the example files to download."""
    study = get_study_for_researcher(request.user, slug)
    return render(request, "annotation/console/import_format.html", {
        "study": study, "section": "items", "format_html": safe_markdown(reference.format_reference()),
        "examples": reference.EXAMPLES,
    })


@access_policy("researcher")
@require_GET
@domain_errors
def import_example(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    get_study_for_researcher(request.user, slug)
    content_type = "text/csv; charset=utf-8" if name.endswith(".csv") else "application/x-ndjson; charset=utf-8"
    return attachment(reference.example_bytes(name), content_type=content_type, filename=name)


def _simple_import_url(study: Study) -> str:
    # A's plain upload page, linked when present; the console's own flow adds the dry run and progress.
    try:
        return reverse("imports:items-import", kwargs={"slug": study.slug})
    except NoReverseMatch:
        return ""


@access_policy("researcher")
@require_GET
@domain_errors
def items(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    return htmx_render(request, "annotation/console/items.html", _items_context(request, study),
                   fragment="annotation/console/_item_table.html")


@access_policy("researcher")
@require_POST
@domain_errors
def import_upload(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return htmx_render(request, "annotation/console/items.html", _items_context(request, study, upload_form=form),
                       fragment="annotation/console/_upload_errors.html", status=400)
    try:
        job = jobs.import_job_create(study=study, actor=request.user, upload=form.cleaned_data["file"])
    except DomainError as exc:
        form.add_error("file", exc.message)
        return htmx_render(request, "annotation/console/items.html", _items_context(request, study, upload_form=form),
                       fragment="annotation/console/_upload_errors.html", status=exc.status_code)
    if is_htmx(request):
        return htmx_render(request, "annotation/console/_import_job.html",
                           {"study": study, "job": job, "latest_import_job_id": job.pk}, status=201)
    return redirect("console:items", slug=study.slug)


@access_policy("researcher")
@require_GET
@domain_errors
def import_job(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    job = get_import_job_for_researcher(request.user, slug, job_id)
    return _job_response(request, job)


def _job_response(request: HttpRequest, job: Any, *, error: str = "", status: int = 200) -> HttpResponse:
    newer = jobs.import_job_newer(job)
    response = htmx_render(request, "annotation/console/import_job.html",
                       {"study": job.study, "section": "items", "job": job, "error": error,
                        "latest_import_job_id": newer.pk if newer else job.pk},
                       fragment="annotation/console/_import_job.html", status=status)
    if is_htmx(request) and job.status == ImportJobStatus.DONE:
        # The item table on the same page listens for this and reloads itself.
        response["HX-Trigger"] = "items-imported"
    return response


@access_policy("researcher")
@require_POST
@domain_errors
def import_confirm(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    job = get_import_job_for_researcher(request.user, slug, job_id)
    status = 200
    error = ""
    try:
        job = jobs.import_job_confirm(job=job, actor=request.user)
    except DomainError as exc:
        status, error = exc.status_code, exc.message
    if not is_htmx(request) and status == 200:
        return redirect("console:import_job", slug=slug, job_id=job.pk)
    return _job_response(request, job, error=error, status=status)


# --- Pools ------------------------------------------------------------------------------------


def _pools_context(study: Study, **extra: Any) -> dict[str, Any]:
    pools = list(study.pools.prefetch_related("questions"))
    return {
        "study": study, "section": "pools", "pools": pools, "members": sel.pool_members(pools),
        "form": extra.pop("form", None) or PoolForm(study=study),
        **extra,
    }


@access_policy("researcher")
@require_http_methods(["GET", "POST"])
@domain_errors
def pools(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    if request.method == "GET":
        return render(request, "annotation/console/pools.html", _pools_context(study))
    form = PoolForm(request.POST, study=study)
    if not form.is_valid():
        return render(request, "annotation/console/pools.html", _pools_context(study, form=form), status=400)
    data = form.cleaned_data
    try:
        pool = svc.pool_create(
            study=study, actor=request.user, name=data["name"], questions=list(data["questions"]),
            overlap=data["overlap"], visibility=data["visibility"], reopen_allowed=data["reopen_allowed"],
        )
    except DomainError as exc:
        form.add_error(None, exc.message)
        return render(
            request, "annotation/console/pools.html", _pools_context(study, form=form), status=exc.status_code
        )
    messages.success(request, f"Pool “{pool.name}” created. Add its members next.")
    return redirect("console:pool", slug=study.slug, pool_id=pool.pk)


def _pool_context(pool: Any, **extra: Any) -> dict[str, Any]:
    members = sel.pool_members([pool])[pool.pk]
    return {
        "study": pool.study, "section": "pools", "pool": pool, "members": members,
        "active_members": sum(1 for m in members if m.active),
        "form": extra.pop("form", None) or PoolForm.for_pool(pool),
        "add_form": extra.pop("add_form", None) or MemberAddForm(),
        "move_form": MemberMoveForm(study=pool.study, exclude=pool),
        "account_form": AccountForm(study=pool.study, initial={"pool": pool}),
        "invite_form": InviteForm(study=pool.study, initial={"pool": pool}),
        "invitations": sel.study_invitations(pool.study, timezone.now(), pool=pool),
        "n_assignments": pool.assignments.count(),
        **extra,
    }


@access_policy("researcher")
@require_http_methods(["GET", "POST"])
@domain_errors
def pool_detail(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    pool = get_pool_for_researcher(request.user, slug, pool_id)
    if request.method == "GET":
        return render(request, "annotation/console/pool.html", _pool_context(pool))
    form = PoolForm(request.POST, study=pool.study)
    if not form.is_valid():
        return render(request, "annotation/console/pool.html", _pool_context(pool, form=form), status=400)
    data = form.cleaned_data
    try:
        svc.pool_update(
            pool=pool, actor=request.user, name=data["name"], questions=list(data["questions"]),
            overlap=data["overlap"], visibility=data["visibility"], reopen_allowed=data["reopen_allowed"],
            base=data["base"] or None,
        )
    except DomainError as exc:
        form.add_error(None, exc.message)
        return render(request, "annotation/console/pool.html", _pool_context(pool, form=form), status=exc.status_code)
    messages.success(request, "Pool saved.")
    return redirect("console:pool", slug=slug, pool_id=pool.pk)


@access_policy("researcher")
@require_POST
@domain_errors
def member_add(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    pool = get_pool_for_researcher(request.user, slug, pool_id)
    form = MemberAddForm(request.POST)
    if not form.is_valid():
        return render(request, "annotation/console/pool.html", _pool_context(pool, add_form=form), status=400)
    username = form.cleaned_data["username"]
    try:
        added = svc.pool_member_add_or_invite(pool=pool, username=username, actor=request.user)
    except DomainError as exc:
        form.add_error(None, exc.message)
        return render(
            request, "annotation/console/pool.html", _pool_context(pool, add_form=form), status=exc.status_code
        )
    if isinstance(added, StudyInvitation):
        # The same answer whether or not such an account exists (annotation.console.services).
        messages.success(request, svc.invitation_sent_message(username))
    else:
        messages.success(request, f"{added.user.get_username()} joined {pool.name} as {added.pseudonym}.")
    return redirect("console:pool", slug=slug, pool_id=pool.pk)


@access_policy("researcher")
@require_POST
@domain_errors
def member_move(request: HttpRequest, slug: str, membership_id: int) -> HttpResponse:
    membership = get_membership_for_researcher(request.user, slug, membership_id)
    form = MemberMoveForm(request.POST, study=membership.study, exclude=membership.pool)
    if not form.is_valid():
        return render(
            request,
            "annotation/console/pool.html",
            _pool_context(membership.pool, error="Choose another pool of this study."),
            status=400,
        )
    try:
        moved = svc.pool_membership_move(
            membership=membership, to_pool=form.cleaned_data["to_pool"], actor=request.user
        )
    except DomainError as exc:
        return render(
            request,
            "annotation/console/pool.html",
            _pool_context(membership.pool, error=exc.message),
            status=exc.status_code,
        )
    messages.success(request, f"{moved.user.get_username()} moved to {moved.pool.name}.")
    return redirect("console:pool", slug=slug, pool_id=moved.pool_id)


@access_policy("researcher")
@require_POST
@domain_errors
def member_remove(request: HttpRequest, slug: str, membership_id: int) -> HttpResponse:
    membership = get_membership_for_researcher(request.user, slug, membership_id)
    try:
        svc.pool_membership_remove(membership=membership, actor=request.user)
    except DomainError as exc:
        return render(
            request,
            "annotation/console/pool.html",
            _pool_context(membership.pool, error=exc.message),
            status=exc.status_code,
        )
    messages.success(
        request, f"{membership.user.get_username()} left {membership.pool.name}; their past labels are kept."
    )
    return redirect("console:pool", slug=slug, pool_id=membership.pool_id)


# --- People -----------------------------------------------------------------------------------


def _people_context(study: Study, **extra: Any) -> dict[str, Any]:
    return {
        "study": study, "section": "people", "people": sel.study_people(study),
        "role_form": extra.pop("role_form", None) or RoleForm(),
        "account_form": extra.pop("account_form", None) or AccountForm(study=study),
        "invite_form": extra.pop("invite_form", None) or InviteForm(study=study),
        "invitations": sel.study_invitations(study, timezone.now()),
        **extra,
    }


@access_policy("researcher")
@require_GET
@domain_errors
def people(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    return render(request, "annotation/console/people.html", _people_context(study))


@access_policy("researcher")
@require_POST
@domain_errors
def role_grant(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    form = RoleForm(request.POST)
    if not form.is_valid():
        return render(request, "annotation/console/people.html", _people_context(study, role_form=form), status=400)
    username, role = form.cleaned_data["username"], form.cleaned_data["role"]
    try:
        granted = svc.study_role_grant_or_invite(study=study, username=username, role=role, actor=request.user)
    except DomainError as exc:
        form.add_error(None, exc.message)
        return render(
            request, "annotation/console/people.html", _people_context(study, role_form=form), status=exc.status_code
        )
    if isinstance(granted, StudyInvitation):
        messages.success(request, svc.invitation_sent_message(username))
    else:
        messages.success(request, f"{granted.user.get_username()} is now {role} of this study.")
    return redirect("console:people", slug=slug)


@access_policy("researcher")
@require_POST
@domain_errors
def role_revoke(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    form = RoleForm(request.POST)
    if not form.is_valid():
        return render(
            request, "annotation/console/people.html", _people_context(study, error="Unknown role."), status=400
        )
    username, role = form.cleaned_data["username"], form.cleaned_data["role"]
    try:
        svc.study_role_revoke_by_username(study=study, username=username, role=role, actor=request.user)
    except DomainError as exc:
        return render(
            request, "annotation/console/people.html", _people_context(study, error=exc.message), status=exc.status_code
        )
    messages.success(request, f"{username} is no longer {role}; their past labels are kept.")
    return redirect("console:people", slug=slug)


@access_policy("researcher")
@require_POST
@domain_errors
def account_create(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    form = AccountForm(request.POST, study=study)
    if not form.is_valid():
        return render(request, "annotation/console/people.html", _people_context(study, account_form=form), status=400)
    data = form.cleaned_data
    try:
        account = svc.account_create(
            study=study, actor=request.user, username=data["username"], email=data["email"] or "",
            role=data["role"], pool=data["pool"],
        )
    except DomainError as exc:
        form.add_error(None, exc.message)
        return render(
            request, "annotation/console/people.html", _people_context(study, account_form=form), status=exc.status_code
        )
    # Shown once, in this response only; it is never stored in clear nor shown again.
    response = render(
        request, "annotation/console/people.html",
        _people_context(study, new_account=account, new_account_pool=data["pool"], new_account_role=data["role"]),
        status=201,
    )
    response["Cache-Control"] = "no-store"
    return response


@access_policy("researcher")
@require_POST
@domain_errors
def invite(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    form = InviteForm(request.POST, study=study)
    if not form.is_valid():
        return render(request, "annotation/console/people.html", _people_context(study, invite_form=form), status=400)
    data = form.cleaned_data
    try:
        person = svc.annotator_invite(
            study=study, actor=request.user, email=data["email"], site_url=request.build_absolute_uri("/"),
            role=data["role"], pool=data["pool"],
        )
    except DomainError as exc:
        form.add_error(None, exc.message)
        return render(
            request, "annotation/console/people.html", _people_context(study, invite_form=form), status=exc.status_code
        )
    if isinstance(person, StudyInvitation):
        messages.success(request, svc.invitation_sent_message(data["email"], address=True))
    else:
        messages.success(request, f"{person.get_username()}, already in this study, now has the role; a mail was sent.")
    return redirect("console:people", slug=slug)


@access_policy("researcher")
@require_POST
@domain_errors
def invitation_withdraw(request: HttpRequest, slug: str, invitation_id: int) -> HttpResponse:
    """Take back a pending invitation; back to the pool page it was withdrawn from, else the People page."""
    invitation = get_invitation_for_researcher(request.user, slug, invitation_id)
    pool = invitation.pool if request.POST.get("back") == "pool" else None
    try:
        svc.invitation_withdraw(invitation=invitation, actor=request.user)
    except DomainError as exc:
        if pool is not None:
            return render(
                request, "annotation/console/pool.html", _pool_context(pool, error=exc.message), status=exc.status_code
            )
        return render(
            request, "annotation/console/people.html", _people_context(invitation.study, error=exc.message),
            status=exc.status_code,
        )
    messages.success(request, f"The invitation of {invitation.invited} was withdrawn.")
    if pool is not None:
        return redirect("console:pool", slug=slug, pool_id=pool.pk)
    return redirect("console:people", slug=slug)


# --- Progress ---------------------------------------------------------------------------------


@access_policy("researcher")
@require_GET
@domain_errors
def progress(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    return htmx_render(request, "annotation/console/progress.html", {
        "study": study, "section": "progress", "pools": sel.study_progress(study),
        "chart": sel.study_completion_chart(study, timezone.now().date()),
        "reports_url": sel.agreement_reports_url(study),
        "fast_ratio": sel.FAST_RATIO, "fast_min_items": sel.FAST_MIN_ITEMS,
    }, fragment="annotation/console/_progress.html")
