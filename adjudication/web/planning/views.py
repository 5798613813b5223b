"""Planning fragments: the pool's plan and stopping rule (loaded into the console's pool page) and a
validation study's precision over time (loaded into its report). Researchers only."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from adjudication.analysis import planning
from adjudication.selectors import pool_get_for_researcher
from adjudication.validation import studies as validation
from adjudication.web.common import report_errors
from concord.access import access_policy
from concord.errors import ValidationFailed
from concord.http import vary_on_htmx


def _pool_context(pool, half_width: float) -> dict:
    plan = planning.pool_plan(pool=pool, half_width=half_width)
    return {"pool": pool, "plan": plan, "line": planning.pool_plan_line(plan), "half_width": half_width}


@access_policy("researcher")
@require_GET
@report_errors
def pool_plan(request: HttpRequest, pk: int) -> HttpResponse:
    pool = pool_get_for_researcher(user=request.user, pool_id=pk)
    half_width = planning.parse_half_width(request.GET.get("half_width"))
    return vary_on_htmx(render(request, "adjudication/_pool_plan.html", _pool_context(pool, half_width)))


@access_policy("researcher")
@require_POST
@report_errors
def pool_stop_rule(request: HttpRequest, pk: int) -> HttpResponse:
    pool = pool_get_for_researcher(user=request.user, pool_id=pk)
    try:
        if request.POST.get("action") == "reopen":
            planning.pool_reopen(pool=pool)
        else:
            planning.pool_stop_rule_set(pool=pool, half_width=request.POST.get("stop_at_half_width", ""))
    except ValidationFailed as exc:
        context = _pool_context(pool, planning.DEFAULT_HALF_WIDTH)
        context["error"] = exc.message
        return render(request, "adjudication/_pool_plan.html", context, status=400)
    return redirect(reverse("console:pool", args=[pool.study.slug, pool.pk]))


@access_policy("researcher")
@require_GET
@report_errors
def validation_precision(request: HttpRequest, pk: int) -> HttpResponse:
    vs = validation.validation_study_get_for_researcher(user=request.user, pk=pk)
    half_width = planning.parse_half_width(
        request.GET.get("half_width") or vs.target_pool.stop_at_half_width or planning.DEFAULT_HALF_WIDTH
    )
    monitoring = planning.validation_monitoring(vs=vs, half_width=half_width)
    context = {"vs": vs, "m": monitoring, "chart": planning.precision_chart(monitoring)}
    return vary_on_htmx(render(request, "adjudication/_validation_precision.html", context))
