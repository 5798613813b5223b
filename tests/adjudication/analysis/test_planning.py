"""Planning a validation from its design, monitoring its precision, the fixed-precision stopping rule, the
plan_validation command and the planning pages and API (access: anonymous refused; annotators of the
study 403 on study routes and 404 on objects named by id; others 404)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from adjudication import report_jobs
from adjudication.analysis import planning
from adjudication.models import ReportJob, ReportJobKind, ReportJobStatus, ValidationStudy, ValidationTemplate
from adjudication.stats import planning as sp
from adjudication.validation.services import pool_precision_check
from annotation.models import Assignment, AuditEvent, Pool
from annotation.services import assignment_reserve_next
from tests.adjudication import validation_support as vs_support
from tests.adjudication.validation_support import make_run

pytestmark = pytest.mark.django_db

CF = [0.9, 0.6, 0.1, 0.8, 0.3, 0.6]


def _study(researcher, *, label_b: bool = True, stop_at: float | None = None, metric: bool = True):
    s = vs_support.build(researcher)
    if stop_at is not None:
        Pool.objects.filter(pk=s["pool_b"].pk).update(stop_at_half_width=stop_at)
    s["cf"] = make_run(s["study"], "cf", {i.pk: v for i, v in zip(s["items"], CF, strict=True)})
    s["vs"] = ValidationStudy.objects.create(
        study=s["study"],
        name="planning test",
        template=ValidationTemplate.ASTRID,
        metric_run=s["cf"] if metric else None,
        target_pool=s["pool_b"],
        target_question=s["questions"]["perceived_faithfulness"],
        positive="3",
        created_by=researcher,
    )
    if label_b:
        vs_support.label_pool_b(s)
    return s


# --- plan and monitoring -------------------------------------------------------------------------------


def test_monitoring_follows_pool_b_as_its_items_complete(researcher):
    s = _study(researcher)
    out = planning.validation_monitoring(vs=s["vs"], half_width=0.05)
    assert out["items_done"] == 6
    keys = {series["key"] for series in out["series"]}
    assert keys == {"auc", "kappa"}
    auc = next(series for series in out["series"] if series["key"] == "auc")
    # The last checkpoint holds every complete item: its AUC is the metric against pool B's majority.
    assert auc["points"][-1]["items"] == 6
    assert [p["items"] for p in auc["points"]] == sorted(p["items"] for p in auc["points"])
    assert out["plan"]["pool"]["k"] == 2
    assert out["items_still_needed"] == out["items_needed_total"] - 6 > 0
    chart = planning.precision_chart(out)
    assert chart is not None and chart["lines"] and chart["lines"][0]["points"]


def test_a_validation_plan_states_its_assumptions_before_any_label(researcher):
    s = _study(researcher, label_b=False)
    plan = planning.validation_plan(vs=s["vs"], half_width=0.05)
    assert any("expected AUC 0.8" in a for a in plan["assumptions"])
    hm = sp.auc_plan_hanley_mcneil(0.8, 0.3, 0.05)
    assert plan["figures"][0]["n_items"] == hm.n_items
    assert plan["clinician_hours"] is None  # nothing timed yet: never a made-up figure


def test_the_pool_plan_line_gives_items_and_clinician_hours(researcher):
    s = _study(researcher)
    Assignment.objects.filter(pool=s["pool_b"]).update(active_seconds=120)
    plan = planning.pool_plan(pool=s["pool_b"], half_width=0.05)
    expected = sp.agreement_plan("fleiss", 0.6, 2, 5, 0.05, n_sim=planning.N_SIM, seed=0).n_items
    assert plan["n_items"] == expected
    assert plan["clinician_hours"] == pytest.approx(expected * 2 * 2 / 60)
    assert planning.pool_plan_line(plan).startswith(f"At k = 2 and ±0.05 you need about {expected:,} items")


# --- the stopping rule ---------------------------------------------------------------------------------


def test_a_pool_closes_itself_when_its_planned_precision_is_reached_and_the_trail_records_it(researcher):
    # Pool B's own agreement is the one headline figure (no metric run): ±0.435 on its six items.
    s = _study(researcher, label_b=False, stop_at=0.49, metric=False)
    before = AuditEvent.objects.filter(table_name="annotation_pool").count()
    vs_support.label_pool_b(s)
    pool = Pool.objects.get(pk=s["pool_b"].pk)
    status = planning.pool_precision_status(pool=pool)
    assert pool.closed_at is not None, status
    assert pool.closed_reason.startswith("fixed-precision rule: every headline figure within ±0.49")
    events = AuditEvent.objects.filter(table_name="annotation_pool", row_pk=str(pool.pk), operation="UPDATE")
    assert AuditEvent.objects.filter(table_name="annotation_pool").count() > before
    assert any((e.new_row or {}).get("closed_reason", "").startswith("fixed-precision rule") for e in events)
    # A closed pool hands out no further item.
    extra = Assignment.objects.filter(pool=pool).first()
    Assignment.objects.filter(pk=extra.pk).update(status="assigned", submitted_at=None)
    assert assignment_reserve_next(pool=pool, annotator=extra.annotator) is None


def test_a_pool_short_of_its_precision_stays_open(researcher):
    s = _study(researcher, label_b=False, stop_at=0.05)
    vs_support.label_pool_b(s)
    pool = Pool.objects.get(pk=s["pool_b"].pk)
    assert pool.closed_at is None
    status = planning.pool_precision_status(pool=pool)
    assert not status["reached"] and status["reasons"]


@pytest.mark.parametrize("planned,reached", [(12, True), (13, False)])
def test_the_pool_rule_waits_for_half_the_planned_items(researcher, monkeypatch, planned, reached):
    """Six items complete: a plan of 12 lets the rule decide (half is 6), a plan of 13 does not (half is 7),
    whatever the figures say (pool B's κ is within ±0.49 here)."""
    s = _study(researcher, label_b=False, metric=False)
    vs_support.label_pool_b(s)
    Pool.objects.filter(pk=s["pool_b"].pk).update(stop_at_half_width=0.49, closed_at=None, closed_reason="")
    real = planning.validation_plan

    def plan_of(**kwargs):
        return {**real(**kwargs), "n_items": planned}

    monkeypatch.setattr(planning, "validation_plan", plan_of)
    status = planning.pool_precision_status(pool=Pool.objects.get(pk=s["pool_b"].pk))
    assert status["reached"] is reached, status
    if not reached:
        assert status["reasons"] == ["planning test: 6 of at least 7 items (half the plan) completed"]


def test_a_pool_without_a_rule_is_never_closed(researcher):
    s = _study(researcher)
    assert Pool.objects.get(pk=s["pool_b"].pk).closed_at is None
    assert pool_precision_check(pool_id=s["pool_b"].pk, item_id=s["items"][0].pk) is False


# --- the command ---------------------------------------------------------------------------------------


def test_plan_validation_prints_the_auc_plan_as_json():
    out = io.StringIO()
    call_command("plan_validation", "--auc", "0.8", "--prevalence", "0.3", "--half-width", "0.05", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["plans"][0]["n_items"] == sp.auc_plan_hanley_mcneil(0.8, 0.3, 0.05).n_items
    assert data["plans"][1]["n_items"] == sp.auc_plan_obuchowski(0.8, 0.3, 0.05).n_items
    assert data["n_items"] == max(p["n_items"] for p in data["plans"])


def test_plan_validation_prints_the_kappa_plan():
    out = io.StringIO()
    call_command(
        "plan_validation", "--kappa", "0.6", "--raters", "3", "--categories", "3", "--half-width", "0.05", stdout=out
    )
    n = sp.agreement_plan("fleiss", 0.6, 3, 3, 0.05, n_sim=2 * planning.N_SIM, seed=0).n_items
    assert f"{n} items" in out.getvalue()


@pytest.mark.parametrize(
    "args,message",
    [
        (["--auc", "0.8", "--half-width", "0.05"], "prevalence"),
        (["--auc", "0.4", "--prevalence", "0.3"], "between 0.5 and 1"),
        (["--kappa", "0.6", "--raters", "3"], "raters and categories"),
        (["--kappa", "0.6", "--raters", "3", "--categories", "3", "--half-width", "0.7"], "half_width"),
        (["--kappa", "abc", "--raters", "3", "--categories", "3"], "kappa must be a number"),
    ],
)
def test_plan_validation_refuses_bad_input_naming_it(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("plan_validation", *args, stdout=io.StringIO())


# --- pages and API -------------------------------------------------------------------------------------


def run_planning_jobs() -> int:
    """What the worker does: run every queued planning job (tests never wait on a real worker)."""
    queued = list(ReportJob.objects.filter(kind=ReportJobKind.PLANNING, status=ReportJobStatus.QUEUED))
    for job in queued:
        report_jobs.job_run(job_id=job.pk)
    return len(queued)


def computed(client, url, query=None):
    """GET a planning address: 202 while the job is queued, then (the worker having run) 200."""
    pending = client.get(url, query or {})
    assert pending.status_code == 202, pending.content
    assert pending.json()["status"] == "queued"
    assert run_planning_jobs() == 1
    done = client.get(url, query or {})
    assert done.status_code == 200, done.content
    return done.json()


def _refused_anonymous(response):
    # DRF answers 401 only when its first authenticator names a scheme; this project's is the session
    # (settings.REST_FRAMEWORK), so an anonymous caller gets 403 "credentials were not provided", as on
    # every other endpoint (tests/annotation/test_api.py).
    assert response.status_code in (401, 403)
    assert "credentials were not provided" in response.json()["detail"]


def test_the_plan_api_serves_the_same_plan_and_refuses_outsiders(client, researcher, annotator, stranger):
    s = _study(researcher, label_b=False)
    slug = s["study"].slug
    url = reverse("adjudication-api-plan", args=[slug])
    query = {"auc": "0.8", "prevalence": "0.3", "half_width": "0.05"}
    _refused_anonymous(client.get(url, query))
    client.force_login(researcher)
    data = computed(client, url, query)
    assert data["plans"][0]["n_items"] == sp.auc_plan_hanley_mcneil(0.8, 0.3, 0.05).n_items
    assert client.get(url, query).json() == data  # computed once, then served from its job
    assert ReportJob.objects.filter(kind=ReportJobKind.PLANNING).count() == 1
    bad = client.get(url, {"auc": "0.8"})
    assert bad.status_code == 400 and "prevalence" in json.dumps(bad.json())
    client.force_login(s["b_users"][0])
    assert client.get(url, query).status_code == 403
    client.force_login(stranger)
    assert client.get(url, query).status_code == 404


def test_the_validation_plan_api_and_chart_are_for_researchers_only(client, researcher, stranger):
    s = _study(researcher)
    vs = s["vs"]
    api = reverse("adjudication-api-validation-plan", args=[vs.pk])
    page = reverse("adjudication:validation-precision", args=[vs.pk])
    pool_api = reverse("adjudication-api-pool-plan", args=[s["pool_b"].pk])
    _refused_anonymous(client.get(api))
    client.force_login(researcher)
    data = computed(client, api)
    assert data["items_done"] == 6 and data["series"]
    body = client.get(page).content.decode()  # the same job (same half-width, same data): done
    assert '<svg class="precision"' in body and "<polyline" in body and "still needed about" in body
    assert computed(client, pool_api)["line"].startswith("At k = 2 and ±0.05")
    report = client.get(reverse("adjudication:validation-report", args=[vs.pk])).content.decode()
    assert reverse("adjudication:validation-precision", args=[vs.pk]) in report
    # Objects named by their own id answer 404 to members who may not see them, as to strangers.
    client.force_login(s["b_users"][0])
    for url in (api, page, pool_api, reverse("adjudication:pool-plan", args=[s["pool_b"].pk])):
        assert client.get(url).status_code == 404
    client.force_login(stranger)
    for url in (api, page, pool_api, reverse("adjudication:pool-plan", args=[s["pool_b"].pk])):
        assert client.get(url).status_code == 404
    missing = reverse("adjudication-api-validation-plan", args=[vs.pk + 999])
    client.force_login(researcher)
    assert client.get(missing).status_code == 404


def test_the_console_pool_page_loads_the_plan_and_the_rule_can_be_set(client, researcher):
    s = _study(researcher, label_b=False)
    pool = s["pool_b"]
    client.force_login(researcher)
    page = client.get(reverse("console:pool", args=[s["study"].slug, pool.pk])).content.decode()
    assert reverse("adjudication:pool-plan", args=[pool.pk]) in page
    url = reverse("adjudication:pool-plan", args=[pool.pk])
    progress = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "Computing the plan" in progress and f'hx-get="{url}"' in progress and "<progress" in progress
    run_planning_jobs()
    fragment = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "At k = 2 and ±0.05 you need about" in fragment and "hx-trigger" not in fragment
    stop = reverse("adjudication:pool-stop-rule", args=[pool.pk])
    assert client.post(stop, {"stop_at_half_width": "0.07"}).status_code == 302
    assert Pool.objects.get(pk=pool.pk).stop_at_half_width == 0.07
    refused = client.post(stop, {"stop_at_half_width": "2"})
    assert refused.status_code == 400 and Pool.objects.get(pk=pool.pk).stop_at_half_width == 0.07


def test_the_wizard_shows_the_plan_with_the_checks(client, researcher):
    s = _study(researcher)
    client.force_login(researcher)
    body = {
        "template": "astrid",
        "metric_run": s["cf"].pk,
        "target": f"{s['pool_b'].pk}|perceived_faithfulness",
        "target_mode": "majority",
        "positive": "3",
        "half_width": "0.05",
        "action": "check",
    }
    page = client.post(reverse("adjudication:validation-new", args=[s["study"].slug]), body).content.decode()
    assert "5. Plan" in page and "the headline figures need about" in page
