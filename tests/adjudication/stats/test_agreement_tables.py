"""The table-based paths of adjudication.stats.agreement (one count table per pair, per rater against the rest,
per label) against direct, unit-by-unit computations of the same statistics on the same ratings.

The published worked examples are in test_agreement.py; here random ratings with missing entries, ties and
raters who use one category only make sure every shortcut gives exactly (``==``, not approximately) what the
straightforward computation gives.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from adjudication.stats import agreement as ag

NAN = np.nan


def _random_ratings(seed: int, n_units: int = 200, n_raters: int = 5, k: int = 4, missing: float = 0.3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n_units)
    codes = np.where(rng.random((n_units, n_raters)) < 0.4, rng.integers(0, k, (n_units, n_raters)), truth[:, None])
    codes = codes.astype(float)
    codes[rng.random((n_units, n_raters)) < missing] = NAN
    codes[: n_units // 10, 0] = 0.0  # some units where the first rater's category is forced: more ties
    return codes


CASES = [(seed, missing) for seed in range(6) for missing in (0.0, 0.3, 0.8)]


def _rest_mode_by_hand(codes: np.ndarray, rater: int) -> np.ndarray:
    out = np.full(codes.shape[0], NAN)
    for u, row in enumerate(codes):
        others = Counter(int(v) for r, v in enumerate(row) if r != rater and not np.isnan(v))
        if not others:
            continue
        top = max(others.values())
        winners = [c for c, n in others.items() if n == top]
        if len(winners) == 1:
            out[u] = winners[0]
    return out


@pytest.mark.parametrize(("seed", "missing"), CASES)
def test_rest_majorities_are_the_others_unique_modal_category_unit_by_unit(seed, missing):
    codes = _random_ratings(seed, missing=missing)
    rests = ag.rest_majorities(codes, 4)
    for r in range(codes.shape[1]):
        expected = _rest_mode_by_hand(codes, r)
        np.testing.assert_array_equal(rests[:, r], expected)
        np.testing.assert_array_equal(ag.rest_majority(codes, r, 4), expected)
    assert np.isnan(rests).any() and not np.isnan(rests).all()  # ties and untied units both occur


@pytest.mark.parametrize(("seed", "missing"), CASES)
@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_every_pair_kappa_equals_cohen_kappa_on_the_two_columns(seed, missing, weights):
    codes = _random_ratings(seed, missing=missing)
    pairs = ag.pairwise_matrix(codes, 4, weights)
    assert list(pairs) == list(combinations(range(codes.shape[1]), 2))
    for (i, j), est in pairs.items():
        assert est.as_dict() == ag.cohen_kappa(codes[:, i], codes[:, j], 4, weights).as_dict()


def test_pair_table_counts_both_rated_in_the_table_and_one_rated_as_excluded():
    a = np.array([0, 1, 1, NAN, 0, NAN, 2])
    b = np.array([0, 1, NAN, 1, 2, NAN, 2])
    coded = ag.codes_with_missing(np.stack([a, b], axis=1), 3)
    table, n_excluded = ag.pair_table(coded[:, 0], coded[:, 1], 3)
    np.testing.assert_array_equal(table, [[1, 0, 1], [0, 1, 0], [0, 0, 1]])
    assert n_excluded == 2  # unit 2 (only a) and unit 3 (only b); unit 5, rated by neither, is not counted


@pytest.mark.parametrize(("seed", "missing"), CASES)
def test_each_against_rest_is_cohen_kappa_against_the_rest_majority(seed, missing):
    codes = _random_ratings(seed, missing=missing)
    got = ag.each_against_rest(codes, 4, reference=0.4, weights="linear")
    for r, est in enumerate(got):
        rest = _rest_mode_by_hand(codes, r)
        expected = ag.cohen_kappa(codes[:, r], rest, 4, "linear")
        both = ~np.isnan(codes[:, r]) & ~np.isnan(rest)
        assert {k: v for k, v in est.as_dict().items() if k not in ("agreement_with_rest", "n_rated", "outlier")} == (
            expected.as_dict()
        )
        agreeing = float((codes[both, r] == rest[both]).mean()) if both.any() else None
        assert est.extra["agreement_with_rest"] == agreeing
        assert est.extra["n_rated"] == int((~np.isnan(codes[:, r])).sum())
        assert est.extra["outlier"] == bool(est.ci95 is not None and est.ci95[1] < 0.4)


@pytest.mark.parametrize(("seed", "missing"), CASES)
def test_per_label_kappa_is_fleiss_kappa_of_that_label_against_all_others(seed, missing):
    codes = _random_ratings(seed, missing=missing)
    counts = ag.category_counts(codes, 4)
    labels = ["a", "b", "c", "d"]
    got = ag.per_label_agreement(codes, labels)
    total = counts.sum(axis=1)
    for j, label in enumerate(labels):
        two_columns = np.stack([counts[:, j], total - counts[:, j]], axis=1)
        assert got[label].as_dict() == ag.fleiss_kappa_from_counts(two_columns).as_dict()


def test_per_label_kappa_is_undefined_for_every_label_when_no_unit_is_rated_twice():
    codes = np.array([[0, NAN], [NAN, 1], [2, NAN]])
    got = ag.per_label_agreement(codes, ["a", "b", "c"])
    assert all(e.value is None and "two or more raters" in e.reason and e.n_excluded == 3 for e in got.values())


@pytest.mark.parametrize(("seed", "missing"), CASES)
def test_percent_agreement_from_counts_equals_the_columns(seed, missing):
    codes = _random_ratings(seed, missing=missing)
    by_columns = ag.percent_agreement(codes)
    by_counts = ag.percent_agreement(codes, counts=ag.category_counts(codes, 4))
    assert by_counts.value == by_columns.value and by_counts.ci95 == by_columns.ci95
    assert (by_counts.n_units, by_counts.n_excluded) == (by_columns.n_units, by_columns.n_excluded)
    assert by_counts.extra["n_agreeing_units"] == by_columns.extra["n_agreeing_units"]


@pytest.mark.parametrize(("seed", "missing"), CASES)
def test_category_counts_count_each_units_ratings_per_category(seed, missing):
    codes = _random_ratings(seed, missing=missing)
    counts = ag.category_counts(codes, 4)
    assert counts.shape == (codes.shape[0], 4) and counts.flags.c_contiguous
    for u, row in enumerate(codes):
        by_hand = Counter(int(v) for v in row if not np.isnan(v))
        assert counts[u].tolist() == [by_hand.get(c, 0) for c in range(4)]


@pytest.mark.parametrize("bad", [3.0, 4.0, -1.0])
def test_a_code_off_the_scale_is_refused_even_one_past_its_end(bad):
    # One past the end is what codes_with_missing writes for "not rated": a rating there must not pass for one.
    codes = np.array([[0, 1], [bad, 2], [NAN, 0]])
    for call in (
        lambda: ag.category_counts(codes, 3),
        lambda: ag.codes_with_missing(codes, 3),
        lambda: ag.pairwise_matrix(codes, 3),
        lambda: ag.rest_majorities(codes, 3),
    ):
        with pytest.raises(ag.ScaleError):
            call()


def test_alpha_is_undefined_when_the_pairable_units_use_one_category_whatever_unpaired_units_say():
    # Unit 1 is rated once, in another category: it is not pairable, so the pairable values are all 0.
    codes = np.array([[0, 0], [1, NAN], [0, 0]])
    for counts in (None, ag.category_counts(codes, 2)):
        est = ag.krippendorff_alpha(codes, "nominal", 2, counts=counts)
        assert est.value is None and "same value" in est.reason
        assert (est.n_units, est.n_excluded) == (2, 1)
    assert ag.krippendorff_alpha(np.array([[0, 0], [1, 1], [0, 0]]), "nominal", 2).value is not None
