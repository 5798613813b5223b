"""A researcher reads scores and manages data in a real browser: a run's page item by item with its
distribution, two runs side by side, a failed run's reason, backends shown unavailable; the data
manager filtered (the count follows over htmx) and a bulk action confirmed.

Screenshots: tests/e2e/artifacts/scores_*.png and data_manager_*.png.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

from adjudication.models import BulkAction
from annotation.models import Assignment, AssignmentStatus, Role
from concord.celery import app as celery_app
from scoring import services
from scoring.models import RunStatus, Score, ScoreRun
from tests import factories

ARTIFACTS = Path(__file__).parent / "artifacts"
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def researcher_and_study():
    rita = factories.make_user("rita-e2e")
    study = factories.make_study(owner=rita, slug="scores-e2e", name="Scores e2e")
    factories.grant(study, rita, Role.RESEARCHER)
    return rita, study


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _cf_run(study, rita, threshold):
    before = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        run = services.score_run_start(study=study, metric="cf", backend="lexical",
                                       parameters={"support_threshold": threshold}, actor=rita)
    finally:
        celery_app.conf.task_always_eager = before
    run.refresh_from_db()
    return run


def test_a_researcher_reads_a_run_item_by_item_and_compares_two_runs(
    live_server, login, researcher_and_study, settings
):
    settings.NLI_MODEL_DIR = ""
    settings.LLM_BASE_URL = ""
    rita, study = researcher_and_study
    for n, (answer, passage) in enumerate([
        ("Metformin is first-line for diabetes. Ask your doctor.", "Metformin is first-line for type 2 diabetes."),
        ("Warfarin needs INR checks. Bananas are blue.", "Patients on warfarin need regular INR checks."),
        ("Wash a bite with soap and water. See a doctor today.", "Clean the wound with soap and running water."),
    ]):
        item = factories.make_item(study, f"s-{n}", answer=answer)
        factories.make_chunk(item, 1, passage)
    a = _cf_run(study, rita, 0.5)
    b = _cf_run(study, rita, 0.9)
    assert a.status == b.status == RunStatus.DONE
    page = login(rita).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(live_server.url + reverse("scoring:runs", args=[study.slug]))
    page.locator("#backend-status").get_by_text("set NLI_MODEL_DIR").wait_for()
    assert page.locator("select#cf__backend option[value=llm]").is_disabled()
    _shot(page, "scores_runs_backends")

    page.goto(live_server.url + reverse("scoring:run", args=[a.pk]))
    assert page.locator("nav.console-tabs a[aria-current=page]").inner_text() == "Scores"
    page.locator("#run-items").get_by_text("Bananas are blue.").wait_for()
    assert page.locator("#run-items").get_by_text("not grounded").count() >= 1
    assert page.locator("svg.histogram rect").count() == 10
    # Three items: the mean, and no interval below five items.
    assert re.search(r"Mean \d\.\d{3} \(too few items for a confidence interval: 3, at least 5 needed\)",
                     page.locator("#run-distribution").inner_text())
    _shot(page, "scores_run_items")

    page.select_option("#compare-with", str(b.pk))
    page.click("#compare-form button")
    page.wait_for_url(re.compile(r"/compare/\?with="))
    page.locator("#compare-agreement").get_by_text("Pearson's r").wait_for()
    page.click("text=Every unit (sentences, passages, aspects)")
    page.locator("#compare-agreement").get_by_text("Cohen's κ").wait_for()
    _shot(page, "scores_compare")

    failed = ScoreRun.objects.create(study=study, metric="cf", metric_version="2", backend="nli",
                                     status=RunStatus.FAILED, error="nli backend: no model configured")
    page.goto(live_server.url + reverse("scoring:run", args=[failed.pk]))
    assert "The run failed before scoring any item" in page.locator("#run-failure").inner_text()
    _shot(page, "scores_failed_run")
    assert not errors


def test_a_run_page_open_while_the_run_works_shows_its_scores_once_it_is_done(
    live_server, login, researcher_and_study
):
    """The page polls its progress while the run is active; when the run finishes, the sections drawn
    before it had scores (distribution, item by item, every score) are drawn again without a reload."""
    rita, study = researcher_and_study
    items = [factories.make_item(study, f"d-{n}", answer="Metformin is first-line.") for n in range(6)]
    run = ScoreRun.objects.create(study=study, metric="ra", metric_version="1", backend="lexical",
                                  status=RunStatus.RUNNING, n_total=len(items), created_by=rita)
    page = login(rita).new_page()
    page.goto(live_server.url + reverse("scoring:run", args=[run.pk]))
    page.locator("#run-distribution").get_by_text("no item has a value yet").wait_for()
    assert page.get_by_text("No scores yet.").count() == 1
    # The worker's part, done here: a score per item, then the run marked done.
    for n, item in enumerate(items):
        Score.objects.create(run=run, item=item, unit_key="item", value=float(n < 2), state="ok", details={})
    ScoreRun.objects.filter(pk=run.pk).update(status=RunStatus.DONE, n_done=len(items))
    # Waits for the next poll (every 2 s), however long the machine takes to answer it.
    page.locator("#run-distribution").get_by_text("(Wilson score), over 6 items").wait_for()
    assert page.get_by_text("No scores yet.").count() == 0
    assert "Done" in page.locator("#run-progress").inner_text()
    _shot(page, "scores_run_done_without_reload")


def test_a_researcher_filters_the_data_and_requeues_skipped_items(live_server, login, researcher_and_study):
    rita, study = researcher_and_study
    q = factories.make_question(study, "pf")
    pool = factories.make_pool(study, "PF", questions=[q], overlap=1)
    kim = factories.make_user("kim-e2e")
    factories.add_member(pool, kim, "P-A1")
    for n in range(12):
        item = factories.make_item(study, f"d-{n:02d}", question=("Warfarin and ibuprofen?" if n % 3 == 0 else
                                                                 "Dog bite care?"), metadata={"topic": "t"})
        status = AssignmentStatus.SKIPPED if n % 4 == 0 else AssignmentStatus.SUBMITTED
        factories.make_assignment(pool, item, kim, status=status, skip_reason="unsure" if n % 4 == 0 else "")
    page = login(rita).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(live_server.url + reverse("console:study", args=[study.slug]))
    page.click("nav.console-tabs >> text=Data")
    page.locator("#dm-count").get_by_text("12").wait_for()
    page.fill("#dm-q", "warfarin")
    page.locator("#dm-count strong", has_text="4").wait_for()  # the count follows over htmx
    page.fill("#dm-q", "")
    page.select_option("#dm-pool", str(pool.pk))
    page.select_option("#dm-pool-state", "skipped")
    page.locator("#dm-count strong", has_text="3").wait_for()
    _shot(page, "data_manager_filtered")
    page.check("#dm-all")
    page.select_option("#dm-action", "requeue")
    page.click("text=Review the action")
    page.locator("#dm-confirm").wait_for()
    assert page.locator("#dm-confirm-assignments").inner_text() == "3"
    assert Assignment.objects.filter(status=AssignmentStatus.SKIPPED).count() == 3
    _shot(page, "data_manager_confirm")
    page.click("#dm-confirm button[type=submit]")
    page.get_by_text("Re-queued 3 skipped assignments of pool PF.").wait_for()
    page.locator("#dm-audit").wait_for()
    assert Assignment.objects.filter(status=AssignmentStatus.SKIPPED).count() == 0
    assert BulkAction.objects.get().n_assignments == 3
    _shot(page, "data_manager_done")
    assert not errors
