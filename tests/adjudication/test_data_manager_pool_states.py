"""The data manager's status-in-a-pool filters ask the (pool, item, status) index per item (issue W, scale): the
items they match are exactly those of the grouped query they replaced, and of the rule read from the assignments
one by one, on every combination of filters, on a hand-built study with work done, open, skipped, reassigned
(withdrawn) and removed in several pools."""

from __future__ import annotations

import importlib
import itertools

import pytest
from django.db import connection
from django.db.models import Count, Exists, F, OuterRef, Q

from adjudication import data_manager as dm
from adjudication.models import AdjudicationCase, CaseStatus, GoldLabel, GoldSource
from annotation import labels
from annotation.models import Assignment, AssignmentStatus, Item, PoolItemExclusion
from scoring.models import Score, ScoreRun
from tests import factories

pytestmark = pytest.mark.django_db

S = AssignmentStatus


def _old_filtered_items(study, f: dm.Filters):
    """``filtered_items`` as it was before (the grouped "done"), kept here as the reference."""
    items = dm.filtered_items(study, dm.Filters(**{**f.__dict__, "pool_state": ""}))
    if f.pool is None or not f.pool_state:
        return items
    in_pool = Assignment.objects.filter(pool=f.pool, item=OuterRef("pk"))
    if f.pool_state == "not_assigned":
        return items.filter(~Exists(in_pool.exclude(status=S.WITHDRAWN)))
    if f.pool_state == "open":
        return items.filter(Exists(in_pool.filter(status__in=dm.OPEN)))
    if f.pool_state == "done":
        done = (
            Assignment.objects.filter(pool=f.pool).exclude(status=S.WITHDRAWN).values("item_id")
            .annotate(n=Count("id"), n_done=Count("id", filter=Q(status=S.SUBMITTED)))
            .filter(n=F("n_done")).values("item_id")
        )
        return items.filter(pk__in=done)
    if f.pool_state == "withdrawn":
        return items.filter(Exists(in_pool.filter(status=S.WITHDRAWN)))
    return items.filter(Exists(in_pool.filter(status=S.SKIPPED)))


def _by_rule(study, pool, state) -> set[str]:
    """The status in a pool read from the assignments one by one, as the page's column words it."""
    out = set()
    for item in Item.objects.filter(study=study):
        statuses = list(Assignment.objects.filter(pool=pool, item=item).values_list("status", flat=True))
        live = [s for s in statuses if s != S.WITHDRAWN]
        match = {
            "not_assigned": not live,
            "open": any(s in dm.OPEN for s in live),
            "done": bool(live) and all(s == S.SUBMITTED for s in live),
            "skipped": S.SKIPPED in live,
            "withdrawn": S.WITHDRAWN in statuses,
        }[state]
        if match:
            out.add(item.external_id)
    return out


@pytest.fixture
def built(study, researcher):
    study.independent_pools = False
    study.save()
    q = factories.make_question(study, "pf")
    a = factories.make_pool(study, "A", questions=[q], overlap=2)
    b = factories.make_pool(study, "B", questions=[q], overlap=1)
    c = factories.make_pool(study, "C", questions=[q], overlap=1)  # no work at all
    kim, lee, mo, ny = (factories.make_user(n) for n in ("kim", "lee", "mo", "ny"))
    for i, user in enumerate((kim, lee, mo, ny)):
        factories.add_member(a, user, f"A{i}")
        factories.add_member(b, user, f"B{i}")
    items = {
        key: factories.make_item(study, key, question=f"{'Warfarin' if n % 2 else 'Dog bite'} question {key}?",
                                 metadata={"topic": "drugs" if n % 3 else "wounds"})
        for n, key in enumerate(["done2", "half", "subskip", "skip", "open", "reass", "reass-done", "removed",
                                 "withdrawn-only", "none", "b-only", "mixed"])
    }
    it = items
    make = factories.make_assignment
    make(a, it["done2"], kim, status=S.SUBMITTED)
    make(a, it["done2"], lee, status=S.SUBMITTED)
    make(a, it["half"], kim, status=S.SUBMITTED)
    make(a, it["half"], lee, status=S.STARTED)
    make(a, it["subskip"], kim, status=S.SUBMITTED)
    make(a, it["subskip"], lee, status=S.SKIPPED, skip_reason="unsure")
    make(a, it["skip"], mo, status=S.SKIPPED, skip_reason="unsure")
    make(a, it["open"], mo, status=S.ASSIGNED)
    make(b, it["open"], kim, status=S.SUBMITTED)
    make(a, it["reass"], kim, status=S.STARTED)
    make(a, it["reass-done"], kim, status=S.STARTED)
    make(a, it["removed"], kim, status=S.STARTED)
    make(a, it["removed"], lee, status=S.SUBMITTED)
    make(a, it["withdrawn-only"], ny, status=S.WITHDRAWN)
    make(b, it["b-only"], ny, status=S.SKIPPED, skip_reason="unsure")
    make(a, it["mixed"], ny, status=S.SUBMITTED)
    make(b, it["mixed"], mo, status=S.STARTED)
    make(b, it["half"], mo, status=S.SUBMITTED)
    # kim answered "reass", "reass-done" and "removed" before a researcher moved them away: withdrawn, not deleted
    for key in ("reass", "reass-done", "removed"):
        asg = Assignment.objects.get(pool=a, item=it[key], annotator=kim)
        labels.label_save(assignment=asg, question=q, unit_key="item", value="yes", base_version=0, actor=kim)
    filters = dm.Filters.parse(study, {})
    request = {"action": "reassign", "target_pool": str(a.pk), "from_user": str(kim.pk), "to_user": str(mo.pk)}
    plan = dm.bulk_plan(study=study, data=request, chosen=[str(it["reass"].pk), str(it["reass-done"].pk)],
                        all_matching=False, filters=filters)
    dm.bulk_apply(study=study, plan=plan, actor=researcher, filters=filters)
    Assignment.objects.filter(pool=a, item=it["reass-done"], annotator=mo).update(status=S.SUBMITTED)
    plan = dm.bulk_plan(study=study, data={"action": "remove", "target_pool": str(a.pk)},
                        chosen=[str(it["removed"].pk)], all_matching=False, filters=filters)
    dm.bulk_apply(study=study, plan=plan, actor=researcher, filters=filters)
    assert PoolItemExclusion.objects.filter(pool=a, item=it["removed"]).exists()
    assert set(Assignment.objects.filter(pool=a, item__in=[it["reass"], it["reass-done"], it["removed"]])
               .values_list("item__external_id", "status")) == {
        ("reass", S.WITHDRAWN), ("reass", S.ASSIGNED), ("reass-done", S.WITHDRAWN), ("reass-done", S.SUBMITTED),
        ("removed", S.WITHDRAWN), ("removed", S.SUBMITTED),
    }
    # cases, gold and scores, so that the status filters are combined with every other one
    AdjudicationCase.objects.create(pool=a, item=it["done2"], question=q, unit_key="item", status=CaseStatus.OPEN)
    AdjudicationCase.objects.create(pool=b, item=it["mixed"], question=q, unit_key="item",
                                    status=CaseStatus.RESOLVED)
    for pool, key in ((a, "subskip"), (b, "done2"), (a, "reass-done")):
        GoldLabel.objects.create(pool=pool, item=it[key], question=q, unit_key="item", value="yes",
                                 source=GoldSource.ADJUDICATED, version=1, is_current=True)
    run = ScoreRun.objects.create(study=study, metric="cf", metric_version="2", backend="lexical")
    for n, item in enumerate(it.values()):
        Score.objects.create(run=run, item=item, unit_key="item", value=n / 12, state="ok")
    return {"study": study, "pools": (a, b, c), "run": run}


def test_every_filter_combination_matches_the_items_it_matched_before(built):
    study, pools, run = built["study"], built["pools"], built["run"]
    compared = 0
    for pool, state, disagreement, gold, q, score, meta in itertools.product(
        [None, *pools], ["", *dm.POOL_STATES], ["", "open", "any", "none"], ["", "yes", "no"],
        ["", "warfarin"], [{}, {"run": str(run.pk), "score_min": "0.3", "score_max": "0.8"}],
        [{}, {"meta_key": "topic", "meta_value": "drugs"}],
    ):
        if state and pool is None:
            continue
        data = {"pool": str(pool.pk) if pool else "", "pool_state": state, "disagreement": disagreement,
                "gold": gold, "q": q, **score, **meta}
        f = dm.Filters.parse(study, data)
        new = list(dm.filtered_items(study, f).values_list("external_id", flat=True))
        old = list(_old_filtered_items(study, f).values_list("external_id", flat=True))
        assert new == old, data
        compared += 1
    assert compared == 4 * 3 * 2 * 2 * 2 * (1 + 3 * len(("", *dm.POOL_STATES)))


def test_each_status_in_a_pool_is_the_rule_read_from_the_assignments(built):
    study, pools = built["study"], built["pools"]
    expected = {
        ("A", "done"): {"done2", "reass-done", "removed", "mixed"},
        ("A", "open"): {"half", "open", "reass"},
        ("A", "skipped"): {"subskip", "skip"},
        ("A", "withdrawn"): {"reass", "reass-done", "removed", "withdrawn-only"},
        ("A", "not_assigned"): {"withdrawn-only", "none", "b-only"},
        ("B", "done"): {"open", "half"},
        ("B", "open"): {"mixed"},
        ("B", "skipped"): {"b-only"},
        ("B", "not_assigned"): {"done2", "subskip", "skip", "reass", "reass-done", "removed", "withdrawn-only",
                                "none"},
        ("C", "not_assigned"): {it.external_id for it in Item.objects.filter(study=study)},
    }
    for pool in pools:
        for state in dm.POOL_STATES:
            got = set(dm.filtered_items(study, dm.Filters.parse(study, {"pool": str(pool.pk), "pool_state": state}))
                      .values_list("external_id", flat=True))
            assert got == _by_rule(study, pool, state) == expected.get((pool.name, state), set()), (pool.name, state)


MIGRATION = importlib.import_module("annotation.migrations.0017_assignment_unfinished_index")


def test_the_unfinished_index_is_built_outside_a_transaction_so_that_it_can_be_built_concurrently():
    assert MIGRATION.Migration.atomic is False
    # the filters name exactly the index's statuses (else the planner cannot prove its condition holds)
    assert MIGRATION.COLUMNS.endswith(f"WHERE status IN ({', '.join(repr(str(s)) for s in dm.UNFINISHED)})")


def test_the_unfinished_index_exists_and_is_valid():
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s",
                [MIGRATION.INDEX],
            )
            assert cursor.fetchall() == [(True,)]
        else:
            cursor.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = %s", [MIGRATION.INDEX])
            (sql,) = cursor.fetchone()
            assert "WHERE status IN ('assigned', 'started', 'skipped')" in sql
