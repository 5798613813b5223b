"""The edges of the label save's statements (annotation/labels/statements.py): the largest ids and unit numbers
the database holds are found, one past them names nothing (and never reaches the database as a number it
refuses), a boolean is not an id, and the one-statement save (PostgreSQL) stores the first answer and the
next version with their history and answers exactly as the locked save would."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.labels import label_save, statements
from annotation.models import Aspect, Assignment, AssignmentStatus, Chunk, Label, LabelHistory, Sentence
from tests import factories

pytestmark = pytest.mark.django_db

BIGGEST = 2**63 - 1


@pytest.fixture
def work(study, annotator):
    pf = factories.make_question(study, "pf", kind="nominal", options=[{"value": str(n)} for n in range(1, 6)])
    ib = factories.make_question(study, "ib", scope="sentence")
    rel = factories.make_question(study, "rel", scope="chunk")
    covered = factories.make_question(study, "covered", scope="aspect")
    item = factories.make_item(study, "i1")
    pool = factories.make_pool(study, questions=[pf, ib, rel, covered])
    factories.add_member(pool, annotator)
    return {"pool": pool, "item": item, "pf": pf, "ib": ib, "rel": rel, "covered": covered}


@pytest.mark.parametrize("pk", [BIGGEST, -(2**63)])
def test_an_assignment_at_either_end_of_the_id_range_is_reached(work, annotator, pk, django_assert_num_queries):
    assignment = factories.make_assignment(work["pool"], work["item"], annotator, id=pk)
    assert statements.assignment_for_annotator(pk, annotator.pk).pk == pk
    token = Token.objects.create(user=annotator)
    user, _, _, found = statements.token_lookup(token.key, assignment_pk=pk)
    assert user.pk == annotator.pk and found.pk == assignment.pk and found.pool.pk == work["pool"].pk
    # The assignment comes with its pool, the pool's study and (when asked for) its item, as stored.
    study = work["pool"].study
    plain = statements.assignment_for_annotator(pk, annotator.pk)
    with_item = statements.assignment_for_annotator(pk, annotator.pk, with_item=True)
    with django_assert_num_queries(0):
        for reached in (found, plain, with_item):
            assert (reached.item_id, reached.pool.name, reached.pool.study.pk, reached.pool.study.name) == (
                work["item"].pk, work["pool"].name, study.pk, study.name
            )
        assert (with_item.item.pk, with_item.item.external_id) == (work["item"].pk, work["item"].external_id)
    for beyond in (pk + 1 if pk > 0 else pk - 1, True):
        assert statements.assignment_for_annotator(beyond, annotator.pk) is None
        assert statements.token_lookup(token.key, assignment_pk=beyond)[3] is None


def test_a_boolean_is_not_an_assignment_id(work, annotator):
    factories.make_assignment(work["pool"], work["item"], annotator, id=1)
    assert statements.assignment_for_annotator(1, annotator.pk).pk == 1
    assert statements.assignment_for_annotator(True, annotator.pk) is None
    token = Token.objects.create(user=annotator)
    assert statements.token_lookup(token.key, assignment_pk=1)[3].pk == 1
    assert statements.token_lookup(token.key, assignment_pk=True)[3] is None


def _unit_found(assignment, scope, key):
    (row,) = statements.lock_open_assignment(assignment.pk, scope, key)
    return bool(row[2])


def test_the_largest_sentence_index_and_chunk_rank_are_found_and_one_more_is_none(work, annotator):
    assignment = factories.make_assignment(work["pool"], work["item"], annotator)
    top = 2**31 - 1
    Sentence.objects.create(item=work["item"], part="answer", index=top, text="Far away.", start=0, end=1)
    Chunk.objects.create(item=work["item"], rank=top, text="Far passage.")
    assert _unit_found(assignment, "sentence", f"s:{top}") and _unit_found(assignment, "chunk", f"c:{top}")
    # One past the column's range names nothing, and never reaches the database as a number at all.
    with CaptureQueriesContext(connection) as captured:
        assert not _unit_found(assignment, "sentence", f"s:{top + 1}")
        assert not _unit_found(assignment, "chunk", f"c:{top + 1}")
    assert len(captured) == 2 and not [q for q in captured if f"{top + 1}" in q["sql"].replace(f"'s:{top + 1}'", "")
                                       .replace(f"'c:{top + 1}'", "")], [q["sql"] for q in captured]
    label = label_save(
        assignment=assignment, question=work["rel"], unit_key=f"c:{top}", value="yes", base_version=0, actor=annotator
    )
    assert Label.objects.get(pk=label.pk).unit_key == f"c:{top}"


def test_an_aspect_is_found_only_while_accepted_and_not_retired(work, annotator):
    assignment = factories.make_assignment(work["pool"], work["item"], annotator)
    aspect = Aspect.objects.create(item=work["item"], text="An aspect")
    key = f"a:{aspect.pk}"
    assert _unit_found(assignment, "aspect", key) and not _unit_found(assignment, "item", key)
    Aspect.objects.filter(pk=aspect.pk).update(retired_in_version=2)
    assert not _unit_found(assignment, "aspect", key)
    Aspect.objects.filter(pk=aspect.pk).update(retired_in_version=None, status="proposed")
    assert not _unit_found(assignment, "aspect", key)
    other_item = factories.make_item(work["pool"].study, "i2")
    elsewhere = Aspect.objects.create(item=other_item, text="Another item's aspect")
    assert not _unit_found(assignment, "aspect", f"a:{elsewhere.pk}")
    assert not _unit_found(assignment, "aspect", "a:999999999999999999")
    assert not _unit_found(assignment, "sentence", "nonsense") and _unit_found(assignment, "item", "item")


def test_the_lock_reads_only_the_question_asked_when_told_to(work, annotator):
    assignment = factories.make_assignment(work["pool"], work["item"], annotator)
    for key, unit, value in (("pf", "item", "3"), ("ib", "s:0", "yes"), ("ib", "s:1", "no")):
        label_save(
            assignment=assignment, question=work[key], unit_key=unit, value=value, base_version=0, actor=annotator
        )
    rows = statements.lock_open_assignment(assignment.pk, "sentence", "s:0", only_question=work["ib"].pk)
    assert [(r[4], r[5], r[6], r[7]) for r in rows] == [(work["ib"].pk, "s:0", "yes", 1)]
    # Every column as the ORM reads it: the reservation, and the label's id, author and time.
    until = timezone.now().replace(microsecond=0) + timedelta(minutes=7)
    Assignment.objects.filter(pk=assignment.pk).update(reserved_until=until)
    stored = Label.objects.get(question=work["ib"], unit_key="s:0")
    (row,) = statements.lock_open_assignment(assignment.pk, "sentence", "s:0", only_question=work["ib"].pk)
    assert row == (
        AssignmentStatus.ASSIGNED, until, row[2], stored.pk, work["ib"].pk, "s:0", "yes", 1, annotator.pk,
        stored.updated_at,
    ) and row[2]
    rows = statements.lock_open_assignment(assignment.pk, "sentence", "s:0")
    assert sorted((r[5], r[6]) for r in rows) == [("item", "3"), ("s:0", "yes")]
    (row,) = statements.lock_open_assignment(assignment.pk, "item", "item", only_question=work["rel"].pk)
    assert row[3:] == (None,) * 7 and row[0] == AssignmentStatus.ASSIGNED and row[2]


needs_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="the one-statement save: PostgreSQL")


@needs_postgresql
def test_the_one_statement_save_stores_what_the_locked_save_would(work, annotator):
    assignment = factories.make_assignment(work["pool"], work["item"], annotator)
    reference = factories.make_assignment(work["pool"], factories.make_item(work["pool"].study, "i3"), annotator)
    now = timezone.now()
    Assignment.objects.filter(pk__in=[assignment.pk, reference.pk]).update(reserved_until=now + timedelta(minutes=1))

    def at_once(unit, value, base, question="ib", scope="sentence"):
        return statements.save_label_at_once(
            assignment_id=assignment.pk,
            question_id=work[question].pk,
            scope=scope,
            unit_key=unit,
            value=value,
            base_version=base,
            actor_id=annotator.pk,
            now=now,
            reserve_until=now + timedelta(minutes=30),
            reserve_if_before=now + timedelta(minutes=5),
        )

    label_id, version = at_once("s:1", "yes", 0)
    stored = Label.objects.get(pk=label_id)
    assert (
        version,
        stored.assignment_id,
        stored.question_id,
        stored.unit_key,
        stored.value,
        stored.version,
        stored.updated_by_id,
        stored.updated_at,
    ) == (1, assignment.pk, work["ib"].pk, "s:1", "yes", 1, annotator.pk, now)
    assert Assignment.objects.get(pk=assignment.pk).reserved_until == now + timedelta(minutes=30)
    assert Assignment.objects.get(pk=reference.pk).reserved_until == now + timedelta(minutes=1)  # only its own
    later = now + timedelta(seconds=1)
    assert statements.save_label_at_once(
        assignment_id=assignment.pk,
        question_id=work["ib"].pk,
        scope="sentence",
        unit_key="s:1",
        value="no",
        base_version=1,
        actor_id=annotator.pk,
        now=later,
        reserve_until=later,
        reserve_if_before=later,
    ) == (label_id, 2)
    stored.refresh_from_db()
    assert (stored.value, stored.version, stored.updated_at) == ("no", 2, later)
    history = list(
        LabelHistory.objects.filter(label_id=label_id)
        .order_by("new_version")
        .values_list("old_value", "new_value", "old_version", "new_version", "actor_id", "at", "undoes_id")
    )
    assert history == [(None, "yes", None, 1, annotator.pk, now, None), ("yes", "no", 1, 2, annotator.pk, later, None)]
    # Units of every kind, as the locked save finds them; a key of no unit writes nothing.
    chunk = factories.make_chunk(work["item"], 3)
    aspect = Aspect.objects.create(item=work["item"], text="An aspect")
    assert at_once(f"c:{chunk.rank}", "yes", 0, question="rel", scope="chunk") is not None
    assert at_once(f"a:{aspect.pk}", "no", 0, question="covered", scope="aspect") is not None
    assert at_once("item", "2", 0, question="pf", scope="item") is not None
    assert at_once("c:4", "yes", 0, question="rel", scope="chunk") is None
    assert at_once("s:1", "yes", 0, question="pf", scope="item") is None
    assert at_once(f"s:{2**31}", "yes", 0) is None
    assert Label.objects.filter(assignment=assignment).count() == 4
    # Started is open too; withdrawn is not.
    Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.STARTED)
    assert at_once("s:0", "no", 0) is not None
    Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.WITHDRAWN)
    assert at_once("s:0", "yes", 1) is None


def test_the_first_sentence_of_a_one_sentence_answer_is_found(work, annotator):
    item = factories.make_item(work["pool"].study, "one", answer="Only this.")
    assignment = factories.make_assignment(work["pool"], item, annotator)
    assert _unit_found(assignment, "sentence", "s:0") and not _unit_found(assignment, "sentence", "s:1")
    Chunk.objects.create(item=item, rank=0, text="Rank zero.")
    assert _unit_found(assignment, "chunk", "c:0") and not _unit_found(assignment, "chunk", "c:1")


@needs_postgresql
def test_a_list_answer_goes_through_the_one_statement_save_and_comes_back_whole(work, annotator):
    """A multi-label answer (a list of text) is plain JSON for the one-statement save: stored as given, and the
    label handed back is the stored row — its assignment, question, unit, value and version."""
    tags = factories.make_question(
        work["pool"].study, "tags", kind="multilabel", options=[{"value": v} for v in ("dose", "timing", "drug")]
    )
    work["pool"].questions.add(tags)
    assignment = factories.make_assignment(work["pool"], work["item"], annotator)
    first = label_save(
        assignment=assignment, question=tags, unit_key="item", value=["dose", "drug"], base_version=0, actor=annotator
    )
    again = label_save(
        assignment=assignment, question=tags, unit_key="item", value=["timing"], base_version=1, actor=annotator
    )
    stored = Label.objects.get(pk=first.pk)
    assert (stored.value, stored.version) == (["timing"], 2)
    for returned, value, version in ((first, ["dose", "drug"], 1), (again, ["timing"], 2)):
        assert (returned.pk, returned.assignment_id, returned.question_id, returned.unit_key) == (
            stored.pk, assignment.pk, tags.pk, "item"
        )
        assert (returned.value, returned.version, returned.updated_by_id) == (value, version, annotator.pk)
    history = LabelHistory.objects.filter(label_id=stored.pk).order_by("new_version")
    assert [(h.old_value, h.new_value, h.new_version) for h in history] == [
        (None, ["dose", "drug"], 1), (["dose", "drug"], ["timing"], 2)
    ]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: SQLite's IMMEDIATE transactions lock it all")
@pytest.mark.django_db(transaction=True)
def test_the_locked_save_holds_the_assignment_row_until_its_transaction_ends(study, annotator):
    """The locked save's first statement locks the assignment row (FOR UPDATE OF a): another connection cannot
    lock it until the transaction ends, so two locked saves of one assignment run one after the other. Checked
    with NOWAIT from a second connection, which answers at once either way (no waiting, no clock)."""
    import psycopg
    from django.db import transaction
    from psycopg import sql

    item = factories.make_item(study, "i1")
    pool = factories.make_pool(study, questions=[factories.make_question(study, "pf")])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    statement = sql.SQL("SELECT 1 FROM {} WHERE id = %s FOR UPDATE NOWAIT").format(
        sql.Identifier(Assignment._meta.db_table)
    )
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as other:

        def other_can_lock() -> bool:
            try:
                with other.transaction():
                    other.execute(statement, [assignment.pk])
                return True
            except psycopg.errors.LockNotAvailable:
                return False

        with transaction.atomic():
            Assignment.objects.get(pk=assignment.pk)  # a plain read locks nothing: the check can say yes
            assert other_can_lock()
            statements.lock_open_assignment(assignment.pk, "item", "item")
            assert not other_can_lock()
        assert other_can_lock()  # released at the end of the transaction
