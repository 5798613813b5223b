"""Planning simulations run as planning jobs (a ReportJob kind) in a worker, never inside a request; their
pages and API show progress and then the plan; a bound refuses more concurrent runs per study and per
site (429); and every input the planning forms and API accept is refused clearly when hostile (never 500)."""

from __future__ import annotations

import io
import threading
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from adjudication import report_jobs
from adjudication.analysis import planning
from adjudication.models import ReportJob, ReportJobKind, ReportJobStatus
from adjudication.stats import planning as sp
from annotation.models import Pool
from tests import factories, waiting
from tests.adjudication.analysis.test_planning import _study, run_planning_jobs

pytestmark = pytest.mark.django_db

FIELDS = ("auc", "prevalence", "kappa", "alpha", "raters", "categories", "half_width", "confidence", "seed")
BASES = (
    {"auc": "0.8", "prevalence": "0.3", "half_width": "0.05"},
    {"kappa": "0.6", "raters": "2", "categories": "2", "prevalence": "0.3", "half_width": "0.05"},
    {"alpha": "0.6", "raters": "3", "categories": "3", "half_width": "0.1"},
)
HOSTILE = (
    "0", "1e-300", "-1", "-0.05", "NaN", "nan", "inf", "-Infinity", "1e309", "1e999", "9" * 400, "0." + "0" * 300 + "1",
    "٠.٠٥", "０.０５", "²", "1_0", "0x10", "1/2", "0.05\x00", "", " ", "[]",
)  # fmt: skip


@pytest.fixture(autouse=True)
def _roomy(settings):
    settings.PLANNING_MAX_RUNNING_PER_STUDY = 10_000
    settings.PLANNING_MAX_RUNNING = 10_000
    planning._kappa_plan_cached.cache_clear()


@pytest.fixture
def world(researcher):
    return _study(researcher)


# --- no simulation inside a request ----------------------------------------------------------------------


def test_no_planning_simulation_runs_inside_a_request(client, researcher, world, monkeypatch):
    """The pool's plan, a validation study's precision and a plan from figures simulate only in the job."""
    calls: list[str] = []
    real = sp.agreement_plan

    def spy(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(sp, "agreement_plan", spy)
    client.force_login(researcher)
    urls = [
        reverse("adjudication:pool-plan", args=[world["pool_b"].pk]),
        reverse("adjudication:validation-precision", args=[world["vs"].pk]),
        reverse("adjudication-api-pool-plan", args=[world["pool_b"].pk]),
        reverse("adjudication-api-validation-plan", args=[world["vs"].pk]),
        reverse("adjudication-api-plan", args=[world["study"].slug]) + "?kappa=0.6&raters=3&categories=3",
    ]
    for url in urls:
        response = client.get(url, HTTP_HX_REQUEST="true")
        assert response.status_code in (200, 202), (url, response.status_code)
    assert calls == []
    assert run_planning_jobs() == 3  # the page and the API of the same plan share one job
    assert calls  # the worker simulated
    for url in urls:
        assert client.get(url, HTTP_HX_REQUEST="true").status_code == 200
    assert not ReportJob.objects.filter(kind=ReportJobKind.PLANNING).exclude(status=ReportJobStatus.DONE).exists()


def test_a_planning_job_records_its_progress_and_the_page_polls_it(client, researcher, world):
    client.force_login(researcher)
    url = reverse("adjudication:validation-precision", args=[world["vs"].pk])
    first = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "Computing the plan" in first and 'hx-trigger="every 1s"' in first and f'hx-get="{url}"' in first
    job = ReportJob.objects.get(kind=ReportJobKind.PLANNING)
    assert job.params["what"] == "validation" and job.params["data_version"]
    seen: list[tuple[int, int]] = []
    real = report_jobs.planning.validation_monitoring

    def watched(**kwargs):
        progress = kwargs.pop("progress")

        def spy(done: int, total: int) -> None:
            seen.append((done, total))
            progress(done, total)

        return real(**kwargs, progress=spy)

    report_jobs.planning.validation_monitoring = watched
    try:
        run_planning_jobs()
    finally:
        report_jobs.planning.validation_monitoring = real
    job.refresh_from_db()
    assert job.status == ReportJobStatus.DONE and job.n_done == job.n_total == seen[-1][0] > 1
    assert [d for d, _ in seen] == list(range(1, len(seen) + 1))
    done = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert '<svg class="precision"' in done and "Computing the plan" not in done


def test_the_simulated_plan_reports_its_progress_up_to_its_total():
    seen: list[tuple[int, int]] = []
    sp.agreement_plan("fleiss", 0.6, 3, 3, 0.05, n_sim=500, seed=0, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (1000, 1000) and all(t == 1000 for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_new_labels_make_a_new_plan_and_the_old_one_is_not_shown(client, researcher):
    s = _study(researcher, label_b=False)
    client.force_login(researcher)
    api = reverse("adjudication-api-validation-plan", args=[s["vs"].pk])
    assert client.get(api).status_code == 202
    run_planning_jobs()
    assert client.get(api).json()["items_done"] == 0
    from tests.adjudication import validation_support

    validation_support.label_pool_b(s)
    assert client.get(api).status_code == 202  # the data changed: a new job, never the stale plan
    run_planning_jobs()
    assert client.get(api).json()["items_done"] == 6


def test_a_failed_planning_job_answers_400_with_its_reason(client, researcher, world, monkeypatch):
    client.force_login(researcher)
    api = reverse("adjudication-api-pool-plan", args=[world["pool_b"].pk])
    assert client.get(api).status_code == 202

    def broken(**kwargs):
        raise planning.ValidationFailed("the pool has no questions left")

    monkeypatch.setattr(planning, "pool_plan", broken)
    run_planning_jobs()
    response = client.get(api)
    assert response.status_code == 400 and "the pool has no questions left" in response.json()["detail"]
    fragment = client.get(reverse("adjudication:pool-plan", args=[world["pool_b"].pk]), HTTP_HX_REQUEST="true")
    assert fragment.status_code == 400 and "the pool has no questions left" in fragment.content.decode()


# --- the bound on concurrent runs --------------------------------------------------------------------------


def _plan_api(slug: str, kappa: str) -> str:
    return reverse("adjudication-api-plan", args=[slug]) + f"?kappa={kappa}&raters=3&categories=3"


def test_too_many_running_planning_jobs_for_a_study_are_refused_with_the_reason(client, researcher, world, settings):
    settings.PLANNING_MAX_RUNNING_PER_STUDY = 2
    client.force_login(researcher)
    slug = world["study"].slug
    assert client.get(_plan_api(slug, "0.5")).status_code == 202
    assert client.get(_plan_api(slug, "0.6")).status_code == 202
    assert client.get(_plan_api(slug, "0.5")).status_code == 202  # the same plan: its job, not a new one
    refused = client.get(_plan_api(slug, "0.7"))
    assert refused.status_code == 429
    assert "2 planning simulations are already running for this study" in refused.json()["detail"]
    page = client.get(reverse("adjudication:pool-plan", args=[world["pool_b"].pk]), HTTP_HX_REQUEST="true")
    assert page.status_code == 429 and "already running for this study" in page.content.decode()
    assert ReportJob.objects.filter(kind=ReportJobKind.PLANNING).count() == 2
    run_planning_jobs()
    assert client.get(_plan_api(slug, "0.7")).status_code == 202  # room again once they finished


def test_the_site_wide_bound_counts_every_study(client, researcher, world, settings):
    settings.PLANNING_MAX_RUNNING = 1
    other = factories.make_study(owner=researcher, slug="other-study")
    client.force_login(researcher)
    assert client.get(_plan_api(world["study"].slug, "0.5")).status_code == 202
    refused = client.get(_plan_api(other.slug, "0.5"))
    assert refused.status_code == 429 and "already running on this site" in refused.json()["detail"]


def test_a_lost_planning_job_stops_counting_and_is_queued_again(client, researcher, world, settings):
    settings.PLANNING_MAX_RUNNING_PER_STUDY = 1
    client.force_login(researcher)
    slug = world["study"].slug
    assert client.get(_plan_api(slug, "0.5")).status_code == 202
    lost = ReportJob.objects.get(kind=ReportJobKind.PLANNING)
    long_ago = timezone.now() - timedelta(seconds=settings.PLANNING_JOB_STALE_SECONDS + 1)
    ReportJob.objects.filter(pk=lost.pk).update(status=ReportJobStatus.RUNNING, created_at=long_ago)
    assert client.get(_plan_api(slug, "0.6")).status_code == 202  # the lost one no longer counts
    run_planning_jobs()
    again = client.get(_plan_api(slug, "0.5"))
    assert again.status_code == 202 and again.json()["job"] == lost.pk
    lost.refresh_from_db()
    assert lost.status == ReportJobStatus.QUEUED and lost.created_at > long_ago


@pytest.mark.django_db(transaction=True)
def test_concurrent_starts_never_exceed_the_bound(researcher, settings):
    """Eight requests for eight different plans start at once with room for two: two are queued, six refused."""
    settings.PLANNING_MAX_RUNNING_PER_STUDY = 2
    study = factories.make_study(owner=researcher, slug="race")
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def start(i: int) -> None:
        try:
            barrier.wait(timeout=waiting.STALL_SECONDS)
            report_jobs.figures_plan_job(
                study=study, data={"kappa": f"0.{i + 1}", "raters": "3", "categories": "3"}, user=researcher
            )
            outcomes.append("queued")
        except report_jobs.TooManyRequests:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=start, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for i, t in enumerate(threads):
        waiting.join(t, what=f"plan start {i}")
    assert sorted(outcomes) == ["queued"] * 2 + ["refused"] * 6
    assert ReportJob.objects.filter(study=study, kind=ReportJobKind.PLANNING).count() == 2


# --- hostile inputs: a clear 400, never a 500 ---------------------------------------------------------------


@pytest.mark.parametrize("base", BASES, ids=["auc", "kappa2x2", "alpha"])
@pytest.mark.parametrize("field", FIELDS)
def test_every_plan_api_input_refuses_hostile_values_clearly(client, researcher, world, base, field):
    client.force_login(researcher)
    url = reverse("adjudication-api-plan", args=[world["study"].slug])
    for value in HOSTILE:
        response = client.get(url, {**base, field: value})
        assert response.status_code in (202, 400), (field, value, response.status_code)
        if response.status_code == 400:
            assert response.json()["detail"], (field, value)
    # Whatever was accepted computes without an error.
    run_planning_jobs()
    assert not ReportJob.objects.filter(status=ReportJobStatus.FAILED).exists()


@pytest.mark.parametrize(
    "query,message",
    [
        ({"half_width": "1e-300"}, "half_width must be at least 0.001"),
        ({"half_width": "0"}, "half_width must be at least 0.001"),
        ({"half_width": "-0.05"}, "half_width must be at least 0.001"),
        ({"half_width": "NaN"}, "half_width must be a number"),
        ({"half_width": "inf"}, "half_width must be a number"),
        ({"half_width": "1e309"}, "half_width must be a finite number"),
        ({"half_width": "٠.٠٥"}, "half_width must be a number"),
        ({"half_width": "0.5"}, "less than 0.5"),
        ({"prevalence": "1e-300"}, "prevalence must lie between 0.001 and 0.999"),
        ({"confidence": "0"}, "confidence must lie in [0.5, 0.999]"),
        ({"confidence": "0.9999999"}, "confidence must lie in [0.5, 0.999]"),
        ({"raters": "٣"}, "raters must be a whole number from 2 to 50"),
        ({"raters": "1e1"}, "raters must be a whole number from 2 to 50"),
        ({"seed": "-1"}, "seed must be a whole number"),
    ],
)
def test_hostile_plan_inputs_get_a_400_naming_the_reason(client, researcher, world, query, message):
    """1e-300 used to reach n = z²Q/L² (ZeroDivisionError, a 500); Unicode digits were read as numbers."""
    client.force_login(researcher)
    base = {"kappa": "0.6", "raters": "2", "categories": "2", "prevalence": "0.3", "half_width": "0.05"}
    response = client.get(reverse("adjudication-api-plan", args=[world["study"].slug]), {**base, **query})
    assert response.status_code == 400, response.content
    assert message in response.json()["detail"]
    assert not ReportJob.objects.exists()


def test_the_narrowest_accepted_half_width_plans_without_error(client, researcher, world):
    client.force_login(researcher)
    url = reverse("adjudication-api-plan", args=[world["study"].slug])
    for base in BASES[:2]:
        response = client.get(url, {**base, "half_width": "0.001"})
        assert response.status_code == 202
    run_planning_jobs()
    done = client.get(url, {**BASES[1], "half_width": "0.001"}).json()
    assert done["n_items"] > 100_000


@pytest.mark.parametrize("value", HOSTILE)
def test_the_pool_and_validation_planning_addresses_refuse_hostile_half_widths(client, researcher, world, value):
    client.force_login(researcher)
    pool, vs = world["pool_b"], world["vs"]
    for name in ("adjudication:pool-plan", "adjudication:validation-precision"):
        response = client.get(reverse(name, args=[pool.pk if "pool" in name else vs.pk]), {"half_width": value})
        assert response.status_code in (200, 202, 400), (name, value, response.status_code)
    for name in ("adjudication-api-pool-plan", "adjudication-api-validation-plan"):
        response = client.get(reverse(name, args=[pool.pk if "pool" in name else vs.pk]), {"half_width": value})
        assert response.status_code in (202, 400), (name, value, response.status_code)
    stop = client.post(reverse("adjudication:pool-stop-rule", args=[pool.pk]), {"stop_at_half_width": value})
    assert stop.status_code in (302, 400), (value, stop.status_code)
    if stop.status_code == 302:
        assert value.strip() == ""
    assert Pool.objects.get(pk=pool.pk).stop_at_half_width is None
    wizard = client.post(
        reverse("adjudication:validation-new", args=[world["study"].slug]),
        {
            "template": "astrid",
            "metric_run": world["cf"].pk,
            "target": f"{pool.pk}|perceived_faithfulness",
            "target_mode": "majority",
            "positive": "3",
            "half_width": value,
            "action": "check",
        },
    )
    assert wizard.status_code in (200, 400), (value, wizard.status_code)


@pytest.mark.parametrize("value", ["1e-300", "NaN", "٠.٠٥", "1e309", "-1"])
def test_the_command_refuses_hostile_values_naming_them(value):
    with pytest.raises(CommandError):
        call_command(
            "plan_validation", "--auc", "0.8", "--prevalence", "0.3", "--half-width", value, stdout=io.StringIO()
        )
    with pytest.raises(CommandError):
        call_command(
            "plan_validation", "--kappa", "0.6", "--raters", "2", "--categories", "2", "--prevalence", value,
            stdout=io.StringIO(),
        )
