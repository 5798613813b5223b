"""Scoring with a trained judge: cross-fitted on its own training study, transfer elsewhere, and never
with another study's judge (whatever a run's options say)."""

from __future__ import annotations

import pytest

from concord.errors import ValidationFailed
from scoring import services
from scoring.judges import artifacts
from scoring.judges import services as judge_services
from scoring.models import RunStatus, Score, ScoreRun
from tests.factories import make_chunk, make_item, make_study
from tests.scoring.judge_support import study_with_gold
from tests.scoring.runs_support import eager_celery

pytestmark = pytest.mark.django_db
LEXICAL = {"feature_sets": ["lexical"], "folds": 4}
CF = {"information_bearing": "rules", "aggregate": "mean_probability"}


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


@pytest.fixture
def trained(django_user_model):
    study = make_study(slug="source")
    # Four items carry the wrong gold: a model that saw them is pulled toward it, a fold model is not.
    item_ids = study_with_gold(study, flip={0, 3, 6, 9})
    judge = judge_services.judge_train_from_study(study=study, question_key="grounded", task="supports",
                                                  name="grounding", actor=None, options=LEXICAL)
    return study, item_ids, judge


def _run(study, capture, **kw) -> ScoreRun:
    args = {"metric": "cf", "backend": "learned", "parameters": CF, "actor": study.owner,
            "backend_options": {"model": "grounding"}, "batch_size": 5}
    args.update(kw)
    with eager_celery(), capture(execute=True):
        run = services.score_run_start(study=study, **args)
    run.refresh_from_db()
    return run


def test_scoring_the_training_study_is_cross_fitted_and_differs_from_in_sample_scoring(
    trained, django_capture_on_commit_callbacks
):
    study, item_ids, judge = trained
    run = _run(study, django_capture_on_commit_callbacks)
    assert run.status == RunStatus.DONE, run.error
    assert "cross-fitted on its own training study" in run.model_identity
    loaded = artifacts.load(judge.path)
    differs = 0
    for item_id in item_ids:
        score = Score.objects.get(run=run, item_id=item_id, unit_key="s:0")
        grounding = score.details["grounding_details"]
        fold = loaded.fold_of_group[str(item_id)]
        assert grounding["model"].startswith(f"fold {fold} ")
        text, evidence = score.details["text"], Score.objects.get(run=run, item_id=item_id, unit_key="item")
        context = [c.text for c in evidence.item.chunks.order_by("rank")]
        held_out = loaded.proba(loaded.folds[fold], [text], [" ".join(context)])[0]
        in_sample = loaded.proba(loaded.final, [text], [" ".join(context)])[0]
        assert grounding["probability"] == pytest.approx(held_out)
        item_value = Score.objects.get(run=run, item_id=item_id, unit_key="item").value
        assert item_value == pytest.approx(held_out)  # aggregate=mean_probability over one sentence
        differs += abs(in_sample - held_out) > 1e-6
    assert differs == len(item_ids)  # in-sample scores would have differed for every item


def test_another_study_scores_with_a_shared_judge_as_a_transfer(trained, django_capture_on_commit_callbacks):
    source, _, judge = trained
    target = make_study(slug="target", owner=source.owner)
    item = make_item(target, "t1", answer="Metformin lowers blood glucose in type 2 diabetes.")
    make_chunk(item, 1, "Metformin lowers blood glucose in type 2 diabetes.")
    judge.shared_with.add(target)
    run = _run(target, django_capture_on_commit_callbacks)
    assert run.status == RunStatus.DONE, run.error
    assert "transfer from study source, question grounded" in run.model_identity
    details = Score.objects.get(run=run, unit_key="s:0").details["grounding_details"]
    assert details["model"] == "final" and details["probability"] > 0.5


def test_a_run_cannot_name_another_studys_judge(trained):
    source, _, _ = trained
    other = make_study(slug="other")
    with pytest.raises(ValidationFailed, match="no trained judge named 'grounding' is available to this study"):
        services.score_run_start(study=other, metric="cf", backend="learned", parameters=CF, actor=other.owner,
                                 backend_options={"model": "grounding"})
    with pytest.raises(ValidationFailed, match="backend option 'study' is not allowed"):
        services.score_run_start(study=other, metric="cf", backend="learned", parameters=CF, actor=other.owner,
                                 backend_options={"model": "grounding", "study": source.pk})
    assert not ScoreRun.objects.filter(study=other).exists()


def test_a_stored_study_option_never_wins_over_the_runs_study(trained):
    """Even a run row whose options name the source study (written past the start checks) never scores with
    that study's judge: the worker re-checks the stored options (a foreign study is refused) and looks judges
    up in the run's own study, so the run fails instead of using the judge."""
    source, _, _ = trained
    other = make_study(slug="other")
    item = make_item(other, "o1", answer="Metformin lowers blood glucose.")
    make_chunk(item, 1, "Metformin lowers blood glucose.")
    run = ScoreRun.objects.create(study=other, metric="cf", metric_version="1.0", backend="learned",
                                  parameters={"information_bearing": "rules", "informative_threshold": None,
                                              "support_threshold": None, "aggregate": "count"},
                                  backend_options={"model": "grounding", "study": source.pk})
    assert services.score_run_fan_out(run_id=run.pk) == []
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "'study' is not allowed" in run.error
    assert not Score.objects.filter(run=run).exists()
    # Without the option, the run's own study is where the judge is looked up, and it has none.
    run2 = ScoreRun.objects.create(study=other, metric="cf", metric_version="1.0", backend="learned",
                                   parameters=run.parameters, backend_options={"model": "grounding"})
    assert services.score_run_fan_out(run_id=run2.pk) == []
    run2.refresh_from_db()
    assert run2.status == RunStatus.FAILED
    assert "no trained judge named 'grounding' is available to this study" in run2.error


def test_mean_probability_is_refused_for_a_hard_verdict_backend(trained, django_capture_on_commit_callbacks):
    study, _, _ = trained
    run = _run(study, django_capture_on_commit_callbacks, backend="lexical", backend_options={})
    assert run.status == RunStatus.FAILED
    assert "aggregate=mean_probability needs support probabilities, and the lexical backend" in run.error


def test_aspect_gold_trains_a_supports_judge_with_the_aspect_as_claim_and_the_answer_as_evidence():
    # K-QA's physicians label each must-have statement entailed / neutral / contradiction by the answer; a
    # supports judge learns "does this text support the aspect", the direction ICAT's coverage applies it.
    from adjudication.services import gold_set
    from annotation.models import Aspect
    from scoring.judges.gold import examples_from_gold
    from tests.factories import make_pool, make_question

    study = make_study(slug="aspects")
    question = make_question(study, "aspect_entailment", scope="aspect", kind="nominal", options=[
        {"value": v, "label": v, "key": str(k)} for k, v in enumerate(("entailment", "neutral", "contradiction"), 1)])
    pool = make_pool(study, questions=[question])
    item = make_item(study, "k1", answer="Take ibuprofen with food. Rest the knee.")
    entailed = Aspect.objects.create(item=item, text="Ibuprofen should be taken with food.")
    neutral = Aspect.objects.create(item=item, text="Ice the knee twice a day.")
    for aspect, value in ((entailed, "entailment"), (neutral, "neutral")):
        gold_set(pool_id=pool.pk, item_id=item.pk, unit_key=f"a:{aspect.pk}", question_id=question.pk,
                 value=value, source="imported")
    examples, item_ids = examples_from_gold(study, "aspect_entailment", "supports", positive=["entailment"])
    assert sorted((e.text, e.evidence, e.label) for e in examples) == [  # unit keys sort by id: not asserted
        ("Ibuprofen should be taken with food.", "Take ibuprofen with food. Rest the knee.", True),
        ("Ice the knee twice a day.", "Take ibuprofen with food. Rest the knee.", False),
    ]
    assert item_ids == [item.pk, item.pk]
    for task in ("relevance", "informative"):
        with pytest.raises(Exception, match=f"cannot be a '{task}' training example"):
            examples_from_gold(study, "aspect_entailment", task, positive=["entailment"])


def test_a_run_on_the_training_study_records_each_fold_models_value_for_items_the_judge_did_not_train_on(
    trained, django_capture_on_commit_callbacks
):
    """Cross-prediction needs, for each item that did not train the judge, its value under every fold model;
    items that did keep their held-out value (and say which fold gave it). The run's value is unchanged (the
    final model's for items outside the training data), and a batch delivered again records nothing twice."""
    from tests.scoring.judge_support import labelled_records

    study, item_ids, judge = trained
    fresh = []
    for k, rec in enumerate(labelled_records()[:6]):
        item = make_item(study, f"new{k}", answer=rec["text"])
        make_chunk(item, 1, rec["evidence"])
        fresh.append(item.pk)
    run = _run(study, django_capture_on_commit_callbacks)
    assert run.status == RunStatus.DONE, run.error
    loaded = artifacts.load(judge.path)
    k = len(loaded.folds)
    for item_id in item_ids:
        score = Score.objects.get(run=run, item_id=item_id, unit_key="item")
        assert score.details["cross_fit"] == {"held_out": {"supports": loaded.fold_of_group[str(item_id)]}}
    for item_id in fresh:
        score = Score.objects.get(run=run, item_id=item_id, unit_key="item")
        text = Score.objects.get(run=run, item_id=item_id, unit_key="s:0").details["text"]
        context = " ".join(c.text for c in score.item.chunks.order_by("rank"))
        expected = [loaded.proba(loaded.folds[j], [text], [context])[0] for j in range(k)]
        assert score.details["cross_fit"]["folds"] == pytest.approx(expected)
        assert score.value == pytest.approx(loaded.proba(loaded.final, [text], [context])[0])
    # A second delivery of a finished batch, and a re-run of one whose item scores were lost: one row each.
    from scoring.models import ScoreBatch

    batch = next(b for b in ScoreBatch.objects.filter(run=run) if fresh[0] in b.item_ids)
    before = Score.objects.get(run=run, item_id=fresh[0], unit_key="item").details["cross_fit"]
    assert services.score_batch_process(batch_id=batch.pk, worker="w").status == "skipped"
    Score.objects.filter(run=run, item_id=fresh[0]).delete()
    ScoreBatch.objects.filter(pk=batch.pk).update(status="pending", finished_at=None)
    ScoreRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    services.score_batch_process(batch_id=batch.pk, worker="w")
    rows = Score.objects.filter(run=run, item_id=fresh[0], unit_key="item")
    assert rows.count() == 1 and rows.get().details["cross_fit"] == before


def test_a_transfer_run_records_no_fold_values(trained, django_capture_on_commit_callbacks):
    source, _, judge = trained
    target = make_study(slug="target", owner=source.owner)
    item = make_item(target, "t1", answer="Metformin lowers blood glucose in type 2 diabetes.")
    make_chunk(item, 1, "Metformin lowers blood glucose in type 2 diabetes.")
    judge.shared_with.add(target)
    run = _run(target, django_capture_on_commit_callbacks)
    assert run.status == RunStatus.DONE, run.error
    assert "cross_fit" not in Score.objects.get(run=run, unit_key="item").details
