"""The annotator workspace pages (Django templates + htmx).

Each view parses, authorizes through one access helper (404 for what the user may not know exists),
calls one service and responds. For htmx requests the same view returns only the fragment that
changed (``_unit.html``, ``_submit_status.html``, ``_proposals.html``) with ``Vary: HX-Request``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseClientRefresh

from annotation import selectors, services
from annotation.models import ExposureKind, QuestionKind, Study
from concord.access import access_policy
from concord.errors import Conflict, Forbidden, NotFound, ValidationFailed


def _domain_errors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """404 and 403 of the access helpers and services, mapped to Django's own responses."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except NotFound as exc:
            raise Http404(exc.message) from exc
        except Forbidden as exc:
            raise PermissionDenied(exc.message) from exc

    return wrapper


def _htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))


def _vary(response: HttpResponse) -> HttpResponse:
    patch_vary_headers(response, ["HX-Request"])
    return response


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
    return render(request, "annotation/home.html", {"queue": queue, "other_studies": other_studies})


@access_policy("annotator")
@require_GET
@_domain_errors
def pool_continue(request: HttpRequest, pool_id: int) -> HttpResponse:
    pool = selectors.get_pool_for_annotator(request.user, pool_id)
    assignment = services.assignment_reserve_next(pool=pool, annotator=request.user)
    if assignment is None:
        messages.success(request, f"Nothing left to do in {pool.name}. Thank you!")
        return redirect("annotation:home")
    return redirect("annotation:item", pk=assignment.pk)


# --- Item page ---------------------------------------------------------------------------------


def _workspace(request: HttpRequest, assignment) -> selectors.Workspace:
    return selectors.assignment_workspace(assignment=assignment, user=request.user)


@access_policy("annotator")
@require_GET
@_domain_errors
def item_page(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = selectors.get_assignment_for_annotator(request.user, pk)
    assignment = services.assignment_open(assignment=assignment, actor=request.user)
    workspace = _workspace(request, assignment)
    services.exposure_record(
        user=request.user, assignment=assignment,
        kind=ExposureKind.CALIBRATION if workspace.showed_other_labels else ExposureKind.ITEM_PAGE,
        showed_other_labels=workspace.showed_other_labels, showed_system=workspace.showed_system,
    )
    return _vary(render(request, "annotation/item.html", {"ws": workspace}))


def _form_value(question, data: QueryDict) -> Any:
    """The answer a question's form carries. ``clear`` clears it; list kinds send a ``list`` marker
    so that unticking the last box saves an empty list rather than nothing."""
    if data.get("clear"):
        return None
    if question.kind in (QuestionKind.MULTILABEL, QuestionKind.ALIGNMENT):
        return data.getlist("value")
    if "value" not in data:
        raise ValidationFailed("No answer was sent.")
    value = data.get("value", "")
    if question.kind == QuestionKind.NUMBER and not value.strip():
        return None
    return value


def _int(raw: str | None, name: str) -> int:
    try:
        return int(raw or 0)
    except ValueError as exc:
        raise ValidationFailed(f"{name} must be a whole number") from exc


def _unit_response(request: HttpRequest, assignment, unit_key: str, *, status: int = 200, conflict=None, error=None, saved=None) -> HttpResponse:
    workspace = _workspace(request, assignment)
    unit = workspace.unit(unit_key)
    if unit is None:
        raise Http404("No such unit.")
    for state in unit.questions:
        if conflict and state.question.key == conflict["question"]:
            state.conflict = selectors.conflict_view(state.question, conflict)
        if error and state.question.key == error[0]:
            state.error = error[1]
        if saved and state.question.key == saved:
            state.saved = True
    unit.saved_at = timezone.now() if saved else None
    return _vary(render(request, "annotation/_unit.html", {"ws": workspace, "unit": unit}, status=status))


@access_policy("annotator")
@require_POST
@_domain_errors
def label_save(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = selectors.get_assignment_for_annotator(request.user, pk)
    question = selectors.get_pool_question(assignment.pool, request.POST.get("question", ""))
    unit_key = request.POST.get("unit_key", "")
    try:
        value = _form_value(question, request.POST)
        services.label_save(
            assignment=assignment, question=question, unit_key=unit_key, value=value,
            base_version=_int(request.POST.get("base_version"), "base_version"), actor=request.user,
        )
    except Conflict as exc:
        if not _htmx(request):
            messages.error(request, f"{exc.message} Your answer was not saved; the page shows the newer one.")
            return redirect(reverse("annotation:item", args=[pk]) + f"#unit-{unit_key.replace(':', '-')}")
        return _unit_response(request, assignment, unit_key, status=409, conflict=exc.details)
    except ValidationFailed as exc:
        if not _htmx(request):
            messages.error(request, exc.message)
            return redirect("annotation:item", pk=pk)
        if unit_key not in selectors.ItemUnits(item_id=assignment.item_id).keys_for(question.scope):
            # No such unit on the page: nothing to redraw, so tell htmx to leave the page alone.
            return HttpResponse(exc.message, status=400, content_type="text/plain", headers={"HX-Reswap": "none"})
        return _unit_response(request, assignment, unit_key, status=400, error=(question.key, exc.message))
    if not _htmx(request):
        return redirect(reverse("annotation:item", args=[pk]) + f"#unit-{unit_key.replace(':', '-')}")
    if question.scope == "item" and selectors.has_dependents_in_other_scopes(assignment.pool, question):
        # An item-level answer switched questions of other units on or off: redraw the page.
        return HttpResponseClientRefresh()
    return _unit_response(request, assignment, unit_key, saved=question.key)


@access_policy("annotator")
@require_POST
@_domain_errors
def assignment_submit(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = selectors.get_assignment_for_annotator(request.user, pk)
    try:
        services.assignment_submit(assignment=assignment, actor=request.user)
    except ValidationFailed as exc:
        if not _htmx(request):
            messages.error(request, exc.message)
            return redirect("annotation:item", pk=pk)
        missing = [{**m, "anchor": "unit-" + m["unit_key"].replace(":", "-")} for m in exc.details or []]
        context = {"message": exc.message, "missing": missing, "assignment": assignment}
        return _vary(render(request, "annotation/_submit_status.html", context, status=400))
    target = reverse("annotation:pool-continue", args=[assignment.pool_id])
    if _htmx(request):
        return HttpResponseClientRedirect(target)
    messages.success(request, "Submitted.")
    return HttpResponseRedirect(target)


@access_policy("annotator")
@require_POST
@_domain_errors
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
@_domain_errors
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
    if not _htmx(request):
        if error:
            messages.error(request, error)
        return redirect(reverse("annotation:item", args=[pk]) + "#proposals")
    workspace = _workspace(request, assignment)
    return _vary(render(request, "annotation/_proposals.html", {"ws": workspace, "error": error, "proposed": not error}, status=400 if error else 200))


@access_policy("annotator")
@require_POST
@_domain_errors
def active_time(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = selectors.get_assignment_for_annotator(request.user, pk)
    try:
        added = services.assignment_time_record(assignment=assignment, actor=request.user, seconds=request.POST.get("seconds"))
    except ValidationFailed as exc:
        return HttpResponse(exc.message, status=400, content_type="text/plain")
    return HttpResponse(json.dumps({"added": added}), content_type="application/json")
