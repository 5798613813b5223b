"""The console's upload flow on a real Celery worker: dry run, confirmation, import — no eager mode."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.console import services as svc
from annotation.imports import jobs
from annotation.models import ImportJob, ImportJobStatus, Item
from tests import factories
from tests.annotation.console_helpers import ITEMS, jsonl
from tests.waiting import SLOW_TEST_TIMEOUT
from tests.worker import celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True), pytest.mark.timeout(SLOW_TEST_TIMEOUT)]


def _wait_for(job_id: int, status: str, worker) -> ImportJob:
    def reached() -> ImportJob | None:
        job = ImportJob.objects.get(pk=job_id)
        return job if job.status == status else None

    return wait_for(
        reached,
        worker=worker,
        progress=lambda: ImportJob.objects.filter(pk=job_id).values_list("status", "n_done").get(),
        what=f"the import job to be {status}",
    )


def test_a_worker_checks_then_imports_an_uploaded_file(researcher):
    study = svc.study_create(owner=researcher, name="Worker pilot", presets=["astrid"])
    pool = svc.pool_create(
        study=study, actor=researcher, name="PF", questions=list(study.questions.filter(key="helpful"))
    )
    svc.pool_membership_add(pool=pool, user=factories.make_user(), actor=researcher)
    with celery_worker() as worker:
        job = jobs.import_job_create(
            study=study, actor=researcher, upload=SimpleUploadedFile("items.jsonl", jsonl(*ITEMS))
        )
        job = _wait_for(job.pk, ImportJobStatus.CHECKED, worker)
        assert job.n_done == 2 and not Item.objects.filter(study=study).exists()
        jobs.import_job_confirm(job=job, actor=researcher)
        job = _wait_for(job.pk, ImportJobStatus.DONE, worker)
    assert job.summary["items"] == 2 and job.batch_id is not None
    assert Item.objects.filter(study=study).count() == 2
    assert pool.assignments.count() == 2
