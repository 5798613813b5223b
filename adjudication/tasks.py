"""Celery tasks of adjudication: thin interfaces that take ids and call one service.

Exports are claimed by a conditional UPDATE in services.export_run, so a redelivered task (late
acknowledgement, a worker lost mid-export) never writes a second file for a finished job. Retries
happen only on a lost database connection (OperationalError), which a later attempt can outlive.
"""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError


@shared_task(
    bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True,
    autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3,
)
def export_study_task(self, job_id: int) -> None:
    from adjudication import services

    services.export_run(job_id=job_id)
