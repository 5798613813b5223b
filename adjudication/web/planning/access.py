"""Who may see a plan: researchers of the study (annotators 403, anyone else 404)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from adjudication.selectors import study_get_for_researcher
from annotation.models import Pool
from concord.errors import NotFound


def pool_get_for_researcher(*, user: AbstractBaseUser, pk: int) -> Pool:
    pool = Pool.objects.select_related("study").filter(pk=pk).first()
    if pool is None:
        raise NotFound("no such pool")
    study_get_for_researcher(user=user, slug=pool.study.slug)
    return pool
