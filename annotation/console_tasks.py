"""Celery tasks of the researcher console: thin wrappers that load by id and call one service."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from annotation import study_services


@shared_task(autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def import_job_check_task(job_id: int) -> None:
    study_services.import_job_check(job_id=job_id)


@shared_task(autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def import_job_run_task(job_id: int) -> None:
    study_services.import_job_run(job_id=job_id)
