"""The two-machine deployment of docs/operations.md ("Two machines"), on this machine as two process groups against
one PostgreSQL and one Redis:

* machine A's worker group consumes ``jobs`` and ``scoring-cpu`` (machine A also runs the web processes: here, this
  test process, which starts the runs and answers /readyz);
* machine B's consumes only the model queues, ``scoring-gpu`` and ``scoring-llm``.

One study is scored twice at once: on the ``lexical`` backend (its run goes to scoring-cpu, machine A) and on the
``llm`` backend (scoring-llm, machine B; the endpoint is a local stub, tests/scoring/llm_stub.py). Once both groups
have scored part of their run, one whole group is SIGKILLed (its main process and its pool: the machine is gone);
/readyz reports its queues without a worker; the other group finishes its run meanwhile; the killed group is
restarted and finishes its run. Nothing is lost or scored twice: each run has exactly one score per unit, every item
counted once, every batch done. Items after the first eight of each run wait while a gate file exists, so the kill
lands mid-run by construction, not by timing.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings as django_settings
from django.test import Client

from annotation.models import Chunk, Item, Sentence
from annotation.segmentation import split_sentences
from concord.ops.models import WorkerHeartbeat
from scoring import services
from scoring.metrics import METRICS
from scoring.models import BatchStatus, RunStatus, Score, ScoreRun
from tests import factories
from tests.scoring import runs_support
from tests.scoring.llm_stub import LLMStub, verdicts
from tests.two_machines_support import ModelProbeMetric
from tests.waiting import SLOW_TEST_TIMEOUT
from tests.worker import celery_workers, wait_for

POSTGRES = django_settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
REDIS = django_settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://"))

pytestmark = [
    pytest.mark.skipif(
        not (POSTGRES and REDIS),
        reason="two machines share one PostgreSQL and one Redis: needs DATABASE_URL=postgres://… and "
        "CELERY_BROKER_URL=redis://… (SQLite and the filesystem broker are one machine's)",
    ),
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(SLOW_TEST_TIMEOUT),
]

MACHINE_A = ("jobs", "scoring-cpu")
MACHINE_B = ("scoring-gpu", "scoring-llm")
ANSWER = "Metformin is the usual first-line drug. Hello there!"
HELD_ANSWER = f"Metformin is the usual first-line drug. {runs_support.HOLD} there!"
N_ITEMS, HELD_FROM, BATCH = 24, 8, 4


@pytest.fixture
def model_probe() -> Iterator[None]:
    """The test metric in this process too (the workers import it with --include), for this test only."""
    METRICS[ModelProbeMetric.name] = ModelProbeMetric
    yield
    METRICS.pop(ModelProbeMetric.name, None)


@pytest.fixture
def llm_endpoint(settings) -> Iterator[LLMStub]:
    stub = LLMStub().start()
    # Every answer holds two sentences: the endpoint finds both supported.
    stub.default = verdicts("supported", [True, True])
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_ALLOW_PRIVATE_ENDPOINTS = stub.base_url, "judge-7b", True
    yield stub
    stub.stop()


def _items(study) -> None:
    items = Item.objects.bulk_create(
        Item(study=study, external_id=f"m{i:03d}", question="What is first-line?",
             answer=HELD_ANSWER if i >= HELD_FROM else ANSWER)
        for i in range(N_ITEMS)
    )
    spans = split_sentences(ANSWER)
    Sentence.objects.bulk_create(
        Sentence(item=item, part="answer", index=j, text=s.text, start=s.start, end=s.end)
        for item in items for j, s in enumerate(spans)
    )
    Chunk.objects.bulk_create(
        Chunk(item=item, rank=1, text="Metformin is the usual first-line drug for type 2 diabetes.") for item in items
    )


def _progress(*run_ids: int):
    def observe() -> list:
        return [
            (run.status, run.n_done, sorted(run.batches.values_list("status", "leased_by")))
            for run in ScoreRun.objects.filter(pk__in=run_ids).order_by("pk")
        ]

    return observe


def _readyz() -> tuple[int, dict]:
    response = Client().get("/readyz")
    return response.status_code, response.json()["checks"]["workers"]


@pytest.mark.parametrize("killed", ["B", "A"], ids=["model-queue-group-killed", "cpu-and-jobs-group-killed"])
def test_two_worker_groups_on_one_database_and_broker_lose_nothing_when_one_is_killed_mid_run(
    killed, settings, tmp_path, model_probe, llm_endpoint
):
    # /readyz in this process (machine A's web): a worker silent for 5 s is dead; the workers beat every second.
    settings.CONCORD_WORKER_HEARTBEAT_SECONDS, settings.CONCORD_WORKER_STALE_SECONDS = 1.0, 5.0
    gate = tmp_path / "hold-gate"
    common = {
        runs_support.HOLD_GATE_ENV: str(gate),
        # The deployment's settings, the same on both machines (docs/operations.md, "Two machines").
        "SCORING_QUEUE_EMBEDDING": "scoring-gpu", "SCORING_QUEUE_LEARNED": "scoring-gpu",
        "SCORING_QUEUE_NLI": "scoring-gpu",
        "LLM_BASE_URL": llm_endpoint.base_url, "LLM_MODEL": "judge-7b", "LLM_ALLOW_PRIVATE_ENDPOINTS": "true",
        "CONCORD_WORKER_HEARTBEAT_SECONDS": "1", "CONCORD_WORKER_STALE_SECONDS": "5",
        # A killed worker's claim on its batch runs out soon: the restarted group takes the batch over.
        "SCORING_LEASE_SECONDS": "3",
    }
    include = ("tests.scoring.runs_support", "tests.two_machines_support")
    researcher = factories.make_user("rita-researcher")
    study = factories.make_study(owner=researcher)
    _items(study)
    gate.touch()
    # The two machines' worker groups start at the same time (and stop so at the end), as two machines would.
    with celery_workers(MACHINE_A, MACHINE_B, include=include, **common) as both:
        machine_a, machine_b = both
        groups = {"A": machine_a, "B": machine_b}
        wait_for(lambda: _readyz()[0] == 200, worker=both, what="/readyz to see both groups")
        hosts = {
            name: wait_for(lambda q=queues: WorkerHeartbeat.objects.filter(queues=sorted(q)).first(), worker=both,
                           what=f"machine {name}'s heartbeat").hostname
            for name, queues in (("A", MACHINE_A), ("B", MACHINE_B))
        }
        cpu_run = services.score_run_start(study=study, metric="probe_models", backend="lexical", parameters={},
                                           actor=researcher, batch_size=BATCH)
        # No answer cache: every item's prompt must reach the endpoint (the items' prompts are alike).
        llm_run = services.score_run_start(study=study, metric="probe_models", backend="llm", parameters={},
                                           actor=researcher, batch_size=BATCH, backend_options={"cache": False})
        runs = {"A": cpu_run, "B": llm_run}
        progress = _progress(cpu_run.pk, llm_run.pk)

        def run(name: str) -> ScoreRun:
            return ScoreRun.objects.get(pk=runs[name].pk)

        wait_for(lambda: all(run(name).n_done >= HELD_FROM for name in "AB"), worker=both, progress=progress,
                 what="both groups to score the first items of their runs")
        for name in "AB":
            # Each run's batches were claimed by its own group only: the queues split the work between the machines.
            claimed = {by.rsplit(":", 1)[0] for by in run(name).batches.exclude(leased_by="").values_list(
                "leased_by", flat=True)}
            assert claimed == {hosts[name]}, (name, claimed, hosts)
            assert run(name).status == RunStatus.RUNNING

        survivor = "A" if killed == "B" else "B"
        groups[killed].kill()
        dead_at = run(killed).n_done
        gone = sorted(MACHINE_A if killed == "A" else MACHINE_B)
        wait_for(lambda: _readyz() == (503, {"ok": False, "live": 1, "queues_without_worker": gone}),
                 worker=groups[survivor], what="/readyz to report the killed group's queues without a worker")
        # The surviving group finishes its run while the other is down; nothing scores the dead group's run.
        gate.unlink()
        wait_for(lambda: run(survivor).status == RunStatus.DONE, worker=groups[survivor], progress=progress,
                 what=f"machine {survivor} to finish its run alone")
        assert run(killed).status == RunStatus.RUNNING and run(killed).n_done == dead_at

        groups[killed].start()  # the machine comes back: its worker re-sends its unfinished batches (recovery)
        wait_for(lambda: run(killed).status == RunStatus.DONE, worker=both, progress=progress,
                 what=f"machine {killed} to finish its run after its restart")
        wait_for(lambda: _readyz()[0] == 200, worker=both, what="/readyz to see the restarted group")

    for name in "AB":
        done = run(name)
        assert (done.n_total, done.n_done, done.n_failed) == (N_ITEMS, N_ITEMS, 0), name  # no item counted twice
        scores = Score.objects.filter(run=done)
        assert scores.count() == N_ITEMS * 3, name  # two sentences and the item: one score each
        assert scores.values("item", "unit_key").distinct().count() == N_ITEMS * 3, name
        assert set(done.batches.values_list("status", flat=True)) == {BatchStatus.DONE}, name
    # Every llm score came from the endpoint: one request per item scored, at least (a batch cut short by the kill is
    # asked again).
    assert len(llm_endpoint.requests) >= N_ITEMS
