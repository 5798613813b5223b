"""The agreement summary from one entry per rating (adjudication.stats.agreement.agreement_summary_sparse, what the
agreement report computes from) against the summary of the units × raters matrix (agreement_summary): the same JSON
to the last digit, bootstrap intervals included, on random ratings with missing entries and on the published
worked examples of test_agreement.py (whose published values the sparse path reproduces too).
"""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest

from adjudication.stats import agreement as ag
from tests.adjudication.stats.test_agreement import (
    DIAGNOSES,
    KRIPP_2011,
    WIKI_FLEISS_COUNTS,
    _counts_to_codes,
    _from_table,
    kqa_codes,
)

NAN = np.nan


def _ratings(seed: int, n_units: int, n_raters: int, k: int, missing: float, level: str) -> np.ndarray:
    """Ratings near a true category, with missing entries, a block of units nobody rated and a rater who says 0."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n_units)
    noisy = rng.random((n_units, n_raters)) < 0.4
    codes = np.where(noisy, rng.integers(0, k, (n_units, n_raters)), truth[:, None]).astype(float)
    if level == "interval":
        codes = codes * 1.5 + rng.normal(0, 0.01, codes.shape).round(2)
    codes[rng.random((n_units, n_raters)) < missing] = NAN
    codes[: n_units // 10, 0] = 0.0
    codes[n_units // 10 : n_units // 5] = NAN
    return codes


def _pool(
    seed: int, n_units: int, n_raters: int, per_unit: int, k: int, level: str, decimals: int | None = 1
) -> np.ndarray:
    """A pool as the queue builds it: each unit rated by ``per_unit`` of many raters (a few units once); interval
    values rounded to ``decimals`` (the package's α costs units × distinct values²)."""
    rng = np.random.default_rng(seed)
    codes = np.full((n_units, n_raters), NAN)
    truth = rng.integers(0, k, n_units)
    for u in range(n_units):
        who = rng.choice(n_raters, size=1 if u % 17 == 0 else per_unit, replace=False)
        noisy = rng.random(who.size) < 0.3
        codes[u, who] = np.where(noisy, rng.integers(0, k, who.size), truth[u])
    if level == "interval":
        noise = rng.normal(0, 0.3, codes.shape)
        codes = codes + (noise if decimals is None else noise.round(decimals))
    return codes


def _both(codes: np.ndarray, **kw) -> tuple[dict, dict]:
    names = [f"r{i}" for i in range(codes.shape[1])]
    dense = ag.agreement_summary(codes, rater_names=names, **kw)
    sparse = ag.agreement_summary_sparse(ag.SparseRatings.from_dense(codes), rater_names=names, **kw)
    return dense, sparse


def _assert_same(codes: np.ndarray, **kw) -> dict:
    dense, sparse = _both(codes, **kw)
    # Same keys in the same order, same floats to the last bit, same reasons: the same JSON text.
    assert json.dumps(sparse) == json.dumps(dense)
    return sparse


SCALE = {2: ["yes", "no"], 4: ["a", "b", "c", "d"], 5: ["1", "2", "3", "4", "5"]}
LEVELS = [("nominal", 2, "none"), ("nominal", 4, "none"), ("ordinal", 5, "linear"), ("ordinal", 5, "quadratic")]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n_raters", [2, 3, 9])
@pytest.mark.parametrize(("level", "k", "weights"), LEVELS)
@pytest.mark.parametrize("missing", [0.0, 0.5, 0.9])
def test_categorical_summary_from_entries_equals_the_matrix_summary(seed, n_raters, level, k, weights, missing):
    codes = _ratings(seed, 120, n_raters, k, missing, level)
    got = _assert_same(codes, level=level, scale=SCALE[k], weights=weights)
    assert len(got["cohen_kappa_pairs"]) == n_raters * (n_raters - 1) // 2


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n_raters", [2, 3, 9])
@pytest.mark.parametrize("missing", [0.0, 0.5, 0.9])
def test_interval_summary_from_entries_equals_the_matrix_summary(seed, n_raters, missing):
    codes = _ratings(seed, 120, n_raters, 4, missing, "interval")
    got = _assert_same(codes, level="interval", scale=None)
    assert got["krippendorff_alpha"]["value"] is not None


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("level", "k", "weights"), [*LEVELS, ("interval", 4, "none")])
def test_bootstrap_intervals_from_entries_are_the_same_draws_and_the_same_bounds(seed, level, k, weights):
    codes = _ratings(seed, 150, 9 if seed else 3, k, 0.4, level)
    scale = None if level == "interval" else SCALE[k]
    dense_steps: list[tuple[int, int]] = []
    sparse_steps: list[tuple[int, int]] = []
    names = [f"r{i}" for i in range(codes.shape[1])]
    kw = dict(level=level, scale=scale, weights=weights, n_boot=120, seed=seed, rater_names=names)
    dense = ag.agreement_summary(codes, progress=lambda d, t: dense_steps.append((d, t)), **kw)
    sparse = ag.agreement_summary_sparse(
        ag.SparseRatings.from_dense(codes), progress=lambda d, t: sparse_steps.append((d, t)), **kw
    )
    assert json.dumps(sparse) == json.dumps(dense)
    assert sparse["krippendorff_alpha"]["ci95"] is not None
    assert sparse_steps == dense_steps


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("level", "k", "weights"), [*LEVELS, ("interval", 5, "none")])
def test_a_pool_of_many_raters_each_unit_rated_by_three_gives_the_same_summary(seed, level, k, weights):
    codes = _pool(seed, 300, 30, 3, k, level)
    scale = None if level == "interval" else SCALE[k]
    got = _assert_same(codes, level=level, scale=scale, weights=weights, n_boot=40, seed=seed)
    if scale is not None:
        assert len(got["cohen_kappa_pairs"]) == 435 and len(got["each_against_rest"]) == 30
        # Most pairs of raters share no unit: the reason is the same as the matrix's.
        assert any(p["value"] is None for p in got["cohen_kappa_pairs"])


def test_interval_values_past_the_packages_limit_use_the_same_closed_form():
    codes = _pool(7, 2500, 12, 3, 5, "interval", decimals=None)
    assert np.unique(codes[~np.isnan(codes)]).size > ag.MAX_DISTINCT_FOR_PACKAGE
    _assert_same(codes, level="interval", scale=None, n_boot=30, seed=1)


def test_ratings_on_a_scale_at_the_interval_level_give_the_same_summary():
    """The CLI's --level interval --scale: κ over the scale's positions, α over them as numbers."""
    codes = _ratings(3, 100, 4, 5, 0.3, "ordinal")
    _assert_same(codes, level="interval", scale=SCALE[5], weights="quadratic", n_boot=50, seed=2)


@pytest.mark.parametrize(
    ("codes", "scale"),
    [
        (np.full((6, 3), NAN), ["yes", "no"]),  # nobody rated
        (np.array([[0, NAN, NAN], [NAN, 1, NAN], [NAN, NAN, 1]]), ["yes", "no"]),  # every unit rated once
        (np.zeros((5, 3)), ["yes", "no"]),  # one category only
        (np.array([[0, 0], [0, NAN], [NAN, 1]]), ["yes", "no"]),  # one unit rated twice
        (np.array([[2.5, 2.5], [2.5, NAN], [NAN, 1.0]]), None),  # interval, one value on the pairable unit
        (np.empty((0, 0)), None),
    ],
)
def test_undefined_statistics_say_the_same_reasons(codes, scale):
    level = "nominal" if scale is not None else "interval"
    _assert_same(codes, level=level, scale=scale, n_boot=20)


# --- the published worked examples -----------------------------------------------------------------------


def _sparse(codes: np.ndarray, **kw) -> dict:
    return _assert_same(codes, **kw)


def test_fleiss_1971_diagnoses_from_entries():
    # Fleiss (1971) p. 381: κ = 0.430; per category .245, .245, .520, .471, .566 (see test_agreement.py).
    got = _sparse(DIAGNOSES, level="nominal", scale=["dep", "pd", "sch", "neu", "oth"], n_boot=100, seed=3)
    assert round(got["fleiss_kappa"]["value"], 3) == 0.430
    assert [round(p["value"], 3) for p in got["per_label"]] == [0.245, 0.245, 0.520, 0.471, 0.566]


def test_the_wikipedia_fleiss_example_from_entries():
    got = _sparse(_counts_to_codes(WIKI_FLEISS_COUNTS), level="nominal", scale=list("abcde"))
    assert round(got["fleiss_kappa"]["value"], 3) == 0.210


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_2011_from_entries(level, published):
    scale = None if level == "interval" else [str(v) for v in range(1, 6)]
    got = _sparse(KRIPP_2011 - 1, level=level, scale=scale, n_boot=200, seed=5)
    assert round(got["krippendorff_alpha"]["value"], 3) == published
    assert got["krippendorff_alpha"]["n_units"] == 11 and got["krippendorff_alpha"]["n_excluded_units"] == 1


def test_the_wikipedia_fifty_proposals_cohen_kappa_from_entries():
    a, b = _from_table([[20, 5], [10, 15]])
    got = _sparse(np.column_stack([a, b]), level="nominal", scale=["yes", "no"])
    assert got["cohen_kappa"]["value"] == pytest.approx(0.4)
    assert got["cohen_kappa"]["observed_agreement"] == pytest.approx(0.7)


def test_the_kqa_physicians_from_entries():
    # data/demo/kqa/MANIFEST.md's figures (see test_agreement.py).
    got = _sparse(kqa_codes(), level="nominal", scale=["Entailment", "Neutral", "Contradiction"], n_boot=200, seed=0)
    assert round(got["fleiss_kappa"]["value"], 4) == 0.7189
    assert round(got["krippendorff_alpha"]["value"], 4) == 0.7191
    assert [round(p["value"], 4) for p in got["cohen_kappa_pairs"]] == [0.6696, 0.7612, 0.7317]
    assert got["percent_agreement"]["n_agreeing_units"] == 312 and got["n_units"] == 399
    assert [round(p["value"], 4) for p in got["per_label"]][::2] == [0.7149, 0.6697]
    assert not any(r["outlier"] for r in got["each_against_rest"])


# --- the entries themselves ------------------------------------------------------------------------------


def test_entries_in_any_order_are_sorted_and_give_back_the_matrix():
    codes = _ratings(1, 40, 5, 4, 0.5, "nominal")
    sp = ag.SparseRatings.from_dense(codes)
    order = np.random.default_rng(0).permutation(sp.unit.size)
    again = ag.SparseRatings.from_entries(
        sp.unit[order], sp.rater[order], sp.value[order], n_units=sp.n_units, n_raters=sp.n_raters
    )
    np.testing.assert_array_equal(again.unit, sp.unit)
    np.testing.assert_array_equal(again.rater, sp.rater)
    np.testing.assert_array_equal(again.dense(), codes)
    np.testing.assert_array_equal(again.per_unit(), (~np.isnan(codes)).sum(axis=1))


def test_entries_drop_not_rated_values_and_refuse_a_second_rating_of_a_cell_or_one_outside_the_matrix():
    sp = ag.SparseRatings.from_entries(np.array([1, 0]), np.array([0, 1]), np.array([NAN, 2.0]), n_units=2, n_raters=2)
    assert sp.unit.tolist() == [0] and sp.value.tolist() == [2.0]
    with pytest.raises(ValueError, match="twice"):
        ag.SparseRatings.from_entries(np.array([1, 0, 1]), np.array([0, 0, 0]), np.ones(3), n_units=2, n_raters=1)
    with pytest.raises(ValueError, match="outside"):
        ag.SparseRatings.from_entries(np.array([2]), np.array([0]), np.ones(1), n_units=2, n_raters=1)
    with pytest.raises(ValueError, match="outside"):
        ag.SparseRatings.from_entries(np.array([0]), np.array([-1]), np.ones(1), n_units=2, n_raters=1)
    with pytest.raises(ValueError, match="aligned"):
        ag.SparseRatings.from_entries(np.array([0, 1]), np.array([0]), np.ones(2), n_units=2, n_raters=1)


@pytest.mark.parametrize("bad", [2.0, -1.0])
def test_a_code_off_the_scale_is_refused_as_by_the_matrix(bad):
    codes = np.array([[0.0, 1.0], [bad, 0.0]])
    with pytest.raises(ag.ScaleError):
        ag.agreement_summary(codes, level="nominal", scale=["yes", "no"], rater_names=["a", "b"])
    with pytest.raises(ag.ScaleError):
        ag.agreement_summary_sparse(
            ag.SparseRatings.from_dense(codes), level="nominal", scale=["yes", "no"], rater_names=["a", "b"]
        )


def test_pair_tables_are_each_pairs_units_in_common():
    codes = _pool(2, 200, 8, 3, 4, "nominal")
    sp = ag.SparseRatings.from_dense(codes)
    tables = ag._sparse_pair_tables(sp, sp.positions(4), 4)
    coded = ag.codes_with_missing(codes, 4)
    for p, (i, j) in enumerate(combinations(range(8), 2)):
        np.testing.assert_array_equal(tables[p], ag.pair_table(coded[:, i], coded[:, j], 4)[0])


def test_rest_tables_do_not_depend_on_the_chunk_size(monkeypatch):
    codes = _pool(4, 300, 10, 4, 3, "nominal")
    sp = ag.SparseRatings.from_dense(codes)
    counts = ag.category_counts(codes, 3)
    whole = ag._sparse_rest_tables(sp, sp.positions(3), counts)
    monkeypatch.setattr(ag, "SPARSE_CHUNK", 7)
    chunked = ag._sparse_rest_tables(sp, sp.positions(3), counts)
    np.testing.assert_array_equal(whole[0], chunked[0])
    np.testing.assert_array_equal(whole[1], chunked[1])


def test_interval_sums_do_not_depend_on_the_block_size(monkeypatch):
    codes = _pool(5, 200, 12, 9, 4, "interval")
    kw = dict(level="interval", scale=None, n_boot=30, seed=2)
    expected = _assert_same(codes, **kw)
    monkeypatch.setattr(ag, "SPARSE_CELLS", 13)  # one unit per block, then a block of units with 13 cells
    assert _both(codes, **kw)[1] == expected
    monkeypatch.setattr(ag, "SPARSE_CELLS", 30)
    assert _both(codes, **kw)[1] == expected


# --- the bootstrap a few resamples at a time -------------------------------------------------------------


@pytest.mark.parametrize("cells", [1, 700, 5000])
def test_bootstrap_replicates_do_not_depend_on_how_many_resamples_are_computed_at_a_time(monkeypatch, cells):
    """A batch of resamples is drawn at once (the seed's draws) and computed a few rows at a time (BOOT_CELLS):
    one row at a time, a few, or the whole batch give the same replicates to the last bit."""
    rng = np.random.default_rng(3)
    counts = np.zeros((301, 3), dtype=np.int64)
    for _ in range(3):
        counts[np.arange(301), rng.integers(0, 3, 301)] += 1
    values = rng.normal(size=(301, 4)).round(2)
    values[rng.random(values.shape) < 0.3] = NAN
    values[:, :2] = np.nan_to_num(values[:, :2])

    patterns = ag.CountPatterns.of(counts)

    def replicates() -> list[np.ndarray]:
        return [
            ag._fleiss_boot(patterns, 3, 130, 7, None),
            *(ag._categorical_boot(patterns, level, 130, 7, None) for level in ("nominal", "ordinal", "interval")),
            ag._interval_boot(values, 130, 7, None),
        ]

    whole = replicates()  # 301 × 3 cells a row: the default budget takes each batch of 50 at once
    monkeypatch.setattr(ag, "BOOT_CELLS", cells)
    for got, expected in zip(replicates(), whole, strict=True):
        assert got.shape == (130,)
        np.testing.assert_array_equal(got, expected)
