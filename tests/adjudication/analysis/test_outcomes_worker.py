"""The outcome cross-validation runs in a real Celery worker: the task is registered there, claims its
job and writes progress and the result."""

from __future__ import annotations

import pytest

from adjudication.analysis import outcomes
from adjudication.models import ReportJob, ReportJobStatus
from adjudication.report_jobs import ANALYSIS, job_request
from tests.adjudication.analysis.test_outcomes import _query, fast_password_hashing, harm_study  # noqa: F401
from tests.waiting import SLOW_TEST_TIMEOUT
from tests.worker import celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True), pytest.mark.timeout(SLOW_TEST_TIMEOUT)]


def test_a_real_worker_runs_the_outcome_cross_validation(harm_study, researcher):  # noqa: F811
    params = outcomes.outcome_params_parse(study=harm_study["study"], query=_query(harm_study))
    with celery_worker() as worker:
        job = job_request(
            study=harm_study["study"], family=ANALYSIS, kind="outcome", params=params.as_dict(), user=researcher
        )
        wait_for(
            lambda: ReportJob.objects.get(pk=job.pk).status in (ReportJobStatus.DONE, ReportJobStatus.FAILED),
            worker=worker,
            progress=lambda: ReportJob.objects.filter(pk=job.pk).values_list("status", "n_done").get(),
            what="the outcome job",
        )
    job.refresh_from_db()
    assert job.status == ReportJobStatus.DONE, job.error
    assert job.n_done == job.n_total == 3 and job.result["n_items"] == 30
