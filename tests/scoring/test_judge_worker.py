"""A real Celery worker completes a judge-training job started as the console and the API start it."""

from __future__ import annotations

import pytest

from scoring.judges import services as judge_services
from scoring.models import JudgeTrainJob, TrainedJudge
from tests import factories
from tests.scoring.judge_support import study_with_gold
from tests.waiting import SLOW_TEST_TIMEOUT
from tests.worker import celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True), pytest.mark.timeout(SLOW_TEST_TIMEOUT)]


def test_a_real_worker_trains_a_judge_and_the_job_reaches_done_with_its_progress():
    researcher = factories.make_user("rita-researcher")
    study = factories.make_study(owner=researcher, slug="ward")
    study_with_gold(study)
    with celery_worker() as worker:
        # Autocommit: the task is published when the job row commits.
        job = judge_services.judge_train_job_start(
            study=study, question_key="grounded", task="supports", name="worker-judge", actor=researcher,
            options={"feature_sets": ["lexical"], "folds": 3},
        )
        wait_for(lambda: JudgeTrainJob.objects.get(pk=job.pk).finished, worker=worker,
                 progress=lambda: JudgeTrainJob.objects.filter(pk=job.pk).values_list("status", "n_done").get(),
                 what="the training job to finish")
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert job.n_done == job.n_total > 0
    judge = TrainedJudge.objects.get(name="worker-judge")
    assert job.judge == judge and judge.study == study and judge.n == 28 and judge.cv["folds"] == 3
