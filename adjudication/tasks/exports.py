"""The export task: writes one study export (see :func:`adjudication.exports.services.export_run`)."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from adjudication.exports import services


@shared_task(
    name="adjudication.export_study_task",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=3,
)
def export_study_task(self, job_id: int) -> None:
    services.export_run(job_id=job_id)
