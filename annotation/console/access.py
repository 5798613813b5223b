"""Access helpers of the researcher console: each fetches one object of a study and authorizes in one place.

The console is for a study's researchers: the study is fetched by ``annotation.access.get_study_for_researcher``
(other members 403, everyone else 404, so that a stranger cannot even learn that a slug exists), then the
object within it (404 when the study has none). The helpers raise ``concord.errors`` ``NotFound`` /
``Forbidden``; ``concord.http.domain_errors`` turns them into pages and ``concord.api_errors`` into API answers.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser

from annotation.access import get_study_for_researcher
from annotation.models import ImportJob, Pool, PoolMembership, Question, StudyInvitation
from concord.errors import NotFound
from concord.params import parse_id


def get_question_for_researcher(user: AbstractBaseUser, slug: str, key: str) -> Question:
    study = get_study_for_researcher(user, slug)
    question = Question.objects.filter(study=study, key=key).select_related("study").first()
    if question is None:
        raise NotFound("question not found")
    return question


def get_pool_for_researcher(user: AbstractBaseUser, slug: str, pool_id: int) -> Pool:
    study = get_study_for_researcher(user, slug)
    pool = Pool.objects.filter(study=study, pk=pool_id).select_related("study").first()
    if pool is None:
        raise NotFound("pool not found")
    return pool


def get_membership_for_researcher(user: AbstractBaseUser, slug: str, membership_id: int) -> PoolMembership:
    study = get_study_for_researcher(user, slug)
    membership = (
        PoolMembership.objects.filter(study=study, pk=membership_id).select_related("pool", "user", "study").first()
    )
    if membership is None:
        raise NotFound("membership not found")
    return membership


def get_import_job_for_researcher(user: AbstractBaseUser, slug: str, job_id: int) -> ImportJob:
    study = get_study_for_researcher(user, slug)
    job = ImportJob.objects.filter(study=study, pk=job_id).first()
    if job is None:
        raise NotFound("import not found")
    return job


def get_invitation_for_researcher(user: AbstractBaseUser, slug: str, invitation_id: Any) -> StudyInvitation:
    study = get_study_for_researcher(user, slug)
    pk = parse_id(invitation_id)
    invitations = StudyInvitation.objects.filter(study=study).select_related("study", "pool")
    invitation = None if pk is None else invitations.filter(pk=pk).first()
    if invitation is None:
        raise NotFound("invitation not found")
    return invitation


def get_invitation_for_invitee(user: AbstractBaseUser, invitation_id: Any) -> StudyInvitation:
    """An invitation is seen and answered by the account it is bound to only: 404 for everyone else, other
    people invited to the same study and the researchers included (they withdraw it from the console)."""
    pk = parse_id(invitation_id)
    invitation = (
        None
        if pk is None or not user.is_authenticated
        else StudyInvitation.objects.filter(pk=pk, user=user).select_related("study", "pool", "invited_by").first()
    )
    if invitation is None:
        raise NotFound("no such invitation")
    return invitation
