"""End to end: two disjoint pools of test annotators label through the real services,
CF and RF are scored by a real Celery worker, and the validation report's figures equal the ones
counted by hand here from the stored labels and scores."""

from __future__ import annotations

import pytest

from adjudication.validation.inputs import validation_inputs_parse
from adjudication.validation.services import validation_study_create, validation_study_run
from scoring import services as scoring_services
from scoring.models import RunStatus, Score, ScoreRun
from tests.adjudication import validation_support as vs_support
from tests.adjudication.validation_support import auc_by_counting
from tests.waiting import SLOW_TEST_TIMEOUT
from tests.worker import celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True), pytest.mark.timeout(SLOW_TEST_TIMEOUT)]


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _done(run_id: int) -> bool:
    return ScoreRun.objects.get(pk=run_id).status in (RunStatus.DONE, RunStatus.FAILED)


def test_a_blinded_validation_study_runs_end_to_end_and_matches_hand_counted_values(researcher):
    s = vs_support.build(researcher, answers=vs_support.VARIED_ANSWERS)
    vs_support.label_pool_a(s)
    vs_support.label_pool_b(s)
    study = s["study"]
    with celery_worker() as worker:
        cf = scoring_services.score_run_start(
            study=study, metric="cf", backend="lexical", parameters={}, actor=researcher
        )
        rf = scoring_services.score_run_start(
            study=study, metric="rf", backend="lexical", parameters={}, actor=researcher
        )
        wait_for(
            lambda: _done(cf.pk) and _done(rf.pk),
            worker=worker,
            progress=lambda: sorted(ScoreRun.objects.filter(pk__in=[cf.pk, rf.pk]).values_list("status", "n_done")),
            what="the cf and rf runs",
        )
        # Both runs are finished and stored: no need to wait for a warm shutdown.
        worker.kill()
    cf.refresh_from_db()
    rf.refresh_from_db()
    assert (cf.status, rf.status) == (RunStatus.DONE, RunStatus.DONE), (cf.error, rf.error)

    inputs = validation_inputs_parse(
        study=study,
        data={
            "template": "astrid",
            "target_pool": s["pool_b"].pk,
            "target_question": "perceived_faithfulness",
            "positive": "3",
            "target_mode": "per_annotator",
            "metric_run": cf.pk,
            "compare_run": rf.pk,
            "metric_pool": s["pool_a"].pk,
            "metric_rater": "A1",
            "n_boot": 200,
        },
    )
    vs = validation_study_create(study=study, actor=researcher, inputs=inputs)
    assert vs.checks_passed and not vs.not_independent
    results = validation_study_run(validation_study=vs, actor=researcher).results

    # By hand: the worker's stored item scores, pool B's ratings binarised at "3 or more", pairs counted.
    order = [item.pk for item in s["items"]]
    cf_values = dict(Score.objects.filter(run=cf, unit_key="item").values_list("item_id", "value"))
    rf_values = dict(Score.objects.filter(run=rf, unit_key="item").values_list("item_id", "value"))
    assert len(set(cf_values.values())) > 1, "the answers should be grounded to different degrees"
    cf_scores = [cf_values[pk] for pk in order]
    rf_scores = [rf_values[pk] for pk in order]
    for column, name in ((0, "B1"), (1, "B2")):
        positive = [1 if int(pair[column]) >= 3 else 0 for pair in vs_support.PF]
        target = f"pool B annotator {name}"
        by_name = {f["name"]: f for a in results["analyses"] if a["target"] == target for f in a["figures"]}
        auc = by_name[f"CF (run #{cf.pk}, lexical): ROC AUC"]
        assert auc["value"] == pytest.approx(auc_by_counting(cf_scores, positive))
        assert auc["n_units"] == 6 and auc["ci_method"] == "DeLong"
        assert by_name["human CF (A, A1): ROC AUC"]["value"] == pytest.approx(
            auc_by_counting(vs_support.HUMAN_CF, positive)
        )
        diff = by_name[f"CF (run #{cf.pk}) − RF (run #{rf.pk}): AUC difference (paired DeLong)"]
        expected = auc_by_counting(cf_scores, positive) - auc_by_counting(rf_scores, positive)
        if diff["value"] is None:
            assert expected == pytest.approx(0.0) and diff["n_units"] == 6
        else:
            assert diff["value"] == pytest.approx(expected)
    # The ceiling: pool B's two annotators agree exactly on one item of six.
    agreed = sum(a == b for a, b in vs_support.PF)
    assert results["human_ceiling"]["percent_agreement"]["value"] == pytest.approx(agreed / len(vs_support.PF))
    assert results["human_ceiling"]["n_units"] == 6
