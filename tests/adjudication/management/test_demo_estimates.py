"""load_demo_estimates on a slice of the real K-QA data: the cf run computed, a pool with a recorded uniform
sample handed out to the demo annotators, and, once they have submitted the drawn items, the estimates report
gives the PPI++ estimate for the demo."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from adjudication.analysis.estimates import EstimateParams, estimate_report
from adjudication.management.commands.load_demo_estimates import POOL
from adjudication.models import PoolSample
from annotation.models import AssignmentStatus, Label, Pool, Question
from scoring.models import RunStatus, ScoreRun
from tests import factories
from tests.adjudication.validation.test_validation_demo import _kqa_demo_slice

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_the_demo_gets_a_sampled_pool_and_shows_an_estimate_once_the_sample_is_labelled(capsys):
    study, _ = _kqa_demo_slice(n_records=8)
    annotators = [factories.make_user(f"demo-annotator-{k}") for k in (1, 2)]
    call_command("load_demo_validation")
    call_command("load_demo_estimates")
    assert f"Pool {POOL!r}" in capsys.readouterr().out
    run = ScoreRun.objects.get(study=study, metric="cf", backend="lexical")
    assert run.status == RunStatus.DONE
    pool = Pool.objects.get(study=study, name=POOL)
    sample = PoolSample.objects.get(pool=pool)
    drawn = set(sample.items.filter(drawn=True).values_list("item_id", flat=True))
    assert sample.design == "uniform" and sample.n_drawn == sample.population // 2 and len(drawn) == sample.n_drawn
    handed = set(pool.assignments.values_list("item_id", flat=True))
    assert handed == drawn and set(pool.assignments.values_list("annotator__username", flat=True)) <= {
        u.username for u in annotators
    }

    params = EstimateParams(pool_id=pool.pk, question="perceived_faithfulness", run_id=run.pk, positive="3")
    before = estimate_report(study=study, params=params)
    assert before["valid"] is False and "have no human label yet" in before["refusal"]
    question = Question.objects.get(study=study, key="perceived_faithfulness")
    for n, assignment in enumerate(pool.assignments.all()):
        Label.objects.create(
            assignment=assignment, question=question, unit_key="item", value=str(1 + n % 5), version=1,
            updated_by=assignment.annotator, updated_at=timezone.now(),
        )  # fmt: skip
        assignment.status, assignment.submitted_at = AssignmentStatus.SUBMITTED, timezone.now()
        assignment.save(update_fields=["status", "submitted_at"])
    after = estimate_report(study=study, params=params)
    assert after["valid"] is True and after["estimates"][0]["method"] == "ppi++"
    assert after["n_labelled"] == sample.n_drawn and after["trajectory"]["available"] is True

    call_command("load_demo_estimates")  # idempotent
    assert Pool.objects.filter(study=study, name=POOL).count() == 1 and PoolSample.objects.count() == 1


def test_the_command_asks_for_the_demo_first():
    with pytest.raises(CommandError, match="run load_demo first"):
        call_command("load_demo_estimates")
