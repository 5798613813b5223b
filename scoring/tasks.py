"""Celery tasks of score runs: thin interfaces that take ids, call one service and decide retries.

Every task is acknowledged late and rejected (re-queued) when its worker dies (settings), so a batch
may be delivered more than once; the services make that harmless. Retries happen only on
``TransientBackendError`` (LLM 429/5xx, timeouts), with exponential backoff up to a cap, and on
``LeaseHeld`` (a twin delivery is working on the batch; wait for its lease).
"""

from __future__ import annotations

import logging
import os
import socket

from celery import bootsteps, shared_task
from django.conf import settings

from scoring import services
from scoring.judges import services as judge_services
from scoring.metrics import BackendUnavailable, TransientBackendError

logger = logging.getLogger(__name__)

TRANSIENT_BACKOFF_MAX_SECONDS = 300
# Publishing from a worker rides out a broker restart (about a minute of retries) instead of Celery's
# default of about 0.6 s: a fan-out's batches are already committed, and a batch message dropped here
# would wait for the next worker start (score_runs_recover) to be sent again.
BROKER_RESTART_RETRY = {"max_retries": 20, "interval_start": 0.5, "interval_step": 0.5, "interval_max": 3.0}


def route(name: str, args, kwargs, options, task=None, **kw) -> dict[str, str] | None:
    """Celery router (``settings.CELERY_TASK_ROUTES``): embedding a knowledge base goes to the embedding
    backend's queue, wherever its workers hold that model. Other tasks: the routing table."""
    if name == "scoring.knowledge_base_embed":
        return {"queue": services.scoring_queue("embedding")}
    return None


def _worker_name(task) -> str:
    return f"{task.request.hostname or socket.gethostname()}:{os.getpid()}"


@shared_task(name="scoring.score_run_fan_out", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def score_run_fan_out(run_id: int) -> None:
    # Each chunk of batches is queued as soon as it is committed, while the next one is read (bounded memory
    # however many items the study has); a redelivery after a crash resumes the fan-out where it stopped.
    queue = None
    for batch_ids in services.score_run_fan_out_chunks(run_id=run_id):
        # Every batch goes to the queue of the run's backend (services.scoring_queue): a GPU model's batches
        # to the GPU workers, an LLM run's to the workers that wait on the endpoint.
        queue = queue or services.score_run_queues([run_id])[run_id]
        for batch_id in batch_ids:
            score_batch.apply_async((batch_id,), queue=queue, retry=True, retry_policy=BROKER_RESTART_RETRY)


@shared_task(
    name="scoring.score_batch",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(TransientBackendError,),
    retry_backoff=True,
    retry_backoff_max=TRANSIENT_BACKOFF_MAX_SECONDS,
    retry_jitter=True,
    max_retries=settings.SCORING_MAX_TRANSIENT_RETRIES,
)
def score_batch(self, batch_id: int) -> str:
    final_attempt = self.request.retries >= (self.max_retries or 0)
    try:
        outcome = services.score_batch_process(
            batch_id=batch_id, worker=_worker_name(self), final_attempt=final_attempt
        )
    except services.LeaseHeld as held:
        # Not a failure: wait for the twin to finish or its lease to run out. Does not use up the
        # transient-error retries, which count only backend failures.
        queue = services.score_batch_queues([batch_id]).get(batch_id)
        score_batch.apply_async((batch_id,), countdown=held.retry_in, queue=queue)
        return "lease held"
    except services.LeaseLost:
        logger.warning("batch %s was taken over by another delivery; this one stops", batch_id)
        return "lease lost"
    return outcome.status


@shared_task(name="scoring.score_runs_recover", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def score_runs_recover() -> None:
    run_ids = services.score_runs_queued()
    run_queues = services.score_run_queues(run_ids)
    for run_id in run_ids:
        score_run_fan_out.apply_async(
            (run_id,), queue=run_queues[run_id], retry=True, retry_policy=BROKER_RESTART_RETRY
        )
    batches = services.score_runs_recover()
    batch_queues = services.score_batch_queues([batch_id for batch_id, _ in batches])
    for batch_id, delay in batches:
        score_batch.apply_async(
            (batch_id,), countdown=delay, queue=batch_queues[batch_id], retry=True, retry_policy=BROKER_RESTART_RETRY
        )


@shared_task(
    name="scoring.knowledge_base_embed", acks_late=True, reject_on_worker_lost=True, ignore_result=True
)
def knowledge_base_embed(knowledge_base_id: int) -> int:
    try:
        return services.knowledge_base_embed(knowledge_base_id=knowledge_base_id)
    except BackendUnavailable as exc:
        # Retrieval embeds missing passages itself; a worker without the model only logs.
        logger.warning("knowledge base %s not embedded: %s", knowledge_base_id, exc)
        return 0


def recover_to_a_consumed_queue(app) -> None:
    """Send the recovery (``score_runs_recover``) to a queue this worker consumes: the jobs queue when it
    is one of them, else the first of its queues, so that it runs whichever queues the deployment's
    workers are started with; the recovery re-sends each run's work to the queue of the run's backend."""
    consumed = sorted(app.amqp.queues.consume_from)
    queue = settings.QUEUE_JOBS if settings.QUEUE_JOBS in consumed or not consumed else consumed[0]
    score_runs_recover.apply_async(queue=queue)


class RecoverOnConsumerStart(bootsteps.StartStopStep):
    """A worker's consumer re-sends, from the database, the work whose messages may be gone: when the
    worker starts (a killed worker may have taken its unacknowledged messages with it) and again each
    time it reconnects after losing the broker. An outage loses messages even with a persistent broker:
    Celery drops the messages a worker had received but not started when the connection broke (they
    wait in Redis's unacknowledged set until the visibility timeout, an hour), and kombu's Redis
    transport pops a message before it records it as unacknowledged, so a crash in between loses it.
    Extra deliveries are harmless (claims and upserts).

    Registered on the consumer blueprint by ``concord.celery``; it starts after the task consumer, on the
    first start and on every restart that follows a connection loss."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def start(self, c) -> None:
        recover_to_a_consumed_queue(c.app)


@shared_task(name="scoring.judge_train", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def judge_train(job_id: int) -> None:
    judge_services.judge_train_job_run(job_id=job_id)
