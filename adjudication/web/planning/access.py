"""Who may see a pool's plan: the study's researchers. A pool is named by its own id, so everyone else,
members of the study included, is told it does not exist (404), as for every object named by id."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from annotation.models import Pool, Role
from concord.access import require_object_role
from concord.errors import NotFound


def pool_get_for_researcher(*, user: AbstractBaseUser, pk: int) -> Pool:
    pool = Pool.objects.select_related("study").filter(pk=pk).first()
    if pool is None:
        raise NotFound("no such pool")
    require_object_role(user, pool.study, Role.RESEARCHER, what="pool")
    return pool
