"""Reads of the judge registry: which judges a researcher sees and which a study may score with."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import Q, QuerySet

from annotation.access import require_researcher
from annotation.models import Study
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

    Names are per study: a run looks the name up among its study's own judges and those shared with it only
    (where the registry keeps names unique), so a name that is another study's judge reads exactly like a name
    that does not exist, and a run can neither use nor detect another study's judges. The operator's command
    line sees every judge; a name that several studies use is refused there, naming them, rather than guessed
    (the backend option ``study=ID`` chooses).
    """
    qs = TrainedJudge.objects.all() if study_id is None else judges_usable_by(study_id)
    found = list(qs.filter(name=name).select_related("study", "source_study")[:11])
    if not found:
        where = "" if study_id is None else " to this study (its own judges and those shared with it)"
        raise BackendUnavailable(f"learned backend: no trained judge named {name!r} is available{where}")
    if len(found) > 1:
        owners = sorted({f"study {j.study.slug} (id {j.study_id})" if j.study else "no study" for j in found})
        count = "more than 10" if len(found) > 10 else str(len(found))
        choose = "give the option study=ID of the study whose judge you mean" if study_id is None else \
            "unshare one of them (judges page)"
        raise BackendUnavailable(
            f"learned backend: {count} judges named {name!r} are available ({', '.join(owners)}); {choose}"
        )
    judge = found[0]
    if judge.is_retired:
        raise BackendUnavailable(f"learned backend: the judge {name!r} is retired")
    return judge


def get_judge_for_researcher(user: User, study: Study, judge_id: int) -> TrainedJudge:
    """A judge the study may use, for one of the study's researchers; anything else is 404."""
    require_researcher(user, study)
    judge = judges_for_study(study).filter(pk=judge_id).first()
    if judge is None:
        raise NotFound("no such judge")
    return judge


def get_train_job_for_researcher(user: User, study: Study, job_id: int) -> JudgeTrainJob:
    require_researcher(user, study)
    job = JudgeTrainJob.objects.filter(pk=job_id, study=study).first()
    if job is None:
        raise NotFound("no such training job")
    return job


def train_jobs_for_study(study: Study) -> QuerySet[JudgeTrainJob]:
    return JudgeTrainJob.objects.filter(study=study).order_by("-created_at", "-id")
