"""The researcher console's quality-control page (docs/guide/quality.md): mark items of known answer (control
items, qualification items, attention checks), and set each pool's rates, flag threshold and qualification.

Each view authorizes with the console's access helpers (annotators 403, strangers 404), calls one service of
``annotation.quality`` or ``annotation.console.services`` and responds.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation import quality
from annotation.access import get_study_for_researcher
from annotation.console import services as svc
from annotation.console.access import get_pool_for_researcher
from annotation.models import ControlItem, ControlKind, Item, Pool, Study
from concord.access import access_policy
from concord.errors import DomainError, NotFound, ValidationFailed
from concord.http import domain_errors
from concord.params import parse_int

MAX_ANSWERS_JSON = 20_000


def _context(study: Study, **extra: Any) -> dict[str, Any]:
    return {
        "study": study,
        "section": "quality",
        "controls": ControlItem.objects.filter(item__study=study).select_related("item").order_by("kind", "item_id"),
        "kinds": ControlKind.choices,
        "pools": Pool.objects.filter(study=study).order_by("name"),
        "item_questions": study.questions.filter(scope="item").order_by("order", "id"),
        **extra,
    }


@access_policy("researcher")
@require_GET
@domain_errors
def controls(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    return render(request, "annotation/console/quality.html", _context(study))


def _answers_from_post(study: Study, data: Any) -> Any:
    """The known answers: a JSON object in ``answers``, or one field ``known-<question key>`` per item question
    (blank fields are not answers)."""
    raw = (data.get("answers") or "").strip()
    if raw:
        if len(raw) > MAX_ANSWERS_JSON:
            raise ValidationFailed("known answers too long")
        try:
            return json.loads(raw)
        except ValueError:
            raise ValidationFailed("known answers must be a JSON object {question key: answer}") from None
    out: dict[str, Any] = {}
    for question in study.questions.filter(scope="item"):
        values = [v for v in data.getlist(f"known-{question.key}") if v.strip()]
        if not values:
            continue
        out[question.key] = values if question.kind == "multilabel" else values[0]
    return out


@access_policy("researcher")
@require_POST
@domain_errors
def control_mark(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    external_id = (request.POST.get("external_id") or "").strip()
    item = Item.objects.filter(study=study, external_id=external_id).first() if external_id else None
    try:
        if item is None:
            raise ValidationFailed(f"the study has no item {external_id!r}" if external_id else "give an item id")
        quality.control_mark(
            study=study, item=item, kind=request.POST.get("kind") or ControlKind.CONTROL,
            answers_raw=_answers_from_post(study, request.POST), explanation=request.POST.get("explanation") or "",
            actor=request.user,
        )
    except DomainError as exc:
        return render(
            request, "annotation/console/quality.html", _context(study, error=exc.message), status=exc.status_code
        )
    messages.success(request, f"Item {item.external_id} now has known answers.")
    return redirect("console:quality", slug=study.slug)


@access_policy("researcher")
@require_POST
@domain_errors
def control_unmark(request: HttpRequest, slug: str, external_id: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    item = Item.objects.filter(study=study, external_id=external_id).first()
    if item is None:
        raise NotFound("No such item.")
    quality.control_unmark(study=study, item=item)
    messages.success(request, f"Item {item.external_id} is an ordinary item again.")
    return redirect("console:quality", slug=study.slug)


def _share(data: Any, name: str, *, blank: float | None) -> float | None:
    raw = (data.get(name) or "").strip()
    if not raw:
        if blank is None:
            return None
        return blank
    try:
        value = float(raw)
    except ValueError:
        raise ValidationFailed(f"{name} must be a number from 0 to 1") from None
    if not 0 <= value <= 1:
        raise ValidationFailed(f"{name} must be a number from 0 to 1")
    return value


@access_policy("researcher")
@require_POST
@domain_errors
def pool_quality_settings(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    pool = get_pool_for_researcher(request.user, slug, pool_id)
    data = request.POST
    try:
        control_rate = _share(data, "control_rate", blank=0.0) or 0.0
        attention_rate = _share(data, "attention_rate", blank=0.0) or 0.0
        quality.rates_check(control_rate=control_rate, attention_rate=attention_rate)
        pool.control_rate, pool.attention_rate = control_rate, attention_rate
        pool.flag_below = _share(data, "flag_below", blank=None)
        pool.qualification_required = data.get("qualification_required") in ("on", "1", "true")
        pool.qualification_pass_mark = _share(data, "qualification_pass_mark", blank=0.8) or 0.0
        pool.qualification_max_attempts = parse_int(
            data.get("qualification_max_attempts"), name="qualification_max_attempts", minimum=1, maximum=100,
            default=2,
        )
    except DomainError as exc:
        study = pool.study
        return render(
            request, "annotation/console/quality.html", _context(study, error=exc.message), status=exc.status_code
        )
    pool.save(
        update_fields=[
            "control_rate", "attention_rate", "flag_below", "qualification_required", "qualification_pass_mark",
            "qualification_max_attempts",
        ]
    )
    added = svc.pool_top_up(pool)
    messages.success(request, f"Quality settings of {pool.name} saved ({added} new assignment{'s' * (added != 1)}).")
    return redirect("console:quality", slug=slug)


