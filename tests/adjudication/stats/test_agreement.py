"""Agreement statistics against published worked examples (each cited where it is used)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from adjudication.stats import agreement as ag

NAN = np.nan
# The copy shipped with the demo (data/demo/kqa, checksummed against its MANIFEST.md).
KQA = Path(__file__).resolve().parents[3] / "data" / "demo" / "kqa" / "NLI_medical_annotator.csv"

# Fleiss (1971), "Measuring nominal scale agreement among many raters", Psychological Bulletin 76(5):
# 30 patients, 6 psychiatrists each, 5 diagnoses (1 depression, 2 personality disorder,
# 3 schizophrenia, 4 neurosis, 5 other). Raw ratings as shipped with R's irr package (`diagnoses`).
DIAGNOSES = (
    np.array(
        [
            [4, 4, 4, 4, 4, 4],
            [2, 2, 2, 5, 5, 5],
            [2, 3, 3, 3, 3, 5],
            [5, 5, 5, 5, 5, 5],
            [2, 2, 2, 4, 4, 4],
            [1, 1, 3, 3, 3, 3],
            [3, 3, 3, 3, 5, 5],
            [1, 1, 3, 3, 3, 4],
            [1, 1, 4, 4, 4, 4],
            [5, 5, 5, 5, 5, 5],
            [1, 4, 4, 4, 4, 4],
            [1, 2, 4, 4, 4, 4],
            [2, 2, 2, 3, 3, 3],
            [1, 4, 4, 4, 4, 4],
            [2, 2, 4, 4, 4, 5],
            [3, 3, 3, 3, 3, 5],
            [1, 1, 1, 4, 5, 5],
            [1, 1, 1, 1, 1, 2],
            [2, 2, 4, 4, 4, 4],
            [1, 3, 3, 5, 5, 5],
            [5, 5, 5, 5, 5, 5],
            [2, 4, 4, 4, 4, 4],
            [2, 2, 4, 5, 5, 5],
            [1, 1, 4, 4, 4, 4],
            [1, 4, 4, 4, 4, 5],
            [2, 2, 2, 2, 2, 4],
            [1, 1, 1, 1, 5, 5],
            [2, 2, 4, 4, 4, 4],
            [1, 3, 3, 3, 3, 3],
            [5, 5, 5, 5, 5, 5],
        ],
        dtype=float,
    )
    - 1
)

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects × 14 raters × 5 categories, counts per cell.
WIKI_FLEISS_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers × 12
# units, values 1..5, with missing data. Published: nominal α = 0.743, interval α = 0.849; the
# ordinal value 0.815 is the one the `krippendorff` package's documentation gives for this matrix.
KRIPP_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
).T


def _from_table(table: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Two raters' codes from a k × k contingency table (rows rater A, columns rater B)."""
    a, b = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [i] * count
            b += [j] * count
    return np.array(a, float), np.array(b, float)


def _counts_to_codes(counts: list[list[int]]) -> np.ndarray:
    rows = [[c for c, n in enumerate(row) for _ in range(n)] for row in counts]
    return np.array(rows, dtype=float)


def kqa_codes() -> np.ndarray:
    scale = ["Entailment", "Neutral", "Contradiction"]
    with KQA.open(newline="") as fh:
        rows = [[r["label_0"], r["label_1"], r["label_2"]] for r in csv.DictReader(fh)]
    return ag.codes_from_values(rows, scale)


# --- Fleiss -----------------------------------------------------------------------------------


def test_fleiss_kappa_reproduces_fleiss_1971_psychiatric_diagnoses():
    # Fleiss (1971) p. 381: κ = 0.430; R irr::kappam.fleiss(diagnoses) prints Kappa = 0.43.
    est = ag.fleiss_kappa(DIAGNOSES, 5)
    assert round(est.value, 3) == 0.430
    assert est.n_units == 30 and est.n_excluded == 0 and est.extra["raters_per_unit"] == 6


def test_per_category_kappas_reproduce_fleiss_1971_table():
    # Fleiss (1971) per-category κ_j (also irr::kappam.fleiss(diagnoses, detail=TRUE)):
    # depression .245, personality disorder .245, schizophrenia .520, neurosis .471, other .566.
    per = ag.per_label_agreement(DIAGNOSES, ["dep", "pd", "sch", "neu", "oth"])
    assert {k: round(v.value, 3) for k, v in per.items()} == {
        "dep": 0.245,
        "pd": 0.245,
        "sch": 0.520,
        "neu": 0.471,
        "oth": 0.566,
    }


def test_fleiss_kappa_reproduces_the_wikipedia_worked_example():
    # Wikipedia "Fleiss' kappa", worked example table: κ = 0.210.
    est = ag.fleiss_kappa(_counts_to_codes(WIKI_FLEISS_COUNTS), 5)
    assert round(est.value, 3) == 0.210


def test_fleiss_kappa_excludes_units_with_another_number_of_ratings_instead_of_asserting():
    codes = DIAGNOSES.copy()
    codes[0, 5] = NAN  # five ratings on one unit: statsmodels would fail a bare assert
    codes[1, 1:] = NAN  # one rating only: unpairable
    est = ag.fleiss_kappa(codes, 5)
    assert est.n_units == 28 and est.n_excluded == 2
    assert est.value == pytest.approx(ag.fleiss_kappa(DIAGNOSES[2:], 5).value)


def test_missing_ratings_never_become_a_category():
    # statsmodels' aggregate_raters would count NaN as a sixth category; ours ignores it.
    counts = ag.category_counts(np.array([[0, NAN, 1], [NAN, NAN, 2]]), 3)
    assert counts.tolist() == [[1, 1, 0], [0, 0, 1]]


def test_fleiss_kappa_is_undefined_when_everyone_uses_one_category():
    est = ag.fleiss_kappa(np.zeros((10, 3)), 3)
    assert est.value is None and "chance agreement is 1" in est.reason


def test_fleiss_bootstrap_interval_is_seeded_and_brackets_the_estimate():
    a = ag.fleiss_kappa(DIAGNOSES, 5, n_boot=400, seed=7)
    b = ag.fleiss_kappa(DIAGNOSES, 5, n_boot=400, seed=7)
    assert a.ci95 == b.ci95
    assert a.ci95[0] < a.value < a.ci95[1]


# --- Bootstrap replicates against the libraries -------------------------------------------------
#
# Each replicate of our vectorised bootstraps must equal the library's statistic (statsmodels'
# fleiss_kappa; the krippendorff package's alpha) computed on the same resample of units: the same
# seeded generator drives ``ag.pattern_resamples`` here and in the code under test, and each resample's
# count table is built here in full (each pattern's row as many times as the resample drew it). The
# interval must then be the 2.5th and 97.5th percentiles of those library replicates.


def _replicate_tables(counts: np.ndarray, n_boot: int, seed: int) -> list[np.ndarray]:
    patterns = ag.CountPatterns.of(counts)
    drawn = np.concatenate(list(ag.pattern_resamples(np.random.default_rng(seed), patterns.weights, n_boot, None)))
    assert drawn.shape == (n_boot, patterns.rows.shape[0]) and (drawn.sum(axis=1) == counts.shape[0]).all()
    return [np.repeat(patterns.rows, row, axis=0) for row in drawn]


def _library(fn, tables: list[np.ndarray]) -> np.ndarray:
    out = []
    for idx in tables:
        with np.errstate(divide="ignore", invalid="ignore"):
            try:
                out.append(float(fn(idx)))
            except (ZeroDivisionError, ValueError, AssertionError):
                out.append(math.nan)
    values = np.array(out)
    values[~np.isfinite(values)] = math.nan
    return values


def _percentiles(samples: np.ndarray) -> tuple[float, float]:
    low, high = np.percentile(samples[np.isfinite(samples)], [2.5, 97.5])
    return float(low), float(high)


def _fleiss_units(codes: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    counts = ag.category_counts(codes, k)
    per_unit = counts.sum(axis=1)
    m = int(np.bincount(per_unit[per_unit >= 2]).argmax())
    return counts[per_unit == m], m


@pytest.mark.parametrize(("name", "n_boot", "seed"), [("diagnoses", 120, 7), ("kqa", 120, 11)])
def test_every_fleiss_bootstrap_replicate_equals_statsmodels_on_the_same_resample(name, n_boot, seed):
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    codes, k = (DIAGNOSES, 5) if name == "diagnoses" else (kqa_codes(), 3)
    counts, m = _fleiss_units(codes, k)
    tables = _replicate_tables(counts, n_boot, seed)
    expected = _library(lambda table: sm_fleiss(table, method="fleiss"), tables)
    ours = ag._fleiss_boot(ag.CountPatterns.of(counts), m, n_boot, seed, None)
    np.testing.assert_allclose(ours, expected, rtol=1e-9, atol=1e-12, equal_nan=True)
    est = ag.fleiss_kappa(codes, k, n_boot=n_boot, seed=seed)
    assert est.ci95 == pytest.approx(_percentiles(expected), rel=1e-9)
    assert est.extra["n_boot_undefined"] == int(np.isnan(expected).sum())


def test_the_kqa_physicians_fleiss_interval_contains_their_kappa():
    est = ag.fleiss_kappa(kqa_codes(), 3, n_boot=400, seed=0)
    assert round(est.value, 3) == 0.719
    assert est.ci95[0] < est.value < est.ci95[1]


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
@pytest.mark.parametrize(("name", "n_boot", "seed"), [("kripp2011", 120, 5), ("kqa", 60, 13)])
def test_every_categorical_alpha_replicate_equals_the_krippendorff_package(level, name, n_boot, seed):
    codes, k = (KRIPP_2011 - 1, 5) if name == "kripp2011" else (kqa_codes(), 3)
    sub = codes[(~np.isnan(codes)).sum(axis=1) >= 2]
    counts = ag.category_counts(sub, k)
    tables = _replicate_tables(counts, n_boot, seed)
    expected = _library(
        lambda table: krippendorff.alpha(value_counts=table, value_domain=np.arange(k), level_of_measurement=level),
        tables,
    )
    ours = ag._categorical_boot(ag.CountPatterns.of(counts), level, n_boot, seed, None)
    np.testing.assert_allclose(ours, expected, rtol=1e-9, atol=1e-12, equal_nan=True)
    est = ag.krippendorff_alpha(codes, level, k, n_boot=n_boot, seed=seed)
    assert est.ci95 == pytest.approx(_percentiles(expected), rel=1e-9)


def test_every_interval_alpha_replicate_equals_the_krippendorff_package():
    rng = np.random.default_rng(4)
    values = rng.normal(size=(30, 4)) + rng.normal(size=(30, 1)) * 2
    values[rng.random(values.shape) < 0.2] = NAN
    sub = values[(~np.isnan(values)).sum(axis=1) >= 2]
    n_boot, seed = 120, 9
    # Interval α resamples the units themselves (its values are not count patterns).
    rows = np.concatenate(list(ag.resample_indices(np.random.default_rng(seed), sub.shape[0], n_boot, None)))
    expected = _library(
        lambda idx: krippendorff.alpha(reliability_data=sub[idx].T, level_of_measurement="interval"), list(rows)
    )
    ours = ag._interval_boot(sub, n_boot, seed, None)
    np.testing.assert_allclose(ours, expected, rtol=1e-9, atol=1e-12, equal_nan=True)
    est = ag.krippendorff_alpha(values, "interval", n_boot=n_boot, seed=seed)
    assert est.ci95 == pytest.approx(_percentiles(expected), rel=1e-9)


# --- Cohen -----------------------------------------------------------------------------------


def test_cohen_kappa_reproduces_the_wikipedia_fifty_proposals_example():
    # Wikipedia "Cohen's kappa", first worked example: 50 grant proposals, yes/yes 20, yes/no 5,
    # no/yes 10, no/no 15: p_o = 0.7, p_e = 0.5, κ = 0.4.
    a, b = _from_table([[20, 5], [10, 15]])
    est = ag.cohen_kappa(a, b, 2)
    assert est.value == pytest.approx(0.4)
    assert est.extra["observed_agreement"] == pytest.approx(0.7)


def test_cohen_kappa_and_its_ase_match_the_sas_printout():
    # SAS PROC FREQ AGREE printout reproduced in statsmodels' test suite (test_inter_rater.py,
    # table10 = [[0,4,1],[0,8,0],[0,1,5]]): simple κ 0.4842, ASE 0.1380, CI 0.2137–0.7547;
    # weighted κ (Cicchetti–Allison) 0.4701, ASE 0.1457, CI 0.1845–0.7558.
    a, b = _from_table([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    simple = ag.cohen_kappa(a, b, 3)
    assert (round(simple.value, 4), round(simple.se, 4)) == (0.4842, 0.1380)
    assert [round(x, 4) for x in simple.ci95] == [0.2137, 0.7547]
    linear = ag.cohen_kappa(a, b, 3, "linear")
    assert (round(linear.value, 4), round(linear.se, 4)) == (0.4701, 0.1457)
    assert [round(x, 4) for x in linear.ci95] == [0.1845, 0.7558]


def test_weighted_kappa_reproduces_vcd_sexualfun():
    # R package vcd, `Kappa(SexualFun)` (Hout, Duncan & Sobel 1987 via Agresti): unweighted
    # 0.1293 (ASE 0.06860), equal-spacing (linear) weighted 0.2374 (ASE 0.07832).
    a, b = _from_table([[7, 7, 2, 3], [2, 8, 3, 7], [1, 5, 4, 9], [2, 8, 9, 14]])
    simple = ag.cohen_kappa(a, b, 4)
    linear = ag.cohen_kappa(a, b, 4, "linear")
    assert (round(simple.value, 4), round(simple.se, 5)) == (0.1293, 0.06860)
    assert (round(linear.value, 4), round(linear.se, 5)) == (0.2374, 0.07832)


def test_weighted_kappa_is_built_over_the_declared_scale_not_the_observed_values():
    # Scale 0..4 but nobody used 2: weights must still count the gap. irr/statsmodels anxiety data
    # show the difference; here a minimal case: (0,1),(1,3),(3,4) on a 5-point scale.
    a = np.array([0, 1, 3, 4, 0, 3], float)
    b = np.array([1, 3, 4, 4, 0, 1], float)
    ours = ag.cohen_kappa(a, b, 5, "quadratic").value
    assert ours == pytest.approx(cohen_kappa_score(a, b, labels=[0, 1, 2, 3, 4], weights="quadratic"))
    observed_only = cohen_kappa_score(
        np.searchsorted([0, 1, 3, 4], a), np.searchsorted([0, 1, 3, 4], b), weights="quadratic"
    )
    assert ours != pytest.approx(observed_only)


def test_ordinal_strings_follow_the_declared_order_not_the_alphabet():
    scale = ["none", "slight", "severe"]  # alphabetical order would be none, severe, slight
    rows = [["none", "slight"], ["slight", "severe"], ["severe", "severe"], ["none", "none"], ["slight", "none"]]
    codes = ag.codes_from_values(rows, scale)
    ours = ag.cohen_kappa(codes[:, 0], codes[:, 1], 3, "linear").value
    assert ours == pytest.approx(
        cohen_kappa_score([r[0] for r in rows], [r[1] for r in rows], labels=scale, weights="linear")
    )
    assert ours != pytest.approx(cohen_kappa_score([r[0] for r in rows], [r[1] for r in rows], weights="linear"))


def test_a_value_off_the_declared_scale_is_refused():
    with pytest.raises(ag.ScaleError, match="not on the declared scale"):
        ag.codes_from_values([["yes", "maybe"]], ["yes", "no"])


def test_cohen_kappa_is_undefined_without_common_units_or_with_one_shared_category():
    none_common = ag.cohen_kappa(np.array([0, NAN]), np.array([NAN, 1]), 2)
    assert none_common.value is None and "no unit in common" in none_common.reason
    assert none_common.n_excluded == 2
    one_class = ag.cohen_kappa(np.zeros(5), np.zeros(5), 2)
    assert one_class.value is None and "same category" in one_class.reason


# --- Krippendorff ----------------------------------------------------------------------------


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_alpha_reproduces_krippendorff_2011(level, published):
    codes = KRIPP_2011 - 1  # values 1..5 → positions 0..4 (equal spacing keeps interval α)
    est = ag.krippendorff_alpha(codes, level, 5)
    assert round(est.value, 3) == published
    assert est.n_units == 11 and est.n_excluded == 1  # unit 12 has one value only


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_bootstrap_alpha_arithmetic_equals_the_package_on_the_full_sample(level):
    codes = KRIPP_2011 - 1
    sub = codes[(~np.isnan(codes)).sum(axis=1) >= 2]
    counts = ag.category_counts(sub, 5).astype(float)
    m = counts.sum(axis=1)
    o = (counts / (m - 1)[:, None]).T @ counts - np.diag((counts / (m - 1)[:, None]).sum(axis=0))
    ours = float(ag._alpha_from_coincidence(o[None], level)[0])
    assert ours == pytest.approx(krippendorff.alpha(reliability_data=KRIPP_2011.T, level_of_measurement=level))


def test_interval_alpha_closed_form_equals_the_package():
    rng = np.random.default_rng(2)
    values = rng.normal(size=(40, 4)) + rng.normal(size=(40, 1)) * 2
    values[rng.random(values.shape) < 0.2] = NAN
    assert ag.interval_alpha_exact(values) == pytest.approx(
        krippendorff.alpha(reliability_data=values.T, level_of_measurement="interval")
    )


def test_krippendorff_alpha_is_undefined_with_a_single_value():
    est = ag.krippendorff_alpha(np.ones((4, 3)), "nominal", 3)
    assert est.value is None and "expected disagreement is 0" in est.reason


def test_krippendorff_alpha_bootstrap_interval_is_seeded():
    a = ag.krippendorff_alpha(KRIPP_2011 - 1, "ordinal", 5, n_boot=300, seed=1)
    assert a.ci95 == ag.krippendorff_alpha(KRIPP_2011 - 1, "ordinal", 5, n_boot=300, seed=1).ci95
    assert a.ci95[0] <= a.value <= a.ci95[1]


# --- percent agreement, Wilson ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (Wilson score).
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)],
)
def test_wilson_interval_reproduces_newcombe_1998(k, n, low, high):
    lo, hi = ag.wilson_interval(k, n)
    assert (round(lo, 4), round(hi, 4)) == (low, high)


def test_percent_agreement_counts_only_units_rated_at_least_twice():
    codes = np.array([[0, 0, 0], [0, 1, NAN], [1, NAN, NAN], [2, 2, NAN]])
    est = ag.percent_agreement(codes)
    assert est.value == pytest.approx(2 / 3) and est.n_units == 3 and est.n_excluded == 1
    assert est.extra["mean_pairwise"] == pytest.approx((1 + 0 + 1) / 3)


# --- K-QA's three physicians ----------------------------------------------------------------


def test_kqa_physicians_reproduce_the_manifest_figures():
    # data/demo/kqa/MANIFEST.md: Fleiss κ 0.7189, α nominal 0.7191, pairwise Cohen κ
    # 0.6696 / 0.7612 / 0.7317, full agreement 312/399, Entailment-vs-not κ 0.7149,
    # Contradiction-vs-not 0.6697.
    codes = kqa_codes()
    s = ag.agreement_summary(
        codes, level="nominal", scale=["Entailment", "Neutral", "Contradiction"], rater_names=["p0", "p1", "p2"]
    )
    assert round(s["fleiss_kappa"]["value"], 4) == 0.7189
    assert round(s["krippendorff_alpha"]["value"], 4) == 0.7191
    assert [round(p["value"], 4) for p in s["cohen_kappa_pairs"]] == [0.6696, 0.7612, 0.7317]
    assert s["percent_agreement"]["n_agreeing_units"] == 312 and s["n_units"] == 399
    per_label = {d["label"]: d for d in s["per_label"]}
    assert [d["label"] for d in s["per_label"]] == ["Entailment", "Neutral", "Contradiction"]
    assert round(per_label["Entailment"]["value"], 4) == 0.7149
    assert round(per_label["Contradiction"]["value"], 4) == 0.6697
    assert s["cohen_kappa"]["value"] is None and "exactly two raters" in s["cohen_kappa"]["reason"]


def test_each_physician_against_the_other_two_is_not_flagged_on_kqa():
    codes = kqa_codes()
    rest = ag.each_against_rest(codes, 3, reference=0.7189)
    assert [e.extra["outlier"] for e in rest] == [False, False, False]
    # The rest's majority excludes ties between the other two physicians.
    ties = int(np.sum(codes[:, 1] != codes[:, 2]))
    assert rest[0].n_units == 399 - ties


def test_an_annotator_who_answers_at_random_is_flagged_as_an_outlier():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, 300)
    codes = np.stack([truth, truth, truth, rng.integers(0, 3, 300)], axis=1).astype(float)
    noisy = rng.random((300, 3)) < 0.1
    codes[:, :3][noisy] = rng.integers(0, 3, noisy.sum())
    overall = ag.fleiss_kappa(codes, 3).value
    flags = [e.extra["outlier"] for e in ag.each_against_rest(codes, 3, reference=overall)]
    assert flags == [False, False, False, True]


def test_summary_never_carries_nan():
    s = ag.agreement_summary(np.zeros((5, 2)), level="nominal", scale=["a", "b"], rater_names=["x", "y"])
    assert s["cohen_kappa"]["value"] is None and s["fleiss_kappa"]["value"] is None
    assert not any(isinstance(v, float) and math.isnan(v) for v in _walk(s))


def _walk(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _walk(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk(v)
    else:
        yield obj


def test_mean_pairwise_agreement_is_the_same_from_counts_and_from_columns():
    codes = np.array([[0, 0, 1, NAN], [2, 2, 2, 2], [1, NAN, NAN, 0], [0, 1, 2, 0]], float)
    by_columns = ag.percent_agreement(codes)
    by_counts = ag.percent_agreement(codes, counts=ag.category_counts(codes, 3))
    assert by_columns.extra["mean_pairwise"] == pytest.approx(by_counts.extra["mean_pairwise"])
    # Units: 1 of 3 pairs, 6 of 6, 0 of 1, 1 of 6.
    assert by_counts.extra["mean_pairwise"] == pytest.approx((1 / 3 + 1 + 0 + 1 / 6) / 4)


def test_bootstrap_resamples_draw_every_unit_uniformly_in_batches_totalling_n_boot():
    # The resampling every bootstrap interval rests on: rows of n indices drawn uniformly from 0..n−1 with
    # replacement (Efron & Tibshirani 1993, ch. 6), exactly n_boot rows, progress after each batch.
    seen: list[tuple[int, int]] = []
    def progress(done: int, total: int) -> None:
        seen.append((done, total))

    batches = list(ag.resample_indices(np.random.default_rng(11), 7, 123, progress))
    rows = np.vstack(batches)
    assert rows.shape == (123, 7)
    reference = np.random.default_rng(11)
    expected = np.vstack([reference.integers(0, 7, size=(size, 7)) for size in (50, 50, 23)])
    np.testing.assert_array_equal(rows, expected)
    assert set(np.unique(rows)) == set(range(7))  # unit 0 and unit n−1 are drawn too
    assert seen == [(50, 123), (100, 123), (123, 123)]


def test_cohen_kappa_counts_units_rated_by_only_one_of_the_two_raters_as_excluded():
    a = np.array([0, 1, 1, NAN, 0, NAN])
    b = np.array([0, 1, NAN, 1, 0, NAN])  # units 2 and 3: one rater each; unit 5: neither
    est = ag.cohen_kappa(a, b, 2)
    assert (est.n_units, est.n_excluded) == (3, 2)


def test_summary_counts_units_rated_once_as_rated_but_excluded_and_unrated_ones_not_at_all():
    codes = np.array([[0, 0, 1], [1, 1, NAN], [0, NAN, NAN], [NAN, NAN, NAN], [1, 0, 1]])
    s = ag.agreement_summary(codes, level="nominal", scale=["a", "b"], rater_names=["x", "y", "z"])
    # Units 0, 1, 4 have two or more ratings; unit 2 one (rated, but no pair to agree on); unit 3 none.
    assert (s["n_units"], s["n_excluded_units"], s["n_raters"]) == (4, 1, 3)
    assert s["scale"] == ["a", "b"] and s["raters"] == ["x", "y", "z"]


def test_summary_bootstraps_only_when_asked_and_reports_progress_over_both_bootstraps():
    codes = kqa_codes()[:60]
    plain = ag.agreement_summary(codes, level="nominal", scale=["E", "N", "C"], rater_names=["a", "b", "c"])
    assert "ci95" not in plain["fleiss_kappa"] and "ci95" not in plain["krippendorff_alpha"]
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))

    booted = ag.agreement_summary(codes, level="nominal", scale=["E", "N", "C"], rater_names=["a", "b", "c"],
                                  n_boot=120, seed=3, progress=progress)
    for stat in ("fleiss_kappa", "krippendorff_alpha"):
        low, high = booted[stat]["ci95"]
        assert low < booted[stat]["value"] < high and "bootstrap" in booted[stat]["ci_method"]
    assert seen[-1] == (240, 240) and all(total == 240 for _, total in seen)  # two bootstraps of 120
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_percent_agreement_carries_the_wilson_interval_of_its_share():
    # K-QA physicians: full agreement on 312 of 399 units (data/demo/kqa/MANIFEST.md); the interval is the
    # Wilson score interval of that share (checked against Newcombe 1998 above).
    est = ag.percent_agreement(kqa_codes())
    assert (est.extra["n_agreeing_units"], est.n_units) == (312, 399)
    assert est.ci95 == pytest.approx(ag.wilson_interval(312, 399)) and est.ci_method == "Wilson"
    assert est.ci95[0] < 312 / 399 < est.ci95[1]


@pytest.mark.parametrize("statistic", ["percent", "fleiss", "alpha"])
def test_with_no_unit_rated_twice_every_statistic_is_undefined_and_says_why(statistic):
    codes = np.array([[0, NAN], [NAN, 1], [1, NAN], [NAN, NAN]])
    est = {
        "percent": lambda: ag.percent_agreement(codes),
        "fleiss": lambda: ag.fleiss_kappa(codes, 2),
        "alpha": lambda: ag.krippendorff_alpha(codes, level="nominal", n_categories=2),
    }[statistic]()
    assert est.value is None and "two or more raters" in est.reason
    assert est.n_excluded == 3  # three units rated once; the unrated one is not counted


def test_one_unit_rated_twice_is_enough_for_percent_agreement():
    est = ag.percent_agreement(np.array([[1, 1], [0, NAN]]))
    assert (est.value, est.n_units, est.n_excluded) == (1.0, 1, 1)


def test_resampling_the_patterns_is_resampling_the_units():
    # A multinomial draw of the n units over the count patterns (probabilities weights / n) is what drawing n units
    # with replacement and counting each pattern gives: the bootstrap distributions of Fleiss' κ agree, within
    # their Monte Carlo error, with the units resampled one index at a time (seeded: the figures are fixed).
    counts, m = _fleiss_units(kqa_codes(), 3)
    patterns = ag.CountPatterns.of(counts)
    by_patterns = ag._fleiss_boot(patterns, m, 4000, 1, None)
    n = counts.shape[0]
    per_unit = ((counts * counts).sum(axis=1) - m) / (m * (m - 1))
    by_units = []
    for idx in ag.resample_indices(np.random.default_rng(2), n, 4000, None):
        p = counts[idx].sum(axis=1) / (n * m)
        p_e = (p * p).sum(axis=1)
        by_units.append((per_unit[idx].mean(axis=1) - p_e) / (1.0 - p_e))
    by_units = np.concatenate(by_units)
    se = by_units.std() / math.sqrt(4000)
    assert abs(by_patterns.mean() - by_units.mean()) < 4 * se * math.sqrt(2)
    assert by_patterns.std() == pytest.approx(by_units.std(), rel=0.08)
    np.testing.assert_allclose(np.percentile(by_patterns, [2.5, 97.5]), np.percentile(by_units, [2.5, 97.5]),
                               atol=4 * by_units.std() / math.sqrt(400))
