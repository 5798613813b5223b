"""Import jobs: an upload through the researcher console, checked and imported by a worker.

The researcher uploads a file (``import_job_create``: stored, and its dry run queued); a worker checks
it (``import_job_check``: every record validated and counted, nothing imported); the researcher
confirms (``import_job_confirm``) and a worker imports it (``import_job_run``), all or nothing, then
tops up every pool's assignments. The job row follows the lifecycle of ``concord.jobs``
(claim, progress, fail, finish) with the import's own states:

    uploaded → checking → checked → importing → done
                        ↘ invalid             ↘ invalid

A refusal (a ``DomainError``: errors in the file, a conflict with another import) ends in ``invalid``
with the located errors in ``errors``; any other exception ends in ``failed`` and is re-raised so that
the worker logs it; a lost database connection leaves the job claimable for the task's retry. A
redelivered task finds the job past its state and does nothing: the import is marked done in the same
transaction that writes it, so a file is never imported twice.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import OperationalError, transaction
from django.utils import timezone
from django.utils.text import slugify

from annotation import tasks
from annotation.console.services import pool_top_up
from annotation.imports.readers import file_source
from annotation.imports.schema import Located, RecordSource
from annotation.imports.service import records_import
from annotation.models import ImportJob, ImportJobStatus, Pool
from concord.errors import Conflict, DomainError, PayloadTooLarge
from concord.jobs import Progress, job_claim, job_fail, job_finish, job_progress

# How often (in records) the check pass reports its progress: often enough for a smooth bar,
# rarely enough that a 100,000-item file costs a few hundred small UPDATEs.
PROGRESS_EVERY = 250


def import_job_create(*, study: Any, actor: AbstractBaseUser, upload: UploadedFile) -> ImportJob:
    """Store an uploaded file and queue its dry run; nothing is imported until the researcher confirms."""
    limit = settings.IMPORT_MAX_BYTES
    if upload.size > limit:
        raise PayloadTooLarge(
            f"{upload.name} is {upload.size} bytes; the import limit is {limit} bytes (IMPORT_MAX_BYTES). "
            "Split the file."
        )
    filename = os.path.basename(upload.name or "upload")[:300]
    stored = default_storage.save(f"imports/{study.pk}/{uuid.uuid4().hex}-{slugify(filename)[:80] or 'file'}", upload)
    with transaction.atomic():
        job = ImportJob.objects.create(
            study=study, filename=filename, stored_name=stored, size_bytes=upload.size, requested_by=actor,
        )
        tasks.import_job_check_task.delay_on_commit(job.pk)
    return job


def _counting_source(source: RecordSource, progress: Progress) -> RecordSource:
    """The source, reporting every ``PROGRESS_EVERY`` records read (the total is known only at the end)."""

    def counted() -> Iterator[Located]:
        n = 0
        for located in source():
            n += 1
            if n % PROGRESS_EVERY == 0:
                progress(n, 0)
            yield located
        progress(n, 0)

    return counted


def _refuse(job: ImportJob, exc: DomainError) -> ImportJob:
    """End the job ``invalid`` with the refusal's located errors, and drop the stored file."""
    errors = (
        exc.details if isinstance(exc.details, list) else [{"location": "file", "field": "", "reason": exc.message}]
    )
    job_fail(ImportJob, job.pk, exc.message, failed=ImportJobStatus.INVALID, errors=errors,
             summary={"message": exc.message}, updated_at=timezone.now())
    default_storage.delete(job.stored_name)
    job.refresh_from_db()
    return job


def _crash(job: ImportJob, exc: Exception) -> None:
    job_fail(ImportJob, job.pk, str(exc) or type(exc).__name__, failed=ImportJobStatus.FAILED,
             updated_at=timezone.now())


def import_job_check(*, job_id: int) -> ImportJob:
    """The dry run: validate every record and count what would be imported. Writes only the job."""
    job = job_claim(
        ImportJob, job_id, claimable=(ImportJobStatus.UPLOADED, ImportJobStatus.CHECKING),
        running=ImportJobStatus.CHECKING, n_done=0, updated_at=timezone.now(),
    )
    if job is None:
        return ImportJob.objects.get(pk=job_id)  # a redelivered task: the check already finished
    progress = job_progress(ImportJob, job.pk)
    try:
        with default_storage.open(job.stored_name, "rb") as handle:
            source, fmt = file_source(handle, filename=job.filename)
            result = records_import(
                study=job.study, source=_counting_source(source, progress), filename=job.filename,
                actor=job.requested_by, where="line" if fmt == "jsonl" else "row", dry_run=True,
            )
    except DomainError as exc:
        return _refuse(job, exc)
    except OperationalError:
        raise  # the task retries; the job stays claimable (checking)
    except Exception as exc:
        _crash(job, exc)
        raise
    job_finish(ImportJob, job.pk, done=ImportJobStatus.CHECKED, summary=result.as_dict(), n_total=result.n_items,
               errors=[], updated_at=timezone.now())
    job.refresh_from_db()
    return job


def import_job_newer(job: ImportJob) -> ImportJob | None:
    """The study's newest upload when it is newer than ``job``: a file uploaded after this one supersedes
    its dry run, so that an old preview is never imported by mistake next to a new upload."""
    return ImportJob.objects.filter(study_id=job.study_id, pk__gt=job.pk).order_by("-pk").first()


def import_job_confirm(*, job: ImportJob, actor: AbstractBaseUser) -> ImportJob:
    """Start the real import of a checked file (once: a second click finds it already started). Only the
    study's newest upload can be imported: an older checked file is refused, naming the newer one."""
    with transaction.atomic():
        newer = import_job_newer(job)
        if newer is not None and job.status == ImportJobStatus.CHECKED:
            raise Conflict(
                f"{job.filename} was superseded by a newer upload ({newer.filename}): import that one, "
                f"or upload {job.filename} again"
            )
        started = job_claim(
            ImportJob, job.pk, claimable=(ImportJobStatus.CHECKED,), running=ImportJobStatus.IMPORTING,
            n_done=0, updated_at=timezone.now(),
        )
        if started is None:
            job.refresh_from_db()
            raise Conflict(f"{job.filename} is {job.get_status_display().lower()}; only a checked file can be imported")
        tasks.import_job_run_task.delay_on_commit(job.pk)
    job.refresh_from_db()
    return job


def import_job_run(*, job_id: int) -> ImportJob:
    """The real import, all or nothing. The job is marked done in the same transaction as the
    import, so a redelivered task finds it done instead of importing twice. Items are assigned
    to every pool that has enough members."""
    job = ImportJob.objects.select_related("study", "requested_by").get(pk=job_id)
    if job.status != ImportJobStatus.IMPORTING:
        return job
    try:
        with transaction.atomic(), default_storage.open(job.stored_name, "rb") as handle:
            source, fmt = file_source(handle, filename=job.filename)
            result = records_import(
                study=job.study, source=source, filename=job.filename, actor=job.requested_by,
                where="line" if fmt == "jsonl" else "row",
            )
            job_finish(ImportJob, job.pk, done=ImportJobStatus.DONE, summary=result.as_dict(),
                       n_done=result.n_items, n_total=result.n_items, batch_id=result.batch_id,
                       updated_at=timezone.now())
            for pool in Pool.objects.filter(study=job.study):
                pool_top_up(pool)
    except DomainError as exc:
        # Another import added some of these ids since the check, or the file changed: nothing was written.
        return _refuse(job, exc)
    except OperationalError:
        raise  # the task retries; the job stays importing
    except Exception as exc:
        _crash(job, exc)
        raise
    default_storage.delete(job.stored_name)
    job.refresh_from_db()
    return job
