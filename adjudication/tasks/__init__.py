"""Celery tasks of adjudication: thin interfaces that take a job id and call one service.

* :mod:`adjudication.tasks.exports` — writing a study export (``exports.services.export_run``).
* :mod:`adjudication.tasks.reports` — every report job: bootstrap intervals, model-as-rater bootstraps,
  outcome cross-validations, planning simulations (``report_jobs.job_run``).

Each task is registered as ``adjudication.<function name>``. Jobs are claimed by a conditional UPDATE
(``concord.jobs``), so a redelivered task (late acknowledgement, a worker lost mid-job) never runs a
finished job twice. Retries happen only on a lost database connection (OperationalError), which a
later attempt can outlive.
"""

from adjudication.tasks import exports, reports

__all__ = ["exports", "reports"]
