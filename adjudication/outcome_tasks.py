"""Celery task of the model-as-rater bootstraps and the outcome cross-validations.

Takes a job id and calls one service (adjudication.outcomes.analysis_job_run), which claims the job
with a conditional UPDATE and writes progress as it goes. A redelivered task recomputes the same
seeded result and overwrites it. Retries only on a lost database connection (OperationalError).
"""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError


@shared_task(
    bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True,
    autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3,
)
def analysis_job_run_task(self, job_id: int) -> None:
    from adjudication import outcomes

    outcomes.analysis_job_run(job_id=job_id)
