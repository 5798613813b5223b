"""load_demo_estimates on slices of the real demo data. K-QA: the cf run computed, a pool with a recorded uniform
sample (the live pool's demo annotators are not added: the pools stay independent), and, once annotators of no
other pool have submitted the drawn items, the estimates report
gives the PPI++ estimate. BEGIN: a pool whose uniform sample was drawn before any label, then given BEGIN's own
labels for exactly the drawn items, so that the report gives the PPI++ estimate with no labelling."""

from __future__ import annotations

import itertools

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from adjudication.analysis.estimates import EstimateParams, estimate_report
from adjudication.management.commands.load_demo_estimates import BEGIN_POOL, BEGIN_SOURCE, POOL
from adjudication.models import PoolSample
from annotation.adapters import ADAPTERS
from annotation.console.services import pool_membership_add
from annotation.imports import records_from, records_import
from annotation.management.commands.load_demo import BEGIN_FILE, LIVE_POOL
from annotation.models import Assignment, AssignmentStatus, ImportBatch, Label, Pool, Question
from annotation.protocols import study_protocol_apply
from scoring.models import RunStatus, ScoreRun
from tests import factories
from tests.adjudication.validation.test_validation_demo import _kqa_demo_slice

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_the_demo_gets_a_sampled_pool_and_shows_an_estimate_once_the_sample_is_labelled(capsys):
    study, researcher = _kqa_demo_slice(n_records=8)
    annotators = [factories.make_user(f"demo-annotator-{k}") for k in (1, 2)]
    live = Pool.objects.get(study=study, name=LIVE_POOL)
    assert study.independent_pools
    for k, user in enumerate(annotators, start=1):  # as load_demo makes them: members of the live pool
        pool_membership_add(pool=live, user=user, actor=researcher, pseudonym=f"Annotator {k}")
    call_command("load_demo_validation")
    call_command("load_demo_estimates")
    out = capsys.readouterr().out
    assert f"Pool {POOL!r}" in out
    # The study's pools stay independent: the live pool's annotators are not added to the sample pool (and
    # the command says so); annotators of no other pool are added by the researcher, as the docs say.
    study.refresh_from_db()
    assert study.independent_pools
    assert "demo-annotator-1, demo-annotator-2 not added: they belong to another pool" in out
    run = ScoreRun.objects.get(study=study, metric="cf", backend="lexical")
    assert run.status == RunStatus.DONE
    pool = Pool.objects.get(study=study, name=POOL)
    assert not pool.memberships.exists() and not pool.assignments.exists()
    sample = PoolSample.objects.get(pool=pool)
    drawn = set(sample.items.filter(drawn=True).values_list("item_id", flat=True))
    assert sample.design == "uniform" and sample.n_drawn == sample.population // 2 and len(drawn) == sample.n_drawn
    annotators = [factories.make_user(f"sample-annotator-{k}") for k in (1, 2)]
    for k, user in enumerate(annotators, start=1):
        pool_membership_add(pool=pool, user=user, actor=researcher, pseudonym=f"Sampler {k}")
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


def _begin_demo_slice(researcher, n_records: int):
    """The first ``n_records`` BEGIN rows imported as load_demo imports them (one BEGIN label per item)."""
    study = factories.make_study(owner=researcher, slug="begin-demo")
    study_protocol_apply(study=study, presets=["astrid", "begin"])
    adapter = ADAPTERS["begin"]
    records_import(
        study=study,
        source=records_from(lambda: itertools.islice(adapter.records(BEGIN_FILE), n_records)),
        filename=BEGIN_FILE.name,
        where="record",
        adapter=adapter.name,
        pool_name=adapter.pool_name,
    )
    return study


def _snapshot():
    return tuple(m.objects.count() for m in (Pool, PoolSample, Assignment, Label, ImportBatch, ScoreRun))


def test_the_begin_demo_gets_a_sample_labelled_by_begin_and_shows_an_estimate_at_once(capsys):
    _, researcher = _kqa_demo_slice(n_records=4)
    for k in (1, 2):
        factories.make_user(f"demo-annotator-{k}")
    study = _begin_demo_slice(researcher, n_records=40)
    call_command("load_demo_validation")
    call_command("load_demo_estimates")
    assert f"Pool {BEGIN_POOL!r}" in capsys.readouterr().out
    run = ScoreRun.objects.get(study=study, metric="cf", backend="lexical")
    assert run.status == RunStatus.DONE
    pool = Pool.objects.get(study=study, name=BEGIN_POOL)
    sample = PoolSample.objects.get(pool=pool)
    drawn = set(sample.items.filter(drawn=True).values_list("item_id", flat=True))
    assert sample.design == "uniform" and sample.population == 40 and sample.n_drawn == 20 == len(drawn)
    assert sample.seed == 2024 and sample.created_by == researcher

    # BEGIN's own label, for exactly the drawn items; the sample was drawn before any of them existed.
    labels = Label.objects.filter(assignment__pool=pool)
    assert set(labels.values_list("assignment__item_id", flat=True)) == drawn and labels.count() == len(drawn)
    assert max(labels.values_list("updated_at", flat=True)) >= sample.created_at
    begin = dict(
        Label.objects.filter(assignment__pool__study=study, assignment__pool__name=BEGIN_SOURCE).values_list(
            "assignment__item_id", "value"
        )
    )
    assert dict(labels.values_list("assignment__item_id", "value")) == {i: begin[i] for i in drawn}
    annotator = labels.first().assignment.annotator
    assert annotator.import_identity.pseudonym == "begin-annotator" and not annotator.is_active
    assert set(labels.values_list("assignment__status", flat=True)) == {AssignmentStatus.SUBMITTED}
    assert ImportBatch.objects.filter(study=study, filename__contains=BEGIN_POOL, n_labels=len(drawn)).exists()

    params = EstimateParams(pool_id=pool.pk, question="attribution", run_id=run.pk, positive="not_fully", invert=True)
    report = estimate_report(study=study, params=params)
    assert report["valid"] is True and report["refusal"] is None
    assert [e["method"] for e in report["estimates"]] == ["ppi++", "ppi", "classical"]
    assert report["n_labelled"] == sample.n_drawn and report["estimates"][0]["n_unlabelled"] == 20
    assert report["trajectory"]["available"] is True and report["plan"]["available"] is True

    before = _snapshot()
    call_command("load_demo_estimates")  # idempotent
    assert _snapshot() == before


def test_the_command_asks_for_the_demo_first():
    with pytest.raises(CommandError, match="run load_demo first"):
        call_command("load_demo_estimates")
