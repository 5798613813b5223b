"""Agreement statistics: the rules that mutation testing (bench/mutation.sh) found unpinned.

test_agreement.py checks each statistic against a published worked example; these tests pin what those
examples leave open — what an estimate reports besides its value (counts, reasons, intervals, the keys of
its dict), the edges of each rule (one unit, two replicates, a rater whose colleagues did not rate), the
bootstraps' progress and silence, and the summary that reports and exports read. Where a value is asserted
it comes from a published example (cited), a closed form worked out here, or the same statistic computed
by another route (the standalone function checked in test_agreement.py, or the ``krippendorff`` package).
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager

import krippendorff
import numpy as np
import pytest

from adjudication.stats import agreement as ag
from tests.adjudication.stats.test_agreement import DIAGNOSES, KRIPP_2011, kqa_codes

NAN = np.nan
SEEN = list[tuple[int, int]]


@contextmanager
def no_warnings():
    """Undefined bootstrap replicates are counted, never announced with a numpy RuntimeWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _recorder() -> tuple[SEEN, ag.Progress]:
    seen: SEEN = []
    return seen, lambda done, total: seen.append((done, total))


# --- Estimate -----------------------------------------------------------------------------------------


def test_an_estimate_as_a_dict_carries_counts_interval_standard_error_and_extras():
    est = ag.Estimate(value=0.5, n_units=3, n_excluded=1, ci95=(0.1, 0.9), ci_method="m", se=0.2, extra={"k": 1})
    assert est.as_dict() == {
        "value": 0.5, "n_units": 3, "n_excluded_units": 1, "ci95": [0.1, 0.9], "ci_method": "m", "se": 0.2, "k": 1,
    }
    # Without an interval or a standard error, neither key appears.
    assert ag.Estimate(value=0.5, n_units=3).as_dict() == {"value": 0.5, "n_units": 3, "n_excluded_units": 0}


def test_an_undefined_estimate_says_why_and_counts_nothing_unless_told():
    assert ag.Estimate.undefined("why").as_dict() == {"value": None, "reason": "why", "n_units": 0,
                                                      "n_excluded_units": 0}
    assert ag.Estimate.undefined("why", n_units=2, n_excluded=1, raters=3).as_dict() == {
        "value": None, "reason": "why", "n_units": 2, "n_excluded_units": 1, "raters": 3,
    }


# --- input and its refusals ---------------------------------------------------------------------------


def test_values_map_to_positions_on_the_declared_scale_whatever_is_missing():
    codes = ag.codes_from_values([[None, "b"], ["a", None], ["b", "a"]], ["a", "b"])
    np.testing.assert_array_equal(codes, [[NAN, 1], [0, NAN], [1, 0]])
    assert ag.codes_from_values([], ["a", "b"]).shape == (0, 0)


def test_malformed_ratings_are_refused_with_their_reason():
    with pytest.raises(ag.ScaleError, match=r"^the declared scale repeats a value$"):
        ag.codes_from_values([["a"]], ["a", "a"])
    with pytest.raises(ValueError, match=r"^ratings must be a units × raters matrix$"):
        ag.percent_agreement(np.array([0.0, 1.0]))
    # A code past the scale's end, or below its start, is refused rather than read as "not rated".
    for bad in (3.0, -1.0):
        with pytest.raises(ag.ScaleError, match=r"^codes must lie in 0\.\.2$"):
            ag.codes_with_missing(np.array([[0.0, bad]]), 3)
    with pytest.raises(ValueError, match=r"^unknown weights 'cubic'$"):
        ag.kappa_from_table(np.array([[1, 0], [0, 1]]), "cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^unknown level 'ratio'$"):
        ag.krippendorff_alpha(np.array([[0.0, 1.0], [1.0, 1.0]]), "ratio")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^nominal and ordinal α need the declared scale size$"):
        ag.krippendorff_alpha(np.array([[0.0, 1.0], [1.0, 1.0]]), "ordinal")
    with pytest.raises(ArithmeticError, match=r"^a statistic came out NaN or infinite instead of being reported"):
        ag._finite({"kappa": [1.0, float("nan")]})


# --- intervals -----------------------------------------------------------------------------------------


def test_the_wilson_interval_of_one_success_in_one_trial_and_of_no_trial():
    # Wilson (1927): for x = n = 1 the lower bound is 1 / (1 + z²) = 0.20655 and the upper bound 1.
    low, high = ag.wilson_interval(1, 1)
    assert low == pytest.approx(1 / (1 + ag.Z95**2)) and high == pytest.approx(1.0)
    assert ag.wilson_interval(0, 0) is None


def test_a_percentile_interval_needs_two_defined_replicates_and_counts_the_others():
    assert ag.percentile_ci(np.array([0.0, 1.0])) == ((0.025, 0.975), 0)
    assert ag.percentile_ci(np.array([0.5, NAN, np.inf])) == (None, 2)


# --- percent agreement and Cohen's κ ------------------------------------------------------------------


def test_percent_agreement_without_any_pair_says_why():
    est = ag.percent_agreement(np.array([[0.0, NAN], [NAN, NAN]]))
    assert est.as_dict() == {"value": None, "reason": "no unit was rated by two or more raters", "n_units": 0,
                             "n_excluded_units": 1}


def test_cohen_kappa_without_a_common_unit_or_with_one_names_the_right_reason():
    none = ag.cohen_kappa(np.array([0.0, NAN]), np.array([NAN, 1.0]), 2)
    assert none.as_dict() == {"value": None, "reason": "the two raters have no unit in common", "n_units": 0,
                              "n_excluded_units": 2}
    one = ag.cohen_kappa(np.array([1, 0]), np.array([1, NAN]), 2)  # one unit in common: one category each
    assert one.reason == "chance agreement is 1: both raters used one and the same category"
    assert (one.n_units, one.n_excluded) == (1, 1)
    empty = ag.kappa_from_table(np.zeros((2, 2), dtype=int), n_excluded=4)
    assert (empty.reason, empty.n_excluded) == ("the two raters have no unit in common", 4)
    same = ag.kappa_from_table(np.array([[0, 0], [0, 3]]), "linear", n_excluded=2)
    assert same.as_dict() == {"value": None, "reason": "chance agreement is 1: both raters used one and the same "
                              "category", "n_units": 3, "n_excluded_units": 2}
    # Quadratic weights too: both raters always answered the second category.
    assert ag.kappa_from_table(np.array([[0, 0], [0, 3]]), "quadratic").value is None


def test_cohen_kappa_reports_its_weights_observed_agreement_and_asymptotic_interval():
    # SAS/STAT PROC FREQ AGREE example (the table of test_agreement.py): simple κ 0.4842, ASE 0.1380.
    table = np.array([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    est = ag.kappa_from_table(table)  # unweighted by default, nothing excluded
    assert est.n_excluded == 0
    assert round(est.value, 4) == 0.4842 and round(est.se, 4) == 0.1380
    assert est.ci95 == pytest.approx((est.value - ag.Z95 * est.se, est.value + ag.Z95 * est.se))
    assert est.ci_method == "asymptotic (Fleiss, Cohen & Everitt 1969)"
    assert est.extra == {"weights": "none", "observed_agreement": pytest.approx(13 / 19)}
    assert ag.kappa_from_table(table, "linear").extra["weights"] == "linear"


def test_the_asymptotic_interval_is_clipped_to_minus_one_and_one():
    high = ag.kappa_from_table(np.array([[3, 0], [1, 1]]))  # κ = 6/11 with a wide interval
    assert high.value + ag.Z95 * high.se > 1 and high.ci95[1] == 1.0
    low = ag.kappa_from_table(np.array([[0, 2], [1, 0]]))  # κ = −0.8
    assert low.value - ag.Z95 * low.se < -1 and low.ci95[0] == -1.0


def test_a_kappa_whose_standard_error_is_undefined_carries_no_interval():
    # Rater A always answered the second category: κ = 0, and the asymptotic variance is 0/0.
    est = ag.kappa_from_table(np.array([[0, 0], [1, 2]]))
    assert est.value == 0.0 and (est.se, est.ci95, est.ci_method) == (None, None, None)
    assert "ci95" not in est.as_dict() and "se" not in est.as_dict()


def test_pairwise_kappas_use_the_weights_asked_for_and_count_units_only_one_rated():
    codes = np.array([[0, 0], [1, 2], [2, 2], [2, 1], [0, NAN], [NAN, 1], [NAN, 2], [0, 0]], dtype=float)
    (pair,) = ag.pairwise_matrix(codes, 3, "linear").values()
    expected = ag.cohen_kappa(codes[:, 0], codes[:, 1], 3, "linear")
    assert pair.as_dict() == expected.as_dict() and pair.extra["weights"] == "linear"
    (plain,) = ag.pairwise_matrix(codes, 3).values()
    assert plain.extra["weights"] == "none"
    assert (pair.n_units, pair.n_excluded) == (5, 3)  # one unit rated by the first only, two by the second only


# --- Fleiss' κ -----------------------------------------------------------------------------------------


def test_fleiss_kappa_of_two_raters_is_scotts_pi():
    # Fleiss (1971) generalises Scott's π, which it equals for two raters. Wikipedia's "Cohen's kappa" example
    # (50 proposals; both yes 20, A yes / B no 5, A no / B yes 10, both no 15): π = (0.70 − 0.505) / 0.495.
    codes = np.array([[0, 0]] * 20 + [[0, 1]] * 5 + [[1, 0]] * 10 + [[1, 1]] * 15, dtype=float)
    est = ag.fleiss_kappa(codes, 2)
    assert est.value == pytest.approx((0.70 - 0.505) / 0.495)
    assert est.as_dict() == {"value": est.value, "n_units": 50, "n_excluded_units": 0, "raters_per_unit": 2}


def test_fleiss_kappa_of_one_category_says_why_with_its_counts():
    codes = np.array([[1, 1], [1, 1], [1, NAN], [1, 1]], dtype=float)
    assert ag.fleiss_kappa(codes, 3).as_dict() == {
        "value": None, "reason": "every rating is the same category, so chance agreement is 1", "n_units": 3,
        "n_excluded_units": 1, "raters_per_unit": 2,
    }
    assert ag.fleiss_kappa_from_counts(np.array([[1, 0], [0, 1], [0, 0]])).as_dict() == {
        "value": None, "reason": "no unit was rated by two or more raters", "n_units": 0, "n_excluded_units": 2,
    }


def test_fleiss_kappa_bootstraps_only_when_asked_seed_zero_by_default_and_reports_progress():
    assert "ci_method" not in ag.fleiss_kappa(DIAGNOSES, 5).as_dict()
    seen, progress = _recorder()
    booted = ag.fleiss_kappa(DIAGNOSES, 5, n_boot=120, progress=progress)
    assert booted.ci_method == "percentile bootstrap over units, 120 resamples, seed 0"
    assert booted.as_dict() == ag.fleiss_kappa(DIAGNOSES, 5, n_boot=120, seed=0).as_dict()
    assert seen == [(50, 120), (100, 120), (120, 120)]
    seen, progress = _recorder()
    counts = ag.category_counts(DIAGNOSES, 5)
    from_counts = ag.fleiss_kappa_from_counts(counts, n_boot=60, progress=progress)
    assert seen == [(50, 60), (60, 60)] and from_counts.ci_method.endswith("60 resamples, seed 0")
    # From counts too, no replicate unless asked: not even one (which would count its undefined replicates).
    plain = ag.fleiss_kappa_from_counts(counts)
    assert plain.ci_method is None and plain.as_dict() == ag.fleiss_kappa(DIAGNOSES, 5).as_dict()
    # One replicate is a bootstrap too, even though it cannot make an interval.
    one = ag.fleiss_kappa(DIAGNOSES, 5, n_boot=1)
    assert one.ci95 is None and one.ci_method.endswith("1 resamples, seed 0") and one.extra["n_boot_undefined"] == 0


def test_undefined_bootstrap_replicates_are_counted_without_a_warning():
    # Three units, two of them rated "a" by everyone: some resamples hold only those, where κ is 0/0.
    codes = np.array([[0, 0, 0], [0, 0, 0], [0, 1, 1]], dtype=float)
    with no_warnings():
        fleiss = ag.fleiss_kappa(codes, 2, n_boot=200, seed=1)
        alpha = ag.krippendorff_alpha(codes, "nominal", 2, n_boot=200, seed=1)
        interval = ag.krippendorff_alpha(codes, "interval", n_boot=200, seed=1)
    for est in (fleiss, alpha, interval):
        assert 0 < est.extra["n_boot_undefined"] < 200
    # A resample holds only the two unanimous units with probability (2/3)³ (59 of 200 expected; 35..85 is
    # beyond 3.5 binomial standard deviations either way). κ and α resample the same patterns with the same seed.
    assert fleiss.extra["n_boot_undefined"] == alpha.extra["n_boot_undefined"]
    assert all(35 <= est.extra["n_boot_undefined"] <= 85 for est in (fleiss, interval))


# --- Krippendorff's α ----------------------------------------------------------------------------------


def test_alpha_is_nominal_by_default_and_says_its_level():
    # Krippendorff (2011), section C: nominal α = 0.743.
    est = ag.krippendorff_alpha(KRIPP_2011 - 1, n_categories=5)
    assert round(est.value, 3) == 0.743 and est.extra == {"level": "nominal"}
    # Eleven units rated by two or more observers; the last one by one only.
    assert est.as_dict() == {"value": est.value, "n_units": 11, "n_excluded_units": 1, "level": "nominal"}


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_from_one_coincidence_matrix_needs_no_batch_axis(level):
    # The bootstraps pass a batch of coincidence matrices (…, k, k); one matrix alone is the same arithmetic.
    # Krippendorff (2011), section C: nominal 0.743, ordinal 0.815, interval 0.849, as the package computes them.
    codes = KRIPP_2011 - 1
    counts = ag.category_counts(codes[(~np.isnan(codes)).sum(axis=1) >= 2], 5).astype(float)
    scaled = counts / (counts.sum(axis=1) - 1.0)[:, None]
    o = scaled.T @ counts - np.diag(scaled.sum(axis=0))
    value = ag._alpha_from_coincidence(o, level)
    assert np.ndim(value) == 0
    assert float(value) == pytest.approx(krippendorff.alpha(reliability_data=KRIPP_2011.T, level_of_measurement=level))
    assert float(value) == pytest.approx(float(ag._alpha_from_coincidence(o[None], level)[0]))


def test_alpha_with_two_values_each_used_once_is_defined():
    codes = np.array([[0, 0], [0, 1]], dtype=float)
    est = ag.krippendorff_alpha(codes, "nominal", 2)
    assert est.value == pytest.approx(krippendorff.alpha(reliability_data=codes.T, level_of_measurement="nominal"))


def test_alpha_of_one_value_says_why_with_its_counts():
    codes = np.array([[2, 2], [2, NAN], [2, 2]], dtype=float)
    expected = {"value": None, "reason": "every pairable rating has the same value, so expected disagreement is 0",
                "n_units": 2, "n_excluded_units": 1}
    assert ag.krippendorff_alpha(codes, "nominal", 3).as_dict() == expected
    assert ag.krippendorff_alpha(codes, "interval").as_dict() == expected
    assert ag.krippendorff_alpha(np.array([[1.0, NAN]]), "nominal", 2).reason == (
        "no unit was rated by two or more raters"
    )


def test_interval_alpha_past_the_packages_size_is_the_closed_form():
    # More distinct values than MAX_DISTINCT_FOR_PACKAGE: the closed form, equal to the package's statistic.
    rng = np.random.default_rng(4)
    truth = rng.normal(size=1100)
    codes = np.stack([truth + rng.normal(0, 0.5, truth.size), truth + rng.normal(0, 0.5, truth.size)], axis=1)
    assert np.unique(codes).size > ag.MAX_DISTINCT_FOR_PACKAGE
    est = ag.krippendorff_alpha(codes, "interval")
    # (The package would build a units × values × values array here: 40 GB.) Truth variance 1, noise 0.25 each.
    assert est.value == pytest.approx(ag.interval_alpha_exact(codes)) and 0.75 < est.value < 0.85


def test_integer_interval_ratings_are_computed_in_floating_point():
    # Ratings given as int64 (large counts, say): the closed form and the bootstrap square them, which would wrap
    # around in int64 past about 3·10⁹. α is a ratio of disagreements: the same values over 10¹⁰ give the same α.
    values = np.array([[1, 2], [3, 3], [5, 4], [2, 2]], dtype=np.int64) * 10_000_000_000
    scaled = values / 1e10
    expected = krippendorff.alpha(reliability_data=scaled.T, level_of_measurement="interval")
    assert ag.interval_alpha_exact(values) == pytest.approx(expected)
    large = ag.krippendorff_alpha(values, "interval", n_boot=50)
    small = ag.krippendorff_alpha(scaled, "interval", n_boot=50)
    assert large.value == pytest.approx(expected) and large.ci95 == pytest.approx(small.ci95)
    assert large.extra == small.extra


def test_the_closed_form_is_undefined_without_variance_and_defined_for_small_numbers():
    assert ag.interval_alpha_exact(np.array([[0.3, 0.3], [0.3, 0.3]])) is None
    tiny = np.array([[0.01, 0.02], [0.05, 0.05], [0.09, 0.08]])
    assert ag.interval_alpha_exact(tiny) == pytest.approx(
        krippendorff.alpha(reliability_data=tiny.T, level_of_measurement="interval")
    )


def test_alpha_and_its_interval_do_not_depend_on_the_unit_of_measurement():
    # α is a ratio of disagreements: rescaling every value leaves it and its bootstrap interval unchanged.
    rng = np.random.default_rng(2)
    truth = rng.normal(size=40)
    codes = np.stack([truth + rng.normal(0, 0.4, 40) for _ in range(3)], axis=1)
    seen, progress = _recorder()
    small = ag.krippendorff_alpha(codes / 1000, "interval", n_boot=100, seed=5, progress=progress)
    large = ag.krippendorff_alpha(codes * 1000, "interval", n_boot=100, seed=5)
    assert small.value == pytest.approx(large.value) and small.ci95 == pytest.approx(large.ci95)
    assert small.extra == {"level": "interval", "n_boot_undefined": 0}
    assert seen == [(50, 100), (100, 100)]


def test_alpha_bootstraps_only_when_asked_with_seed_zero_by_default():
    codes = kqa_codes()[:80]
    assert "ci95" not in ag.krippendorff_alpha(codes, "nominal", 3).as_dict()
    assert ag.krippendorff_alpha(codes, "nominal", 3, n_boot=60).as_dict() == ag.krippendorff_alpha(
        codes, "nominal", 3, n_boot=60, seed=0
    ).as_dict()
    one = ag.krippendorff_alpha(codes, "nominal", 3, n_boot=1)
    assert one.ci95 is None and one.ci_method == "percentile bootstrap over units, 1 resamples, seed 0"


# --- per label, against the rest -----------------------------------------------------------------------


def test_per_label_kappas_count_units_rated_once_as_excluded_and_unrated_ones_not_at_all():
    codes = np.vstack([DIAGNOSES[:, :2], [[0, NAN], [NAN, NAN]]])
    labels = ["depression", "personality", "schizophrenia", "neurosis", "other"]
    per_label = ag.per_label_agreement(codes, labels)
    assert list(per_label) == labels
    for label, est in per_label.items():
        assert (est.n_units, est.n_excluded) == (30, 1), label
        assert est.extra == {"raters_per_unit": 2} and est.ci95 is None  # no bootstrap per label
    # With no unit rated twice, every label says so.
    assert {label: e.as_dict() for label, e in ag.per_label_agreement(np.array([[0, NAN], [NAN, 1]]),
                                                                     ["a", "b"]).items()} == {
        label: {"value": None, "reason": "no unit was rated by two or more raters", "n_units": 0,
                "n_excluded_units": 2}
        for label in ("a", "b")
    }


def test_the_rest_majority_is_the_single_other_raters_answer_and_missing_where_nobody_else_rated():
    codes = np.array([[0, 1], [2, NAN], [NAN, 2]], dtype=float)
    np.testing.assert_array_equal(ag.rest_majority(codes, 0, 3), [1, NAN, 2])
    np.testing.assert_array_equal(ag.rest_majority(codes, 1, 3), [0, 2, NAN])


def test_on_a_one_category_scale_the_rest_majority_is_missing_only_where_nobody_else_rated():
    # Every other rating is the one category, so it is the majority wherever another rater rated at all.
    codes = np.array([[0, NAN], [0, 0], [NAN, 0]], dtype=float)
    np.testing.assert_array_equal(ag.rest_majority(codes, 0, 1), [NAN, 0, 0])
    np.testing.assert_array_equal(ag.rest_majority(codes, 1, 1), [0, 0, NAN])


def test_the_rest_majority_takes_the_raters_own_rating_out_of_the_table_it_is_given(monkeypatch):
    codes = np.array([[0, 1, 1], [2, 2, 0], [1, NAN, 1], [0, 2, NAN]], dtype=float)
    counts = ag.category_counts(codes, 3)

    def recount(coded, n_categories):
        raise AssertionError("the table was counted again")

    monkeypatch.setattr(ag, "_counts_of", recount)
    # The first rater's colleagues: 1 and 1; 2 and 0 (a tie); 1 alone; 2 alone.
    np.testing.assert_array_equal(ag.rest_majority(codes, 0, 3, counts=counts), [1, NAN, 1, 2])


def test_each_rater_against_the_rest_reports_units_rated_agreement_and_the_weights():
    codes = np.array([[0, 0, 0], [1, 1, 2], [2, 2, 2], [0, 1, 1], [NAN, 2, 2], [1, 0, 1]], dtype=float)
    first, second, third = ag.each_against_rest(codes, 3, weights="linear")
    assert [e.extra["n_rated"] for e in (first, second, third)] == [5, 6, 6]
    # The first rater against the others' majority (ties excluded): both are there on units 0, 2 and 3, and
    # agree on 0 and 2; on unit 4 the first did not rate, on units 1 and 5 the others tie.
    rest = ag.rest_majority(codes, 0, 3)
    np.testing.assert_array_equal(rest, [0, NAN, 2, 1, 2, NAN])
    assert (first.n_units, first.n_excluded) == (3, 3)
    assert first.extra["agreement_with_rest"] == pytest.approx(2 / 3)
    expected = ag.cohen_kappa(codes[:, 0], rest, 3, "linear")
    assert first.value == pytest.approx(expected.value) and first.extra["weights"] == "linear"


def test_a_rater_who_never_meets_a_majority_of_the_rest_has_no_agreement_with_it():
    # The first rater rated only the units where the other two disagree (no majority).
    codes = np.array([[0, 0, 1], [1, 1, 2], [NAN, 2, 2], [NAN, 0, 0]], dtype=float)
    first = ag.each_against_rest(codes, 3)[0]
    assert first.extra["agreement_with_rest"] is None and first.value is None and first.n_excluded == 4


def test_a_rater_is_flagged_only_when_the_interval_lies_strictly_below_the_reference():
    codes = kqa_codes()[:120]
    plain = ag.each_against_rest(codes, 3)
    edge = plain[0].ci95[1]
    assert ag.each_against_rest(codes, 3, reference=edge)[0].extra["outlier"] is False
    assert ag.each_against_rest(codes, 3, reference=edge + 1e-9)[0].extra["outlier"] is True


# --- the summary reports and exports read ---------------------------------------------------------------


SUMMARY_KEYS = {
    "n_units", "n_raters", "n_excluded_units", "level", "scale", "raters", "percent_agreement", "fleiss_kappa",
    "krippendorff_alpha", "cohen_kappa_pairs", "cohen_kappa", "each_against_rest", "per_label",
    "mean_pairwise_cohen_kappa", "weights", "bootstrap",
}


def _random_fourth_rater() -> np.ndarray:
    """Three raters who mostly agree and a fourth who answers at random (test_agreement.py's outlier case)."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, 300)
    codes = np.stack([truth, truth, truth, rng.integers(0, 3, 300)], axis=1).astype(float)
    noisy = rng.random((300, 3)) < 0.1
    codes[:, :3][noisy] = rng.integers(0, 3, noisy.sum())
    return codes


def test_the_summary_is_every_statistic_computed_on_its_own():
    codes = _random_fourth_rater()
    scale, names = ["none", "some", "severe"], ["w", "x", "y", "z"]
    s = ag.agreement_summary(codes, level="ordinal", scale=scale, rater_names=names, weights="linear", n_boot=60,
                             seed=5)
    assert set(s) == SUMMARY_KEYS
    assert (s["level"], s["weights"], s["bootstrap"], s["scale"], s["raters"]) == (
        "ordinal", "linear", {"n": 60, "seed": 5}, scale, names
    )
    assert s["percent_agreement"] == ag.percent_agreement(codes).as_dict()
    fleiss = ag.fleiss_kappa(codes, 3, n_boot=60, seed=5)
    assert s["fleiss_kappa"] == fleiss.as_dict()
    assert s["krippendorff_alpha"] == ag.krippendorff_alpha(codes, "ordinal", 3, n_boot=60, seed=5).as_dict()
    pairs = [
        {"rater_a": names[i], "rater_b": names[j], **ag.cohen_kappa(codes[:, i], codes[:, j], 3, "linear").as_dict()}
        for i, j in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
    ]
    assert s["cohen_kappa_pairs"] == pairs
    assert s["mean_pairwise_cohen_kappa"] == pytest.approx(np.mean([p["value"] for p in pairs]))
    assert s["cohen_kappa"] == {"value": None, "reason": "Cohen's κ compares exactly two raters; there are 4 (see "
                                "cohen_kappa_pairs)", "n_units": 0, "n_excluded_units": 0}
    # Each rater against the rest, flagged against the pool's Fleiss κ: the fourth, who answers at random.
    rest = ag.each_against_rest(codes, 3, reference=fleiss.value, weights="linear")
    assert s["each_against_rest"] == [{"rater": n, **e.as_dict()} for n, e in zip(names, rest, strict=True)]
    assert [r["outlier"] for r in s["each_against_rest"]] == [False, False, False, True]
    assert s["per_label"] == [
        {"label": label, **e.as_dict()} for label, e in ag.per_label_agreement(codes, scale).items()
    ]


def test_a_summary_counts_the_ratings_once_and_hands_that_table_to_every_statistic(monkeypatch):
    # The report's cost is one count table (bench/agreement.py); every statistic that can use it gets it.
    tables: list[np.ndarray] = []
    given: list[np.ndarray | None] = []
    count, percent = ag._counts_of, ag.percent_agreement

    def counting(coded, n_categories):
        tables.append(count(coded, n_categories))
        return tables[-1]

    def percent_agreement(codes, *, counts=None):
        given.append(counts)
        return percent(codes, counts=counts)

    monkeypatch.setattr(ag, "_counts_of", counting)
    monkeypatch.setattr(ag, "percent_agreement", percent_agreement)
    codes = kqa_codes()[:60]
    s = ag.agreement_summary(codes, level="nominal", scale=["E", "N", "C"], rater_names=["a", "b", "c"])
    assert len(tables) == 1 and len(given) == 1 and given[0] is tables[0]
    assert (len(s["per_label"]), len(s["each_against_rest"])) == (3, 3)


def test_a_summary_reports_the_progress_of_both_bootstraps_in_order_and_seed_zero_by_default():
    codes = kqa_codes()[:60]
    seen, progress = _recorder()
    s = ag.agreement_summary(codes, level="nominal", scale=["E", "N", "C"], rater_names=["a", "b", "c"],
                             n_boot=120, progress=progress)
    # Fleiss' κ's bootstrap first, then α's, each in batches of 50, on one scale of 240.
    assert seen == [(50, 240), (100, 240), (120, 240), (170, 240), (220, 240), (240, 240)]
    assert s["bootstrap"] == {"n": 120, "seed": 0}
    assert s["fleiss_kappa"]["ci_method"] == "percentile bootstrap over units, 120 resamples, seed 0"
    seen, progress = _recorder()
    one = ag.agreement_summary(codes, level="nominal", scale=["E", "N", "C"], rater_names=["a", "b", "c"],
                               n_boot=1, progress=progress)
    assert one["bootstrap"] == {"n": 1, "seed": 0} and seen == [(1, 2), (2, 2)]


def test_a_summary_of_three_raters_compares_each_with_the_other_two():
    codes = kqa_codes()[:60]
    s = ag.agreement_summary(codes, level="nominal", scale=["E", "N", "C"], rater_names=["a", "b", "c"])
    assert [r["rater"] for r in s["each_against_rest"]] == ["a", "b", "c"]
    assert s["bootstrap"] is None and s["weights"] == "none"


def test_a_summary_of_two_raters_on_a_binary_scale():
    # Wikipedia's "Cohen's kappa" worked example (50 proposals): κ = 0.4.
    codes = np.array([[0, 0]] * 20 + [[0, 1]] * 5 + [[1, 0]] * 10 + [[1, 1]] * 15, dtype=float)
    s = ag.agreement_summary(codes, level="nominal", scale=[True, False], rater_names=["A", "B"])
    assert s["cohen_kappa"]["value"] == pytest.approx(0.4)
    (pair,) = s["cohen_kappa_pairs"]
    assert (pair.pop("rater_a"), pair.pop("rater_b")) == ("A", "B") and s["cohen_kappa"] == pair
    assert s["scale"] == ["True", "False"]
    # Per-label κ repeats Fleiss' κ on a binary scale, and two raters have no "rest" to compare with.
    assert (s["per_label"], s["each_against_rest"]) == ([], [])
    assert s["mean_pairwise_cohen_kappa"] == pytest.approx(0.4)


def test_a_summary_of_numbers_has_no_kappa_and_says_why():
    # Krippendorff (2011), section C: interval α = 0.849.
    s = ag.agreement_summary(KRIPP_2011, level="interval", scale=None, rater_names=["A", "B", "C", "D"])
    assert set(s) == SUMMARY_KEYS and s["scale"] is None
    assert round(s["krippendorff_alpha"]["value"], 3) == 0.849
    assert s["fleiss_kappa"] == {"value": None, "reason": "Fleiss' κ needs a categorical scale; these ratings are "
                                 "interval numbers", "n_units": 0, "n_excluded_units": 0}
    assert s["cohen_kappa"] == {"value": None, "reason": "Cohen's κ needs a categorical scale; these ratings are "
                                "interval numbers", "n_units": 0, "n_excluded_units": 0}
    assert (s["cohen_kappa_pairs"], s["each_against_rest"], s["per_label"]) == ([], [], [])
    assert s["mean_pairwise_cohen_kappa"] is None and s["bootstrap"] is None
