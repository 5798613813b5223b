"""Celery tasks of the annotation app: thin wrappers that load by id and call one service."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from annotation import audit
from annotation.imports import jobs


@shared_task(name="annotation.import_job_check_task", autoretry_for=(OperationalError,), retry_backoff=True,
             max_retries=3)
def import_job_check_task(job_id: int) -> None:
    jobs.import_job_check(job_id=job_id)


@shared_task(name="annotation.import_job_run_task", autoretry_for=(OperationalError,), retry_backoff=True,
             max_retries=3)
def import_job_run_task(job_id: int) -> None:
    jobs.import_job_run(job_id=job_id)


@shared_task(name="annotation.audit_seal_task", ignore_result=True)
def audit_seal_task() -> int:
    """Seal pending audit events; Celery beat runs it every AUDIT_SEAL_INTERVAL_SECONDS (settings)."""
    return audit.events_seal()
