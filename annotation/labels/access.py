"""Who may read and who may change an assignment's labels: the annotator access rule, in its two forms.

**Reading.** An annotator reaches an assignment when it is theirs and they are an active member of its pool
(a member who left a pool keeps their work there, but no longer reaches it; a withdrawn assignment is still
reached, and every write refuses it). Anything else is answered 404, as if it did not exist. The rule is
written twice, side by side here, because the hottest request cannot afford the ORM:

* :func:`own_assignments`, the ORM queryset: the access helper of the item page's unit redraw
  (``selectors.get_assignment_and_unit``), the API's list of assignments and the history page;
* :func:`own_assignment_sql`, the SQL condition: the one-statement access read of every other page and of
  the API (``statements.assignment_for_annotator``) and the token statement of a save through the API
  (``statements.token_lookup``).

``tests/annotation/test_access_rule.py`` holds them to the same assignments over a generated set of people,
pools, memberships (inactive ones included) and assignments (withdrawn ones included).

**Changing.** Only the assignment's annotator may change it (:func:`ensure_annotator`, 403: they reached it,
so it is no secret), and only while it is open (``OPEN_STATUSES``): a submitted, skipped or withdrawn item's
answers never change.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from annotation.models import Assignment, AssignmentStatus, PoolMembership
from concord import rawsql
from concord.errors import Forbidden

OPEN_STATUSES = (AssignmentStatus.ASSIGNED, AssignmentStatus.STARTED)
WITHDRAWN_REFUSAL = (
    "A researcher took this item out of your queue; your answers on it are kept as they are and can no longer change."
)


def own_assignments(user: Any) -> QuerySet[Assignment]:
    """The access rule as an ORM queryset: the assignments ``user`` may work on.

    Both membership conditions sit in one ``filter()`` so that they apply to the same membership row; at most
    one such row exists per assignment ((pool, user) memberships are unique), so the join never repeats an
    assignment. No ordering is added: ``get()`` drops the default one, whose cascade through Pool and Study
    would add joins to a hot query."""
    return Assignment.objects.for_annotator(user).filter(pool__memberships__user=user, pool__memberships__active=True)


def own_assignment_sql(user: str) -> str:
    """The access rule as an SQL condition on the assignment ``a``: it is the annotator's (``user``, a column
    such as ``t.user_id`` or a parameter ``%s``), who is an active member of its pool. Names come from the
    models' metadata and ``user`` is written by the statements that apply the rule, never a value."""
    a, m = rawsql.names(Assignment), rawsql.names(PoolMembership)
    return (
        f"a.{a.annotator} = {user} AND EXISTS (SELECT 1 FROM {m.table} m WHERE m.{m.pool} = a.{a.pool} "  # noqa: S608
        f"AND m.{m.user} = {user} AND m.{m.active})"
    )


def ensure_annotator(assignment: Assignment, actor: AbstractBaseUser) -> None:
    """Refuse (403) an actor who is not the assignment's annotator: every write checks it, whoever called."""
    if assignment.annotator_id != actor.pk:
        raise Forbidden("Only the assigned annotator may change this assignment.")
