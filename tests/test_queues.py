"""Celery routes tasks to queues by the kind of work, so that workers on different machines take
different work (README, "Running on PostgreSQL and Redis"): imports, exports, reports and judge
training on ``jobs``; model scoring on ``scoring-cpu`` or ``scoring-gpu`` by the backend's device, and
LLM scoring on ``scoring-llm``. A run's fan-out and batches go to the queue of the run's backend.

The unit tests check the routing table, what each sender passes and that a retry stays on its queue;
``test_two_workers_on_two_queues_each_run_the_tasks_of_their_queue`` starts two real workers on
different queues of one private Redis and checks where each task ran.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest
from celery.app.task import Context
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from annotation.console import services as console
from annotation.imports import jobs
from annotation.models import ImportJob, ImportJobStatus
from concord.celery import app
from scoring import services, tasks
from scoring.backends import BACKEND_NAMES, BACKENDS
from scoring.models import BatchStatus, RunStatus, ScoreRun
from tests import factories
from tests.annotation.console_helpers import ITEMS, jsonl
from tests.scoring import runs_support  # noqa: F401 - registers the probe metric in this process too
from tests.scoring.conftest import build_tiny_nli_model
from tests.scoring.runs_support import nli_available
from tests.test_faults import REDIS_SERVER, PrivateRedis, _bulk_items, _publishing_to
from tests.waiting import SLOW_TEST_TIMEOUT, SUBPROCESS_TIMEOUT
from tests.worker import celery_workers, wait_for

ROOT = Path(__file__).resolve().parent.parent
JOBS, CPU, GPU, LLM = "jobs", "scoring-cpu", "scoring-gpu", "scoring-llm"


def _queue_of(task_name: str, **options) -> str:
    """The queue Celery's router sends ``task_name`` to, as ``apply_async`` would."""
    return app.amqp.router.route(options, task_name)["queue"].name


# --- The routing table ---------------------------------------------------------------------------


def test_every_task_of_concord_is_routed_to_a_declared_queue_by_its_kind():
    app.loader.import_default_modules()
    # Celery's own tasks, and those the tests define for themselves (tests/ops_tasks.py), are not Concord's.
    names = sorted(name for name in app.tasks if not name.startswith(("celery.", "tests.")))
    assert {"annotation.import_job_run_task", "adjudication.export_study_task", "scoring.score_batch"} <= set(names)
    for name in names:
        assert _queue_of(name) in settings.CELERY_TASK_QUEUES, name
        assert re.match(r"^(annotation|scoring|adjudication)\.\w+$", name), name
        if name.startswith(("annotation.", "adjudication.")):
            assert _queue_of(name) == JOBS, name
    assert _queue_of("scoring.judge_train") == JOBS
    assert _queue_of("scoring.score_runs_recover") == JOBS
    # Embedding a knowledge base goes where the embedding backend's runs go, overridden or not.
    assert _queue_of("scoring.knowledge_base_embed") == services.scoring_queue("embedding") == CPU
    with override_settings(SCORING_QUEUES={"embedding": GPU}):
        assert _queue_of("scoring.knowledge_base_embed") == GPU
    # An explicit queue (a run's backend) wins over the table.
    assert _queue_of("scoring.score_batch", queue=GPU) == GPU


def test_every_backend_has_a_queue_cpu_models_and_the_llm_apart_by_default():
    assert {descriptor.queue for descriptor in BACKENDS.values()} <= set(settings.CELERY_TASK_QUEUES)
    assert settings.EMBEDDING_DEVICE == settings.NLI_DEVICE == "cpu"
    assert {b: services.scoring_queue(b) for b in BACKEND_NAMES} == {
        "embedding": CPU, "learned": CPU, "nli": CPU, "lexical": CPU, "none": CPU, "llm": LLM,
    }
    assert list(settings.CELERY_TASK_QUEUES) == [JOBS, CPU, GPU, LLM]
    assert settings.CELERY_TASK_DEFAULT_QUEUE == JOBS


def test_an_override_moves_its_backend_only_and_a_backend_never_registered_is_a_configuration_error(settings):
    settings.SCORING_QUEUES = {"lexical": GPU}
    assert (services.scoring_queue("lexical"), services.scoring_queue("nli")) == (GPU, CPU)
    # A run row naming a backend this installation no longer has: no worker would know where to take it.
    with pytest.raises(ImproperlyConfigured, match="'retired-backend'"):
        services.scoring_queue("retired-backend")


def test_the_make_run_worker_consumes_every_queue():
    makefile = (ROOT / "Makefile").read_text()
    queues = re.search(r"^QUEUES \?= (\S+)$", makefile, re.M).group(1).split(",")
    assert queues == list(settings.CELERY_TASK_QUEUES)
    assert "worker -Q $(QUEUES)" in makefile


def _settings_under(expression: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SCORING_QUEUE", "EMBEDDING_", "NLI_"))}
    base.update(env)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'concord.settings'; "
            "django.setup(); from django.conf import settings as s; from scoring import services as q; "
            f"from scoring.backends import BACKEND_NAMES; print(({expression}))",
        ],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
    )


def test_queues_and_devices_come_from_the_environment_and_bad_values_are_refused(tmp_path):
    # A deployment with GPU workers: the model backends' runs to scoring-gpu (the same setting on every
    # machine), the device on the GPU machines; a queue of its own for a second LLM endpoint.
    gpu = _settings_under(
        "sorted((b, q.scoring_queue(b)) for b in BACKEND_NAMES), list(s.CELERY_TASK_QUEUES), s.EMBEDDING_DEVICE, "
        "s.NLI_DEVICE",
        CONCORD_VAR_DIR=str(tmp_path), SCORING_QUEUE_EMBEDDING=GPU, SCORING_QUEUE_LEARNED=GPU, SCORING_QUEUE_NLI=GPU,
        SCORING_QUEUE_LLM="llm-eu", EMBEDDING_DEVICE="cuda", NLI_DEVICE="cuda:1",
    )
    assert gpu.returncode == 0, gpu.stderr
    assert gpu.stdout.strip() == str((
        [("embedding", GPU), ("learned", GPU), ("lexical", CPU), ("llm", "llm-eu"), ("nli", GPU), ("none", CPU)],
        [JOBS, CPU, GPU, LLM, "llm-eu"],
        "cuda",
        "cuda:1",
    ))
    # The device is the machine's: it does not move a backend's runs to another queue by itself.
    device_only = _settings_under("q.scoring_queue('nli')", CONCORD_VAR_DIR=str(tmp_path), NLI_DEVICE="cuda")
    assert device_only.stdout.strip() == CPU, device_only.stderr
    device = _settings_under("s.NLI_DEVICE", CONCORD_VAR_DIR=str(tmp_path), NLI_DEVICE="gpu")
    assert device.returncode != 0 and "NLI_DEVICE='gpu' must be cpu, cuda" in device.stderr
    queue = _settings_under("s.SCORING_QUEUES", CONCORD_VAR_DIR=str(tmp_path), SCORING_QUEUE_NLI="a b")
    assert queue.returncode != 0 and "SCORING_QUEUE_NLI='a b'" in queue.stderr
    # A misspelt backend would leave the nli runs on the CPU queue unnoticed: the process stops.
    typo = _settings_under("s.SCORING_QUEUES", CONCORD_VAR_DIR=str(tmp_path), SCORING_QUEUE_NLII=GPU)
    assert typo.returncode != 0 and "SCORING_QUEUE_NLII names no backend" in typo.stderr


# --- What the senders pass -----------------------------------------------------------------------


@pytest.mark.django_db
def test_a_run_is_fanned_out_on_its_backends_queue_and_every_batch_sent_there(
    study, researcher, django_capture_on_commit_callbacks
):
    for i in range(5):
        factories.make_item(study, f"q{i}", answer="Metformin is first-line. Hello there!")
    queues = dict(settings.SCORING_QUEUES, lexical="lexical-here")
    with (
        override_settings(SCORING_QUEUES=queues),
        mock.patch.object(tasks.score_run_fan_out, "apply_async") as fan_out,
        django_capture_on_commit_callbacks(execute=True),
    ):
        run = services.score_run_start(
            study=study, metric="probe", backend="lexical", parameters={}, actor=researcher, batch_size=2
        )
    fan_out.assert_called_once_with((run.pk,), queue="lexical-here")
    with override_settings(SCORING_QUEUES=queues), mock.patch.object(tasks.score_batch, "apply_async") as batch:
        tasks.score_run_fan_out(run.pk)
    assert batch.call_count == 3
    assert {call.kwargs["queue"] for call in batch.call_args_list} == {"lexical-here"}


@pytest.mark.django_db
def test_recovery_resends_each_run_and_batch_to_the_queue_of_its_backend(study, researcher, settings, tmp_path):
    nli_available(settings, tmp_path / "nli")
    for i in range(3):
        factories.make_item(study, f"q{i}", answer="Metformin is first-line.")
    queued = services.score_run_start(study=study, metric="probe", backend="nli", parameters={}, actor=researcher)
    running = services.score_run_start(
        study=study, metric="probe", backend="lexical", parameters={}, actor=researcher, batch_size=1
    )
    services.score_run_fan_out(run_id=running.pk)
    queues = dict(settings.SCORING_QUEUES, nli=GPU)
    with (
        override_settings(SCORING_QUEUES=queues),
        mock.patch.object(tasks.score_run_fan_out, "apply_async") as fan_out,
        mock.patch.object(tasks.score_batch, "apply_async") as batch,
    ):
        tasks.score_runs_recover()
    fan_out.assert_called_once()
    assert fan_out.call_args.args == ((queued.pk,),) and fan_out.call_args.kwargs["queue"] == GPU
    assert batch.call_count == 3 and {c.kwargs["queue"] for c in batch.call_args_list} == {CPU}


@pytest.mark.django_db
def test_the_queues_of_many_batches_are_looked_up_in_slices_of_500_ids(
    study, researcher, django_assert_num_queries
):
    """A recovery may re-send tens of thousands of batches: one query with every id would pass the
    database's limit on query parameters (65,535 for PostgreSQL's protocol)."""
    factories.make_item(study, "q0", answer="Metformin is first-line.")
    run = services.score_run_start(
        study=study, metric="probe", backend="lexical", parameters={}, actor=researcher, batch_size=1
    )
    (batch_id,) = services.score_run_fan_out(run_id=run.pk)
    missing = list(range(batch_id + 1, batch_id + 1_200))
    with django_assert_num_queries(3):
        assert services.score_batch_queues([*missing, batch_id]) == {batch_id: CPU}


@pytest.mark.parametrize(
    ("consumed", "expected"), [([GPU], GPU), ([CPU, JOBS, LLM], JOBS), ([LLM, CPU], CPU)]
)
def test_a_starting_worker_sends_its_recovery_to_a_queue_it_consumes(consumed, expected):
    consumer = SimpleNamespace(app=SimpleNamespace(amqp=SimpleNamespace(queues=SimpleNamespace(
        consume_from={name: object() for name in consumed}
    ))))
    with mock.patch.object(tasks.score_runs_recover, "apply_async") as recover:
        tasks.RecoverOnConsumerStart(consumer).start(consumer)
    recover.assert_called_once_with(queue=expected)


def test_the_recovery_step_is_on_the_worker_consumers_blueprint_after_the_task_consumer():
    """Registered on the application (not by importing a tasks module, which may come too late), so every
    worker's consumer runs it on each start, the restarts after a broker outage included."""
    from celery.worker.consumer import Consumer

    from concord.celery import app

    blueprint = Consumer.Blueprint(steps=app.steps["consumer"])
    names = [step.name for step in blueprint._finalize_steps(blueprint.claim_steps())]  # the start order
    assert names.index("scoring.tasks.RecoverOnConsumerStart") > names.index("celery.worker.consumer.tasks.Tasks")


def test_a_retried_batch_goes_back_to_the_queue_it_came_from():
    """Celery's retry (autoretry on a transient backend error) re-sends with the delivery info of the
    message being retried: a GPU batch stays on the GPU queue, whatever the routing table says."""
    # Celery publishes to a direct queue through the default exchange, routing key = the queue's name.
    request = Context(id="t1", args=[42], kwargs={}, retries=0, delivery_info={"exchange": "", "routing_key": GPU})
    signature = tasks.score_batch.signature_from_request(request, countdown=3)
    assert _queue_of("scoring.score_batch", **signature.options) == GPU


# --- Two real workers, two queues, one Redis -------------------------------------------------------


def _hostname(worker) -> str:
    match = re.search(r"(test-[0-9a-f]{8})@", worker.log())
    assert match, worker.log()[-2000:]
    return match.group(1)


def _received(worker, task: str, event: str = "received") -> int:
    return len(re.findall(rf"Task {re.escape(task)}\[[0-9a-f-]+\] {event}", worker.log()))


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.timeout(SLOW_TEST_TIMEOUT)
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(REDIS_SERVER is None, reason="needs a redis-server binary for a private broker")
def test_two_workers_on_two_queues_each_run_the_tasks_of_their_queue(tmp_path):
    """A "GPU" worker (``-Q scoring-gpu``; SCORING_QUEUE_NLI sends nli runs there) and a CPU worker (``-Q
    jobs,scoring-cpu,scoring-llm``), as in the README's deployment. No GPU is needed: the nli model is a
    tiny one and NLI_DEVICE stays cpu; the test is about which worker takes which task."""
    nli_dir = build_tiny_nli_model(tmp_path / "nli", favour="entailment")
    env = {"SCORING_QUEUE_NLI": GPU, "NLI_MODEL_DIR": str(nli_dir)}
    broker = PrivateRedis(tmp_path)
    broker.start()
    include = ("tests.scoring.runs_support",)
    try:
        with (
            _publishing_to(broker.url),
            override_settings(SCORING_QUEUES=dict(settings.SCORING_QUEUES, nli=GPU), NLI_MODEL_DIR=str(nli_dir)),
            # The two workers start at the same time and stop so at the end.
            celery_workers((GPU,), (JOBS, CPU, LLM), include=include, CELERY_BROKER_URL=broker.url, **env) as (
                gpu_worker, cpu_worker,
            ),
        ):
            # Each worker's own recovery has run (on a queue it consumes) before any run exists.
            for worker in (gpu_worker, cpu_worker):
                wait_for(lambda w=worker: _received(w, "scoring.score_runs_recover", "succeeded") == 1,
                         worker=worker, what="the worker's recovery at start")
            researcher = factories.make_user("rita-researcher")
            study = factories.make_study(owner=researcher)
            _bulk_items(study, 6)
            lexical = services.score_run_start(
                study=study, metric="probe", backend="lexical", parameters={}, actor=researcher, batch_size=2
            )
            nli = services.score_run_start(
                study=study, metric="probe", backend="nli", parameters={}, actor=researcher, batch_size=2
            )
            other = console.study_create(owner=researcher, name="Queue pilot", presets=["astrid"])
            job = jobs.import_job_create(
                study=other, actor=researcher, upload=SimpleUploadedFile("items.jsonl", jsonl(*ITEMS))
            )

            def finished() -> bool:
                runs = ScoreRun.objects.filter(pk__in=[lexical.pk, nli.pk]).values_list("status", flat=True)
                checked = ImportJob.objects.get(pk=job.pk).status == ImportJobStatus.CHECKED
                return checked and set(runs) == {RunStatus.DONE}

            def progress() -> tuple:
                runs = ScoreRun.objects.filter(pk__in=[lexical.pk, nli.pk]).order_by("pk")
                return list(runs.values_list("status", "n_done")), ImportJob.objects.get(pk=job.pk).status

            wait_for(finished, worker=(gpu_worker, cpu_worker), progress=progress,
                     what="both runs and the import check")
            gpu_log, cpu_log = gpu_worker.log(), cpu_worker.log()
            gpu_name, cpu_name = _hostname(gpu_worker), _hostname(cpu_worker)
    finally:
        broker.kill()
    for run, name in ((lexical, cpu_name), (nli, gpu_name)):
        run.refresh_from_db()
        assert (run.n_total, run.n_done, run.n_failed) == (6, 6, 0)
        batches = list(run.batches.values_list("status", "leased_by"))
        assert len(batches) == 3
        assert all(status == BatchStatus.DONE and leased_by.startswith(f"{name}@") for status, leased_by in batches), (
            name, batches,
        )
    nli.refresh_from_db()
    assert nli.model_identity.startswith("nli:")
    # Each worker received exactly its queue's tasks: one fan-out and three batches each, the import
    # check on the CPU worker only, and each worker's own recovery at start.
    def received(task: str) -> tuple[int, int]:
        return _received(gpu_worker, task), _received(cpu_worker, task)

    assert received("scoring.score_run_fan_out") == (1, 1), (gpu_log[-3000:], cpu_log[-3000:])
    assert received("scoring.score_batch") == (3, 3)
    assert received("annotation.import_job_check_task") == (0, 1)
    assert received("scoring.score_runs_recover") == (1, 1)
