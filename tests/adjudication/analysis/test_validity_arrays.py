"""The validity report holds its units as arrays (a metric's values, the human target, their intersection), never a
Python object per unit, and must say what it said when it held dictionaries of (item id, unit key) tuples. The
dictionary code as it was is kept below and compared with: the units both have, in the same order (item id, then
unit key as text: "s:10" before "s:2"), the human targets of every kind, and a score run's values and the scores
it leaves out."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.utils import timezone

from adjudication.analysis import loading
from adjudication.analysis.loading import (
    MetricValues,
    UnitList,
    common_positions,
    common_units,
    human_target,
    human_target_arrays,
    metric_source_get,
    ratings_load,
    score_run_values,
    sorted_units,
)
from adjudication.models import GoldLabel, GoldSource
from adjudication.stats import targets
from annotation.models import AssignmentStatus, ControlItem, Label
from concord.errors import NotFound, ValidationFailed
from scoring.models import RunStatus, Score, ScoreRun, ScoreState
from tests import factories

KEYS = ["item", "s:0", "s:10", "s:2", "s:1", "c:3"]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# --- in memory: the intersection ------------------------------------------------------------------------------


def _random_units(rng: np.random.Generator, n: int, keys: list[str]) -> list[tuple[int, str]]:
    pairs = {(int(rng.integers(1, 40)), keys[int(rng.integers(len(keys)))]) for _ in range(n)}
    out = list(pairs)
    rng.shuffle(out)  # in no particular order: a list need not come sorted
    return out


def _unit_list(rng: np.random.Generator, pairs: list[tuple[int, str]]) -> UnitList:
    """``pairs`` as a UnitList whose keys are in no particular order either (a UnitList does not require them
    sorted; the intersection must not rely on it)."""
    keys = sorted({k for _, k in pairs})
    rng.shuffle(keys)
    return UnitList(np.array([i for i, _ in pairs], dtype=np.int64), np.array([keys.index(k) for _, k in pairs]), keys)


@pytest.mark.parametrize("seed", range(6))
def test_the_units_in_common_are_the_sorted_intersection_of_the_tuples(seed):
    rng = np.random.default_rng(seed)
    for n_lists in (1, 2, 3):
        lists = [
            _random_units(rng, int(rng.integers(0, 120)), [str(k) for k in rng.choice(KEYS, 3, replace=False)])
            for _ in range(n_lists)
        ]
        if seed % 2:
            lists = [sorted(pairs) for pairs in lists]  # sorted, as MetricValues and the targets hold them
        expected = sorted(set.intersection(*(set(pairs) for pairs in lists)))
        for make in (UnitList.from_pairs, lambda pairs: _unit_list(rng, pairs)):
            units, positions = common_units(*(make(pairs) for pairs in lists))
            assert list(units) == expected
            for pairs, at in zip(lists, positions, strict=True):
                assert [pairs[i] for i in at.tolist()] == expected


def test_string_order_decides_between_unit_keys():
    a = UnitList.from_pairs([(1, "s:2"), (1, "s:10"), (2, "item"), (1, "s:1")])
    b = UnitList.from_pairs([(1, "s:10"), (1, "s:2"), (1, "s:1"), (3, "item")])
    units, (at_a, at_b) = common_units(a, b)
    assert list(units) == [(1, "s:1"), (1, "s:10"), (1, "s:2")]
    assert at_a.tolist() == [3, 1, 0] and at_b.tolist() == [2, 0, 1]


@pytest.mark.parametrize("sort", [True, False])
def test_item_scope_units_in_common_are_the_items_themselves(sort):
    # One key in every list (item-scope units): the integers are the item ids; the units come back with that key.
    rng = np.random.default_rng(3)
    lists = [_random_units(rng, 60, ["item"]) for _ in range(3)]
    if sort:
        lists = [sorted(pairs) for pairs in lists]
    expected = sorted(set.intersection(*(set(pairs) for pairs in lists)))
    units, positions = common_units(*(UnitList.from_pairs(pairs) for pairs in lists))
    assert list(units) == expected and units.keys == ["item"]
    for pairs, at in zip(lists, positions, strict=True):
        assert [pairs[i] for i in at.tolist()] == expected
    alone = common_positions(*(UnitList.from_pairs(pairs) for pairs in lists))
    assert [a.tolist() for a in alone] == [a.tolist() for a in positions]


def test_units_in_common_with_a_list_that_has_none():
    a = UnitList.from_pairs([(1, "item"), (2, "item")])
    units, (at_a, at_b) = common_units(a, UnitList.from_pairs([]))
    assert list(units) == [] and at_a.tolist() == [] and at_b.tolist() == []
    units, (at_a, at_b) = common_units(a, UnitList.from_pairs([(3, "item")]))
    assert list(units) == [] and at_a.tolist() == [] and at_b.tolist() == []


def test_units_are_in_order_only_when_strictly_ascending_by_item_then_key():
    order = loading._in_unit_order
    assert order(np.array([1, 1, 2, 5]), np.array([0, 1, 0, 0]))
    assert not order(np.array([1, 1, 2]), np.array([1, 0, 0]))  # a key out of order within an item
    assert not order(np.array([1, 1]), np.array([0, 0]))  # a unit twice
    assert not order(np.array([2, 1]), np.array([0, 1]))  # items out of order
    assert order(np.array([], dtype=np.int64), np.array([], dtype=np.int32)) and order(np.array([4]), np.array([0]))


def test_units_are_checked_for_order_across_the_chunks(monkeypatch):
    monkeypatch.setattr(loading, "_ORDER_CHUNK", 3)
    items = np.arange(10)
    codes = np.zeros(10, dtype=np.int32)
    assert loading._in_unit_order(items, codes)
    for at in range(1, 10):  # a unit out of place anywhere, a chunk's edge included
        swapped = items.copy()
        swapped[at - 1], swapped[at] = swapped[at], swapped[at - 1]
        assert not loading._in_unit_order(swapped, codes), at


@pytest.mark.parametrize("seed", range(4))
def test_sorted_units_sort_as_the_tuples_do(seed):
    rng = np.random.default_rng(seed)
    keys = list(KEYS)
    rng.shuffle(keys)  # codes into keys in any order
    pairs = _random_units(rng, 80, keys)
    codes = np.array([keys.index(k) for _, k in pairs])
    units, order = sorted_units(np.array([i for i, _ in pairs]), codes, keys)
    assert list(units) == sorted(pairs)
    assert [pairs[i] for i in order.tolist()] == sorted(pairs)
    assert units.keys == sorted(keys)


def test_metric_values_from_a_dictionary_are_sorted_and_give_it_back():
    values = {(3, "s:2"): 0.5, (1, "s:10"): 0.25, (1, "s:2"): -1.0, (2, "s:0"): 7.0}
    metric = MetricValues.from_dict(values, 2, "note")
    assert list(metric.units) == sorted(values)
    assert metric.values.tolist() == [values[u] for u in sorted(values)]
    assert metric.as_dict() == values and len(metric) == 4 and metric.n_not_ok == 2
    empty = MetricValues.from_dict({})
    assert len(empty) == 0 and empty.as_dict() == {}


# --- the dictionary code as it was (64562b6) ------------------------------------------------------------------


def _old_human_target(
    *, pool: Any, question: Any, target: str, ratings: Any, include_controls: bool = False
) -> tuple[dict[tuple[int, str], float], dict[str, int]]:
    excluded: dict[str, int] = {}
    if target == "gold":
        rows = (
            GoldLabel.objects.filter(pool=pool, question=question, is_current=True)
            .exclude(source=GoldSource.UNRESOLVED)
            .values_list("item_id", "unit_key", "value")
        )
        if not include_controls:
            rows = rows.exclude(item_id__in=ControlItem.objects.filter(item__study_id=pool.study_id).values("item_id"))
        out: dict[tuple[int, str], float] = {}
        off = 0
        for item_id, key, value in rows:
            pos = targets.scale_position(value, question.option_values)
            if pos is None:
                off += 1
            else:
                out[(item_id, key)] = pos
        excluded["gold_off_scale"] = off
        return out, excluded
    if target == "majority":
        if ratings.scale is None:
            raise ValidationFailed("a majority needs a categorical question")
        kept, winners, excluded["majority_ties"] = targets.majority_from_entries(ratings.entries, len(ratings.scale))
        return {ratings.units[i]: float(w) for i, w in zip(kept, winners, strict=True)}, excluded
    if target.startswith("rater:"):
        name = target.split(":", 1)[1]
        rated, values = (a.tolist() for a in ratings.rater_entries(name))
        return {ratings.units[i]: float(v) for i, v in zip(rated, values, strict=True)}, excluded
    raise ValidationFailed("target must be gold, majority or rater:<pseudonym>")


def _old_score_values(run_id: int) -> tuple[dict[tuple[int, str], float], int]:
    values: dict[tuple[int, str], float] = {}
    not_ok = 0
    for item_id, key, value, state in Score.objects.filter(run_id=run_id).values_list(
        "item_id", "unit_key", "value", "state"
    ):
        if state == ScoreState.OK and value is not None:
            values[(item_id, key)] = float(value)
        else:
            not_ok += 1
    return values, not_ok


# --- from the database ------------------------------------------------------------------------------------------

SCALE = ["none", "slight", "moderate", "severe"]
SENTENCES = ["s:0", "s:1", "s:2", "s:10", "s:11"]
STATES = [ScoreState.OK, ScoreState.OK, ScoreState.OK, ScoreState.FAILED, ScoreState.UNDETERMINED]


def _label(assignment, question, key, value):
    return Label(
        assignment=assignment,
        question=question,
        unit_key=key,
        value=value,
        version=1,
        updated_by=assignment.annotator,
        updated_at=timezone.now(),
    )


@pytest.fixture
def sentence_study(study, researcher):
    """A sentence-scope ordinal question on 14 items of 5 sentences (keys s:0, s:1, s:2, s:10, s:11), rated by 1 to 4
    of 5 annotators (ties, an answer off the scale, a cleared one), gold on most units (some off the scale, one
    unresolved, one superseded), two items of known answer, and a score run in every state."""
    question = factories.make_question(
        study, "harm", kind="ordinal", scope="sentence",
        options=[{"value": v, "label": v, "key": str(i)} for i, v in enumerate(SCALE, 1)],
    )
    pool = factories.make_pool(study, "raters", questions=[question], overlap=3)
    users = [factories.make_user(f"sent{i}") for i in range(5)]
    for i, user in enumerate(users):
        factories.add_member(pool, user, pseudonym=f"R{i + 1}")
    rng = np.random.default_rng(3)
    items = [factories.make_item(study, f"x{i:02d}") for i in range(14)]
    ControlItem.objects.create(item=items[5], answers={})
    ControlItem.objects.create(item=items[9], answers={})
    labels, gold = [], []
    for i, item in enumerate(items):
        who = rng.choice(5, size=int(rng.integers(1, 5)), replace=False)
        for n, r in enumerate(who):
            a = factories.make_assignment(
                pool, item, users[r], status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now()
            )
            for key in SENTENCES:
                value: Any = SCALE[int(rng.integers(len(SCALE)))]
                if i == 2 and n == 0 and key == "s:10":
                    value = "off the scale"
                if i == 3 and n == 0 and key == "s:2":
                    value = None
                labels.append(_label(a, question, key, value))
        for s, key in enumerate(SENTENCES):
            if (i + s) % 4 == 0:
                continue
            value = SCALE[(i + s) % len(SCALE)] if (i * 7 + s) % 11 else "not an option"
            source = GoldSource.UNRESOLVED if (i, s) == (1, 1) else GoldSource.ADJUDICATED
            if (i, s) == (6, 2):  # a superseded version, and the current one
                gold.append(GoldLabel(pool=pool, item=item, unit_key=key, question=question, value="severe",
                                      source=source, version=1, is_current=False))
                gold.append(GoldLabel(pool=pool, item=item, unit_key=key, question=question, value="none",
                                      source=source, version=2))
                continue
            gold.append(GoldLabel(pool=pool, item=item, unit_key=key, question=question, value=value, source=source))
    Label.objects.bulk_create(labels)
    GoldLabel.objects.bulk_create(gold)
    run = ScoreRun.objects.create(
        study=study, metric="cf", metric_version="1", backend="lexical", status=RunStatus.DONE, created_by=researcher
    )
    scores = []
    for i, item in enumerate(items):
        for s, key in enumerate(SENTENCES):
            state = STATES[(i + s) % 5]
            value = None if state != ScoreState.OK and (i % 2) else float(rng.normal())
            if (i, s) != (0, 0):  # a unit the run did not score
                scores.append(Score(run=run, item=item, unit_key=key, value=value, state=state))
    Score.objects.bulk_create(scores)
    return {"study": study, "pool": pool, "question": question, "run": run}


@pytest.mark.parametrize("include_controls", [False, True])
@pytest.mark.parametrize("target", ["gold", "majority", "rater:R1", "rater:R4"])
def test_the_target_arrays_are_the_dictionary_target(sentence_study, target, include_controls):
    pool, question = sentence_study["pool"], sentence_study["question"]
    ratings = ratings_load(pool=pool, question=question, include_controls=include_controls)
    kw = {"pool": pool, "question": question, "target": target, "ratings": ratings}
    kw["include_controls"] = include_controls
    old, old_excluded = _old_human_target(**kw)
    assert len(old) > 10 and len({k for _, k in old}) > 1
    units, values, excluded = human_target_arrays(**kw)
    assert list(units) == sorted(old)
    assert values.dtype == np.float64 and values.tolist() == [old[u] for u in sorted(old)]
    assert excluded == old_excluded
    now, now_excluded = human_target(**kw)
    assert list(now.items()) == list(old.items())  # the same dictionary, in the same order
    assert now_excluded == old_excluded
    if target == "gold":
        assert excluded["gold_off_scale"] > 0
    if target == "majority":
        assert excluded["majority_ties"] > 0


def test_gold_arrays_are_sorted_whatever_order_the_database_gives(sentence_study, monkeypatch):
    """The database gives gold by item and unit key in its collation's order (on SQLite, the sorted one already);
    the arrays are sorted as the tuples are whatever that order is: here, the rows reversed."""
    pool, question = sentence_study["pool"], sentence_study["question"]
    ratings = ratings_load(pool=pool, question=question)
    real = loading._gold_rows

    def reversed_rows(**kwargs: Any) -> Any:
        rows = real(**kwargs)
        return loading._GoldRows(
            rows.items[::-1], rows.key_codes[::-1], rows.keys, rows.values[::-1], rows.n_off_scale
        )

    old, _ = _old_human_target(pool=pool, question=question, target="gold", ratings=ratings)
    monkeypatch.setattr(loading, "_gold_rows", reversed_rows)
    units, values, _ = human_target_arrays(pool=pool, question=question, target="gold", ratings=ratings)
    assert list(units) == sorted(old) and values.tolist() == [old[u] for u in sorted(old)]


def test_a_target_that_is_none_is_refused_alike(sentence_study):
    pool, question = sentence_study["pool"], sentence_study["question"]
    ratings = ratings_load(pool=pool, question=question)
    for target, error in (("rater:nobody", NotFound), ("best", ValidationFailed)):
        for function in (human_target_arrays, human_target):
            with pytest.raises(error):
                function(pool=pool, question=question, target=target, ratings=ratings)


def test_a_score_runs_values_are_the_dictionarys(sentence_study, monkeypatch):
    run = sentence_study["run"]
    old, old_not_ok = _old_score_values(run.pk)
    for chunk in (3, 1000):  # a chunk boundary inside an item, and the whole run in one chunk
        monkeypatch.setattr(loading, "_SCORE_CHUNK", chunk)
        metric = metric_source_get(study=sentence_study["study"], key=f"run:{run.pk}").load()
        assert list(metric.units) == sorted(old)
        assert metric.values.dtype == np.float64 and metric.values.tolist() == [old[u] for u in sorted(old)]
        assert metric.as_dict() == old
        assert metric.n_not_ok == old_not_ok > 0 and len(metric) == len(old)
    assert score_run_values(run.pk + 1000).as_dict() == {}  # no such run: nothing


def test_a_score_runs_values_on_ranges_of_items_are_the_whole_reads_pieces(sentence_study):
    # The validity report reads a run a range of item ids at a time: the ranges' values, one after the other, are
    # the whole read's, and the run's sizes are counted without reading it.
    run = sentence_study["run"]
    whole = score_run_values(run.pk)
    source = metric_source_get(study=sentence_study["study"], key=f"run:{run.pk}")
    low, high = int(whole.units.items.min()), int(whole.units.items.max()) + 1
    for step in (1, 2, 1000):
        pieces = [source.load_items(start, start + step) for start in range(low, high, step)]
        assert [u for piece in pieces for u in piece.units] == list(whole.units)
        assert [v for piece in pieces for v in piece.values.tolist()] == whole.values.tolist()
        sliced = [loading.metric_values_in(whole, start, start + step) for start in range(low, high, step)]
        assert [(list(a.units), a.values.tolist()) for a in sliced] == [
            (list(b.units), b.values.tolist()) for b in pieces
        ]
    assert source.sizes() == (len(whole), whole.n_not_ok) and whole.n_not_ok > 0
    assert len(source.load_items(high, high + 10)) == 0


def test_a_score_run_read_is_not_fooled_by_scores_written_after_the_count(sentence_study, monkeypatch):
    """A run still being scored: rows beyond the count the arrays were sized by are read all the same."""
    run = sentence_study["run"]
    old, old_not_ok = _old_score_values(run.pk)
    real = loading.Score.objects.filter

    class Undercounted:
        def __init__(self, qs):
            self.qs = qs

        def count(self) -> int:
            return 2

        def __getattr__(self, name):
            return getattr(self.qs, name)

    calls = iter([True])
    monkeypatch.setattr(
        loading.Score.objects, "filter", lambda **kw: Undercounted(real(**kw)) if next(calls, False) else real(**kw)
    )
    monkeypatch.setattr(loading, "_SCORE_CHUNK", 4)
    metric = score_run_values(run.pk)
    assert next(calls, None) is None  # the count was the one undercounted
    assert metric.as_dict() == old and metric.n_not_ok == old_not_ok
