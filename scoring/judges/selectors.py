"""Reads of the judge registry: which judges a researcher sees and which a study may score with."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import Q, QuerySet

from annotation.models import Role, Study
from concord.access import require_role
from concord.errors import NotFound
from scoring.metrics import BackendUnavailable
from scoring.models import JudgeTrainJob, TrainedJudge

User = AbstractBaseUser | AnonymousUser


def judges_usable_by(study_id: int) -> QuerySet[TrainedJudge]:
    """Judges a study may score with: its own and those explicitly shared with it (retired or not)."""
    return TrainedJudge.objects.filter(Q(study_id=study_id) | Q(shared_with__id=study_id)).distinct()


def judges_for_study(study: Study) -> QuerySet[TrainedJudge]:
    return judges_usable_by(study.pk).select_related("study", "source_study", "trained_by").prefetch_related(
        "shared_with"
    )


def judge_for_scoring(name: str, *, study_id: int | None) -> TrainedJudge:
    """The judge a run (``study_id``) or the command line (None: the operator, any judge) names.

    A name that is not the study's own judge, nor one shared with it, reads exactly like a name that
    does not exist, so a run can neither use nor detect another study's judges.
    """
    qs = TrainedJudge.objects.all() if study_id is None else judges_usable_by(study_id)
    judge = qs.filter(name=name).select_related("source_study").first()
    if judge is None:
        where = "" if study_id is None else " to this study (its own judges and those shared with it)"
        raise BackendUnavailable(f"learned backend: no trained judge named {name!r} is available{where}")
    if judge.is_retired:
        raise BackendUnavailable(f"learned backend: the judge {name!r} is retired")
    return judge


def get_judge_for_researcher(user: User, study: Study, judge_id: int) -> TrainedJudge:
    """A judge the study may use, for one of the study's researchers; anything else is 404."""
    require_role(user, study, Role.RESEARCHER)
    judge = judges_for_study(study).filter(pk=judge_id).first()
    if judge is None:
        raise NotFound("no such judge")
    return judge


def get_train_job_for_researcher(user: User, study: Study, job_id: int) -> JudgeTrainJob:
    require_role(user, study, Role.RESEARCHER)
    job = JudgeTrainJob.objects.filter(pk=job_id, study=study).first()
    if job is None:
        raise NotFound("no such training job")
    return job


def train_jobs_for_study(study: Study) -> QuerySet[JudgeTrainJob]:
    return JudgeTrainJob.objects.filter(study=study).order_by("-created_at", "-id")
