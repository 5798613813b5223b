"""A score run of a judge learned on this study's gold: the estimate is given when none of the labelled items it
uses trained the judge (a note says so), and refused with the reason when some did or when nothing says which
items trained it; in-sample predictions are never used. Other runs are not touched."""

from __future__ import annotations

import joblib
import numpy as np
import pytest

from adjudication.analysis.estimates import EstimateParams, estimate_report
from adjudication.models import GoldLabel, GoldSource, PoolSample
from adjudication.sampling import pool_sample_draw
from scoring.models import RunStatus, Score, ScoreRun, ScoreState, TrainedJudge
from tests import factories

pytestmark = pytest.mark.django_db

N_ITEMS = 30
RNG = np.random.default_rng(8)
VALUES = RNG.uniform(0.05, 0.95, N_ITEMS)
DATA_HASH = "ab12" * 16
KEY = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def world(study, researcher, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    pf = factories.make_question(study, "pf")
    pool = factories.make_pool(study, "sampled", questions=[pf])
    items = [factories.make_item(study, f"q{i:02d}") for i in range(N_ITEMS)]
    run = ScoreRun.objects.create(
        study=study, metric="cf", metric_version="1", backend="learned", created_by=researcher,
        status=RunStatus.DONE, backend_options={"model": "grounding"},
        model_identity=f"learned: supports=grounding (logistic/lexical@{DATA_HASH[:12]}, cv_auc=0.800, "
        "cross-fitted on its own training study)",
    )  # fmt: skip
    Score.objects.bulk_create(
        Score(run=run, item=item, unit_key="item", value=float(v), state=ScoreState.OK)
        for item, v in zip(items, VALUES, strict=True)
    )
    pool_sample_draw(pool=pool, run=run, design="uniform", n=10, seed=3, floor=0.1, actor=researcher)
    drawn = list(PoolSample.objects.get(pool=pool).items.filter(drawn=True).values_list("item_id", flat=True))
    for k, item_id in enumerate(drawn):
        GoldLabel.objects.create(
            pool=pool, item_id=item_id, unit_key="item", question=pf, value="yes" if k % 3 else "no",
            source=GoldSource.ADJUDICATED,
        )  # fmt: skip
    return {"study": study, "pool": pool, "run": run, "items": items, "drawn": drawn, "tmp": tmp_path}


def _judge(world, trained_on):
    directory = world["tmp"] / "models" / "judges" / KEY
    directory.mkdir(parents=True, exist_ok=True)
    joblib.dump({"format": 1, "fold_of_group": {str(i): n % 4 for n, i in enumerate(trained_on)}},
                directory / "judge.joblib")  # fmt: skip
    return TrainedJudge.objects.create(
        name="grounding", study=world["study"], task="supports", source_kind="study", source_study=world["study"],
        source_question="pf", data_hash=DATA_HASH, model_type="logistic", feature_set="lexical",
        n=len(trained_on), n_positive=0, path=KEY,
    )  # fmt: skip


def _report(world, run=None):
    params = EstimateParams(pool_id=world["pool"].pk, question="pf", run_id=(run or world["run"]).pk, positive="yes")
    return estimate_report(study=world["study"], params=params)


def test_a_judge_trained_on_other_items_gives_the_estimate_with_a_note(world):
    others = [i.pk for i in world["items"] if i.pk not in set(world["drawn"])]
    _judge(world, others[:12])
    report = _report(world)
    assert report["valid"] is True and report["estimates"][0]["method"] == "ppi++"
    assert report["judges"] == [
        {"run": world["run"].pk, "judges": ["grounding"], "n_training": 12, "n_overlap": 0, "refusal": None,
         "note": report["judges"][0]["note"]}
    ]  # fmt: skip
    assert any("none of them among the labelled items used" in n for n in report["notes"])
    assert report["trajectory"]["available"] is True and report["plan"]["available"] is True


def test_a_judge_trained_on_labelled_items_refuses_the_estimate_with_the_reason(world):
    _judge(world, world["drawn"][:4] + [i.pk for i in world["items"] if i.pk not in set(world["drawn"])][:6])
    report = _report(world)
    assert report["valid"] is False and report["estimates"] == []
    assert "4 of the 10 labelled items the estimate uses were among its 10 training items" in report["refusal"]
    assert "in-sample predictions are never used" in report["refusal"]
    assert report["plan"]["available"] is False and report["trajectory"]["available"] is False


def test_a_cross_fitted_run_whose_judge_is_gone_or_changed_is_refused(world):
    report = _report(world)
    assert report["valid"] is False and "no longer in the study's registry" in report["refusal"]
    judge = _judge(world, [world["items"][-1].pk])
    judge.data_hash = "ff" * 32
    judge.save()
    report = _report(world)
    assert report["valid"] is False and "is not the one run #" in report["refusal"]


def test_a_run_of_another_backend_is_not_checked(world):
    ScoreRun.objects.filter(pk=world["run"].pk).update(backend="lexical", backend_options={}, model_identity="")
    _judge(world, world["drawn"])  # even a judge of that name trained on the labels: the run did not use it
    report = _report(world)
    assert report["valid"] is True and "judges" not in report


def test_a_real_judge_trained_on_the_studys_gold_and_its_run_are_refused_on_its_training_items(
    researcher, settings, tmp_path, django_capture_on_commit_callbacks
):
    """End to end: a judge trained from the study's gold, a learned run that scores the study with it (cross-fitted
    on its own training study), a uniform sample of that run's items labelled in another pool: the labelled items
    trained the judge, so the estimate is refused; the artifact's training items are the gold's items."""
    from adjudication.analysis.estimates import _training_items
    from scoring import services
    from scoring.judges import services as judge_services
    from tests.scoring.judge_support import study_with_gold
    from tests.scoring.runs_support import eager_celery

    settings.VAR_DIR = tmp_path
    study = factories.make_study(slug="trained", owner=researcher)
    item_ids = study_with_gold(study)
    judge = judge_services.judge_train_from_study(
        study=study, question_key="grounded", task="supports", name="grounding", actor=None,
        options={"feature_sets": ["lexical"], "folds": 4},
    )  # fmt: skip
    assert _training_items(judge) == set(item_ids)
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        run = services.score_run_start(
            study=study, metric="cf", backend="learned", actor=researcher, batch_size=10,
            parameters={"information_bearing": "rules", "aggregate": "mean_probability"},
            backend_options={"model": "grounding"},
        )  # fmt: skip
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and "cross-fitted on its own training study" in run.model_identity
    pf = factories.make_question(study, "pf", order=1)
    pool = factories.make_pool(study, "sampled", questions=[pf])
    pool_sample_draw(pool=pool, run=run, design="uniform", n=8, seed=1, floor=0.1, actor=researcher)
    drawn = PoolSample.objects.get(pool=pool).items.filter(drawn=True).values_list("item_id", flat=True)
    for k, item_id in enumerate(drawn):
        GoldLabel.objects.create(
            pool=pool, item_id=item_id, unit_key="item", question=pf, value="yes" if k % 2 else "no",
            source=GoldSource.ADJUDICATED,
        )  # fmt: skip
    params = EstimateParams(pool_id=pool.pk, question="pf", run_id=run.pk, positive="yes")
    report = estimate_report(study=study, params=params)
    assert report["valid"] is False
    assert (
        f"8 of the 8 labelled items the estimate uses were among its {len(item_ids)} training items"
        in report["refusal"]
    )
