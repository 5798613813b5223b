"""The report-job task: every report job — bootstrap intervals, model-as-rater bootstraps, outcome
cross-validations and planning simulations — is too slow for a request (see :mod:`adjudication.report_jobs`).

A redelivered task recomputes the same seeded result and overwrites it (the job row is keyed on its
parameters), so nothing duplicates.
"""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from adjudication import report_jobs


@shared_task(
    name="adjudication.report_job_run",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=3,
)
def report_job_run(self, job_id: int) -> None:
    report_jobs.job_run(job_id=job_id)
