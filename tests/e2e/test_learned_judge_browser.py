"""The trained-judge loop's last step in a real browser: a researcher scores a study with a judge trained on
that study's own gold, from the runs page, and reads the run as cross-fitted with continuous scores.

Screenshot: tests/e2e/artifacts/learned_run.png.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import Role
from concord.celery import app as celery_app
from scoring.judges import artifacts
from scoring.judges import services as judge_services
from scoring.models import RunStatus, Score, ScoreRun
from tests import factories
from tests.scoring.judge_support import study_with_gold

ARTIFACTS = Path(__file__).parent / "artifacts"
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_researcher_scores_a_study_with_its_own_trained_judge_from_the_runs_page(
    live_server, login, settings, tmp_path
):
    settings.VAR_DIR = tmp_path
    rita = factories.make_user("rita-learned")
    study = factories.make_study(owner=rita, slug="learned-e2e", name="Learned e2e")
    factories.grant(study, rita, Role.RESEARCHER)
    item_ids = study_with_gold(study, flip={0, 3})
    judge = judge_services.judge_train_from_study(
        study=study, question_key="grounded", task="supports", name="grounding-e2e", actor=rita,
        options={"feature_sets": ["lexical"], "folds": 4},
    )
    page = login(rita).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(live_server.url + reverse("scoring:runs", args=[study.slug]))
    page.locator("#learned-judges").get_by_text("grounding-e2e").wait_for()
    assert "cross-fitted here" in page.locator("#learned-judges").inner_text()

    page.select_option("#metric", "cf")
    page.select_option("#cf__backend", "learned")
    page.select_option("#cf__information_bearing", "rules")
    page.select_option("#cf__aggregate", "mean_probability")
    page.fill("#backend_options", '{"model": "grounding-e2e"}')
    before = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        page.click("#run-form button[type=submit]")
        page.wait_for_url(re.compile(r"/runs/\d+/$"))
    finally:
        celery_app.conf.task_always_eager = before

    run = ScoreRun.objects.get(study=study)
    assert run.status == RunStatus.DONE, run.error
    page.reload()
    model = page.locator("dd", has_text="learned:").inner_text()
    assert "supports=grounding-e2e" in model and "cross-fitted on its own training study" in model
    # Every item was scored by the fold model that never saw its gold; the item value is that model's
    # probability (one information-bearing sentence per item, aggregate=mean_probability).
    loaded = artifacts.load(judge.path)
    for item_id in item_ids:
        grounding = Score.objects.get(run=run, item_id=item_id, unit_key="s:0").details["grounding_details"]
        assert grounding["model"].startswith(f"fold {loaded.fold_of_group[str(item_id)]} ")
        value = Score.objects.get(run=run, item_id=item_id, unit_key="item").value
        assert value == pytest.approx(grounding["probability"])
    assert re.search(r"Mean \d\.\d{3}, 95% CI", page.locator("#run-distribution").inner_text())
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "learned_run.png"), full_page=True)
    assert not errors
