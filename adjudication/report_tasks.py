"""Celery task of the reports: the bootstrap intervals, which are too slow for a request.

The task takes a job id and calls one service. A redelivered task recomputes the same seeded result
and overwrites it (the job row is keyed on its parameters), so nothing duplicates. Retries only on a
lost database connection (OperationalError).
"""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError


@shared_task(
    bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True,
    autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3,
)
def report_bootstrap_run(self, job_id: int) -> None:
    from adjudication import reports

    reports.report_job_run(job_id=job_id)
