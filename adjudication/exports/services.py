"""Export jobs: a researcher asks for an export, a worker writes it, and every download is recorded.

* :func:`export_request` checks the format and the filters against the study and queues the job (its task
  is sent on commit);
* :func:`export_run` — what the task calls — claims the job through ``concord.jobs.run_job`` and writes
  the file with :func:`adjudication.exports.writers.write_export`;
* :func:`export_download_record` audits one download (who, which export, when — never the content).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q
from django.utils import timezone

from adjudication import tasks
from adjudication.exports.filters import ExportFilters
from adjudication.exports.writers import write_export
from adjudication.models import ExportDownload, ExportFormat, ExportJob, ExportStatus
from annotation.access import is_researcher
from annotation.models import Study
from concord.errors import Conflict, Forbidden, ValidationFailed
from concord.jobs import Progress, run_job

EXPORT_LEASE_SECONDS = 6 * 3600


def export_dir() -> Path:
    return Path(settings.MEDIA_ROOT) / "exports"


def export_request(
    *, study_id: int, fmt: str, actor: AbstractBaseUser, filters: ExportFilters | None = None
) -> ExportJob:
    """Queue an export of a study, limited by ``filters`` (pools and questions named must be the
    study's); the worker writes it (adjudication.tasks.exports.export_study_task)."""
    if fmt not in ExportFormat.values:
        raise ValidationFailed(f"unknown export format {fmt!r}; use one of {ExportFormat.values}")
    study = Study.objects.get(pk=study_id)
    if not is_researcher(actor, study):
        raise Forbidden("only researchers of the study export it")
    filters = filters or ExportFilters()
    unknown_pools = sorted(set(filters.pools) - set(study.pools.values_list("name", flat=True)))
    if unknown_pools:
        raise ValidationFailed(f"the study has no pool {unknown_pools[0]!r}")
    unknown_questions = sorted(set(filters.questions) - set(study.questions.values_list("key", flat=True)))
    if unknown_questions:
        raise ValidationFailed(f"the study has no question {unknown_questions[0]!r}")
    job = ExportJob.objects.create(study=study, format=fmt, requested_by=actor, filters=filters.as_dict())
    tasks.exports.export_study_task.delay_on_commit(job.pk)
    return job


def export_run(
    *, job_id: int, out: Path | None = None, on_progress: Callable[[int, int], None] | None = None
) -> ExportJob:
    """Write the export of a job through :func:`concord.jobs.run_job` and return the job as it stands.

    A queued or failed job is claimed, and a running one only once its lease (``EXPORT_LEASE_SECONDS``)
    has expired: a redelivered task that finds a live or finished job does nothing. A lost database
    connection records the job failed, so that the task's retry claims it again. The file is written
    under a temporary name and moved into place at the end: a crash never leaves a half-written file
    behind a ``done`` job."""
    stale = Q(
        status=ExportStatus.RUNNING,
        started_at__lt=timezone.now() - timedelta(seconds=EXPORT_LEASE_SECONDS),
    )
    run_job(
        ExportJob,
        job_id,
        lambda job, progress: _export_write(job, progress, out=out, on_progress=on_progress),
        claim_filter=Q(status__in=[ExportStatus.QUEUED, ExportStatus.FAILED]) | stale,
        claim_fields={"error": "", "n_done": 0},
        fail_on_operational_error=True,
    )
    return ExportJob.objects.select_related("study").get(pk=job_id)


def _export_write(
    job: ExportJob, progress: Progress, *, out: Path | None, on_progress: Callable[[int, int], None] | None
) -> dict[str, Any]:
    suffix = {"jsonl": ".jsonl", "csv": ".csv", "hf": ".zip"}[job.format]
    target = out or export_dir() / f"{job.study.slug}-{job.pk}{suffix}"
    target.parent.mkdir(parents=True, exist_ok=True)

    def report(done: int, total: int) -> None:
        progress(done, total)
        if on_progress is not None:
            on_progress(done, total)

    write_export(study=job.study, fmt=job.format, out=target, progress=report,
                 filters=ExportFilters.from_dict(job.filters))
    return {"path": str(target), "size_bytes": target.stat().st_size}


def export_download_record(*, job: ExportJob, actor: AbstractBaseUser) -> ExportDownload:
    """Audit one download (who, which export, when — never the content)."""
    if job.status != ExportStatus.DONE or not job.path or not Path(job.path).exists():
        raise Conflict("this export is not ready to download")
    return ExportDownload.objects.create(job=job, user=actor)
