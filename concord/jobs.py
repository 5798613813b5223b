"""One background-job model and one lifecycle for every job a worker runs for a person: imports,
exports, report bootstraps and analyses.

A job row is created by a service (status ``queued``) and its Celery task is sent on commit. The
task calls :func:`run_job`, which

1. claims the row atomically (by default ``queued`` or ``running`` → ``running``: a redelivered task
   re-claims a job whose worker died, and a finished job is never run twice). A job whose retry rules
   differ passes ``claim_filter``, a ``Q`` that replaces the status test: exports, for instance, re-claim
   a ``failed`` job, and a ``running`` one only once its lease has expired,
2. hands the work a throttled progress callback that writes ``n_done`` / ``n_total``,
3. records the outcome: ``done`` with the fields the work returned, or ``failed`` with the message
   of a ``DomainError`` (a refusal the person can act on) or of any other exception (re-raised so
   that the worker logs it). A lost database connection is re-raised and, by default, leaves the job
   ``running`` so that the task's retry re-claims it; a job whose claim does not take running jobs
   passes ``fail_on_operational_error=True`` to have it recorded ``failed`` (claimable again) first.

Apps subclass :class:`Job` (abstract: no table of its own, no migration) and add their own fields; a
model whose states differ (the console's import job) overrides ``status`` and passes its states.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.conf import settings
from django.db import OperationalError, models
from django.db.models import Q
from django.utils import timezone

from concord.errors import DomainError

MAX_ERROR_LENGTH = 2000


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class Job(models.Model):
    status = models.CharField(max_length=8, choices=JobStatus.choices, default=JobStatus.QUEUED)
    n_done = models.PositiveIntegerField(default=0)
    n_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at"]

    @property
    def progress(self) -> float:
        """Fraction done, for progress bars: 1 once done, else n_done / n_total (0 while unknown)."""
        if self.status == JobStatus.DONE:
            return 1.0
        return (self.n_done / self.n_total) if self.n_total else 0.0

    @property
    def finished(self) -> bool:
        return self.status in (JobStatus.DONE, JobStatus.FAILED)


J = TypeVar("J", bound=models.Model)
Progress = Callable[[int, int], None]


def job_claim(
    model: type[J],
    job_id: int,
    *,
    claimable: Iterable[str] = (JobStatus.QUEUED, JobStatus.RUNNING),
    running: str = JobStatus.RUNNING,
    claim_filter: Q | None = None,
    **fields: Any,
) -> J | None:
    """Atomically mark the job running; None when it is finished, gone, or in no claimable state.

    ``claim_filter``, when given, replaces the test ``status in claimable``: the row is claimed when it
    matches that ``Q``.
    """
    updates: dict[str, Any] = {"status": running, **fields}
    if hasattr(model, "started_at"):
        updates.setdefault("started_at", timezone.now())
    condition = claim_filter if claim_filter is not None else Q(status__in=list(claimable))
    claimed = model._default_manager.filter(Q(pk=job_id) & condition).update(**updates)
    if not claimed:
        return None
    return model._default_manager.get(pk=job_id)


def job_progress(model: type[models.Model], job_id: int, *, steps: int = 20,
                 done_field: str = "n_done", total_field: str = "n_total") -> Progress:
    """A progress callback writing at most about ``steps`` updates, and always the last one."""
    last = [-1]

    def report(done: int, total: int) -> None:
        if last[0] < 0 or done - last[0] >= max(total // steps, 1) or done == total:
            last[0] = done
            model._default_manager.filter(pk=job_id).update(**{done_field: done, total_field: total})

    return report


def job_fail(model: type[models.Model], job_id: int, message: str, *, failed: str = JobStatus.FAILED,
             **fields: Any) -> None:
    updates: dict[str, Any] = {"status": failed, "error": str(message)[:MAX_ERROR_LENGTH], **fields}
    if hasattr(model, "finished_at"):
        updates.setdefault("finished_at", timezone.now())
    model._default_manager.filter(pk=job_id).update(**updates)


def job_finish(model: type[models.Model], job_id: int, *, done: str = JobStatus.DONE, **fields: Any) -> None:
    updates: dict[str, Any] = {"status": done, **fields}
    if hasattr(model, "finished_at"):
        updates.setdefault("finished_at", timezone.now())
    model._default_manager.filter(pk=job_id).update(**updates)


def run_job(
    model: type[J],
    job_id: int,
    work: Callable[[J, Progress], dict[str, Any] | None],
    *,
    claimable: Iterable[str] = (JobStatus.QUEUED, JobStatus.RUNNING),
    running: str = JobStatus.RUNNING,
    done: str = JobStatus.DONE,
    failed: str = JobStatus.FAILED,
    claim_fields: dict[str, Any] | None = None,
    claim_filter: Q | None = None,
    fail_on_operational_error: bool = False,
) -> J | None:
    """Claim the job, run ``work(job, progress)`` and record its outcome (see the module docstring).

    ``work`` returns the fields to store with the ``done`` status (or None). Returns the claimed job,
    or None when there was nothing to claim. ``claim_filter`` is passed to :func:`job_claim`; with
    ``fail_on_operational_error`` a lost database connection records the job failed before re-raising.
    """
    job = job_claim(
        model,
        job_id,
        claimable=claimable,
        running=running,
        claim_filter=claim_filter,
        **(claim_fields or {"n_done": 0}),
    )
    if job is None:
        return None
    progress = job_progress(model, job_id)
    try:
        fields = work(job, progress) or {}
    except DomainError as exc:
        job_fail(model, job_id, exc.message, failed=failed)
        return job
    except OperationalError as exc:
        if fail_on_operational_error:
            job_fail(model, job_id, str(exc) or type(exc).__name__, failed=failed)
        raise  # the task retries; the job stays claimable (running, or failed here) for that retry
    except Exception as exc:
        job_fail(model, job_id, str(exc) or type(exc).__name__, failed=failed)
        raise
    job_finish(model, job_id, done=done, **fields)
    return job
