"""Adjudicator pages: the queue, a case and its decision, proposed aspects, consensus rules.

Every view parses, authorizes with one access helper from adjudication.selectors (annotators 403,
strangers 404), calls one service and responds; for an htmx request it answers only the fragment.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from adjudication import selectors, services
from adjudication.models import CaseStatus
from annotation.access import get_study_for_adjudicator, is_researcher
from concord import parsers
from concord.access import access_policy
from concord.errors import DomainError, ValidationFailed
from concord.http import domain_errors, vary_on_htmx
from concord.params import MAX_ID, MAX_INT, parse_id, parse_int


def parse_decision(data: Any, question_kind: str) -> dict[str, Any]:
    """The decision form → case_resolve's keyword arguments (shared by the page and the API)."""
    unresolved = str(data.get("unresolved", "")).lower() in ("1", "true", "on", "yes")
    raw_confidence = data.get("confidence")
    confidence = None
    if raw_confidence not in (None, ""):
        try:
            confidence = parse_int(raw_confidence, name="confidence", minimum=1, maximum=5)
        except ValidationFailed as exc:
            raise ValidationFailed(exc.message, details={"field": "confidence"}) from None
    raw_version = data.get("expected_version")
    expected_version = None
    if raw_version not in (None, ""):
        expected_version = parse_int(raw_version, name="expected_version", minimum=0, maximum=MAX_ID)
    value: Any = None
    if not unresolved:
        if hasattr(data, "getlist") and question_kind in ("multilabel", "alignment"):
            value = data.getlist("value")
            if question_kind == "alignment":  # sentence indices, from 0
                value = [parse_int(v, name="value", minimum=0, maximum=MAX_INT) for v in value]
        else:
            value = data.get("value")
            if question_kind == "number" and isinstance(value, str) and value.strip():
                value = value.strip()
            if isinstance(value, str) and question_kind in ("multilabel", "alignment"):
                try:
                    value = parsers.loads(value)
                except ValueError:
                    raise ValidationFailed("value must be a JSON list") from None
    guideline_gap = data.get("guideline_gap", False)
    return {
        "value": value,
        "unresolved": unresolved,
        "rationale": str(data.get("rationale", "") or ""),
        "confidence": confidence,
        "guideline_gap": guideline_gap is True or str(guideline_gap).lower() in ("1", "true", "on", "yes"),
        "expected_version": expected_version,
        "revise_reason": str(data.get("revise_reason", "") or ""),
    }


# --- Queue and case -------------------------------------------------------------------------------


@access_policy("adjudicator")
@require_GET
@domain_errors
def queue(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_adjudicator(request.user, slug)
    status = request.GET.get("status", CaseStatus.OPEN)
    if status not in CaseStatus.values and status != "all":
        status = CaseStatus.OPEN
    context = {
        "study": study,
        "status": status,
        "statuses": CaseStatus.choices,
        "cases": selectors.case_queue(study=study, status="" if status == "all" else status)[:500],
        "counts": selectors.case_counts(study=study),
        "proposed": selectors.proposed_aspects(study=study)[:200],
        "is_researcher": is_researcher(request.user, study),
        "rules": selectors.consensus_rules(study=study),
    }
    return vary_on_htmx(render(request, "adjudication/queue.html", context))


def _case_context(request: HttpRequest, case_id: int, **extra: Any) -> dict[str, Any]:
    case = selectors.get_case_for_adjudicator(request.user, case_id)
    detail = selectors.case_detail(case=case)
    return {
        "d": detail,
        "study": case.pool.study,
        "next_case": selectors.case_next_open(study=case.pool.study, after_case_id=case.pk),
        # A decided case takes another decision only as a revision with its reason (case_resolve).
        "decided": case.status in (CaseStatus.RESOLVED, CaseStatus.UNRESOLVED),
        **extra,
    }


@access_policy("adjudicator")
@require_http_methods(["GET", "POST"])
@domain_errors
def case_page(request: HttpRequest, pk: int) -> HttpResponse:
    if request.method == "GET":
        return vary_on_htmx(render(request, "adjudication/case.html", _case_context(request, pk)))
    case = selectors.get_case_for_adjudicator(request.user, pk)
    error = ""
    status = 200
    gold = None
    try:
        gold = services.case_resolve(
            case_id=case.pk, actor=request.user, **parse_decision(request.POST, case.question.kind)
        )
    except DomainError as exc:
        if exc.status_code not in (400, 409):
            raise
        error, status = exc.message, exc.status_code
    context = _case_context(request, pk, error=error, saved=gold is not None)
    next_case = context["next_case"]
    if gold is not None and next_case is not None:
        # Saving moves on: the next open case, with what was saved said on it.
        messages.success(
            request, f"Case #{case.pk} decided: gold version {gold.version} saved. This is the next open case."
        )
        target = reverse("adjudication:case", args=[next_case.pk])
        if request.htmx:
            return HttpResponse(status=200, headers={"HX-Redirect": target})
        return redirect(target)
    if request.htmx:
        return vary_on_htmx(render(request, "adjudication/_decision.html", context, status=status))
    return vary_on_htmx(render(request, "adjudication/case.html", context, status=status))


@access_policy("adjudicator")
@require_POST
@domain_errors
def aspect_decide(request: HttpRequest, pk: int) -> HttpResponse:
    aspect = selectors.get_aspect_for_adjudicator(request.user, pk)
    decision = request.POST.get("decision")
    if decision not in ("accept", "reject"):
        raise ValidationFailed("decision must be accept or reject")
    services.aspect_decide(aspect_id=aspect.pk, actor=request.user, accept=decision == "accept")
    if request.htmx:
        aspects = selectors.proposed_aspects(study=aspect.item.study).filter(item=aspect.item)
        return vary_on_htmx(render(request, "adjudication/_proposed.html", {"proposed": aspects, "decided": aspect}))
    return redirect("adjudication:queue", slug=aspect.item.study.slug)


@access_policy("researcher")
@require_POST
@domain_errors
def consensus_rule(request: HttpRequest, pk: int) -> HttpResponse:
    pool = selectors.get_pool_for_researcher(request.user, pk)
    question_id = parse_id(request.POST.get("question"))
    if question_id is None:
        raise ValidationFailed("choose a question")
    services.consensus_rule_set(
        pool_id=pool.pk, question_id=question_id, majority=request.POST.get("majority") == "1", actor=request.user
    )
    return redirect("adjudication:queue", slug=pool.study.slug)
