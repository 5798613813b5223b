"""The annotator workspace pages (Django templates + htmx).

Each view parses, authorizes through one access helper (404 for what the user may not know exists),
calls one service and responds; a ``concord.errors`` error becomes its page or fragment through
``concord.http.domain_errors``. For htmx requests the same view returns only the fragment that changed
(``_unit.html``, ``_submit_status.html``, ``_proposals.html``) with ``Vary: HX-Request``; a label save
redraws its unit from what the save itself read, without reloading the item.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseClientRefresh

from annotation import answers, labels, quality, selectors, services, units
from annotation.console.selectors import open_invitations
from annotation.item_units import assignment_units
from annotation.labels.conflicts import conflict_view
from annotation.labels.questions import get_pool_question
from annotation.models import Label, Question, Study
from annotation.workspace import Workspace, assignment_workspace, unit_redraw
from concord.access import access_policy
from concord.errors import Conflict, NotFound, ValidationFailed
from concord.http import domain_errors, htmx_render, is_htmx, vary_on_htmx
from concord.params import MAX_BIGINT, parse_int

# --- Queue -------------------------------------------------------------------------------------


@access_policy("authenticated")
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    queue = selectors.annotator_queue(user=request.user)
    annotating = {q.study.pk for q in queue}
    other_studies = []
    for study in Study.objects.for_user(request.user).prefetch_related("roles"):
        roles = sorted({r.role for r in study.roles.all() if r.user_id == request.user.pk})
        # A study already shown as a queue is listed again only for its researcher/adjudicator tools.
        if study.pk not in annotating or set(roles) - {"annotator"}:
            other_studies.append((study, roles))
    # Invitations to join a study, which only their person sees and answers (annotation.console.invitee).
    invitations = open_invitations(request.user, timezone.now())
    return render(
        request, "annotation/home.html", {"queue": queue, "other_studies": other_studies, "invitations": invitations}
    )


@access_policy("annotator")
@require_GET
@domain_errors
def pool_continue(request: HttpRequest, pool_id: int) -> HttpResponse:
    pool = selectors.get_pool_for_annotator(request.user, pool_id)
    try:
        assignment = services.assignment_reserve_next(pool=pool, annotator=request.user)
    except quality.QualificationRequired:
        return redirect("annotation:qualification", pool_id=pool.pk)
    if assignment is None:
        messages.success(request, f"Nothing left to do in {pool.name}. Thank you!")
        return redirect("annotation:home")
    return redirect("annotation:item", pk=assignment.pk)


# --- Item page ---------------------------------------------------------------------------------


def _workspace(request: HttpRequest, assignment) -> Workspace:
    return assignment_workspace(assignment=assignment, user=request.user)


@access_policy("annotator")
@require_GET
@domain_errors
def item_page(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = selectors.get_assignment_for_annotator(request.user, pk, with_item=True)
    # The reservation and the record of what the page shows are written in one transaction (one commit).
    with transaction.atomic():
        assignment = services.assignment_open(assignment=assignment, actor=request.user)
        # Built and recorded in one step that a reopening cannot interleave with (it reads the status afresh).
        workspace = services.assignment_workspace_shown(assignment=assignment, user=request.user)
    reopen_refusal = None
    if assignment.status == "submitted" and assignment.pool.reopen_allowed:
        reopen_refusal = services.reopen_refusal(assignment=assignment) or ""
    context = {"ws": workspace, "reopen_refusal": reopen_refusal}
    return vary_on_htmx(render(request, "annotation/item.html", context))


def _form_value(question: Question, data: QueryDict) -> Any:
    """The answer a question's form carries (``annotation.answers.from_form``); ``clear`` clears it."""
    if data.get("clear"):
        return None
    if question.kind not in answers.LIST_KINDS and "value" not in data:
        raise ValidationFailed("No answer was sent.")
    try:
        return answers.from_form(question, data)
    except answers.InvalidValue as exc:
        raise ValidationFailed(f"{question.prompt}: {exc}") from exc


def _anchor(unit_key: str) -> str:
    """The element id of a unit on the item page."""
    return "unit-" + units.slug(unit_key)


def _unit_response(
    request: HttpRequest, assignment, row: selectors.UnitRow | None, unit_labels, *,
    status: int = 200, conflict=None, error=None, saved=None,
) -> HttpResponse:
    """The fragment of one unit, drawn from what the save read (its row, the pool's questions, its labels)."""
    if row is None:
        raise NotFound("No such unit.")
    page, unit = unit_redraw(assignment=assignment, row=row, labels=unit_labels)
    for state in unit.questions:
        if conflict and state.question.key == conflict["question"]:
            state.conflict = conflict_view(state.question, conflict)
        if error and state.question.key == error[0]:
            state.error = error[1]
        if saved and state.question.key == saved:
            state.saved = True
    unit.saved_at = timezone.now() if saved else None
    return htmx_render(request, "annotation/_unit.html", {"ws": page, "unit": unit}, status=status)


def _unit_labels(assignment, unit_key: str):
    """The annotator's labels of one unit and of the item, read afresh (after a refused save)."""
    return {
        (lb.question_id, lb.unit_key): lb
        for lb in Label.objects.filter(assignment=assignment, unit_key__in={unit_key, units.ITEM})
    }


@access_policy("annotator")
@require_POST
@domain_errors
def label_save(request: HttpRequest, pk: int) -> HttpResponse:
    unit_key = request.POST.get("unit_key", "")
    assignment, row = selectors.get_assignment_and_unit(request.user, pk, unit_key)
    question = get_pool_question(assignment.pool, request.POST.get("question", ""))
    item_url = reverse("annotation:item", args=[pk])
    try:
        value = _form_value(question, request.POST)
        raw_base = request.POST.get("base_version")
        base = parse_int(raw_base, name="base_version", minimum=0, maximum=MAX_BIGINT, default=0)
        saved = labels.label_save_in_unit(
            assignment=assignment, question=question, unit_key=unit_key, value=value, base_version=base,
            actor=request.user,
        )
    except Conflict as exc:
        if not is_htmx(request):
            messages.error(request, f"{exc.message} Your answer was not saved; the page shows the newer one.")
            return redirect(f"{item_url}#{_anchor(unit_key)}")
        unit_labels = _unit_labels(assignment, unit_key)
        return _unit_response(request, assignment, row, unit_labels, status=409, conflict=exc.details)
    except ValidationFailed as exc:
        if not is_htmx(request):
            messages.error(request, exc.message)
            return redirect("annotation:item", pk=pk)
        if row is None or row.kind != question.scope:
            # No such unit on the page: nothing to redraw, so tell htmx to leave the page alone.
            return HttpResponse(exc.message, status=400, content_type="text/plain", headers={"HX-Reswap": "none"})
        unit_labels = _unit_labels(assignment, unit_key)
        return _unit_response(request, assignment, row, unit_labels, status=400, error=(question.key, exc.message))
    if not is_htmx(request):
        return redirect(f"{item_url}#{_anchor(unit_key)}")
    if question.scope == "item" and selectors.has_dependents_in_other_scopes(assignment.pool, question):
        # An item-level answer switched questions of other units on or off: redraw the page.
        return HttpResponseClientRefresh()
    return _unit_response(request, assignment, row, saved.unit_labels, saved=question.key)


@access_policy("annotator")
@require_POST
@domain_errors
def assignment_submit(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = selectors.get_assignment_for_annotator(request.user, pk)
    try:
        services.assignment_submit(assignment=assignment, actor=request.user)
    except ValidationFailed as exc:
        if not is_htmx(request):
            messages.error(request, exc.message)
            return redirect("annotation:item", pk=pk)
        missing = [{**m, "anchor": _anchor(m["unit_key"])} for m in exc.details or []]
        context = {"message": exc.message, "missing": missing, "assignment": assignment}
        return htmx_render(request, "annotation/_submit_status.html", context, status=400)
    target = reverse("annotation:pool-continue", args=[assignment.pool_id])
    if is_htmx(request):
        return HttpResponseClientRedirect(target)
    messages.success(request, "Submitted.")
    return HttpResponseRedirect(target)


@access_policy("annotator")
@require_POST
@domain_errors
def assignment_skip(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = selectors.get_assignment_for_annotator(request.user, pk)
    try:
        services.assignment_skip(assignment=assignment, actor=request.user, reason=request.POST.get("reason", ""))
    except ValidationFailed as exc:
        messages.error(request, exc.message)
        return redirect("annotation:item", pk=pk)
    messages.info(request, "Item skipped.")
    return redirect("annotation:pool-continue", pool_id=assignment.pool_id)


@access_policy("annotator")
@require_POST
@domain_errors
def aspect_propose(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = selectors.get_assignment_for_annotator(request.user, pk)
    error = None
    try:
        services.aspect_propose(
            assignment=assignment, actor=request.user,
            text=request.POST.get("text", ""), importance=request.POST.get("importance", ""),
        )
    except ValidationFailed as exc:
        error = exc.message
    if not is_htmx(request):
        if error:
            messages.error(request, error)
        return redirect(reverse("annotation:item", args=[pk]) + "#proposals")
    workspace = _workspace(request, assignment)
    context = {"ws": workspace, "error": error, "proposed": not error}
    return htmx_render(request, "annotation/_proposals.html", context, status=400 if error else 200)


@access_policy("annotator")
@require_POST
@domain_errors
def active_time(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = selectors.get_assignment_for_annotator(request.user, pk)
    try:
        added = services.assignment_time_record(
            assignment=assignment, actor=request.user, seconds=request.POST.get("seconds")
        )
    except ValidationFailed as exc:
        return HttpResponse(exc.message, status=400, content_type="text/plain")
    return HttpResponse(json.dumps({"added": added}), content_type="application/json")


# --- My history, reopening and undo ----------------------------------------------------------


@access_policy("annotator")
@require_GET
def history(request: HttpRequest) -> HttpResponse:
    rows = selectors.annotator_history(user=request.user)
    return render(request, "annotation/history.html", {"rows": rows})


@access_policy("annotator")
@require_POST
@domain_errors
def assignment_reopen(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = selectors.get_assignment_for_annotator(request.user, pk)
    try:
        services.assignment_reopen(assignment=assignment, actor=request.user)
    except ValidationFailed as exc:
        messages.error(request, f"Not reopened: {exc.message}")
        return redirect("annotation:history")
    messages.success(request, "Reopened: change your answers, then submit the item again.")
    return redirect("annotation:item", pk=pk)


@access_policy("annotator")
@require_POST
@domain_errors
def label_undo(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = selectors.get_assignment_for_annotator(request.user, pk)
    item_units = assignment_units(item_id=assignment.item_id)
    try:
        undone = labels.label_undo(assignment=assignment, actor=request.user)
    except ValidationFailed as exc:
        if is_htmx(request):
            return HttpResponse(exc.message, status=400, content_type="text/plain", headers={"HX-Reswap": "none"})
        messages.error(request, exc.message)
        return redirect("annotation:item", pk=pk)
    question, unit_key, value = undone.restored[0]
    shown = answers.display(question, value) if value is not None else "no answer"
    messages.success(
        request, f"Undone: “{question.prompt}” ({item_units.describe(unit_key)}) is back to {shown}."
    )
    target = f"{reverse('annotation:item', args=[pk])}#{_anchor(unit_key)}"
    if is_htmx(request):
        # The page is drawn again (an undo may switch dependent questions on or off), at the undone unit:
        # htmx sets the address with the unit's anchor, then reloads (the anchor alone would not reload).
        return HttpResponse(status=200, headers={"HX-Redirect": target, "HX-Refresh": "true"})
    return redirect(target)


# --- Qualification (annotation.quality) ---------------------------------------------------------


def _qualification_context(request: HttpRequest, pool, **extra: Any) -> dict[str, Any]:
    state = quality.qualification_state(pool=pool, user=request.user)
    item = state.next_item
    questions = []
    if item is not None:
        by_key = {q.key: q for q in Question.objects.filter(study_id=pool.study_id, key__in=list(item.answers))}
        # The known answers' questions in protocol order; their answers are never in the page before answering.
        questions = sorted((by_key[k] for k in item.answers), key=lambda q: (q.order, q.pk))
    return {"pool": pool, "state": state, "item": item.item if item else None, "questions": questions, **extra}


@access_policy("annotator")
@require_GET
@domain_errors
def qualification(request: HttpRequest, pool_id: int) -> HttpResponse:
    pool = selectors.get_pool_for_annotator(request.user, pool_id)
    if not pool.qualification_required:
        return render(request, "annotation/qualification.html", {"pool": pool, "not_required": True})
    return render(request, "annotation/qualification.html", _qualification_context(request, pool))


@access_policy("annotator")
@require_POST
@domain_errors
def qualification_start(request: HttpRequest, pool_id: int) -> HttpResponse:
    pool = selectors.get_pool_for_annotator(request.user, pool_id)
    quality.qualification_start(pool=pool, user=request.user)
    return redirect("annotation:qualification", pool_id=pool.pk)


@access_policy("annotator")
@require_POST
@domain_errors
def qualification_answer(request: HttpRequest, pool_id: int) -> HttpResponse:
    pool = selectors.get_pool_for_annotator(request.user, pool_id)
    item_id = parse_int(request.POST.get("item"), name="item", minimum=1, maximum=MAX_BIGINT)
    feedback = quality.qualification_answer(pool=pool, user=request.user, item_id=item_id, data=request.POST)
    return render(request, "annotation/qualification.html", _qualification_context(request, pool, feedback=feedback))
