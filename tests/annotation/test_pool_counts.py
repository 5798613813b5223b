"""The per-pool, per-item assignment counts kept by database triggers (annotation/pool_counts.py): after every way
an assignment is created, changes status, moves or goes, the counts equal those read from the assignments; a
change the triggers missed is refused, not shown; the triggers come back (and the counts are rebuilt) after a
migrate that lost them."""

from __future__ import annotations

import importlib
import io
import threading
from collections import Counter

import pytest
from django.core.management import call_command
from django.db import IntegrityError, OperationalError, connection, connections, transaction

from adjudication import data_manager as dm
from annotation import audit, labels, pool_counts, services
from annotation.imports import items_import
from annotation.models import Assignment, AssignmentStatus, Item, Pool, PoolItemCounts
from tests import factories
from tests.annotation.console_helpers import jsonl
from tests.waiting import STALL_SECONDS

pytestmark = pytest.mark.django_db

S = AssignmentStatus


def _from_assignments() -> dict[tuple[int, int], dict[str, int]]:
    """The counts as read from the assignments, one by one."""
    tally: dict[tuple[int, int], Counter] = {}
    for pool_id, item_id, status in Assignment.objects.values_list("pool_id", "item_id", "status"):
        column = next(c for c, statuses in pool_counts.COLUMNS.items() if status in statuses)
        tally.setdefault((pool_id, item_id), Counter())[column] += 1
    return {key: {c: counts[c] for c in pool_counts.COLUMNS} for key, counts in tally.items()}


def _kept() -> dict[tuple[int, int], dict[str, int]]:
    """The counts the triggers kept (rows all zero left out: a (pool, item) whose assignments all went)."""
    out = {}
    for row in PoolItemCounts.objects.values("pool_id", "item_id", *pool_counts.COLUMNS):
        counts = {c: row[c] for c in pool_counts.COLUMNS}
        if any(counts.values()):
            out[(row["pool_id"], row["item_id"])] = counts
    return out


def _agree() -> None:
    assert _kept() == _from_assignments()


@pytest.fixture
def work(study, researcher):
    study.independent_pools = False  # the same annotators in both pools
    study.save()
    question = factories.make_question(study, "pf")
    pool = factories.make_pool(study, "A", questions=[question], overlap=2)
    other = factories.make_pool(study, "B", questions=[question], overlap=1)
    kim, lee, mo = (factories.make_user(n) for n in ("kim", "lee", "mo"))
    for user in (kim, lee, mo):
        factories.add_member(pool, user)
        factories.add_member(other, user)
    items = [factories.make_item(study, f"i{n}") for n in range(4)]
    return {"study": study, "question": question, "pool": pool, "other": other, "users": (kim, lee, mo),
            "items": items, "researcher": researcher}


def test_every_status_is_counted_in_exactly_one_column():
    counted = [status for statuses in pool_counts.COLUMNS.values() for status in statuses]
    assert sorted(counted) == sorted(S.values)


def test_the_counts_follow_the_queue_from_assignment_to_submission_skip_reopening_and_withdrawal(work):
    pool, (kim, *_), question = work["pool"], work["users"], work["question"]
    assert services.pool_assign_items(pool=pool) == 8  # four items, two annotators each: one bulk insert
    _agree()
    services.pool_assign_items(pool=pool)  # nothing new (conflicts ignored): nothing counted twice
    _agree()
    mine = Assignment.objects.filter(pool=pool, annotator=kim).order_by("id")
    first, second = mine[0], mine[1]
    services.assignment_open(assignment=first, actor=kim)  # assigned -> started: the same count
    _agree()
    labels.label_save(assignment=first, question=question, unit_key="item", value="yes", base_version=0, actor=kim)
    services.assignment_submit(assignment=first, actor=kim)
    _agree()
    services.assignment_skip(assignment=second, actor=kim, reason="unsure")
    _agree()
    pool.reopen_allowed = True
    pool.save()
    services.assignment_reopen(assignment=Assignment.objects.get(pk=first.pk), actor=kim)
    _agree()
    assert PoolItemCounts.objects.get(pool=pool, item=first.item).n_submitted == 0
    # the data manager's reassignment withdraws kim's answered item and gives it to the member who has none of it
    # (overlap 2 of 3 members: which one depends on the pool's seeded order)
    receiver = next(u for u in work["users"] if not Assignment.objects.filter(pool=pool, item=first.item, annotator=u))
    filters = dm.Filters.parse(work["study"], {})
    request = {"action": "reassign", "target_pool": str(pool.pk), "from_user": str(kim.pk),
               "to_user": str(receiver.pk)}
    plan = dm.bulk_plan(study=work["study"], data=request, chosen=[str(first.item_id)], all_matching=False,
                        filters=filters)
    dm.bulk_apply(study=work["study"], plan=plan, actor=work["researcher"], filters=filters)
    _agree()
    assert PoolItemCounts.objects.filter(pool=pool, item=first.item, n_withdrawn=1).exists()
    # and its removal from the pool deletes the open assignments
    plan = dm.bulk_plan(study=work["study"], data={"action": "remove", "target_pool": str(pool.pk)},
                        chosen=[str(second.item_id)], all_matching=False, filters=filters)
    dm.bulk_apply(study=work["study"], plan=plan, actor=work["researcher"], filters=filters)
    _agree()


def test_bulk_status_changes_moves_and_deletes_are_counted_per_pool_and_item(work):
    pool, other, (kim, lee, _), items = work["pool"], work["other"], work["users"], work["items"]
    for item in items:
        factories.make_assignment(pool, item, kim)
        factories.make_assignment(pool, item, lee, status=S.SUBMITTED)
    _agree()
    Assignment.objects.filter(pool=pool, annotator=kim).update(status=S.SUBMITTED)  # one statement, four rows
    _agree()
    assert PoolItemCounts.objects.filter(pool=pool, n_submitted=2, n_open=0).count() == 4
    moved = Assignment.objects.filter(pool=pool, annotator=kim, item=items[0])
    moved.update(pool=other)  # to a (pool, item) that had no row yet
    _agree()
    Assignment.objects.filter(pool=pool, item=items[1], annotator=kim).update(item=items[0])  # to a row (lee's)
    _agree()
    Assignment.objects.filter(annotator=lee).update(reserved_until=None)  # no status, pool or item changed
    _agree()
    Assignment.objects.filter(pool=pool, item=items[2]).delete()
    _agree()
    Item.objects.filter(pk=items[3].pk).delete()  # its assignments and its counts go with it
    _agree()
    assert not PoolItemCounts.objects.filter(item_id=items[3].pk).exists()
    Pool.objects.filter(pk=other.pk).delete()
    _agree()


def test_an_import_of_answered_items_is_counted(work):
    labels_ = [{"annotator": name, "question": "pf", "unit": "item", "value": "yes"} for name in ("A", "B", "C")]
    records = [{"id": f"q{n}", "question": "Dose?", "answer": "Half a milligram daily.", "labels": labels_}
               for n in range(3)]
    items_import(study=work["study"], file=io.BytesIO(jsonl(*records)), filename="rated.jsonl")
    _agree()
    imported = Pool.objects.get(study=work["study"], name="imported")
    assert PoolItemCounts.objects.filter(pool=imported, n_submitted=3).count() == 3


def test_a_change_the_triggers_missed_is_refused_not_shown(work):
    pool, (kim, *_), items = work["pool"], work["users"], work["items"]
    assignment = factories.make_assignment(pool, items[0], kim)
    PoolItemCounts.objects.filter(pool=pool, item=items[0]).update(n_open=0)  # as if a change went unseen
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.filter(pk=assignment.pk).update(status=S.SUBMITTED)
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.filter(pk=assignment.pk).delete()


def test_an_unchanged_status_writes_no_count(work):
    if connection.vendor != "postgresql":
        pytest.skip("a row's xmin (the transaction that last wrote it) is PostgreSQL's")
    pool, (kim, *_), items = work["pool"], work["users"], work["items"]
    assignment = factories.make_assignment(pool, items[0], kim)

    def written_by() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT xmin::text::bigint FROM annotation_poolitemcounts WHERE item_id = %s", [items[0].pk])
            return cursor.fetchone()[0]

    with transaction.atomic():
        before = written_by()
    with transaction.atomic():  # a later transaction: a write would stamp its own id
        services.assignment_open(assignment=assignment, actor=kim)  # assigned -> started: the same count
        Assignment.objects.filter(pk=assignment.pk).update(reserved_until=None)
        assert written_by() == before
        Assignment.objects.filter(pk=assignment.pk).update(status=S.SUBMITTED)
        assert written_by() != before


def test_the_triggers_are_put_back_and_the_counts_rebuilt_when_missing(work):
    pool, (kim, lee, _), items = work["pool"], work["users"], work["items"]
    factories.make_assignment(pool, items[0], kim)
    pool_counts.remove()
    assert pool_counts.present() == set()
    factories.make_assignment(pool, items[1], lee, status=S.SUBMITTED)  # unseen by the counts
    Assignment.objects.filter(annotator=kim).update(status=S.SKIPPED)
    assert _kept() != _from_assignments()
    assert pool_counts.install() is True
    assert pool_counts.present() == {pool_counts.trigger_name(op) for op in pool_counts.OPERATIONS}
    _agree()
    assert pool_counts.install() is False  # all there: nothing rebuilt
    factories.make_assignment(pool, items[2], kim)
    _agree()


@pytest.mark.django_db(transaction=True)
def test_a_migrate_leaves_the_triggers_in_place_and_the_counts_right(study):
    pool = factories.make_pool(study, "A", questions=[factories.make_question(study)])
    user = factories.make_user("kim")
    factories.make_assignment(pool, factories.make_item(study, "i0"), user)
    call_command("migrate", verbosity=0)  # SQLite: dropped before, recreated and rebuilt after
    assert pool_counts.present() == {pool_counts.trigger_name(op) for op in pool_counts.OPERATIONS}
    factories.make_assignment(pool, factories.make_item(study, "i1"), user, status=S.SUBMITTED)
    _agree()


@pytest.mark.django_db(transaction=True)
def test_migrating_back_past_the_counts_removes_their_triggers_and_forward_rebuilds_them(study):
    pool = factories.make_pool(study, "A", questions=[factories.make_question(study)])
    user = factories.make_user("kim")
    factories.make_assignment(pool, factories.make_item(study, "i0"), user)
    try:
        call_command("migrate", "annotation", "0017", verbosity=0)
        assert pool_counts.present() == set()
        # assignments still change (no trigger names a table that is gone)
        factories.make_assignment(pool, factories.make_item(study, "i1"), user, status=S.SUBMITTED)
    finally:
        call_command("migrate", verbosity=0)
    assert pool_counts.present() == {pool_counts.trigger_name(op) for op in pool_counts.OPERATIONS}
    _agree()
    assert PoolItemCounts.objects.filter(pool=pool, n_submitted=1).count() == 1


ITEM_INDEX = importlib.import_module("annotation.migrations.0019_item_study_id_index")


def test_the_items_study_index_is_built_outside_a_transaction_and_is_valid():
    assert ITEM_INDEX.Migration.atomic is False  # CREATE INDEX CONCURRENTLY on PostgreSQL
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s",
                [ITEM_INDEX.INDEX],
            )
            assert cursor.fetchall() == [(True,)]
        else:
            cursor.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = %s", [ITEM_INDEX.INDEX])
            assert "(study_id, id)" in cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_an_install_waits_for_a_busy_table_a_bounded_time_and_changes_nothing_when_it_stays_busy(study, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises its writers: no lock to wait for")
    pool = factories.make_pool(study, "A", questions=[factories.make_question(study)])
    assignment = factories.make_assignment(pool, factories.make_item(study, "i0"), factories.make_user("kim"))
    pool_counts.remove()
    holding, release = threading.Event(), threading.Event()

    def writer() -> None:  # an open transaction that changed an assignment (ROW EXCLUSIVE on the table)
        try:
            with transaction.atomic():
                Assignment.objects.filter(pk=assignment.pk).update(status=S.STARTED)
                holding.set()
                release.wait(STALL_SECONDS)
        finally:
            connections.close_all()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert holding.wait(STALL_SECONDS)
        monkeypatch.setattr(audit, "INSTALL_ATTEMPTS", 2)
        with pytest.raises(OperationalError, match="lock timeout"):
            pool_counts.install()
        assert pool_counts.present() == set()  # nothing half-installed
    finally:
        release.set()
        thread.join()
    assert pool_counts.install() is True
    _agree()


@pytest.mark.django_db(transaction=True)
def test_the_install_rebuilds_in_steps_that_hold_no_lock_label_saves_wait_for_long(study, monkeypatch):
    # A label save writes its assignment (ROW EXCLUSIVE on the table): each step of the rebuild holds the table's
    # SHARE ROW EXCLUSIVE lock for a few thousand items only, never ACCESS EXCLUSIVE (DROP TRIGGER's), and
    # commits it before the next step.
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's lock levels")
    pool = factories.make_pool(study, "A", questions=[factories.make_question(study)])
    user = factories.make_user("kim")
    items = [factories.make_item(study, f"i{n}") for n in range(5)]
    for item in items:
        factories.make_assignment(pool, item, user, status=S.SUBMITTED)
    with connection.cursor() as cursor:  # one trigger gone (in its own transaction): the install replaces them
        cursor.execute(f"DROP TRIGGER {pool_counts.trigger_name('update')} ON {pool_counts.ASSIGNMENTS}")
    PoolItemCounts.objects.filter(item=items[0]).update(n_submitted=7)  # as if it had gone wrong meanwhile
    spans, held = [], []
    rebuild, locked = pool_counts.rebuild, pool_counts._locked

    def rebuild_step(**kwargs):
        spans.append(kwargs["items"])
        return rebuild(**kwargs)

    def locked_step(using, step):
        def recorded(cursor):
            step(cursor)
            cursor.execute(
                "SELECT mode FROM pg_locks WHERE pid = pg_backend_pid() AND relation = %s::regclass",
                [pool_counts.ASSIGNMENTS],
            )
            held.append({row[0] for row in cursor.fetchall()})

        locked(using, recorded)

    monkeypatch.setattr(pool_counts, "REBUILD_ITEMS", 2)
    monkeypatch.setattr(pool_counts, "rebuild", rebuild_step)
    monkeypatch.setattr(pool_counts, "_locked", locked_step)
    assert pool_counts.install() is True
    low = min(item.pk for item in items)
    assert spans == [(low, low + 2), (low + 2, low + 4), (low + 4, low + 5)]
    assert len(held) == 2 + len(spans)  # the triggers, the rows of items with no assignment, each span
    for modes in held:
        assert "ShareRowExclusiveLock" in modes and "AccessExclusiveLock" not in modes
    assert pool_counts.present() == {pool_counts.trigger_name(op) for op in pool_counts.OPERATIONS}
    _agree()
    with pytest.raises(IntegrityError), transaction.atomic():  # the check constraint is back
        PoolItemCounts.objects.filter(item=items[0]).update(n_submitted=-1)


def test_an_interrupted_rebuild_is_done_again_by_the_next_install(work):
    # The check constraint comes back last: while it is missing the triggers alone do not make the counts right.
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL rebuilds in steps; SQLite in one transaction")
    pool, (kim, *_), items = work["pool"], work["users"], work["items"]
    factories.make_assignment(pool, items[0], kim, status=S.SUBMITTED)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE refuses pending deferred checks
        cursor.execute(f"ALTER TABLE {pool_counts.COUNTS} DROP CONSTRAINT {pool_counts.CHECK}")
    PoolItemCounts.objects.filter(item=items[0]).update(n_submitted=0, n_open=3)
    assert pool_counts.install() is True
    _agree()
    assert pool_counts.install() is False
