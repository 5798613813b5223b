"""Assignment of items to pool members and the per-annotator queue."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus
from annotation.services import (
    assignment_open,
    assignment_reserve_next,
    assignment_skip,
    assignment_submit,
    order_key_for,
    pool_assign_items,
)
from concord.errors import ValidationFailed
from tests import factories
from tests.waiting import STALL_SECONDS

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Factories give every user a password; the production hasher would dominate these tests."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def pool_of_four(study):
    pool = factories.make_pool(study, "p1", overlap=2, seed=7)
    members = [factories.make_user(f"member{i}") for i in range(4)]
    for m in members:
        factories.add_member(pool, m)
    items = [factories.make_item(study, f"it{i}") for i in range(10)]
    return pool, members, items


def test_each_item_goes_to_k_distinct_members(pool_of_four):
    pool, _, _ = pool_of_four
    created = pool_assign_items(pool=pool)
    assert created == 20
    per_item = Counter(Assignment.objects.filter(pool=pool).values_list("item_id", flat=True))
    assert set(per_item.values()) == {2}
    pairs = list(Assignment.objects.filter(pool=pool).values_list("item_id", "annotator_id"))
    assert len(pairs) == len(set(pairs))


def test_load_is_balanced_across_members(pool_of_four):
    pool, _, _ = pool_of_four
    pool_assign_items(pool=pool)
    loads = Counter(Assignment.objects.filter(pool=pool).values_list("annotator_id", flat=True))
    assert max(loads.values()) - min(loads.values()) <= 1


def test_every_member_gets_the_same_load_when_it_divides_evenly(pool_of_four):
    pool, members, _ = pool_of_four
    pool_assign_items(pool=pool)
    loads = Counter(Assignment.objects.filter(pool=pool).values_list("annotator_id", flat=True))
    assert {m.pk: loads[m.pk] for m in members} == {m.pk: 5 for m in members}


def test_members_who_join_later_are_given_new_items_until_the_loads_are_even(pool_of_four, study):
    pool, members, _ = pool_of_four
    pool_assign_items(pool=pool)
    late = [factories.make_user(f"late{i}") for i in range(2)]
    for user in late:
        factories.add_member(pool, user)
    for i in range(12):
        factories.make_item(study, f"new{i}")
    assert pool_assign_items(pool=pool) == 24
    loads = Counter(Assignment.objects.filter(pool=pool).values_list("annotator_id", flat=True))
    everyone = [loads[m.pk] for m in members + late]
    assert max(everyone) - min(everyone) <= 1, everyone


def test_the_seed_decides_who_is_given_which_item(pool_of_four):
    pool, _, _ = pool_of_four

    def pairs(seed):
        Assignment.objects.filter(pool=pool).delete()
        pool_assign_items(pool=pool, seed=seed)
        return set(Assignment.objects.filter(pool=pool).values_list("item_id", "annotator_id"))

    assert pairs(7) == pairs(7)
    assert pairs(7) != pairs(8)


def test_assigning_twice_adds_nothing_and_new_items_only_fill_the_gap(pool_of_four, study):
    pool, _, _ = pool_of_four
    assert pool_assign_items(pool=pool) == 20
    assert pool_assign_items(pool=pool) == 0
    extra = factories.make_item(study, "late")
    assert pool_assign_items(pool=pool) == 2
    assert Assignment.objects.filter(pool=pool, item=extra).count() == 2


def test_order_is_random_per_annotator_and_reproducible_from_the_seed(pool_of_four, study):
    pool, members, _ = pool_of_four
    pool.overlap = 4
    pool.save()
    pool_assign_items(pool=pool)
    orders = {
        m.pk: list(
            Assignment.objects.filter(pool=pool, annotator=m).order_by("order_key").values_list("item_id", flat=True)
        )
        for m in members
    }
    assert len({tuple(o) for o in orders.values()}) > 1, "every annotator got the same order"
    assert any(o != sorted(o) for o in orders.values())
    keys = dict(Assignment.objects.filter(pool=pool).values_list("id", "order_key"))
    Assignment.objects.filter(pool=pool).delete()
    pool_assign_items(pool=pool)
    again = {
        m.pk: list(
            Assignment.objects.filter(pool=pool, annotator=m).order_by("order_key").values_list("item_id", flat=True)
        )
        for m in members
    }
    assert again == orders
    assert len(keys) == 40


def test_the_order_comes_from_the_pools_seed_unless_another_seed_is_given(pool_of_four):
    pool, _, _ = pool_of_four

    def keys(**seed):
        Assignment.objects.filter(pool=pool).delete()
        pool_assign_items(pool=pool, **seed)
        return sorted(Assignment.objects.filter(pool=pool).values_list("item_id", "annotator_id", "order_key"))

    assert pool.seed == 7
    assert keys() == keys(seed=7)
    assert keys(seed=8) != keys(seed=7)


def test_only_the_pools_own_members_are_given_its_items(pool_of_four, study):
    pool, members, _ = pool_of_four
    elsewhere = factories.make_pool(factories.make_study(), "elsewhere")
    outsider = factories.make_user("outsider")
    factories.add_member(elsewhere, outsider)
    pool_assign_items(pool=pool)
    assert set(Assignment.objects.values_list("annotator_id", flat=True)) == {m.pk for m in members}


def test_each_seed_and_each_pool_gives_its_own_queue_order(researcher, annotator):
    study = factories.make_study(owner=researcher, independent_pools=False)
    items = [factories.make_item(study, f"q{i}") for i in range(8)]
    pools = [factories.make_pool(study, name, seed=7) for name in ("first", "second")]
    for pool in pools:
        factories.add_member(pool, annotator)

    def queue(pool, seed):
        Assignment.objects.filter(pool=pool).delete()
        pool_assign_items(pool=pool, seed=seed)
        return list(Assignment.objects.filter(pool=pool).order_by("order_key").values_list("item_id", flat=True))

    assert sorted(queue(pools[0], 7)) == sorted(i.pk for i in items)
    assert queue(pools[0], 7) != queue(pools[0], 8)
    assert queue(pools[0], 7) != queue(pools[1], 7)


def test_overlap_larger_than_the_pool_is_refused(study):
    pool = factories.make_pool(study, overlap=3)
    factories.add_member(pool, factories.make_user())
    factories.make_item(study)
    with pytest.raises(ValidationFailed, match="needs at least 3 active members"):
        pool_assign_items(pool=pool)
    assert not Assignment.objects.exists()


def test_an_item_removed_from_the_pool_is_never_assigned_in_it_but_still_in_other_pools(pool_of_four, study):
    from annotation.models import PoolItemExclusion

    pool, _, items = pool_of_four
    removed, also_removed = items[3], items[5]
    PoolItemExclusion.objects.create(pool=pool, item=removed)
    PoolItemExclusion.objects.create(pool=pool, item=also_removed)
    other_pool = factories.make_pool(study, "p2", overlap=1)
    factories.add_member(other_pool, factories.make_user("elsewhere"))
    PoolItemExclusion.objects.create(pool=other_pool, item=items[0])
    assert pool_assign_items(pool=pool) == 16
    assigned = set(Assignment.objects.filter(pool=pool).values_list("item_id", flat=True))
    assert assigned == {i.pk for i in items} - {removed.pk, also_removed.pk}
    assert pool_assign_items(pool=other_pool) == 9
    assert items[0].pk not in set(Assignment.objects.filter(pool=other_pool).values_list("item_id", flat=True))


def test_a_withdrawn_assignment_is_made_up_by_another_member_and_the_rest_is_left_as_it_is(pool_of_four):
    pool, members, _ = pool_of_four
    pool_assign_items(pool=pool)
    withdrawn = Assignment.objects.filter(pool=pool, annotator=members[0]).order_by("order_key").first()
    Assignment.objects.filter(pk=withdrawn.pk).update(status=AssignmentStatus.WITHDRAWN)
    assert pool_assign_items(pool=pool) == 1
    holders = Assignment.objects.filter(pool=pool, item=withdrawn.item_id).exclude(status=AssignmentStatus.WITHDRAWN)
    assert holders.count() == 2 and members[0].pk not in set(holders.values_list("annotator_id", flat=True))
    assert pool_assign_items(pool=pool) == 0


def test_an_overlap_below_one_is_refused(study):
    pool = factories.make_pool(study, overlap=0)
    factories.add_member(pool, factories.make_user())
    factories.make_item(study)
    with pytest.raises(ValidationFailed) as caught:
        pool_assign_items(pool=pool)
    assert caught.value.message == "The pool's overlap k must be at least 1."
    assert not Assignment.objects.exists()


def test_items_of_another_study_are_refused(study):
    pool = factories.make_pool(study)
    factories.add_member(pool, factories.make_user())
    mine = factories.make_item(study)
    other = factories.make_item(factories.make_study())
    with pytest.raises(ValidationFailed) as caught:
        pool_assign_items(pool=pool, items=[mine, other])
    assert caught.value.message == "Items of another study cannot be assigned to this pool."
    assert caught.value.details == [other.pk]
    assert not Assignment.objects.exists()


def test_the_database_refuses_a_duplicate_assignment(study, annotator):
    pool = factories.make_pool(study)
    item = factories.make_item(study)
    factories.make_assignment(pool, item, annotator)
    with pytest.raises(IntegrityError), transaction.atomic():
        factories.make_assignment(pool, item, annotator)


def test_the_database_refuses_one_person_in_two_independent_pools_of_a_study(study, annotator):
    assert study.independent_pools
    factories.add_member(factories.make_pool(study, "a"), annotator)
    with pytest.raises(IntegrityError), transaction.atomic():
        factories.add_member(factories.make_pool(study, "b"), annotator)


def test_reserve_next_follows_the_annotators_order_and_skips_closed_items(pool_of_four, no_submit_receivers):
    pool, members, _ = pool_of_four
    pool_assign_items(pool=pool)
    me = members[0]
    order = list(Assignment.objects.filter(pool=pool, annotator=me).order_by("order_key"))
    first = assignment_reserve_next(pool=pool, annotator=me)
    assert first.pk == order[0].pk
    assert first.status == AssignmentStatus.STARTED and first.reserved_until > timezone.now()
    assert assignment_reserve_next(pool=pool, annotator=me).pk == first.pk, "a live reservation is returned again"
    assignment_skip(assignment=first, actor=me, reason="not my specialty")
    assert assignment_reserve_next(pool=pool, annotator=me).pk == order[1].pk


def test_an_abandoned_reservation_is_released(pool_of_four):
    pool, members, _ = pool_of_four
    pool_assign_items(pool=pool)
    me = members[0]
    now = timezone.now()
    first = assignment_reserve_next(pool=pool, annotator=me, now=now)
    later = now + timedelta(minutes=pool.reservation_minutes + 1)
    # The lapsed one is free again and comes first in the order.
    again = assignment_reserve_next(pool=pool, annotator=me, now=later)
    assert again.pk == first.pk
    assert again.reserved_until > later


def test_a_live_reservation_is_extended_and_the_first_start_is_kept(pool_of_four):
    pool, members, _ = pool_of_four
    pool_assign_items(pool=pool)
    me = members[0]
    now = timezone.now()
    first = assignment_reserve_next(pool=pool, annotator=me, now=now)
    assert first.started_at == now and first.reserved_until == now + timedelta(minutes=pool.reservation_minutes)
    soon = now + timedelta(minutes=5)
    again = assignment_reserve_next(pool=pool, annotator=me, now=soon)
    assert again.pk == first.pk
    stored = Assignment.objects.get(pk=first.pk)
    assert again.reserved_until == stored.reserved_until == soon + timedelta(minutes=pool.reservation_minutes)
    # After a lapse the item is taken again, but it was started when it was first opened.
    later = now + timedelta(minutes=pool.reservation_minutes + 1)
    taken = assignment_reserve_next(pool=pool, annotator=me, now=later)
    assert taken.pk == first.pk
    assert Assignment.objects.get(pk=first.pk).started_at == now


def test_a_lapsed_item_opened_by_link_does_not_jump_the_queue(pool_of_four):
    pool, members, _ = pool_of_four
    pool_assign_items(pool=pool)
    me = members[0]
    order = list(Assignment.objects.filter(pool=pool, annotator=me).order_by("order_key"))
    now = timezone.now()
    assignment_open(assignment=order[2], actor=me, now=now)
    later = now + timedelta(minutes=pool.reservation_minutes + 1)
    assert assignment_reserve_next(pool=pool, annotator=me, now=later).pk == order[0].pk


def test_opening_an_item_by_link_starts_and_reserves_that_item_only(pool_of_four):
    pool, members, _ = pool_of_four
    pool_assign_items(pool=pool)
    me = members[0]
    mine = list(Assignment.objects.filter(pool=pool, annotator=me).order_by("order_key"))
    now = timezone.now()
    opened = assignment_open(assignment=mine[1], actor=me, now=now)
    started = (AssignmentStatus.STARTED, now + timedelta(minutes=pool.reservation_minutes), now)
    assert (opened.status, opened.reserved_until, opened.started_at) == started
    stored = Assignment.objects.get(pk=mine[1].pk)
    assert (stored.status, stored.reserved_until, stored.started_at) == started
    untouched = Assignment.objects.filter(pool=pool).exclude(pk=mine[1].pk)
    assert set(untouched.values_list("status", "reserved_until", "started_at")) == {
        (AssignmentStatus.ASSIGNED, None, None)
    }
    # Opened again later: reserved from then on, started when first opened.
    later = now + timedelta(minutes=10)
    again = assignment_open(assignment=Assignment.objects.get(pk=mine[1].pk), actor=me, now=later)
    assert (again.reserved_until, again.started_at) == (later + timedelta(minutes=pool.reservation_minutes), now)
    stored = Assignment.objects.get(pk=mine[1].pk)
    assert (stored.reserved_until, stored.started_at) == (later + timedelta(minutes=pool.reservation_minutes), now)


def test_opening_a_closed_item_leaves_it_closed(pool_of_four, no_submit_receivers):
    pool, members, _ = pool_of_four
    pool_assign_items(pool=pool)
    me = members[0]
    first, second = Assignment.objects.filter(pool=pool, annotator=me).order_by("order_key")[:2]
    assignment_skip(assignment=first, actor=me, reason="not my specialty")
    first.refresh_from_db()
    assert assignment_open(assignment=first, actor=me).status == AssignmentStatus.SKIPPED
    assert Assignment.objects.get(pk=first.pk).status == AssignmentStatus.SKIPPED
    # Skipped in another tab after this page read it: the page learns it is closed.
    stale = Assignment.objects.get(pk=second.pk)
    assignment_skip(assignment=second, actor=me, reason="not my specialty")
    opened = assignment_open(assignment=stale, actor=me)
    assert (opened.status, opened.reserved_until, opened.started_at) == (AssignmentStatus.SKIPPED, None, None)
    assert Assignment.objects.get(pk=second.pk).status == AssignmentStatus.SKIPPED


def test_reserve_next_returns_none_when_everything_is_done(study, annotator, no_submit_receivers):
    pool = factories.make_pool(study)
    factories.add_member(pool, annotator)
    factories.make_item(study)
    pool_assign_items(pool=pool)
    a = assignment_reserve_next(pool=pool, annotator=annotator)
    assignment_submit(assignment=a, actor=annotator)
    assert assignment_reserve_next(pool=pool, annotator=annotator) is None


@pytest.mark.skipif(
    "postgresql" not in django_settings.DATABASES["default"]["ENGINE"],
    reason="SKIP LOCKED is PostgreSQL's; SQLite serialises the callers (.ci/run runs this on PostgreSQL)",
)
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "known_answer_items, already_reserved",
    [(False, False), (True, False), (False, True)],
    ids=["plain-pool", "pool-serving-known-answer-items", "one-item-already-reserved"],
)
def test_concurrent_reservations_by_one_account_get_different_items(
    study, annotator, known_answer_items, already_reserved
):
    """API scripts may run several workers on one account: SKIP LOCKED hands each its own item instead of
    making it wait — also in a pool that serves items of known answer, whose queue takes its next item by
    another query (the slot's kind first, then a real item; annotation.quality) and locks only the assignment
    row, and when the account already holds a live reservation: one caller is handed it again (extended), the
    others, finding it locked, take new items rather than wait for it."""
    import threading

    from django.db import connection

    from annotation import quality
    from annotation.models import ControlKind

    if known_answer_items:
        ok = factories.make_question(study, "ok", required=False)
        for n in range(3):
            quality.control_mark(
                study=study,
                item=factories.make_item(study, f"k{n}"),
                kind=ControlKind.CONTROL,
                answers_raw={"ok": "no"},
                explanation="",
                actor=None,
            )
        pool = factories.make_pool(study, questions=[ok], control_rate=0.5, seed=7)
    else:
        pool = factories.make_pool(study)
    factories.add_member(pool, annotator)
    for n in range(4):
        factories.make_item(study, f"c{n}")
    pool_assign_items(pool=pool)
    live = assignment_reserve_next(pool=pool, annotator=annotator).pk if already_reserved else None
    got: list[int] = []
    start = threading.Barrier(3)
    reserved_by_all = threading.Barrier(3, timeout=STALL_SECONDS)  # a guard: a lost caller fails, not hangs

    def worker() -> None:
        # Each caller holds its transaction open until all three have reserved, so the three are truly
        # concurrent whatever the scheduling: a caller that started after another had committed would
        # instead (rightly) be handed that live reservation again, as a second tab is.
        try:
            start.wait()
            with transaction.atomic():
                got.append(assignment_reserve_next(pool=pool, annotator=annotator).pk)
                reserved_by_all.wait()
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 3
    # Three callers at once, three different items (on PostgreSQL through SKIP LOCKED: .ci/run runs the
    # suite there), each of them reserved.
    assert len(set(got)) == 3
    if already_reserved:
        assert live in got
    reserved = Assignment.objects.filter(pool=pool, reserved_until__isnull=False).count()
    assert reserved == 3


def test_ties_between_equally_loaded_members_go_by_the_seeded_hash_of_pool_member_and_item(study):
    """Among members of equal load an item goes to the one whose ``order_key_for(seed, pool, member, item)`` is
    lowest (three pools of four members, so that a hash of other inputs picks the same member by chance in
    all three only once in 64)."""
    item = factories.make_item(study, "only")
    for n in range(3):
        pool = factories.make_pool(study, f"tie-{n}", overlap=1, seed=11)
        members = [factories.make_user(f"tie{n}-{i}") for i in range(4)]
        for m in members:
            factories.add_member(pool, m)
        pool_assign_items(pool=pool)
        winner = min(members, key=lambda u: order_key_for(seed=11, pool_id=pool.pk, annotator_id=u.pk, item_id=item.pk))
        assert list(Assignment.objects.filter(pool=pool).values_list("annotator_id", flat=True)) == [winner.pk]
