"""The validity summary from the rows of a table of distinct (score, label, target) triples (validity_table's
ScoreTable, validity_stream's validity_summary_rows) must be validity.validity_summary's: bit for bit up to
MAX_UNITS_FOR_PACKAGE units (validity.py's functions on the expanded table), to rounding past it (passes over the
rows, validity_stream's own tests check each statistic), with validity_summary's bootstrap entry."""

from __future__ import annotations

import itertools
import json
import tracemalloc
from typing import Any

import numpy as np
import pytest
from scipy import stats

from adjudication.stats import agreement as ag
from adjudication.stats import validity as va
from adjudication.stats import validity_stream as vs
from adjudication.stats import validity_table as vt
from tests.adjudication.close import assert_close as _assert_close
from tests.adjudication.stats.validity_data import binary, ordinal

# --- data ---------------------------------------------------------------------------------------------------------


def _heavy_ties(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A handful of distinct scores and targets, so that nearly every pair of units is tied in one or both."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 3, n).astype(float)
    s = np.clip(t + rng.integers(-1, 2, n), 0, 3).astype(float)
    return s, t >= 1, t


DATASETS = {
    "ordinal, two decimals": ordinal(1, 600, decimals=2),
    "ordinal, continuous": ordinal(2, 500, decimals=None),
    "ordinal, one decimal, small": ordinal(3, 40, decimals=1),
    "binary, continuous": binary(4, 700),
    "heavy ties": _heavy_ties(5, 900),
}


def _summary(s: np.ndarray, y: np.ndarray, t: np.ndarray, ordinal: bool, **kw: Any) -> dict[str, Any]:
    return va.validity_summary(s, y, ordinal_target=t if ordinal else None, **kw)


def _rows_summary(table: vt.ScoreTable, **kw: Any) -> dict[str, Any]:
    """The summary from the table's rows read back in pieces of 7 (the rows of a score split between pieces)."""
    return vs.validity_summary_rows(vs.TableRows(table, 7), **kw)


def _table_summary(s: np.ndarray, y: np.ndarray, t: np.ndarray, ordinal: bool, **kw: Any) -> dict[str, Any]:
    return _rows_summary(vt.ScoreTable.of(s, y, t), ordinal=ordinal, **kw)


# --- the table ----------------------------------------------------------------------------------------------------


def _sorted_units(s: np.ndarray, y: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The units in the table's order, -0.0 written 0.0 as the table holds it."""
    order = np.lexsort((t, y, s))
    return s[order] + 0.0, y[order].astype(float), t[order] + 0.0


@pytest.mark.parametrize("name", list(DATASETS))
def test_a_table_expands_to_its_units_in_sorted_order(name):
    s, y, t = DATASETS[name]
    table = vt.ScoreTable.of(s, y, t)
    assert table.n_units == s.size
    assert table.scores.dtype == table.targets.dtype == np.float64
    assert table.labels.dtype == bool and table.weights.dtype == np.int64
    assert (table.weights > 0).all()
    order = np.lexsort((table.targets, table.labels, table.scores))
    assert (order == np.arange(order.size)).all()
    rows = set(zip(table.scores.tolist(), table.labels.tolist(), table.targets.tolist(), strict=True))
    assert len(rows) == table.scores.size
    for got, expected in zip(table.expand(), _sorted_units(s, y, t), strict=True):
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, expected)


def test_the_targets_default_to_the_labels():
    s, y, _ = binary(0, 50)
    table = vt.ScoreTable.of(s, y)
    np.testing.assert_array_equal(table.targets, table.labels.astype(float))
    table_01 = vt.ScoreTable.of(s, y.astype(int))
    for a, b in zip(table.expand(), table_01.expand(), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", list(DATASETS))
def test_merged_tables_of_chunks_are_the_table_of_all_units(name):
    s, y, t = DATASETS[name]
    whole = vt.ScoreTable.of(s, y, t)
    cuts = [0, 1, 7, s.size // 3, s.size // 3, s.size]
    merged = vt.ScoreTable.merged([vt.ScoreTable.of(s[a:b], y[a:b], t[a:b]) for a, b in itertools.pairwise(cuts)])
    for field in ("scores", "labels", "targets", "weights"):
        got, expected = getattr(merged, field), getattr(whole, field)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    again = vt.ScoreTable.merged([whole, whole])
    np.testing.assert_array_equal(again.weights, 2 * whole.weights)
    np.testing.assert_array_equal(again.scores, whole.scores)


def test_one_unit_and_no_unit():
    one = vt.ScoreTable.of(np.array([0.5]), np.array([True]), np.array([3.0]))
    assert one.n_units == 1
    assert [a.tolist() for a in one.expand()] == [[0.5], [1.0], [3.0]]
    for empty in (vt.ScoreTable.empty(), vt.ScoreTable.of(np.zeros(0), np.zeros(0, bool)), vt.ScoreTable.merged([])):
        assert empty.n_units == 0
        assert [a.size for a in empty.expand()] == [0, 0, 0]
    merged = vt.ScoreTable.merged([vt.ScoreTable.empty(), one, vt.ScoreTable.empty()])
    assert merged.n_units == 1 and merged.scores.tolist() == [0.5]


def test_minus_zero_and_zero_are_one_row():
    table = vt.ScoreTable.of(np.array([-0.0, 0.0, 0.0]), np.array([True, True, True]), np.array([-0.0, 0.0, 1.0]))
    assert table.weights.tolist() == [2, 1]
    assert [str(v) for v in table.scores] == ["0.0", "0.0"]
    assert str(table.targets[0]) == "0.0"


@pytest.mark.parametrize(
    ("scores", "labels", "targets"),
    [
        ([0.1, np.nan], [1, 0], None),
        ([0.1, np.inf], [1, 0], None),
        ([0.1, 0.2], [1, np.nan], None),
        ([0.1, 0.2], [1, 0], [2.0, np.nan]),
        ([0.1, 0.2], [1, 2], None),
        ([0.1, 0.2], [1, 0, 1], None),
        ([0.1, 0.2], [1, 0], [1.0]),
    ],
)
def test_units_without_a_score_label_or_target_are_refused(scores, labels, targets):
    with pytest.raises(ValueError):
        vt.ScoreTable.of(np.array(scores), np.array(labels), None if targets is None else np.array(targets))


# --- up to MAX_UNITS_FOR_PACKAGE: validity.py's functions, bit for bit ----------------------------------------------


@pytest.mark.parametrize("ordinal", [False, True])
@pytest.mark.parametrize("name", list(DATASETS))
def test_below_the_limit_the_summary_is_validity_summarys_bit_for_bit(name, ordinal):
    s, y, t = DATASETS[name]
    got = _table_summary(s, y, t, ordinal)
    assert json.dumps(got) == json.dumps(_summary(*_sorted_units(s, y, t), ordinal))
    # The units in their own order: the same to the last bits of sums taken in another order.
    _assert_close(got, _summary(s, y, t, ordinal), rel=1e-12)


def test_the_units_dropped_by_the_caller_are_counted_where_validity_summary_counts_them():
    s, y, t = DATASETS["ordinal, two decimals"]
    sorted_s, sorted_y, _ = _sorted_units(s, y, t)
    expected = va.validity_summary(np.r_[sorted_s, np.nan, np.nan, 0.3], np.r_[sorted_y, 1.0, 0.0, np.nan])
    assert expected["n_excluded_units"] == 3
    got = _rows_summary(vt.ScoreTable.of(s, y), n_excluded=3)
    assert json.dumps(got) == json.dumps(expected)


UNDEFINED = {
    "one class": (np.array([0.1, 0.4, 0.2, 0.9, 0.5, 0.3]), np.ones(6, bool), np.arange(6.0)),
    "one negative unit (defined)": (
        np.array([0.1, 0.4, 0.2, 0.9, 0.5, 0.3]),
        np.r_[np.ones(5, bool), False],
        np.arange(6.0),
    ),
    "no score variance": (np.full(7, 0.5), np.r_[np.ones(3, bool), np.zeros(4, bool)], np.arange(7.0)),
    "no target variance": (np.arange(7.0), np.r_[np.ones(3, bool), np.zeros(4, bool)], np.full(7, 2.0)),
    "three units": (np.array([0.1, 0.4, 0.2]), np.array([True, False, True]), np.array([2.0, 0.0, 3.0])),
    "four units": (np.array([0.1, 0.4, 0.2, 0.3]), np.array([True, False, True, False]), np.array([2.0, 0, 3, 1])),
    "one unit": (np.array([0.1]), np.array([True]), np.array([2.0])),
    "no unit": (np.zeros(0), np.zeros(0, bool), np.zeros(0)),
}


@pytest.mark.parametrize("limit", [200_000, 0])
@pytest.mark.parametrize("ordinal", [False, True])
@pytest.mark.parametrize("name", list(UNDEFINED))
def test_undefined_cases_are_validity_summarys(name, ordinal, limit, monkeypatch):
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", limit)
    s, y, t = UNDEFINED[name]
    got = _table_summary(s, y, t, ordinal, n_excluded=2)
    expected = _summary(*[np.r_[a, np.nan, np.nan] for a in _sorted_units(s, y, t)], ordinal)
    assert expected["n_excluded_units"] == 2
    if limit:
        assert json.dumps(got) == json.dumps(expected)
    else:
        _assert_close(got, expected, rel=1e-12)
    reasons = [got[k].get("reason") for k in ("auc", "pearson", "spearman", "kendall")]
    assert reasons == [expected[k].get("reason") for k in ("auc", "pearson", "spearman", "kendall")]
    # The targets are the labels unless ordinal: then they vary.
    if "(defined)" not in name and (ordinal or name != "no target variance"):
        assert any(reasons)


# --- past MAX_UNITS_FOR_PACKAGE: passes over the rows ----------------------------------------------------------------


@pytest.mark.parametrize("ordinal", [False, True])
@pytest.mark.parametrize("name", list(DATASETS))
def test_past_the_limit_every_statistic_is_validity_summarys_to_rounding(name, ordinal, monkeypatch):
    s, y, t = DATASETS[name]
    expected = _summary(s, y, t, ordinal)
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", 10)
    got = _table_summary(s, y, t, ordinal)
    _assert_close(got, expected, rel=1e-9)
    # Counts, the curve and the threshold are exact.
    for key in ("n", "n_pos", "n_neg", "youden", "at_youden_threshold", "roc"):
        assert got[key] == expected[key], key
    assert got["auc"]["value"] == expected["auc"]["value"]
    assert got["kendall"]["value"] == pytest.approx(expected["kendall"]["value"], rel=1e-14)


@pytest.mark.parametrize("ordinal", [False, True])
def test_past_the_limit_the_units_dropped_by_the_caller_are_counted(ordinal, monkeypatch):
    s, y, t = DATASETS["heavy ties"]
    expected = _summary(*[np.r_[a, np.nan] for a in (s, y, t)], ordinal)
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", 10)
    _assert_close(_table_summary(s, y, t, ordinal, n_excluded=1), expected, rel=1e-9)


def test_kendall_past_the_limit_without_ties_uses_scipys_exact_p_value(monkeypatch):
    rng = np.random.default_rng(8)
    s, t = rng.normal(size=25), rng.normal(size=25) + np.arange(25) / 10
    y = t > np.median(t)
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", 10)
    got = _table_summary(s, y, t, True)["kendall"]
    expected = stats.kendalltau(s, t)
    assert got["value"] == pytest.approx(float(expected.statistic), rel=1e-14)
    assert got["p_value"] == pytest.approx(float(expected.pvalue), rel=1e-12)


def test_kendall_past_the_limit_is_scipys_asymptotic_test_with_ties_in_both(monkeypatch):
    s, y, t = _heavy_ties(9, 4000)
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", 10)
    got = _table_summary(s, y, t, True)["kendall"]
    expected = stats.kendalltau(s, t, method="asymptotic")
    assert got["value"] == float(expected.statistic)
    assert got["p_value"] == pytest.approx(float(expected.pvalue), rel=1e-12)


@pytest.mark.parametrize("below", [1, 0, 200])
def test_past_the_limit_the_roc_curve_keeps_rocs_max_points_as_roc_points_does(below, monkeypatch):
    s, y, t = DATASETS["binary, continuous"]
    n_points = va.roc_points(s, y)["n_points"]
    monkeypatch.setattr(va, "ROC_MAX_POINTS", n_points - below)
    expected = _summary(s, y, t, False)["roc"]
    assert len(expected["fpr"]) == min(n_points, n_points - below)
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", 10)
    assert _table_summary(s, y, t, False)["roc"] == expected


@pytest.mark.parametrize("ordinal", [False, True])
def test_past_the_limit_no_function_of_validity_sees_the_units(ordinal, monkeypatch):
    s, y, t = DATASETS["heavy ties"]
    expected = _summary(s, y, t, ordinal, n_boot=60)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("validity.py's functions are for the package regime")

    for name in ("roc_auc", "pearson", "spearman", "kendall", "youden_threshold", "precision_recall_f1", "roc_points"):
        monkeypatch.setattr(va, name, refuse)
    monkeypatch.setattr(vt.ScoreTable, "_expanded", refuse)
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", s.size - 1)
    got = _table_summary(s, y, t, ordinal, n_boot=60)
    del got["auc"]["ci95_bootstrap"], expected["auc"]["ci95_bootstrap"]
    _assert_close(got, expected, rel=1e-9)


def test_at_the_limit_the_points_are_validity_pys(monkeypatch):
    s, y, t = DATASETS["heavy ties"]
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", s.size)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the passes over the rows are for past the limit")

    monkeypatch.setattr(vs, "stream_points", refuse)
    assert json.dumps(_table_summary(s, y, t, True)) == json.dumps(_summary(*_sorted_units(s, y, t), True))


def test_past_the_limit_deLong_se_with_a_single_unit_in_a_class(monkeypatch):
    rng = np.random.default_rng(4)
    s = np.round(rng.normal(size=30), 1)
    y = np.zeros(30, bool)
    y[3] = True
    expected = _summary(s, y, y.astype(float), False)["auc"]
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", 10)
    _assert_close(_table_summary(s, y, y.astype(float), False)["auc"], expected, rel=1e-12)


# --- the bootstrap ------------------------------------------------------------------------------------------------


def test_the_bootstrap_reports_progress_after_each_pass(monkeypatch):
    s, y, t = DATASETS["heavy ties"]
    monkeypatch.setattr(vs, "BOOT_PASS_REPLICATES", 50)
    calls: list[tuple[int, int]] = []
    _table_summary(s, y, t, False, n_boot=120, seed=1, progress=lambda d, n: calls.append((d, n)))
    assert calls == [(50, 120), (100, 120), (120, 120)]


@pytest.mark.parametrize("limit", [200_000, 10])
def test_the_summary_writes_the_bootstrap_as_validity_summary_does(limit, monkeypatch):
    s, y, t = DATASETS["ordinal, two decimals"]
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", limit)
    got = _table_summary(s, y, t, True, n_boot=100, seed=3)["auc"]
    expected = _summary(s, y, t, True, n_boot=100, seed=3)["auc"]
    assert list(got) == list(expected)
    assert got["bootstrap"] == expected["bootstrap"] == {"n": 100, "seed": 3, "stratified": True, "n_undefined": 0}
    source = vs.TableRows(vt.ScoreTable.of(s, y, t))
    replicates = vs._replicates(source, vs.stream_totals(source), n_boot=100, seed=3)
    assert got["ci95_bootstrap"] == list(ag.percentile_ci(replicates)[0])
    assert got["ci95_bootstrap"] == pytest.approx(expected["ci95_bootstrap"], abs=0.03)
    assert _table_summary(s, y, t, True, n_boot=0)["auc"]["bootstrap"] is None


def test_no_bootstrap_when_the_auc_is_undefined():
    s, y, t = UNDEFINED["one class"]
    auc = _table_summary(s, y, t, False, n_boot=50)["auc"]
    assert auc["value"] is None and "bootstrap" not in auc
    assert vs.auc_bootstrap_stream(vs.TableRows(vt.ScoreTable.of(s, y, t)), n_boot=50, seed=0) == (None, 0)


# --- a million units ----------------------------------------------------------------------------------------------


def test_a_million_units_cost_memory_by_distinct_triples_not_by_units():
    chunk, n_chunks = 50_000, 20
    tracemalloc.start()
    try:
        # As a report reads its units: a range at a time, merged into the table as it goes.
        table = vt.ScoreTable.empty()
        for c in range(n_chunks):
            rng = np.random.default_rng(100 + c)
            t = rng.integers(0, 5, chunk).astype(float)
            s = np.round(np.clip(0.15 * t + rng.normal(0.2, 0.3, chunk), 0.0, 0.999), 3)
            table = vt.ScoreTable.merged([table, vt.ScoreTable.of(s, t >= 2, t)])
            del s, t, rng
        _, build_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        summary = vs.validity_summary_rows(vs.TableRows(table), ordinal=True, n_boot=100, seed=0)
        _, summary_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert table.n_units == 1_000_000 > ag.MAX_UNITS_FOR_PACKAGE
    assert np.unique(table.scores).size == 1000
    # One array of a million float64 alone is 7.6 MiB.
    assert build_peak < 5 * 2**20
    assert summary_peak < 5 * 2**20
    ci = summary["auc"]["ci95_bootstrap"]
    assert ci[0] < summary["auc"]["value"] < ci[1]
    assert summary["auc"].pop("bootstrap")["n"] == 100
    del summary["auc"]["ci95_bootstrap"]
    s, y, t = table.expand()
    expected = va.validity_summary(s, y, ordinal_target=t)
    del expected["auc"]["ci95_bootstrap"], expected["auc"]["bootstrap"]
    _assert_close(summary, expected, rel=1e-9)
    assert summary["roc"] == expected["roc"] and summary["roc"]["n_points"] > 2
