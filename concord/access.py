"""Explicit access policies.

Every view and API class declares one policy name with ``@access_policy(...)`` (function views)
or an ``access_policy`` class attribute (class-based views, DRF). A test walks the URL
configuration and fails for any route without one. The policy names what the route checks;
the check itself is done by the resource's access helper, named ``get_<object>_for_<role>(user, ...)``
(``get_study_for_researcher``, ``get_case_for_adjudicator``, ``get_assignment_for_annotator``, …), which
fetches and authorizes together and answers 404 for objects the user may not know exist. The study-level
helpers (a study for its researchers or adjudicators, the study-creator check) are in one module,
``annotation.access``; object-level ones sit with their app's reads and are built on the checks below.

Decorator order of a function view, outermost first (``tests/test_access_policies.py`` parses every view
module and fails on any other order)::

    @access_policy("researcher")            # 1. who may use the route
    @require_POST                           # 2. the HTTP method(s): require_GET / require_POST /
                                            #    require_http_methods([...]), when the view limits them
    @domain_errors                          # 3. DomainError -> error page: domain_errors, or a report's
    def view(request, ...): ...             #    report_errors, when the view raises them
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from concord.errors import Forbidden, NotFound

POLICIES = {
    "public": "anyone, logged in or not (login page, static health check)",
    "authenticated": "any logged-in user; the view shows only the user's own objects",
    "annotator": "a member of the pool that owns the object; others get 404",
    "researcher": "a researcher of the study; on a study page annotators 403, strangers 404; an object named "
    "by its own id (run, case, export, …) 404 for everyone who may not see it",
    "adjudicator": "an adjudicator (or researcher) of the study; on a study page annotators 403, strangers 404; "
    "an object named by its own id 404 for everyone who may not see it",
    "staff": "site administrators only",
}

F = TypeVar("F", bound=Callable)


def access_policy(name: str) -> Callable[[F], F]:
    if name not in POLICIES:
        raise ValueError(f"unknown access policy {name!r}")

    def decorate(view: F) -> F:
        view.access_policy = name  # type: ignore[attr-defined]
        return view

    return decorate


# --- Object-level checks ------------------------------------------------------------------------
#
# One rule for every app: a person with no role in the study is told the object does not exist
# (404, ``NotFound``), so that nobody learns which slugs or ids exist; a member whose role is not
# enough for a *study* page is told so (403, ``Forbidden``): they know the study exists. An object
# named by its own id (a case, a score run, an export, an aspect, a validation study, …) is another
# matter: a 403 would tell an annotator that the id exists in their study (and how many disagreements
# there are, as cases appear), so ``require_object_role`` answers 404 to everyone who may not see it.
# Both are ``DomainError``s: ``concord.http`` maps them for
# pages and ``concord.api_errors`` for the REST API. The roles are read through the user's
# ``study_roles`` relation (annotation's ``StudyRole``), so this bottom layer imports no app.


def study_roles(user: Any, study_id: int | None) -> set[str]:
    """The roles ``user`` holds in the study (empty for anonymous users and unknown studies)."""
    if study_id is None or not getattr(user, "is_authenticated", False):
        return set()
    return set(user.study_roles.filter(study_id=study_id).values_list("role", flat=True))


def require_role(user: Any, study: Any, *roles: str, what: str = "study") -> set[str]:
    """Allow ``user`` to act on ``study`` (a Study, its id, or None) only with one of ``roles``.

    Raises ``NotFound`` (404) when the study is None or the user holds no role in it, and
    ``Forbidden`` (403) when the user holds roles but none of ``roles``. Returns the roles held.
    """
    study_id = getattr(study, "pk", study)
    held = study_roles(user, study_id)
    if not held:
        raise NotFound(f"no such {what}")
    if roles and not held & set(roles):
        raise Forbidden(f"your role in this study does not allow this ({', '.join(sorted(roles))} only)")
    return held


def require_object_role(user: Any, study: Any, *roles: str, what: str) -> set[str]:
    """Allow ``user`` to see an object of ``study`` named by its own id only with one of ``roles``.

    Raises ``NotFound`` (404, "no such <what>", the words of an absent id) to anyone without one of
    ``roles`` — members of the study included — so that an id's existence is never confirmed.
    """
    study_id = getattr(study, "pk", study)
    held = study_roles(user, study_id)
    if not held & set(roles):
        raise NotFound(f"no such {what}")
    return held
