"""The demo's validation studies: load_demo_validation on a slice of the real K-QA data.

The K-QA records are imported through the same adapter and importer load_demo uses (only the first
records, to stay fast); the ICAT run the command queues is then computed in this process by the
scoring services a worker would call.
"""

from __future__ import annotations

import itertools

import pytest
from django.core.management import CommandError, call_command

from adjudication.models import ValidationStudy
from adjudication.validation.services import validation_study_run
from annotation.adapters import ADAPTERS
from annotation.console.services import pool_create
from annotation.imports import records_from, records_import
from annotation.management.commands.load_demo import KQA_FILE, LIVE_POOL, LIVE_QUESTIONS
from annotation.models import Question
from annotation.protocols import study_protocol_apply
from scoring import services as scoring_services
from scoring.models import RunStatus, ScoreRun
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _kqa_demo_slice(n_records: int = 4):
    researcher = factories.make_user("demo-researcher")
    study = factories.make_study(owner=researcher, slug="kqa-demo")
    study_protocol_apply(study=study, presets=["astrid", "icat", "kqa"])
    adapter = ADAPTERS["kqa-nli"]
    records_import(
        study=study,
        source=records_from(lambda: itertools.islice(adapter.records(KQA_FILE), n_records)),
        filename=KQA_FILE.name,
        where="record",
        adapter=adapter.name,
        pool_name=adapter.pool_name,
    )
    pool_create(
        study=study,
        actor=researcher,
        name=LIVE_POOL,
        questions=list(Question.objects.filter(study=study, key__in=LIVE_QUESTIONS)),
        overlap=2,
        seed=2024,
    )
    return study, researcher


def _compute(run: ScoreRun) -> None:
    for batch_id in scoring_services.score_run_fan_out(run_id=run.pk):
        scoring_services.score_batch_process(batch_id=batch_id, worker="test")
    run.refresh_from_db()


def test_the_demo_gets_validation_studies_ready_to_run_on_the_kqa_items(capsys):
    study, researcher = _kqa_demo_slice()
    call_command("load_demo_validation")
    out = capsys.readouterr().out
    assert "is ready to run" in out
    icat_study = ValidationStudy.objects.get(name__startswith="ICAT on K-QA")
    astrid_study = ValidationStudy.objects.get(name__startswith="ASTRID on K-QA")
    # The physicians' labels were imported: no trail in Concord, said as a warning, not a refusal.
    checks = {c["key"]: c for c in icat_study.checks}
    assert icat_study.checks_passed and checks["exposure_trail"]["status"] == "warn"
    assert checks["human_ceiling"]["status"] == "pass" and checks["human_ceiling"]["data"]["n_raters"] == 3

    before = validation_study_run(validation_study=icat_study, actor=researcher).results
    icat_run = icat_study.metric_run
    assert any(
        f"(run #{icat_run.pk}, icat) is queued, not done" in m
        for a in before["analyses"]
        if a["key"] == "icat_vs_human"
        for m in a["missing"]
    )

    _compute(icat_run)
    assert icat_run.status == RunStatus.DONE
    after = validation_study_run(validation_study=icat_study, actor=researcher).results
    by_key = {a["key"]: a for a in after["analyses"]}
    assert by_key["icat_vs_human"]["status"] == "ok"
    auc = next(
        f
        for f in by_key["icat_vs_human"]["figures"]
        if f["name"].endswith("original set: ROC AUC of the per-aspect verdicts")
    )
    assert auc["n_units"] > 0
    assert by_key["pool_a_vs_pool_b"]["missing"] == [
        "pool A (Demo annotators) has no gold labels on aspect_covered yet"
    ]

    astrid = validation_study_run(validation_study=astrid_study, actor=researcher).results
    assert all(a["status"] == "missing" for a in astrid["analyses"])
    assert (
        "pool B (Demo annotators) has no majority target on perceived_faithfulness yet"
        in astrid["analyses"][0]["missing"][0]
    )

    call_command("load_demo_validation")
    assert ValidationStudy.objects.count() == 2 and ScoreRun.objects.filter(study=study).count() == 3


def test_the_demo_command_asks_for_load_demo_first():
    with pytest.raises(CommandError, match="run load_demo first"):
        call_command("load_demo_validation")
