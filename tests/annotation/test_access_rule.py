"""The annotator access rule has two forms (annotation/labels/access.py): the ORM queryset, which the unit redraw
of the item page, the API's list and the history page apply, and the SQL condition, which the access statement
of every other page and the token statement of a save through the API apply. Over a generated set of people,
pools, memberships (inactive ones included) and assignments (every status, withdrawn included, and assignments
of people who are not, or no longer, members of their pool), both give exactly the assignments the rule states:
the person's own, in a pool they are an active member of."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from rest_framework.authtoken.models import Token

from annotation import selectors, services
from annotation.labels import access, label_save, label_undo, statements
from annotation.models import Assignment, AssignmentStatus, Label, PoolMembership
from concord import rawsql
from concord.errors import Forbidden, NotFound
from tests import factories

pytestmark = pytest.mark.django_db

PEOPLE = 6
ITEMS_PER_STUDY = 3


def _world(seed: int) -> dict:
    """Two studies (pools that share members), three pools, six people; each person is in each pool as an
    active member, an inactive one (they left) or not at all, and has an assignment of each item of each pool
    with some chance, in any status, whether or not they are a member: what the data manager, a departure or
    a move between pools leaves behind."""
    rng = random.Random(seed)
    studies = [factories.make_study(independent_pools=False) for _ in range(2)]
    pools = [factories.make_pool(studies[0]), factories.make_pool(studies[0]), factories.make_pool(studies[1])]
    items = {study.pk: [factories.make_item(study) for _ in range(ITEMS_PER_STUDY)] for study in studies}
    people = [factories.make_user() for _ in range(PEOPLE)]
    statuses = list(AssignmentStatus.values)
    for pool in pools:
        for person in people:
            membership = rng.choice(["active", "active", "inactive", "none"])
            if membership != "none":
                PoolMembership.objects.filter(pk=factories.add_member(pool, person).pk).update(
                    active=membership == "active"
                )
            for item in items[pool.study_id]:
                if rng.random() < 0.6:
                    factories.make_assignment(pool, item, person, status=rng.choice(statuses))
    return {"people": people}


def _stated(person) -> set[int]:
    """The rule as the sentence states it, over the rows in plain Python."""
    active = set(PoolMembership.objects.filter(user=person, active=True).values_list("pool_id", flat=True))
    return {pk for pk, pool_id in Assignment.objects.filter(annotator=person).values_list("pk", "pool_id")
            if pool_id in active}


def _sql_form(person) -> set[int]:
    a = rawsql.names(Assignment)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT a.{a.id} FROM {a.table} a WHERE {access.own_assignment_sql('%s')}",  # noqa: S608
                       [person.pk, person.pk])
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_orm_and_sql_forms_of_the_access_rule_give_the_same_assignments(seed):
    people = _world(seed)["people"]
    every = list(Assignment.objects.values_list("pk", "annotator_id", "pool_id", "status"))
    active = set(PoolMembership.objects.filter(active=True).values_list("pool_id", "user_id"))
    inactive = set(PoolMembership.objects.filter(active=False).values_list("pool_id", "user_id"))
    # The generated set holds every case the rule decides (deterministic for a seed).
    cases = {
        "reached": {pk for pk, user, pool, _ in every if (pool, user) in active},
        "withdrawn, reached": {pk for pk, user, pool, s in every if (pool, user) in active and s == "withdrawn"},
        "the annotator left the pool": {pk for pk, user, pool, _ in every if (pool, user) in inactive},
        "the annotator was never a member": {
            pk for pk, user, pool, _ in every if (pool, user) not in active | inactive
        },
    }
    assert all(cases.values()), {name: len(found) for name, found in cases.items()}
    tokens = {person.pk: Token.objects.create(user=person).key for person in people}
    for person in people:
        stated = _stated(person)
        assert set(access.own_assignments(person).values_list("pk", flat=True)) == stated
        assert _sql_form(person) == stated
        # The product's callers of each form: the API's list and the item page's unit redraw (ORM); the access
        # statement of every other page and the token statement of a save through the API (SQL).
        assert {a.pk for a in selectors.annotator_assignments(user=person)} == stated
        for pk, *_ in every:
            try:
                selectors.get_assignment_and_unit(person, pk, "item")
                orm_reached = True
            except NotFound:
                orm_reached = False
            statement = statements.assignment_for_annotator(pk, person.pk)
            _, _, _, by_token = statements.token_lookup(tokens[person.pk], assignment_pk=pk)
            assert orm_reached == (statement is not None) == (by_token is not None) == (pk in stated), (
                person.pk, pk,
            )
            if statement is not None:
                assert statement.pk == by_token.pk == pk


def test_only_the_assignments_annotator_may_change_it_whoever_calls(study, annotator, no_submit_receivers):
    """Every write checks the annotator itself (403 with one message), whatever reached the assignment: a
    colleague of the same pool is refused and nothing of the assignment changes."""
    assignment, question = factories.one_nominal_assignment(study, annotator)
    colleague = factories.make_user("colleague")
    factories.add_member(assignment.pool, colleague)
    label_save(assignment=assignment, question=question, unit_key="item", value="2", base_version=0, actor=annotator)
    writes = {
        "save": lambda: label_save(
            assignment=assignment, question=question, unit_key="item", value="3", base_version=1, actor=colleague
        ),
        "undo": lambda: label_undo(assignment=assignment, actor=colleague),
        "open": lambda: services.assignment_open(assignment=assignment, actor=colleague),
        "submit": lambda: services.assignment_submit(assignment=assignment, actor=colleague),
        "skip": lambda: services.assignment_skip(assignment=assignment, actor=colleague, reason="unsure"),
    }
    for name, write in writes.items():
        with pytest.raises(Forbidden) as refused:
            write()
        assert refused.value.message == "Only the assigned annotator may change this assignment.", name
    assignment.refresh_from_db()
    assert (assignment.status, assignment.annotator) == (AssignmentStatus.ASSIGNED, annotator)
    assert list(Label.objects.filter(assignment=assignment).values_list("value", "version")) == [("2", 1)]
