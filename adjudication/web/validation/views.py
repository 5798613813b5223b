"""Validation-study pages for researchers: the list, a short wizard, the report and its downloads.

The wizard is one form in four steps on one page — template, metric side, target side, then the
checks, shown before anything is created — with two submits: "check" (shows the checks) and
"create" (records the study, refused with the reason when a blocking check fails, unless "run
anyway" is ticked). Every view parses, authorizes (get_study_for_researcher or
get_validation_study_for_researcher: annotators 403, strangers 404), calls one service and responds.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from adjudication.analysis import planning
from adjudication.analysis.access import CATEGORICAL
from adjudication.models import ValidationStudy, ValidationTargetMode, ValidationTemplate
from adjudication.validation import checks as vc
from adjudication.validation.inputs import validation_checks_preview, validation_inputs_parse
from adjudication.validation.services import (
    get_validation_study_for_researcher,
    stamp,
    validation_study_as_dict,
    validation_study_create,
    validation_study_run,
)
from adjudication.validation.templates import TEMPLATE_INFO
from adjudication.web.common import json_download, report_errors
from annotation.access import get_study_for_researcher
from annotation.models import Pool, PoolMembership, Study
from concord.access import access_policy
from concord.errors import NotFound, ValidationFailed
from concord.http import attachment
from scoring.models import ScoreRun


def _wizard_choices(study: Study) -> dict[str, Any]:
    pools = list(Pool.objects.filter(study=study).prefetch_related("questions").order_by("name"))
    targets = [
        (f"{pool.pk}|{q.key}", f"{pool.name}: {q.key} ({q.scope}, {q.kind})")
        for pool in pools
        for q in pool.questions.all()
        if q.kind in CATEGORICAL
    ]
    raters = [("gold", "gold"), ("majority", "majority")] + [
        (m.pseudonym, f"{m.pseudonym} ({m.pool.name})")
        for m in PoolMembership.objects.filter(study=study).select_related("pool").order_by("pool__name", "pseudonym")
    ]
    runs = list(ScoreRun.objects.filter(study=study).order_by("-created_at", "-id"))
    return {
        "templates": [(value, label, TEMPLATE_INFO[value]) for value, label in ValidationTemplate.choices],
        "runs": runs,
        "pools": pools,
        "targets": targets,
        "raters": raters,
        "modes": ValidationTargetMode.choices,
    }


def _form_data(post: QueryDict) -> dict[str, Any]:
    data: dict[str, Any] = {
        key: post.get(key, "")
        for key in (
            "name",
            "template",
            "metric_run",
            "compare_run",
            "metric_pool",
            "metric_rater",
            "target_mode",
            "positive",
            "n_boot",
            "seed",
            "k",
            "override_reason",
        )
    }
    target = post.get("target", "")
    if "|" in target:
        data["target_pool"], data["target_question"] = target.split("|", 1)
    data["target"] = target
    data["run_anyway"] = post.get("run_anyway") == "on"
    return data


@access_policy("researcher")
@require_GET
@report_errors
def validation_index(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    studies = ValidationStudy.objects.filter(study=study).select_related(
        "target_pool", "target_question", "metric_run", "metric_pool"
    )
    return render(request, "adjudication/validation_index.html", {"study": study, "studies": studies})


@access_policy("researcher")
@require_http_methods(["GET", "POST"])
@report_errors
def validation_new(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    context: dict[str, Any] = {
        "study": study,
        **_wizard_choices(study),
        "form": {
            "template": request.GET.get("template", ""),
            "metric_rater": "gold",
            "n_boot": "1000",
            "seed": "0",
            "k": "5",
            "target_mode": "majority",
        },
    }
    if request.method == "GET":
        return render(request, "adjudication/validation_new.html", context)
    data = _form_data(request.POST)
    context["form"] = data
    try:
        inputs = validation_inputs_parse(study=study, data=data)
        if request.POST.get("action") != "create":
            context["checks"] = validation_checks_preview(inputs=inputs)
            context["blocking"] = vc.blocking_failures(context["checks"])
            context["plan"] = planning.validation_plan(
                vs=ValidationStudy(study=study, **inputs),
                half_width=planning.parse_half_width(request.POST.get("half_width")),
            )
            return render(request, "adjudication/validation_new.html", context)
        vs = validation_study_create(
            study=study,
            actor=request.user,
            inputs=inputs,
            run_anyway=data["run_anyway"],
            override_reason=data["override_reason"],
        )
    except ValidationFailed as exc:
        context["error"] = exc.message
        if isinstance(exc.details, dict) and "checks" in exc.details:
            context["checks"] = exc.details["checks"]
            context["blocking"] = vc.blocking_failures(context["checks"])
        return render(request, "adjudication/validation_new.html", context, status=400)
    return redirect(reverse("adjudication:validation-report", args=[vs.pk]))


def _report_context(vs: ValidationStudy) -> dict[str, Any]:
    return {
        "vs": vs,
        "study": vs.study,
        "results": vs.results,
        "stamp": stamp(vs),
        "checks": (vs.results or {}).get("checks") or vs.checks,
    }


@access_policy("researcher")
@require_GET
@report_errors
def validation_report(request: HttpRequest, pk: int) -> HttpResponse:
    vs = get_validation_study_for_researcher(request.user, pk)
    return render(request, "adjudication/validation_report.html", _report_context(vs))


@access_policy("researcher")
@require_POST
@report_errors
def validation_run(request: HttpRequest, pk: int) -> HttpResponse:
    vs = get_validation_study_for_researcher(request.user, pk)
    try:
        validation_study_run(validation_study=vs, actor=request.user)
    except ValidationFailed as exc:
        context = _report_context(vs)
        context["error"] = exc.message
        return render(request, "adjudication/validation_report.html", context, status=400)
    return redirect(reverse("adjudication:validation-report", args=[vs.pk]))


@access_policy("researcher")
@require_GET
@report_errors
def validation_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    vs = get_validation_study_for_researcher(request.user, pk)
    if fmt not in ("html", "json"):
        raise NotFound("downloads are .html or .json")
    if not vs.results:
        raise ValidationFailed("run the study first: it has no results to download")
    name = f"{vs.study.slug}-validation-{vs.pk}"
    if fmt == "json":
        return json_download(validation_study_as_dict(vs), name)
    # A page for the researcher's disk, with its stylesheet inline so that it opens anywhere. It is
    # sent as an attachment, never rendered by the app under its Content-Security-Policy.
    body = render_to_string("adjudication/validation_export.html", _report_context(vs))
    return attachment(body, content_type="text/html; charset=utf-8", filename=f"{name}.html")
