"""A score run of a judge learned on this study's gold: the estimate is given when none of the labelled items it
uses trained the judge (a note says so); when some did, it is cross-prediction-powered from the fold models' values
the run recorded, and refused with the reason when the run recorded none or when nothing says which items trained
it; in-sample predictions are never used. Other runs are not touched."""

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
         "method": None, "note": report["judges"][0]["note"]}
    ]  # fmt: skip
    assert any("none of them among the labelled items used" in n for n in report["notes"])
    assert report["trajectory"]["available"] is True and report["plan"]["available"] is True


def test_a_run_without_fold_values_whose_judge_trained_on_labelled_items_is_refused_saying_to_rescore(world):
    _judge(world, world["drawn"][:4] + [i.pk for i in world["items"] if i.pk not in set(world["drawn"])][:6])
    report = _report(world)
    assert report["valid"] is False and report["estimates"] == []
    assert "4 of the 10 labelled items the estimate uses were among its 10 training items" in report["refusal"]
    assert "30 items of this run carry none" in report["refusal"] and "re-run the scoring" in report["refusal"]
    assert "In-sample predictions are never used" in report["refusal"]
    assert report["plan"]["available"] is False and report["trajectory"]["available"] is False


FOLD_VALUES = RNG.uniform(0.05, 0.95, (N_ITEMS, 4))


def _record_folds(world, training, in_sample=None):
    """Details as a learned run on the judge's own study records them: the held-out fold of each training item,
    the four fold models' values of every other item. ``in_sample`` replaces the run's value of every item that
    did not train the judge (the final model's, which saw the training labels)."""
    judge = _judge(world, training)
    folds = joblib.load(world["tmp"] / "models" / "judges" / KEY / "judge.joblib")["fold_of_group"]
    for n, item in enumerate(world["items"]):
        score = Score.objects.get(run=world["run"], item=item, unit_key="item")
        if str(item.pk) in folds:
            score.details = {"cross_fit": {"held_out": {"supports": folds[str(item.pk)]}}}
        else:
            score.details = {"cross_fit": {"folds": [float(v) for v in FOLD_VALUES[n]]}}
            if in_sample is not None:
                score.value = in_sample(item.pk)
        score.save()
    return judge


def _cross_arrays(world, training):
    """y, the labelled items' held-out (or fold-mean) values and the unlabelled items' N × 4 grid, by hand."""
    labels = dict(GoldLabel.objects.filter(pool=world["pool"]).values_list("item_id", "value"))
    drawn, train = set(world["drawn"]), set(training)
    y, yhat, grid = [], [], []
    for n, item in enumerate(world["items"]):
        row = [VALUES[n]] * 4 if item.pk in train else list(FOLD_VALUES[n])
        if item.pk in drawn:
            y.append(1.0 if labels[item.pk] == "yes" else 0.0)
            yhat.append(VALUES[n] if item.pk in train else float(np.mean(FOLD_VALUES[n])))
        else:
            grid.append(row)
    return np.array(y), np.array(yhat), np.array(grid)


def test_a_judge_trained_on_labelled_items_gives_the_cross_ppi_estimate_from_the_fold_values(world):
    from adjudication.stats import ppi

    others = [i.pk for i in world["items"] if i.pk not in set(world["drawn"])]
    training = world["drawn"][:4] + others[:6]
    _record_folds(world, training)
    report = _report(world)
    assert report["valid"] is True and report["headline"] == "cross-ppi"
    assert [e["method"] for e in report["estimates"]] == ["cross-ppi", "classical"]
    y, yhat, grid = _cross_arrays(world, training)
    assert grid.shape == (20, 4) and len(y) == 10
    expected = ppi.cross_ppi_mean(y, yhat, grid)
    got = report["estimates"][0]
    assert (got["point"], got["lower"], got["upper"]) == pytest.approx((expected.point, expected.lower, expected.upper))
    assert got["n_labelled"] == 10 and got["n_unlabelled"] == 20
    assert report["cross_ppi"] == {"folds": 4, "n_labelled_held_out": 4, "n_labelled_fold_mean": 6,
                                   "n_unlabelled_by_fold": 14, "n_unlabelled_held_out": 6}  # fmt: skip
    assert report["judges"][0]["method"] == "cross-ppi" and report["judges"][0]["refusal"] is None
    assert any("cross-prediction-powered" in n for n in report["notes"])
    assert report["plan"]["available"] is False and report["trajectory"]["available"] is False
    # Inverted: every value, the fold values included, is 1 − value.
    params = EstimateParams(pool_id=world["pool"].pk, question="pf", run_id=world["run"].pk, positive="yes",
                            invert=True)  # fmt: skip
    inverted = estimate_report(study=world["study"], params=params)["estimates"][0]
    assert inverted["point"] == pytest.approx(ppi.cross_ppi_mean(y, 1 - yhat, 1 - grid).point)


def test_no_in_sample_prediction_is_used(world):
    """The run's value of an item that did not train the judge comes from the final model, which saw the labelled
    training items' labels: even when those values are the human labels themselves (a perfectly overfit judge),
    the estimate is the same, because only held-out and fold values enter it."""
    others = [i.pk for i in world["items"] if i.pk not in set(world["drawn"])]
    training = world["drawn"][:4] + others[:6]
    labels = dict(GoldLabel.objects.filter(pool=world["pool"]).values_list("item_id", "value"))
    _record_folds(world, training, in_sample=lambda pk: 1.0 if labels.get(pk) == "yes" else 0.0)
    from adjudication.stats import ppi

    got = _report(world)["estimates"][0]
    expected = ppi.cross_ppi_mean(*_cross_arrays(world, training))
    assert (got["point"], got["lower"], got["upper"]) == pytest.approx((expected.point, expected.lower, expected.upper))


def test_the_page_and_the_api_name_the_cross_ppi_estimate_with_its_note(client, researcher, world):
    from django.urls import reverse
    from rest_framework.test import APIClient

    others = [i.pk for i in world["items"] if i.pk not in set(world["drawn"])]
    _record_folds(world, world["drawn"][:4] + others[:6])
    query = {"pool": world["pool"].pk, "question": "pf", "run": world["run"].pk}
    client.force_login(researcher)
    response = client.get(reverse("adjudication:report-estimates", args=[world["study"].slug]), query)
    body = response.content.decode()
    assert response.status_code == 200 and "cross-ppi (headline)" in body
    assert "Cross-prediction-powered inference, PNAS 2024" in body
    assert "the estimate is cross-prediction-powered" in body
    api = APIClient()
    api.force_authenticate(researcher)
    data = api.get(reverse("adjudication-api-report-estimates", args=[world["study"].slug]), query).json()
    assert data["headline"] == "cross-ppi" and data["estimates"][0]["method"] == "cross-ppi"
    assert data["cross_ppi"]["folds"] == 4 and data["judges"][0]["method"] == "cross-ppi"


def test_a_comparison_with_a_run_whose_judge_trained_on_labelled_items_is_refused(world, researcher):
    others = [i.pk for i in world["items"] if i.pk not in set(world["drawn"])]
    _record_folds(world, world["drawn"][:4] + others[:6])
    report = _report(world)
    assert report["valid"] is True
    from adjudication.analysis.estimates import _apply_judge_check

    comparison = {"valid": True, "exact": False, "estimates": [{}], "notes": []}
    _apply_judge_check(comparison, world["run"], set(world["drawn"]))
    assert comparison["valid"] is False and "a paired comparison has no cross-prediction" in comparison["refusal"]


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


def test_a_real_judge_trained_on_the_studys_gold_gives_the_cross_ppi_estimate_from_its_runs_fold_values(
    researcher, settings, tmp_path, django_capture_on_commit_callbacks
):
    """End to end: a judge trained from the gold of 20 of the study's 28 items, a learned run that scores the study
    with it (cross-fitted on its own training study), a uniform sample of that run's items labelled in another pool,
    some of which trained the judge: the estimate is cross-PPI, equal to ``cross_ppi_mean`` on the arrays read back
    from the run's scores, and those are never in-sample: each training item's value is its held-out fold model's
    and each other item's fold values are the fold models' own (recomputed here from the judge's artifact)."""
    from adjudication.analysis.estimates import _training_items
    from adjudication.stats import ppi
    from scoring import services
    from scoring.judges import artifacts
    from scoring.judges import services as judge_services
    from tests.scoring.judge_support import labelled_records, study_with_gold
    from tests.scoring.runs_support import eager_celery

    settings.VAR_DIR = tmp_path
    study = factories.make_study(slug="trained", owner=researcher)
    item_ids = study_with_gold(study, n=20)
    for k, rec in enumerate(labelled_records()[20:]):
        item = factories.make_item(study, f"new{k}", answer=rec["text"])
        factories.make_chunk(item, 1, rec["evidence"])
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
    pool_sample_draw(pool=pool, run=run, design="uniform", n=10, seed=1, floor=0.1, actor=researcher)
    drawn = list(PoolSample.objects.get(pool=pool).items.filter(drawn=True).values_list("item_id", flat=True))
    labels = {item_id: float(k % 2) for k, item_id in enumerate(drawn)}
    for item_id, label in labels.items():
        GoldLabel.objects.create(
            pool=pool, item_id=item_id, unit_key="item", question=pf, value="yes" if label else "no",
            source=GoldSource.ADJUDICATED,
        )  # fmt: skip
    n_trained = len(set(drawn) & set(item_ids))
    assert 0 < n_trained < len(drawn)  # labelled items of both kinds

    # Never in-sample: the recorded values are the held-out fold model's, or each fold model's, recomputed here.
    loaded = artifacts.load(judge.path)
    rows = {s.item_id: s for s in Score.objects.filter(run=run, unit_key="item").select_related("item")}
    for item_id, score in rows.items():
        text = Score.objects.get(run=run, item_id=item_id, unit_key="s:0").details["text"]
        context = " ".join(c.text for c in score.item.chunks.order_by("rank"))
        if item_id in set(item_ids):
            fold = loaded.fold_of_group[str(item_id)]
            assert score.details["cross_fit"] == {"held_out": {"supports": fold}}
            assert score.value == pytest.approx(loaded.proba(loaded.folds[fold], [text], [context])[0])
        else:
            expected = [loaded.proba(m, [text], [context])[0] for m in loaded.folds]
            assert score.details["cross_fit"]["folds"] == pytest.approx(expected)

    # The arrays, read back from the database.
    y, yhat, grid = [], [], []
    for item_id in sorted(rows):
        score = rows[item_id]
        values = score.details["cross_fit"].get("folds") or [score.value] * len(loaded.folds)
        if item_id in labels:
            y.append(labels[item_id])
            yhat.append(score.value if "held_out" in score.details["cross_fit"] else float(np.mean(values)))
        else:
            grid.append(values)
    expected = ppi.cross_ppi_mean(y, yhat, grid)
    params = EstimateParams(pool_id=pool.pk, question="pf", run_id=run.pk, positive="yes")
    report = estimate_report(study=study, params=params)
    assert report["valid"] is True and report["headline"] == "cross-ppi"
    got = report["estimates"][0]
    assert (got["point"], got["lower"], got["upper"]) == pytest.approx((expected.point, expected.lower, expected.upper))
    assert report["cross_ppi"]["n_labelled_held_out"] == n_trained
    assert (
        f"{n_trained} of the 10 labelled items the estimate uses were among its {len(item_ids)} training items"
        in report["notes"][-1]
    )
