"""A validity report's joined rows in a temporary table (adjudication.analysis.joined_rows): what is added comes back
as the one table of distinct (score, label, target) triples the parts make, in order, a page at a time; the table is
the connection's own and is dropped when the report is done, or fails."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from django.db import connection, transaction

from adjudication.analysis import joined_rows
from adjudication.analysis.joined_rows import JoinedRows, PairedRows
from adjudication.stats.validity_table import ScoreTable

pytestmark = pytest.mark.django_db


def _temporary_tables() -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT relname FROM pg_class WHERE relpersistence = 't' AND relkind = 'r'")
        else:
            cursor.execute("SELECT name FROM sqlite_temp_master WHERE type = 'table'")
        return {row[0] for row in cursor.fetchall()}


def _parts(seed: int, n: int, cuts: list[int]) -> tuple[ScoreTable, list[ScoreTable]]:
    """Units with ties within and across the parts (two-decimal scores, five targets), and the parts' tables."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 5, n).astype(float)
    s = np.round(0.3 * t + rng.normal(size=n), 2)
    s[n // 2 :] = rng.random(n - n // 2) * 10.0 ** rng.integers(-300, 300, n - n // 2)  # every double's digits
    s[:5] = [-0.0, 0.0, 1e300, 5e-324, -1.7976931348623157e308]  # -0.0 is 0.0; the extremes survive the trip
    y = t >= 2
    parts = [ScoreTable.of(s[a:b], y[a:b], t[a:b]) for a, b in itertools.pairwise(cuts)]
    return ScoreTable.of(s, y, t), parts


def _read(rows: JoinedRows) -> ScoreTable:
    pieces = list(rows.pieces())
    assert all(p.scores.size <= rows.page_rows for p in pieces)
    return ScoreTable(*(np.concatenate([getattr(p, f) for p in pieces]) for f in ("scores", "labels", "targets",
                                                                                   "weights")))


@pytest.mark.parametrize(("page_rows", "hold_rows"), [(1, 1), (7, 1000), (20_000, 1), (20_000, 50_000)])
def test_the_rows_read_back_are_the_merged_table_of_every_part(monkeypatch, page_rows, hold_rows):
    # Held in the process and written every hold_rows rows (every part, every few parts, once at the end).
    monkeypatch.setattr(joined_rows, "HOLD_ROWS", hold_rows)
    whole, parts = _parts(1, 3000, [0, 1, 700, 700, 2100, 3000])
    with JoinedRows(page_rows=page_rows) as rows:
        for part in parts:
            rows.add(part)
        got = _read(rows)
        again = _read(rows)  # every read starts from the first row
    for field in ("scores", "labels", "targets", "weights"):
        expected = getattr(whole, field)
        assert getattr(got, field).dtype == expected.dtype
        np.testing.assert_array_equal(getattr(got, field), expected)
        np.testing.assert_array_equal(getattr(again, field), expected)
    assert got.n_units == 3000
    assert str(got.scores[np.searchsorted(got.scores, 0.0)]) == "0.0"


@pytest.mark.parametrize("hold_rows", [1, 50_000])
def test_a_triple_in_several_parts_is_one_row_with_their_units(monkeypatch, hold_rows):
    monkeypatch.setattr(joined_rows, "HOLD_ROWS", hold_rows)
    one = ScoreTable.of(np.array([0.5, 0.5, 0.25]), np.array([True, True, False]), np.array([3.0, 3.0, 1.0]))
    with JoinedRows(page_rows=1) as rows:
        rows.add(one)
        rows.add(ScoreTable.empty())
        rows.add(one)
        got = _read(rows)
    assert got.scores.tolist() == [0.25, 0.5]
    assert got.labels.tolist() == [False, True]
    assert got.weights.tolist() == [2, 4]


def test_no_rows_read_back_as_nothing():
    with JoinedRows() as rows:
        assert list(rows.pieces()) == []


def test_the_table_is_the_connections_own_and_is_dropped_on_exit():
    before = _temporary_tables()
    with JoinedRows() as rows:
        assert _temporary_tables() == before | {rows.name}
    assert _temporary_tables() == before
    with pytest.raises(ZeroDivisionError), JoinedRows() as failed:
        failed.add(ScoreTable.of(np.array([0.1]), np.array([True])))
        _ = 1 / 0
    assert _temporary_tables() == before


def test_a_rolled_back_read_leaves_no_table():
    before = _temporary_tables()
    with pytest.raises(ZeroDivisionError), JoinedRows() as rows, transaction.atomic():
        rows.add(ScoreTable.of(np.array([0.1]), np.array([True])))
        _ = 1 / 0
    assert _temporary_tables() == before


# --- the paired comparison's rows -----------------------------------------------------------------------------------


def _pairs(seed: int, n: int, decimals: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.4
    a = rng.normal(size=n) + 0.9 * y
    b = 0.5 * a + rng.normal(size=n)
    if decimals is not None:
        a, b = np.round(a, decimals), np.round(b, decimals)
    return a, b, y


def _paired_from_rows(a: np.ndarray, b: np.ndarray, y: np.ndarray, parts: int) -> tuple:
    from adjudication.stats import validity as va

    with PairedRows() as rows:
        for chunk in np.array_split(np.arange(a.size), parts):
            rows.add(a[chunk], b[chunk], y[chunk])
        both_ok = va.delong_from_sums(*rows.sums("a_ok AND b_ok"), n_excluded=int((~np.isfinite(a + b)).sum()))
        a_only = va.delong_from_sums(*rows.sums("a_ok"), n_excluded=int((~np.isfinite(a)).sum()))[0]
        b_only = va.delong_from_sums(*rows.sums("b_ok"), n_excluded=int((~np.isfinite(b)).sum()))[1]
    return a_only, b_only, both_ok[2]


def _close(got, expected) -> None:
    got, expected = got.as_dict(), expected.as_dict()
    assert list(got) == list(expected)
    for key, value in expected.items():
        if isinstance(value, float):
            assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-300), key
        elif isinstance(value, list):
            assert got[key] == pytest.approx(value, rel=1e-9), key
        else:
            assert got[key] == value, key


@pytest.mark.parametrize(("decimals", "parts"), [(None, 1), (1, 5), (0, 3)])
def test_the_paired_rows_give_roc_auc_and_delong_paired_of_the_units(decimals, parts):
    from adjudication.stats import validity as va

    a, b, y = _pairs(2, 800, decimals)
    a[[3, 50]] = np.nan  # a unit without a's score still counts for b's AUC
    b[[7]] = np.inf
    a_est, b_est, paired = _paired_from_rows(a, b, y, parts)
    expected_a, expected_b = va.roc_auc(a, y.astype(float)), va.roc_auc(b, y.astype(float))
    assert a_est.value == expected_a.value and b_est.value == expected_b.value  # the same float
    _close(a_est, expected_a)
    _close(b_est, expected_b)
    _close(paired, va.delong_paired(a, b, y.astype(float)))
    assert paired.n_excluded == 3 and paired.n_units == 797


def test_identical_rankings_and_one_class_are_delong_paireds_undefined_cases():
    from adjudication.stats import validity as va

    a, _, y = _pairs(3, 200, 2)
    _, _, paired = _paired_from_rows(a, 2 * a + 1, y, 2)
    expected = va.delong_paired(a, 2 * a + 1, y.astype(float))
    assert paired.value is None and paired.reason == expected.reason
    assert paired.as_dict() == expected.as_dict()
    ones = np.ones(a.size, bool)
    a_est, _, paired = _paired_from_rows(a, a[::-1].copy(), ones, 2)
    assert a_est.as_dict() == va.roc_auc(a, ones.astype(float)).as_dict()
    assert paired.as_dict() == va.delong_paired(a, a[::-1].copy(), ones.astype(float)).as_dict()
