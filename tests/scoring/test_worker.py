"""Real Celery worker processes on the test database and broker.

The worker imports the test-only ``probe`` metric (tests/scoring/runs_support.py, over the real
``lexical`` backend) with ``--include``, so these tests do not depend on any one production metric.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from annotation.models import Chunk, Item, Sentence
from annotation.segmentation import split_sentences
from scoring import services
from scoring.models import BatchStatus, RunStatus, Score, ScoreRun
from tests import factories
from tests.scoring import runs_support  # also registers the probe metric in this process
from tests.waiting import SLOW_TEST_TIMEOUT
from tests.worker import WorkerProcess, celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True), pytest.mark.timeout(SLOW_TEST_TIMEOUT)]

INCLUDE = ("tests.scoring.runs_support",)
ANSWER = "Metformin is the usual first-line drug. Hello there!"
HELD_ANSWER = f"Metformin is the usual first-line drug. {runs_support.HOLD} there!"
HOLD_GATE = Path(tempfile.gettempdir()) / f"concord-hold-gate-{os.getpid()}"
CONTEXT = "Metformin is the usual first-line drug for type 2 diabetes."


def _bulk_items(study, n: int, *, held_from: int | None = None) -> None:
    """``n`` items; from ``held_from`` on, items the probe holds while HOLD_GATE exists."""
    items = Item.objects.bulk_create(
        Item(
            study=study, external_id=f"w{i:04d}", question="What is first-line?",
            answer=HELD_ANSWER if held_from is not None and i >= held_from else ANSWER,
        )
        for i in range(n)
    )
    spans = split_sentences(ANSWER)
    Sentence.objects.bulk_create(
        Sentence(item=item, part="answer", index=j, text=s.text, start=s.start, end=s.end)
        for item in items for j, s in enumerate(spans)
    )
    Chunk.objects.bulk_create(Chunk(item=item, rank=1, text=CONTEXT) for item in items)


@pytest.fixture(scope="module")
def worker(django_db_setup, django_db_blocker) -> WorkerProcess:
    """One worker for the module (starting one costs seconds); each test gets an empty database."""
    env = {runs_support.HOLD_GATE_ENV: str(HOLD_GATE)}
    with celery_worker(include=INCLUDE, SCORING_LEASE_SECONDS="2", **env) as started:
        yield started


def _run(run_id: int) -> ScoreRun:
    return ScoreRun.objects.get(pk=run_id)


def _progress(run_id: int):
    """What a run's progress is seen in: its counts and the states of its batches."""
    def observe() -> tuple:
        run = _run(run_id)
        batches = sorted(run.batches.values_list("status", "leased_by"))
        return run.status, run.n_done, run.n_failed, batches

    return observe


def test_celery_is_wired_a_real_worker_completes_a_run_and_its_scores_land_in_the_database(worker):
    researcher = factories.make_user("rita-researcher")
    study = factories.make_study(owner=researcher)
    _bulk_items(study, 6)
    # Autocommit here: the fan-out is published when score_run_start's transaction commits.
    run = services.score_run_start(
        study=study, metric="probe", backend="lexical", parameters={}, actor=researcher, batch_size=4
    )
    wait_for(lambda: _run(run.pk).status == RunStatus.DONE, worker=worker, progress=_progress(run.pk),
             what="the run to finish")
    run.refresh_from_db()
    assert (run.n_total, run.n_done, run.n_failed) == (6, 6, 0)
    assert run.model_identity.startswith("lexical")
    assert Score.objects.filter(run=run).count() == 6 * 3
    assert set(Score.objects.filter(run=run, unit_key="item").values_list("value", flat=True)) == {0.5}


def test_a_worker_killed_mid_run_and_restarted_leaves_exactly_one_score_per_unit(worker):
    researcher = factories.make_user("rita-researcher")
    study = factories.make_study(owner=researcher)
    n = 200
    # Items after the first eight wait while the gate exists, so the run cannot finish before the kill,
    # however fast the machine: the kill lands mid-run by construction, not by timing.
    _bulk_items(study, n, held_from=8)
    HOLD_GATE.touch()
    try:
        run = services.score_run_start(
            study=study, metric="probe", backend="lexical", parameters={}, actor=researcher, batch_size=4
        )
        wait_for(lambda: _run(run.pk).n_done >= 8, worker=worker, progress=_progress(run.pk), what="the first scores")
        worker.kill()
        killed = _run(run.pk)
        assert killed.status == RunStatus.RUNNING and killed.n_done < n
    finally:
        HOLD_GATE.unlink(missing_ok=True)
    # The module's worker runs with a 2 s lease, so the killed worker's batch is taken over soon after.
    worker.start()
    wait_for(lambda: _run(run.pk).status == RunStatus.DONE, worker=worker, progress=_progress(run.pk),
             what="the run to finish after the restart")
    run.refresh_from_db()
    assert (run.n_total, run.n_done, run.n_failed) == (n, n, 0)  # no item counted twice
    assert Score.objects.filter(run=run).count() == n * 3
    assert Score.objects.filter(run=run).values("item").distinct().count() == n
    assert set(run.batches.values_list("status", flat=True)) == {BatchStatus.DONE}
