"""Study-level access: the one place every app asks who may open a study, and as what.

A study is visible to the people who hold a role in it. A page or API call of the study for one role
(its researchers; its adjudicators, who may be researchers too) answers everyone else by the rule of
``concord.access``: 404 "no such study" to a stranger, an unknown slug and an anonymous visitor alike
(nobody learns which slugs exist), 403 with one message per role to a member whose role is not enough
(they know the study exists). Objects of a study are fetched by each app's own
``get_<object>_for_<role>(user, ...)`` helpers, built on these and on ``concord.access.require_object_role``.

Study lives in annotation, the lowest app, so scoring and adjudication import these (the layers contract,
pyproject.toml). The helpers raise ``concord.errors`` ``NotFound`` / ``Forbidden``:
``concord.http.domain_errors`` turns them into pages and ``concord.api_errors`` into API answers.
"""

from __future__ import annotations

from typing import Any

from annotation.models import Role, Study
from concord.access import require_role, study_roles
from concord.errors import Forbidden

# The roles that may adjudicate a study: its adjudicators and its researchers.
ADJUDICATING_ROLES = (Role.ADJUDICATOR, Role.RESEARCHER)

# What a member of the study hears when their role is not enough (403), one message per case.
RESEARCHERS_ONLY = "only the study's researchers may do this"
ADJUDICATORS_ONLY = "only the study's adjudicators and researchers may do this"
CREATORS_ONLY = "creating studies is granted by an administrator"


def can_create_studies(user: Any) -> bool:
    """Creating a study is granted by the admin (the ``annotation.add_study`` permission)."""
    return bool(user.is_authenticated and user.has_perm("annotation.add_study"))


def require_study_creator(user: Any) -> None:
    """403 unless ``user`` may create studies."""
    if not can_create_studies(user):
        raise Forbidden(CREATORS_ONLY)


def is_researcher(user: Any, study: Study) -> bool:
    """Whether ``user`` is one of the study's researchers (False for anonymous visitors)."""
    return Role.RESEARCHER in study_roles(user, study.pk)


def can_adjudicate(user: Any, study: Study) -> bool:
    """Whether ``user`` is one of the study's adjudicators or researchers (False for anonymous visitors)."""
    return bool(study_roles(user, study.pk) & set(ADJUDICATING_ROLES))


def require_researcher(user: Any, study: Study | None) -> set[str]:
    """Allow ``user`` to act on ``study`` (a Study or None) as one of its researchers.

    404 "no such study" for None and for a user with no role in it, 403 (``RESEARCHERS_ONLY``) for other
    members. Returns the roles held.
    """
    try:
        return require_role(user, study, Role.RESEARCHER)
    except Forbidden:
        raise Forbidden(RESEARCHERS_ONLY) from None


def require_adjudicator(user: Any, study: Study | None) -> set[str]:
    """Allow ``user`` to act on ``study`` as an adjudicator or researcher: 404 as above, 403 (``ADJUDICATORS_ONLY``)."""
    try:
        return require_role(user, study, *ADJUDICATING_ROLES)
    except Forbidden:
        raise Forbidden(ADJUDICATORS_ONLY) from None


def get_study_for_researcher(user: Any, slug: str) -> Study:
    """The study named by ``slug``, for one of its researchers (strangers 404, other members 403)."""
    study = Study.objects.filter(slug=slug).first()
    require_researcher(user, study)
    assert study is not None  # require_role refuses a missing study
    return study


def get_study_for_adjudicator(user: Any, slug: str) -> Study:
    """The study named by ``slug``, for one of its adjudicators or researchers (strangers 404, annotators 403)."""
    study = Study.objects.filter(slug=slug).first()
    require_adjudicator(user, study)
    assert study is not None  # require_role refuses a missing study
    return study
