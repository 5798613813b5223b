"""The one job lifecycle (concord.jobs): claim, progress, done or failed, and what a retry may claim again."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import OperationalError
from django.db.models import Q
from django.utils import timezone

from adjudication.exports.services import EXPORT_LEASE_SECONDS, export_run
from adjudication.models import ExportJob
from concord.errors import ValidationFailed
from concord.jobs import JobStatus, job_claim, run_job


@pytest.fixture
def job(study):
    return ExportJob.objects.create(study=study, format="jsonl")


def _status(job):
    job.refresh_from_db()
    return job.status


def test_a_job_runs_once_and_stores_what_its_work_returns_with_done(job):
    calls = []

    def work(claimed, progress):
        calls.append(claimed.status)
        progress(1, 2)
        progress(2, 2)
        return {"size_bytes": 42}

    assert run_job(ExportJob, job.pk, work) is not None
    job.refresh_from_db()
    assert calls == ["running"]
    assert (job.status, job.n_done, job.n_total, job.size_bytes) == ("done", 2, 2, 42)
    assert job.started_at is not None and job.finished_at is not None and job.progress == 1.0


def test_a_done_job_is_never_run_again(job):
    run_job(ExportJob, job.pk, lambda j, p: None)
    finished_at = ExportJob.objects.get(pk=job.pk).finished_at
    assert run_job(ExportJob, job.pk, lambda j, p: pytest.fail("ran a done job")) is None
    assert ExportJob.objects.get(pk=job.pk).finished_at == finished_at


def test_a_redelivered_task_re_claims_a_job_left_running_by_a_dead_worker(job):
    assert job_claim(ExportJob, job.pk) is not None
    assert _status(job) == JobStatus.RUNNING
    assert run_job(ExportJob, job.pk, lambda j, p: None) is not None
    assert _status(job) == JobStatus.DONE


def test_a_domain_error_records_the_job_failed_with_its_message_and_is_not_raised(job):
    def work(claimed, progress):
        raise ValidationFailed("the pool has no members")

    run_job(ExportJob, job.pk, work)
    job.refresh_from_db()
    assert (job.status, job.error) == ("failed", "the pool has no members")
    assert job.finished


def test_any_other_error_records_the_job_failed_and_is_raised_for_the_worker_log(job):
    def work(claimed, progress):
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        run_job(ExportJob, job.pk, work)
    job.refresh_from_db()
    assert (job.status, job.error) == ("failed", "disk full")


def test_a_lost_database_connection_is_raised_and_leaves_the_job_claimable_by_the_retry(job):
    def work(claimed, progress):
        raise OperationalError("server closed the connection unexpectedly")

    with pytest.raises(OperationalError):
        run_job(ExportJob, job.pk, work)
    assert _status(job) == JobStatus.RUNNING
    assert run_job(ExportJob, job.pk, lambda j, p: None) is not None
    assert _status(job) == JobStatus.DONE


def test_a_job_may_ask_to_be_recorded_failed_on_a_lost_connection(job):
    def work(claimed, progress):
        raise OperationalError("server closed the connection unexpectedly")

    with pytest.raises(OperationalError):
        run_job(ExportJob, job.pk, work, fail_on_operational_error=True)
    job.refresh_from_db()
    assert (job.status, job.error) == ("failed", "server closed the connection unexpectedly")


def test_a_claim_filter_replaces_the_claimable_states(job):
    retryable = Q(status__in=[JobStatus.QUEUED, JobStatus.FAILED])
    ExportJob.objects.filter(pk=job.pk).update(status=JobStatus.FAILED, error="earlier failure")
    assert run_job(ExportJob, job.pk, lambda j, p: pytest.fail("failed jobs are not claimable by default")) is None
    assert run_job(ExportJob, job.pk, lambda j, p: None, claim_filter=retryable, claim_fields={"error": ""})
    job.refresh_from_db()
    assert (job.status, job.error) == ("done", "")
    ExportJob.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING)
    assert job_claim(ExportJob, job.pk, claim_filter=retryable) is None  # a live running job is left alone


def test_an_export_re_claims_a_failed_job_and_a_running_one_only_after_its_lease(job, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    ExportJob.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, started_at=timezone.now())
    assert export_run(job_id=job.pk).status == JobStatus.RUNNING
    expired = timezone.now() - timedelta(seconds=EXPORT_LEASE_SECONDS + 60)
    ExportJob.objects.filter(pk=job.pk).update(started_at=expired)
    assert export_run(job_id=job.pk).status == JobStatus.DONE
    ExportJob.objects.filter(pk=job.pk).update(status=JobStatus.FAILED, error="lost connection")
    rerun = export_run(job_id=job.pk)
    assert (rerun.status, rerun.error) == ("done", "")
