"""CategoricalTablesBuilder adds tables up a chunk of whole units at a time: the sums and the counts must be the
tables of all the ratings at once, for any split into chunks, and keeping some raters must give the tables of
those raters alone. agreement_summary_tables must then be agreement_summary_sparse to the last digit (itself tested
against the matrix's summary in test_agreement_sparse.py)."""

from __future__ import annotations

import dataclasses
import json
from itertools import pairwise

import krippendorff
import numpy as np
import pytest

from adjudication.stats import agreement as ag


def _random(seed: int, n_units: int, n_raters: int, k: int, missing: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(k, size=n_units)
    codes = np.where(rng.random((n_units, n_raters)) < 0.6, truth[:, None], rng.integers(k, size=(n_units, n_raters)))
    codes = np.where(rng.random((n_units, n_raters)) < missing, np.nan, codes.astype(float))
    if n_units > 4:
        codes[n_units // 4] = np.nan  # a unit nobody rated on the scale
    return codes


def _chunks(ratings: ag.SparseRatings, cuts: list[int]) -> list[ag.SparseRatings]:
    """``ratings`` split at the unit indices ``cuts``, each chunk's units numbered from 0."""
    out = []
    bounds = [0, *cuts, ratings.n_units]
    for lo, hi in pairwise(bounds):
        on = (ratings.unit >= lo) & (ratings.unit < hi)
        out.append(ag.SparseRatings(ratings.unit[on] - lo, ratings.rater[on], ratings.value[on], hi - lo,
                                    ratings.n_raters))
    return out


def _whole(ratings: ag.SparseRatings, k: int) -> ag.CategoricalTables:
    """The tables of every rating at once, from the table functions themselves (not through the builder)."""
    codes = ratings.positions(k)
    counts = np.bincount(ratings.unit * k + codes, minlength=ratings.n_units * k).reshape(ratings.n_units, k)
    n_rated = np.bincount(ratings.rater, minlength=ratings.n_raters)
    pairs = ag._sparse_pair_tables(ratings, codes, k)
    if ratings.n_raters < 3:
        return ag.CategoricalTables(counts, pairs, n_rated, None, None)
    rests, excluded = ag._sparse_rest_tables(ratings, codes, counts)
    return ag.CategoricalTables(counts, pairs, n_rated, rests, excluded)


def _same(got: ag.CategoricalTables, want: ag.CategoricalTables) -> None:
    np.testing.assert_array_equal(got.counts, want.counts)
    np.testing.assert_array_equal(got.patterns.rows, want.patterns.rows)
    np.testing.assert_array_equal(got.patterns.weights, want.patterns.weights)
    # Counts and tables stay integers (exact sums, and the κ tables statsmodels is given are counts).
    assert got.counts.dtype == want.counts.dtype == np.int64
    assert got.patterns.rows.dtype == got.patterns.weights.dtype == np.int64
    assert got.pairs.dtype == got.n_rated.dtype == np.int64
    if got.rests is not None and got.rest_excluded is not None:
        assert got.rests.dtype == got.rest_excluded.dtype == np.int64
    np.testing.assert_array_equal(got.pairs, want.pairs)
    np.testing.assert_array_equal(got.n_rated, want.n_rated)
    assert (got.rests is None) == (want.rests is None)
    if want.rests is not None:
        np.testing.assert_array_equal(got.rests, want.rests)
        np.testing.assert_array_equal(got.rest_excluded, want.rest_excluded)


CASES = [
    (seed, n_units, n_raters, k, missing)
    for seed in (0, 1)
    for n_units, n_raters in ((1, 2), (7, 3), (60, 5), (200, 9))
    for k in (2, 3, 5)
    for missing in (0.0, 0.6)
]


@pytest.mark.parametrize(("seed", "n_units", "n_raters", "k", "missing"), CASES)
def test_chunks_of_whole_units_add_up_to_the_tables_of_every_rating(seed, n_units, n_raters, k, missing):
    ratings = ag.SparseRatings.from_dense(_random(seed, n_units, n_raters, k, missing))
    want = _whole(ratings, k)
    _same(ag.categorical_tables(ratings, k), want)
    rng = np.random.default_rng(seed + 100)
    for n_cuts in (1, 3, n_units - 1):
        cuts = sorted(set(rng.integers(0, n_units + 1, size=max(n_cuts, 0)).tolist()))
        builder = ag.CategoricalTablesBuilder(n_raters, k)
        flat = ag.CategoricalTablesBuilder(n_raters, k, keep_counts=False)
        for chunk in _chunks(ratings, cuts):  # empty chunks included (a cut repeated, or at an end)
            builder.add(chunk)
            flat.add(chunk)
        _same(builder.finish(), want)
        # Without each unit's counts: the same patterns and tables, and no count table.
        without = flat.finish()
        assert without.counts is None
        _same(dataclasses.replace(without, counts=want.counts), want)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_count_patterns_are_the_distinct_rows_with_how_many_units_have_each(seed):
    counts = _counts(seed, 400, 3, 4)
    counts[::7] = 0  # units not rated
    patterns = ag.CountPatterns.of(counts)
    rows = [tuple(r) for r in counts.tolist()]
    assert [tuple(r) for r in patterns.rows.tolist()] == sorted(set(rows))
    assert patterns.weights.tolist() == [rows.count(r) for r in sorted(set(rows))]
    assert patterns.n_units == 400
    np.testing.assert_array_equal(patterns.expand(), np.array(sorted(rows)))
    np.testing.assert_array_equal(patterns.per_unit(), patterns.rows.sum(axis=1))
    # Merging rows given with weights: the same as the patterns of the table they stand for.
    half = ag.CountPatterns.of(counts[:200])
    other = ag.CountPatterns.of(counts[200:])
    merged = ag.CountPatterns.merged(
        np.concatenate([half.rows, other.rows]), np.concatenate([half.weights, other.weights])
    )
    np.testing.assert_array_equal(merged.rows, patterns.rows)
    np.testing.assert_array_equal(merged.weights, patterns.weights)
    empty = ag.CountPatterns.of(np.zeros((0, 3), np.int64))
    assert empty.rows.shape == (0, 3) and empty.n_units == 0


def test_a_million_units_of_three_raters_on_two_categories_are_four_patterns():
    # What a report holds of the units' counts does not grow with them: 4 rows, whatever the number of units.
    rng = np.random.default_rng(0)
    yes = rng.binomial(3, 0.7, size=1_000_000)
    patterns = ag.CountPatterns.of(np.stack([yes, 3 - yes], axis=1))
    assert patterns.rows.tolist() == [[0, 3], [1, 2], [2, 1], [3, 0]]
    assert patterns.n_units == 1_000_000


@pytest.mark.parametrize(("seed", "n_units", "n_raters", "k", "missing"), [c for c in CASES if c[2] >= 3])
def test_keeping_some_raters_gives_the_tables_of_those_raters_alone(seed, n_units, n_raters, k, missing):
    codes = _random(seed, n_units, n_raters, k, missing)
    rng = np.random.default_rng(seed + 7)
    for n_keep in range(1, n_raters + 1):
        keep = np.zeros(n_raters, dtype=bool)
        keep[rng.choice(n_raters, size=n_keep, replace=False)] = True
        # The raters left out rated nothing (what finish(keep) is for: numbered, with no rating).
        sparse = ag.SparseRatings.from_dense(np.where(keep[None, :], codes, np.nan))
        builder = ag.CategoricalTablesBuilder(n_raters, k)
        builder.add(sparse)
        got = builder.finish(keep)
        _same(got, _whole(ag.SparseRatings.from_dense(codes[:, keep]), k))
        assert got.n_raters == n_keep


@pytest.mark.parametrize(("seed", "n_units", "n_raters", "k", "missing"), CASES[::3])
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_the_summary_from_the_tables_is_the_sparse_summary(seed, n_units, n_raters, k, missing, level):
    ratings = ag.SparseRatings.from_dense(_random(seed, n_units, n_raters, k, missing))
    scale = [f"c{i}" for i in range(k)]
    names = [f"R{i}" for i in range(n_raters)]
    want = ag.agreement_summary_sparse(ratings, level=level, scale=scale, rater_names=names, n_boot=25, seed=3)
    if level == "interval":
        with pytest.raises(ValueError, match=r"^interval α of ratings on a scale needs their values \(interval\)$"):
            ag.agreement_summary_tables(ag.categorical_tables(ratings, k), level=level, scale=scale,
                                        rater_names=names)
        return
    builder = ag.CategoricalTablesBuilder(n_raters, k)
    for chunk in _chunks(ratings, [n_units // 3, n_units // 2]):
        builder.add(chunk)
    got = ag.agreement_summary_tables(builder.finish(), level=level, scale=scale, rater_names=names, n_boot=25, seed=3)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def test_a_chunk_numbered_over_other_raters_is_refused():
    builder = ag.CategoricalTablesBuilder(4, 2)
    with pytest.raises(ValueError, match="a chunk of 3 raters"):
        builder.add(ag.SparseRatings.from_dense(np.zeros((2, 3))))


def test_no_chunk_gives_empty_tables():
    got = ag.CategoricalTablesBuilder(3, 4).finish()
    assert got.counts.shape == (0, 4) and got.pairs.shape == (3, 4, 4) and not got.pairs.any()
    assert got.counts.dtype == got.pairs.dtype == np.int64
    kept = ag.CategoricalTablesBuilder(3, 4).finish(np.array([True, False, False]))
    assert kept.pairs.shape == (0, 4, 4) and kept.pairs.dtype == np.int64 and kept.rests is None
    assert got.rests is not None and not got.rests.any()


def test_without_a_bootstrap_asked_for_there_is_none_and_the_seed_defaults_to_0():
    ratings = ag.SparseRatings.from_dense(_random(5, 80, 4, 3, 0.3))
    scale, names = ["a", "b", "c"], ["R1", "R2", "R3", "R4"]
    tables = ag.categorical_tables(ratings, 3)
    plain = ag.agreement_summary_tables(tables, level="nominal", scale=scale, rater_names=names)
    assert plain["bootstrap"] is None and "bootstrap" not in str(plain["fleiss_kappa"].get("ci_method"))
    assert plain == ag.agreement_summary_tables(tables, level="nominal", scale=scale, rater_names=names, n_boot=0)
    drawn = ag.agreement_summary_tables(tables, level="nominal", scale=scale, rater_names=names, n_boot=20)
    assert drawn == ag.agreement_summary_tables(
        tables, level="nominal", scale=scale, rater_names=names, n_boot=20, seed=0
    )
    assert drawn["bootstrap"] == {"n": 20, "seed": 0}


@pytest.mark.parametrize("level", ["nominal", "interval"])
def test_progress_is_reported_as_the_matrixs_summary_reports_it(level):
    codes = _random(9, 120, 5, 4, 0.4)
    scale, names = [f"c{i}" for i in range(4)], [f"R{i}" for i in range(5)]
    got: list[tuple[int, int]] = []
    want: list[tuple[int, int]] = []
    sparse = ag.agreement_summary_sparse(
        ag.SparseRatings.from_dense(codes), level=level, scale=scale, rater_names=names, n_boot=120, seed=2,
        progress=lambda done, total: got.append((done, total)),
    )
    dense = ag.agreement_summary(
        codes, level=level, scale=scale, rater_names=names, n_boot=120, seed=2,
        progress=lambda done, total: want.append((done, total)),
    )
    assert json.dumps(sparse, sort_keys=True) == json.dumps(dense, sort_keys=True)
    assert got == want and got[-1] == (240, 240) and len(got) > 4


# --- α's point estimate past MAX_UNITS_FOR_PACKAGE -------------------------------------------------------


def _counts(seed: int, n_units: int, k: int, max_m: int) -> np.ndarray:
    """A pairable units × categories table: each unit rated 2..max_m times."""
    rng = np.random.default_rng(seed)
    m = rng.integers(2, max_m + 1, size=n_units)
    truth = rng.integers(k, size=n_units)
    out = np.zeros((n_units, k), dtype=np.int64)
    for u in range(n_units):
        cats = np.where(rng.random(m[u]) < 0.6, truth[u], rng.integers(k, size=m[u]))
        np.add.at(out[u], cats, 1)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("k", "max_m"), [(2, 2), (2, 5), (3, 3), (5, 9)])
@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_exact_coincidences_give_the_packages_alpha(seed, k, max_m, level):
    counts = _counts(seed, 700, k, max_m)
    want = krippendorff.alpha(value_counts=counts, value_domain=np.arange(k), level_of_measurement=level)
    for block in (1, 7, 1 << 16):  # blocks of units: the sums are exact whatever the split
        o = ag.coincidence_exact(counts, block=block)
        assert o.sum() == pytest.approx(counts.sum(), rel=1e-12)  # n: every pairable value once
        assert float(ag._alpha_from_coincidence(o, level)) == pytest.approx(want, rel=1e-12, abs=1e-14)


def test_the_coincidences_of_krippendorffs_worked_example():
    """Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: four coders, 12 units, values
    1..5, nominal α = 0.743 (the coincidence matrix's margins 9, 13, 10, 5, 3 of n = 40 pairable values)."""
    data = np.array([
        [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
        [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
    ]).T - 1
    counts = ag.category_counts(data, 5)
    counts = counts[counts.sum(axis=1) >= 2]
    o = ag.coincidence_exact(counts)
    np.testing.assert_allclose(o.sum(axis=1), [9, 13, 10, 5, 3])
    assert round(float(ag._alpha_from_coincidence(o, "nominal")), 3) == 0.743


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_past_the_packages_limit_alpha_is_computed_from_exact_coincidences(monkeypatch, level):
    patterns = ag.CountPatterns.of(_counts(4, 300, 4, 4))
    calls: list[int] = []
    package = ag.krippendorff.alpha
    monkeypatch.setattr(ag.krippendorff, "alpha", lambda **kw: calls.append(1) or package(**kw))
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", 300)
    at_limit = ag._alpha_estimate(level, 4, patterns=patterns, n_boot=30, seed=1, progress=None)
    assert calls == [1]  # at the limit, still the package
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", 299)
    past = ag._alpha_estimate(level, 4, patterns=patterns, n_boot=30, seed=1, progress=None)
    monkeypatch.setattr(
        ag.krippendorff, "alpha", lambda **kw: pytest.fail("the package was asked past its limit")
    )
    assert ag._alpha_estimate(level, 4, patterns=patterns, progress=None).value == past.value
    assert past.value == pytest.approx(at_limit.value, rel=1e-12) and past.ci95 == at_limit.ci95


# --- α's bootstrap from the draws' multiplicities; Fleiss' κ past MAX_UNITS_FOR_PACKAGE ------------------------


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(("k", "max_m"), [(2, 3), (3, 2), (5, 9)])
def test_weighted_coincidences_are_those_of_the_repeated_rows(seed, k, max_m):
    # Weights w: the coincidence matrix of the table in which unit u's row appears w_u times (zero: not at all),
    # exactly (integer sums), whatever the block.
    counts = _counts(seed, 500, k, max_m)
    weights = np.random.default_rng(seed + 50).integers(0, 4, size=counts.shape[0])
    repeated = ag.coincidence_exact(np.repeat(counts, weights, axis=0))
    for block in (1, 7, 1 << 16):
        np.testing.assert_array_equal(ag.coincidence_exact(counts, weights=weights, block=block), repeated)
    ones = np.ones(500, np.int64)
    np.testing.assert_array_equal(ag.coincidence_exact(counts, weights=ones), ag.coincidence_exact(counts))


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_each_alpha_replicate_is_the_packages_alpha_of_its_resample(level):
    # The replicate of each resample (drawn as pattern_resamples draws it) against the krippendorff package on the
    # resample's own table: interval too (α on the scale positions, as the package's interval level on them).
    patterns = ag.CountPatterns.of(_counts(9, 60, 4, 5))
    n_boot, seed = 40, 3
    drawn = np.concatenate(list(ag.pattern_resamples(np.random.default_rng(seed), patterns.weights, n_boot, None)))
    want = [
        krippendorff.alpha(
            value_counts=np.repeat(patterns.rows, row, axis=0), value_domain=np.arange(4), level_of_measurement=level
        )
        for row in drawn
    ]
    np.testing.assert_allclose(
        ag._categorical_boot(patterns, level, n_boot, seed, None), want, rtol=1e-11, atol=1e-13
    )


# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories; κ = 0.210.
WIKI_FLEISS = np.array([
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
])


def test_fleiss_exact_reproduces_the_worked_example():
    assert round(ag.fleiss_exact(WIKI_FLEISS, 14), 3) == 0.210
    assert ag.fleiss_exact(np.array([[3, 0], [3, 0]]), 3) is None  # one category: chance agreement is 1


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("k", "m"), [(2, 2), (2, 3), (3, 5), (5, 9)])
def test_fleiss_exact_is_statsmodels_fleiss_kappa(seed, k, m):
    from statsmodels.stats.inter_rater import fleiss_kappa

    rng = np.random.default_rng(seed)
    counts = np.zeros((900, k), dtype=np.int64)
    truth = rng.integers(k, size=900)
    for _ in range(m):
        cats = np.where(rng.random(900) < 0.5, truth, rng.integers(k, size=900))
        counts[np.arange(900), cats] += 1
    assert ag.fleiss_exact(counts, m) == pytest.approx(fleiss_kappa(counts, method="fleiss"), rel=1e-12, abs=1e-14)


def test_past_the_packages_limit_fleiss_kappa_is_computed_exactly(monkeypatch):
    counts = np.zeros((300, 3), dtype=np.int64)
    rng = np.random.default_rng(5)
    for _ in range(4):
        counts[np.arange(300), rng.integers(3, size=300)] += 1
    calls: list[int] = []
    package = ag._sm_fleiss_kappa
    monkeypatch.setattr(ag, "_sm_fleiss_kappa", lambda *a, **kw: calls.append(1) or package(*a, **kw))
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", 300)
    at_limit = ag.fleiss_kappa_from_counts(counts, n_boot=30, seed=2)
    assert calls == [1]  # at the limit, still statsmodels
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", 299)
    monkeypatch.setattr(ag, "_sm_fleiss_kappa", lambda *a, **kw: pytest.fail("statsmodels was asked past its limit"))
    past = ag.fleiss_kappa_from_counts(counts, n_boot=30, seed=2)
    assert past.value == pytest.approx(at_limit.value, rel=1e-12) and past.ci95 == at_limit.ci95


def test_drain_concatenate_joins_the_parts_in_order_and_lets_them_go():
    rng = np.random.default_rng(8)
    parts = [rng.integers(0, 9, size=(n, 3)) for n in (4, 0, 7, 1)]
    want = np.concatenate(parts)
    given = list(parts)
    got = ag.drain_concatenate(given, np.int64, (3,))
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64 and given == []  # emptied: no part outlives its copy
    flat = [np.arange(3), np.arange(2), np.arange(4)]
    seen: list[int] = []
    converted = ag.drain_concatenate(list(flat), np.int32, convert=lambda i, p: seen.append(i) or p + 10 * i)
    assert converted.tolist() == [0, 1, 2, 10, 11, 20, 21, 22, 23] and seen == [0, 1, 2] and converted.dtype == np.int32
    assert ag.drain_concatenate([], np.int64, (2,)).shape == (0, 2)
