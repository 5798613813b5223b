"""Validity statistics against published values and a by-definition DeLong."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score, roc_curve

from adjudication.stats import validity as v

# Hanley & McNeil (1982), Radiology 143:29, Table 1: 109 CT images rated 1–5 by one radiologist;
# 58 normal (33, 6, 6, 11, 2 per rating) and 51 abnormal (3, 2, 2, 11, 33).
HM_NEG = np.repeat([1, 2, 3, 4, 5], [33, 6, 6, 11, 2]).astype(float)
HM_POS = np.repeat([1, 2, 3, 4, 5], [3, 2, 2, 11, 33]).astype(float)
HM_SCORES = np.concatenate([HM_POS, HM_NEG])
HM_LABELS = np.r_[np.ones(51), np.zeros(58)]


def delong_by_definition(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong et al. (1988) written from the definition: the m × n kernel ψ, structural
    components V10 = row means, V01 = column means; O(mn), independent of the midrank algorithm."""
    scores = np.atleast_2d(scores)
    pos, neg = scores[:, labels == 1], scores[:, labels == 0]
    psi = (pos[:, :, None] > neg[:, None, :]) + 0.5 * (pos[:, :, None] == neg[:, None, :])
    aucs = psi.mean(axis=(1, 2))
    v10 = psi.mean(axis=2)
    v01 = psi.mean(axis=1)
    cov = np.atleast_2d(np.cov(v10)) / pos.shape[1] + np.atleast_2d(np.cov(v01)) / neg.shape[1]
    return aucs, cov


def test_auc_and_delong_interval_reproduce_stata_roctab_on_hanley_mcneil():
    # Stata [R] roc manual, `roctab disease rating` on hanley.dta (the Hanley & McNeil 1982 data):
    # ROC area 0.8932, Std. Err. 0.0307, asymptotic normal 95% CI 0.83295–0.95339 (DeLong SE).
    est = v.roc_auc(HM_SCORES, HM_LABELS)
    assert round(est.value, 4) == 0.8932
    assert round(est.se, 4) == 0.0307
    assert [round(x, 5) for x in est.ci95] == [0.83295, 0.95339]
    # Hanley & McNeil report the same area, 0.893.
    assert round(est.value, 3) == 0.893


def test_fast_delong_equals_delong_by_definition_with_heavy_ties():
    rng = np.random.default_rng(5)
    y = (rng.random(300) < 0.4).astype(float)
    a = rng.integers(0, 6, 300) + y  # six levels: most pairs tie
    b = rng.normal(size=300) + 0.5 * y
    est = v.roc_auc(a, y)
    aucs, cov = delong_by_definition(np.vstack([a, b]), y)
    assert est.value == pytest.approx(aucs[0], abs=1e-12)
    assert est.value == pytest.approx(roc_auc_score(y, a), abs=1e-12)
    assert est.se == pytest.approx(math.sqrt(cov[0, 0]), rel=1e-10)
    paired = v.delong_paired(a, b, y)
    var = cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]
    assert paired.value == pytest.approx(aucs[0] - aucs[1], abs=1e-12)
    assert paired.extra["z"] == pytest.approx((aucs[0] - aucs[1]) / math.sqrt(var), rel=1e-10)
    assert paired.extra["p_value"] == pytest.approx(2 * stats.norm.sf(abs(paired.extra["z"])), rel=1e-10)


def test_auc_is_undefined_with_one_class():
    est = v.roc_auc(np.array([0.1, 0.4, 0.8]), np.array([1, 1, 1]))
    assert est.value is None and "no negative unit" in est.reason


def test_units_with_a_missing_score_are_excluded_and_counted():
    est = v.roc_auc(np.r_[HM_SCORES, np.nan], np.r_[HM_LABELS, 1])
    assert est.n_units == 109 and est.n_excluded == 1


def test_paired_delong_is_undefined_for_identical_rankings():
    est = v.delong_paired(HM_SCORES, HM_SCORES * 2, HM_LABELS)
    assert est.value is None and "identically" in est.reason


def test_stratified_bootstrap_interval_is_seeded_and_close_to_delong():
    ci, undefined = v.auc_bootstrap_ci(HM_SCORES, HM_LABELS, n_boot=1000, seed=4)
    assert undefined == 0
    assert ci == v.auc_bootstrap_ci(HM_SCORES, HM_LABELS, n_boot=1000, seed=4)[0]
    assert ci[0] == pytest.approx(0.833, abs=0.02) and ci[1] == pytest.approx(0.953, abs=0.02)


def test_correlations_match_scipy_with_fisher_intervals():
    rng = np.random.default_rng(1)
    x = rng.normal(size=60)
    y = x + rng.normal(size=60)
    p = v.pearson(x, y)
    r = stats.pearsonr(x, y)
    assert p.value == pytest.approx(r.statistic)
    z = math.atanh(r.statistic)
    assert p.ci95[0] == pytest.approx(math.tanh(z - 1.959964 / math.sqrt(57)), abs=1e-6)
    s = v.spearman(x, y)
    assert s.value == pytest.approx(stats.spearmanr(x, y).statistic)
    se = math.sqrt((1 + s.value**2 / 2) / 57)
    assert s.ci95[1] == pytest.approx(math.tanh(math.atanh(s.value) + 1.959964 * se), abs=1e-6)
    k = v.kendall(x, y)
    assert k.value == pytest.approx(stats.kendalltau(x, y).statistic)


def test_correlation_is_undefined_without_variance():
    est = v.spearman(np.ones(10), np.arange(10.0))
    assert est.value is None and "metric has no variance" in est.reason


def test_precision_and_recall_carry_wilson_intervals():
    # Threshold 4 on the Hanley & McNeil table: TP = 11 + 33 = 44, FP = 11 + 2 = 13, FN = 7.
    res = v.precision_recall_f1(HM_SCORES, HM_LABELS, 4.0)
    assert (res["tp"], res["fp"], res["fn"], res["tn"]) == (44, 13, 7, 45)
    assert res["precision"]["value"] == pytest.approx(44 / 57)
    assert res["precision"]["ci_method"] == "Wilson"
    assert res["recall"]["value"] == pytest.approx(44 / 51)
    assert res["f1"]["value"] == pytest.approx(88 / (88 + 13 + 7))


def test_youden_threshold_carries_the_in_sample_warning():
    y = v.youden_threshold(HM_SCORES, HM_LABELS)
    assert y["threshold"] == 4.0
    assert y["youden_j"] == pytest.approx(44 / 51 - 13 / 58)
    assert "optimistic" in y["warning"]


def test_validity_summary_has_paired_keys():
    rng = np.random.default_rng(9)
    b = HM_SCORES + rng.normal(size=HM_SCORES.size)
    s = v.validity_summary(HM_SCORES, HM_LABELS, scores_b=b, n_boot=100, seed=1)
    assert {"n", "n_pos", "n_neg", "auc", "pearson", "spearman", "kendall", "auc_a", "auc_b", "delong_paired"} <= set(s)
    assert s["auc"]["ci95_bootstrap"] is not None
    assert {"diff", "z", "p_value", "ci95"} <= set(s["delong_paired"])


# Wikipedia, "Spearman's rank correlation coefficient", Example: IQ against hours of television a week for ten
# people; ρ = −29/165 = −0.175757…, with "a p-value of 0.627188 (using the t-distribution)".
WIKI_IQ = np.array([106, 100, 86, 101, 99, 103, 97, 113, 112, 110], dtype=float)
WIKI_TV = np.array([7, 27, 2, 50, 28, 29, 20, 12, 6, 17], dtype=float)


def test_spearman_reproduces_the_worked_example_with_its_p_value():
    est = v.spearman(WIKI_IQ, WIKI_TV)
    assert est.value == pytest.approx(-29 / 165, abs=1e-12)
    assert est.extra["p_value"] == pytest.approx(0.627188, abs=1e-6)
    assert (est.n_units, est.n_excluded) == (10, 0)


@pytest.mark.parametrize("n", [7, 37, 2000])
@pytest.mark.parametrize("target", ["binary", "ordinal", "continuous"])
def test_spearman_is_scipys_spearmanr_with_ties_and_missing_units(n, target):
    # Ranked one column at a time and correlated with pearsonr: scipy's spearmanr's statistic and p-value (its
    # t test on n − 2 degrees of freedom), ties in both columns (midranks) and units with a missing value dropped.
    rng = np.random.default_rng(n)
    y = {"binary": rng.integers(0, 2, n), "ordinal": rng.integers(0, 5, n), "continuous": rng.normal(size=n)}[target]
    y = y.astype(float)
    y[2:4] = (0.0, 1.0)  # both columns vary on the units kept
    x = np.round(y + rng.normal(size=n), 1)
    x[0] = np.nan
    y[1] = np.nan
    est = v.spearman(x, y)
    keep = ~(np.isnan(x) | np.isnan(y))
    ref = stats.spearmanr(x[keep], y[keep])
    assert est.value == pytest.approx(ref.statistic, rel=1e-12, abs=1e-15)
    assert est.extra["p_value"] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)
    assert (est.n_units, est.n_excluded) == (n - 2, 2)


def test_spearman_of_a_perfect_ranking_is_one_with_p_zero():
    x = np.arange(30.0)
    est = v.spearman(x, x**3)
    ref = stats.spearmanr(x, x**3)
    assert est.value == pytest.approx(1.0) and ref.statistic == pytest.approx(1.0)
    assert est.extra["p_value"] == pytest.approx(ref.pvalue, abs=1e-12)


def test_clean_copies_nothing_when_no_unit_is_dropped_and_drops_what_is_missing():
    scores = np.linspace(0.0, 1.0, 8)
    labels = np.array([True, False] * 4)
    s, y, dropped = v._clean(scores, labels)
    assert np.shares_memory(s, scores) and np.shares_memory(y, labels) and dropped == 0
    s, y, dropped = v._clean(scores, labels.astype(float))
    assert np.shares_memory(s, scores) and y.dtype == bool and y.tolist() == labels.tolist() and dropped == 0
    with_missing = scores.copy()
    with_missing[2] = np.nan
    float_labels = labels.astype(float)
    float_labels[5] = np.nan
    s, y, dropped = v._clean(with_missing, float_labels)
    assert dropped == 2 and s.tolist() == np.delete(scores, [2, 5]).tolist()
    assert y.tolist() == np.delete(labels, [2, 5]).tolist()
    s, y, dropped = v._clean(with_missing, labels)
    assert dropped == 1 and s.tolist() == np.delete(scores, 2).tolist() and y.tolist() == np.delete(labels, 2).tolist()
    with pytest.raises(ValueError, match="0 or 1"):
        v._clean(scores, np.array([0, 1, 2, 0, 1, 0, 1, 0], dtype=float))
    # A label off 0/1 on a unit whose score is missing is dropped with it, not an error.
    off = float_labels.copy()
    off[2] = 7.0
    assert v._clean(with_missing, off)[2] == 2
    with pytest.raises(ValueError, match="same length"):
        v._clean(scores, labels[:-1])


def test_pair_clean_copies_nothing_when_both_columns_are_complete():
    x, y = np.arange(6.0), np.arange(6.0) ** 2
    cx, cy, dropped = v._pair_clean(x, y)
    assert np.shares_memory(cx, x) and np.shares_memory(cy, y) and dropped == 0
    y[3] = np.inf
    cx, cy, dropped = v._pair_clean(x, y)
    assert dropped == 1 and cx.tolist() == [0, 1, 2, 4, 5] and cy.tolist() == [0, 1, 4, 16, 25]


def test_the_summary_is_the_same_for_boolean_and_float_labels():
    as_bool = v.validity_summary(HM_SCORES, HM_LABELS.astype(bool), n_boot=50, seed=3)
    as_float = v.validity_summary(HM_SCORES, HM_LABELS, n_boot=50, seed=3)
    assert as_bool == as_float
    roc = as_float["roc"]
    fpr, tpr, _ = roc_curve(HM_LABELS.astype(int), HM_SCORES)
    assert roc["fpr"] == fpr.tolist() and roc["tpr"] == tpr.tolist()


def test_a_long_roc_curve_keeps_evenly_spaced_points_of_its_own_with_both_ends():
    # A distinct score per unit: a point per unit on the curve; the report keeps ROC_MAX_POINTS of them, each a
    # point of scikit-learn's curve, the corners (0, 0) and (1, 1) included, and says how many the curve has.
    rng = np.random.default_rng(4)
    labels = rng.random(20_000) < 0.3
    scores = rng.normal(size=20_000) + labels
    fpr, tpr, thresholds = roc_curve(labels, scores)
    assert fpr.size > v.ROC_MAX_POINTS
    roc = v.roc_points(scores, labels)
    assert roc["n_points"] == fpr.size and len(roc["fpr"]) == len(roc["tpr"]) == v.ROC_MAX_POINTS
    assert (roc["fpr"][0], roc["tpr"][0]) == (0.0, 0.0) and (roc["fpr"][-1], roc["tpr"][-1]) == (1.0, 1.0)
    full = {(a, b, t) for a, b, t in zip(fpr.tolist(), tpr.tolist(), thresholds.tolist(), strict=True)}
    kept = list(zip(roc["fpr"], roc["tpr"], roc["thresholds"], strict=True))
    assert all((a, b, t if t is not None else math.inf) in full for a, b, t in kept)
    assert np.all(np.diff(roc["fpr"]) >= 0) and np.all(np.diff(roc["tpr"]) >= 0)
    # The spacing is even along the curve's points: no gap of more than one step's share of them.
    at = np.searchsorted(thresholds[::-1], np.array([t if t is not None else math.inf for t in roc["thresholds"]]))
    steps = np.diff(np.sort(fpr.size - 1 - at))
    assert steps.max() <= -(-(fpr.size - 1) // (v.ROC_MAX_POINTS - 1))
    short = v.roc_points(HM_SCORES, HM_LABELS)
    assert short["n_points"] == len(short["fpr"]) == roc_curve(HM_LABELS, HM_SCORES)[0].size
