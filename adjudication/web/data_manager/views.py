"""The data manager's pages: filter a study's items, choose some (or all that match), confirm a bulk
action, apply it. Researchers only (annotators and adjudicators 403, strangers 404)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from adjudication import data_manager as dm
from adjudication.models import BulkAction, BulkActionKind
from annotation.access import get_study_for_researcher
from annotation.models import PoolMembership, Study
from concord.access import access_policy
from concord.errors import DomainError
from concord.http import domain_errors, htmx_render
from scoring.models import ScoreRun


def _context(study: Study, data: Any, **extra: Any) -> dict[str, Any]:
    pools = list(study.pools.order_by("name"))
    return {
        "study": study, "section": "data", "pools": pools, "params": data,
        # As pairs: in a template, ``params.items`` is the parameter named "items" when the query has one.
        "param_pairs": [(key, value) for key, value in data.items() if key != "page"],
        "runs": list(ScoreRun.objects.filter(study=study).order_by("-created_at")[:50]),
        "members": list(PoolMembership.objects.filter(pool__study=study).select_related("user", "pool")
                        .order_by("pool__name", "pseudonym")),
        "actions": BulkActionKind.choices, "pool_states": dm.POOL_STATE_CHOICES,
        "recent": list(BulkAction.objects.filter(study=study).select_related("actor", "pool")[:10]),
        **extra,
    }


@access_policy("researcher")
@require_GET
@domain_errors
def data_manager(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    status, error, page, rows, filters = 200, "", None, [], None
    try:
        filters = dm.Filters.parse(study, request.GET)
        page, rows = dm.page_rows(study, filters, request.GET.get("page") or 1)
    except DomainError as exc:
        status, error = exc.status_code, exc.message
    query = urlencode(filters.as_query()) if filters else ""
    return htmx_render(
        request, "adjudication/data_manager.html",
        _context(study, request.GET, page=page, rows=rows, filter_error=error, query=query),
        fragment="adjudication/_data_results.html", status=status,
    )


def _plan_inputs(request: HttpRequest, study: Study) -> tuple[dm.Filters, dm.Plan]:
    filters = dm.Filters.parse(study, request.POST)
    plan = dm.bulk_plan(
        study=study, data=request.POST, chosen=request.POST.getlist("item"),
        all_matching=request.POST.get("all_matching") == "1", filters=filters,
    )
    return filters, plan


@access_policy("researcher")
@require_POST
@domain_errors
def data_bulk(request: HttpRequest, slug: str) -> HttpResponse:
    """Step 1 shows what the action will change; step 2 (``confirmed=1``) applies it."""
    study = get_study_for_researcher(request.user, slug)
    try:
        filters, plan = _plan_inputs(request, study)
    except DomainError as exc:
        return render(request, "adjudication/data_manager_confirm.html",
                      _context(study, request.POST, error=exc.message), status=exc.status_code)
    if request.POST.get("confirmed") != "1":
        return render(request, "adjudication/data_manager_confirm.html", _context(
            study, request.POST, plan=plan, hidden=_hidden(request), n_items=len(plan.item_ids),
            n_assignments=len(plan.assignments),
        ))
    try:
        action = dm.bulk_apply(study=study, plan=plan, actor=request.user, filters=filters)
    except DomainError as exc:
        return render(request, "adjudication/data_manager_confirm.html",
                      _context(study, request.POST, error=exc.message), status=exc.status_code)
    messages.success(request, dm.outcome_message(action))
    return redirect(reverse("adjudication:data-manager", args=[study.slug]) + "?" + urlencode(filters.as_query()))


def _hidden(request: HttpRequest) -> list[tuple[str, str]]:
    """Every posted field but the token and the confirmation, to post again on confirmation."""
    return [(k, v) for k in request.POST for v in request.POST.getlist(k) if k not in ("csrfmiddlewaretoken",
                                                                                        "confirmed")]
