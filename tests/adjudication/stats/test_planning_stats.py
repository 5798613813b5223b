"""Sample-size formulas against published worked examples, and the fixed-precision stopping rule's coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from adjudication.stats import agreement as ag
from adjudication.stats import planning as pl
from tests.adjudication.stats.test_agreement import DIAGNOSES

# --- AUC: Hanley & McNeil (1982) --------------------------------------------------------------------


def test_hanley_mcneil_se_reproduces_simons_worked_example():
    # S. Simon, "Sample size for a diagnostic test" (Children's Mercy Hospital StATS weblog, 5 July 2004):
    # AUC about 0.8 with 50 abnormal and 50 normal patients gives a standard error of 0.044; with 75 in
    # each group, 0.036 (computed there with the Hanley & McNeil formula; printed to three decimals, the
    # first truncated: 0.0445 shows as 0.044).
    assert pl.hanley_mcneil_se(0.8, 50, 50) == pytest.approx(0.044, abs=0.0006)
    assert pl.hanley_mcneil_se(0.8, 75, 75) == pytest.approx(0.036, abs=0.0006)
    assert math.floor(pl.hanley_mcneil_se(0.8, 50, 50) * 1000) == 44


def test_the_hanley_mcneil_plan_is_the_smallest_study_reaching_the_half_width():
    plan = pl.auc_plan_hanley_mcneil(0.8, 0.3, 0.05)
    z = pl.z_value()
    assert plan.n_positive + plan.n_negative == plan.n_items
    assert plan.n_positive == round(plan.n_items * 0.3)
    assert z * pl.hanley_mcneil_se(0.8, plan.n_positive, plan.n_negative) <= 0.05
    pos, neg = round((plan.n_items - 1) * 0.3), plan.n_items - 1 - round((plan.n_items - 1) * 0.3)
    assert z * pl.hanley_mcneil_se(0.8, pos, neg) > 0.05


# --- AUC: Obuchowski ----------------------------------------------------------------------------------


def test_obuchowski_variance_at_chance_is_the_papers_null_variance():
    # Obuchowski, Lieber & Wians (2004), Clin Chem 50:1118, p. 1123: the null variance they use beside eq. 3
    # is 0.0792 × (1 + 1/κ); eq. 3 at θ = 0.5 (a = 0) must give exactly that, for any ratio κ.
    for ratio in (0.5, 1.0, 2.0, 7.0 / 3.0):
        assert pl.obuchowski_variance(0.5 + 1e-12, ratio) == pytest.approx(0.0792 * (1 + 1 / ratio), rel=1e-9)


# Obuchowski, Lieber & Wians (2004), Clin Chem 50:1118-25, Table 4: the numbers of diseased (cases) and
# non-diseased (controls) patients needed to show that a test's AUC θ exceeds 0.5, one-sided α = 0.05,
# power 0.90, for κ = controls per case; computed there with eq. 3 for V(θ) and the null variance
# 0.0792·(1 + 1/κ), n_cases = (z_α·√V0 + z_β·√V1)² / (θ − 0.5)². The table never prints fewer than
# 10 in a group: where one group falls below 10 it is raised to 10 and the other set by κ.
# Rows κ = 0.25, 0.5, 1, 2, 4; columns θ = 0.6, 0.7, 0.8, 0.9, 0.95; values as printed.
OLW_KAPPAS = (0.25, 0.5, 1.0, 2.0, 4.0)
OLW_THETAS = (0.6, 0.7, 0.8, 0.9, 0.95)
OLW_TABLE4_CASES = (
    (334, 80, 40, 40, 40),
    (201, 49, 20, 20, 20),
    (135, 33, 14, 10, 10),
    (102, 25, 11, 10, 10),
    (85, 21, 10, 10, 10),
)
OLW_TABLE4_CONTROLS = (
    (84, 20, 10, 10, 10),
    (101, 25, 10, 10, 10),
    (135, 33, 14, 10, 10),
    (203, 50, 21, 20, 20),
    (339, 84, 40, 40, 40),
)
# Two printed cells are one below the rounded-up figure: κ = 0.5, θ = 0.6 has n_cases = 201.06 (printed
# 201) and κ = 4, θ = 0.6 has n_controls = 4 × 84.82 = 339.3 (printed 339); the table rounded those two
# to the nearest patient. Every other cell is matched exactly.
OLW_ROUNDED_TO_NEAREST = {("cases", 0.5, 0.6), ("controls", 4.0, 0.6)}


def test_obuchowski_variance_reproduces_obuchowski_lieber_wians_table_4():
    from scipy import stats

    z_alpha, z_beta = stats.norm.ppf(0.95), stats.norm.ppf(0.90)
    for i, kappa in enumerate(OLW_KAPPAS):
        for j, theta in enumerate(OLW_THETAS):
            v0 = pl.obuchowski_variance(0.5 + 1e-12, kappa)
            v1 = pl.obuchowski_variance(theta, kappa)
            n = (z_alpha * math.sqrt(v0) + z_beta * math.sqrt(v1)) ** 2 / (theta - 0.5) ** 2
            cases, controls = math.ceil(n), math.ceil(n * kappa)
            if controls < 10:
                cases, controls = round(10 / kappa), 10
            if cases < 10:
                cases, controls = 10, round(10 * kappa)
            for group, ours, printed in (
                ("cases", cases, OLW_TABLE4_CASES[i][j]),
                ("controls", controls, OLW_TABLE4_CONTROLS[i][j]),
            ):
                tolerance = 1 if (group, kappa, theta) in OLW_ROUNDED_TO_NEAREST else 0
                assert abs(ours - printed) <= tolerance, (group, kappa, theta, ours, printed)


def test_obuchowski_plan_splits_by_prevalence():
    plan = pl.auc_plan_obuchowski(0.8, 0.5, 0.05)
    assert plan.n_positive == plan.n_negative == math.ceil(pl.z_value() ** 2 * pl.obuchowski_variance(0.8, 1) / 0.0025)


# --- Cohen's kappa: Fleiss, Cohen & Everitt (1969) via Cantor (1996) -----------------------------------


def test_cohen_kappa_plan_reproduces_reichenheims_sskdlg_examples():
    # Reichenheim ME (2000), "Sample size for the kappa-statistic of interrater agreement", Stata Technical
    # Bulletin 58 (sxd3), p. 44, Examples. sskdlg implements the Fleiss-Cohen-Everitt variance through
    # Cantor's (1996) Q and prints sample sizes rounded to the nearest subject.
    # kappa = 0, p1 = p2 = 0.1, d = 0.1, 95%: "Sample size = 384".
    assert pl.cohen_kappa_plan(0.0, 0.1, 0.1, rounding="nearest").n_items == 384
    # kappa = 0.1, p1 = p2 = 0.2, d = 0.2, 95%: "Sample size = 114", "Value of Q = 1.182".
    assert pl.cohen_kappa_plan(0.1, 0.2, 0.2, rounding="nearest").n_items == 114
    assert round(pl.cohen_kappa_q(0.1, 0.2), 3) == 1.182
    # "the maximum sample size is 126 for a kappa of .289".
    grid = np.round(np.arange(0.001, 0.999, 0.001), 3)
    q = np.array([pl.cohen_kappa_q(float(k), 0.2) for k in grid])
    assert grid[int(q.argmax())] == pytest.approx(0.289, abs=0.001)
    assert math.floor(pl.z_value() ** 2 * q.max() / 0.04 + 0.5) == 126


def test_cohen_kappa_q_is_the_bloch_kraemer_variance_for_equal_marginals():
    # Bloch & Kraemer (1989) give n·Var(κ) = (1−κ)[(1−κ)(1−2κ) + κ(2−κ)/(2p(1−p))] for equal marginals.
    for k, p in ((0.6, 0.3), (0.4, 0.1), (0.8, 0.5)):
        expected = (1 - k) * ((1 - k) * (1 - 2 * k) + k * (2 - k) / (2 * p * (1 - p)))
        assert pl.cohen_kappa_q(k, p) == pytest.approx(expected, rel=1e-12)


def _fce_q_from_cells(table: np.ndarray) -> float:
    """Cantor's (1996) Q, n·Var(κ̂), computed from the cells of a 2×2 table of proportions as Fleiss, Cohen &
    Everitt (1969) give it (Fleiss 1981, eqs. 13.15-13.18): an independent route to what cohen_kappa_q
    computes in closed form from κ and the two raters' marginals."""
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    p_o, p_e = float(np.trace(table)), float(rows @ cols)
    diagonal = sum(table[i, i] * ((1 - p_e) - (cols[i] + rows[i]) * (1 - p_o)) ** 2 for i in range(2))
    off = (1 - p_o) ** 2 * sum(table[i, j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j)
    return float((diagonal + off - (p_o * p_e - 2 * p_e + p_o) ** 2) / (1 - p_e) ** 4)


def _table(kappa: float, p1: float, p2: float) -> np.ndarray:
    """The 2×2 table of proportions with rater 1 positive in ``p1``, rater 2 in ``p2`` and Cohen's κ."""
    p_e = p1 * p2 + (1 - p1) * (1 - p2)
    both = p1 * p2 + kappa * (1 - p_e) / 2
    return np.array([[both, p1 - both], [p2 - both, 1 - p1 - p2 + both]])


def test_cantors_q_with_two_prevalences_reproduces_a_published_standard_error():
    # The calcugator chi2_kappa worked example (www.calcugator.com, "Measure of Agreement Kappa"): two judges
    # rate 12 items, table (4, 1; 2, 5): the first judge says "very good" for 5 of 12, the second for 6 of 12
    # (two different prevalences); kappa 0.5, "Asymp. Std. Error: 0.24650332429581734" (the Fleiss, Cohen &
    # Everitt non-null standard error, as SPSS prints it). Q is n·Var(κ̂), so SE = √(Q/12).
    table = np.array([[4, 1], [2, 5]]) / 12
    assert _fce_q_from_cells(table) == pytest.approx(0.24650332429581734**2 * 12, rel=1e-12)
    assert math.sqrt(pl.cohen_kappa_q(0.5, 5 / 12, 6 / 12) / 12) == pytest.approx(0.24650332429581734, rel=1e-12)
    assert math.sqrt(pl.cohen_kappa_q(0.5, 6 / 12, 5 / 12) / 12) == pytest.approx(0.24650332429581734, rel=1e-12)
    # With one prevalence for both raters the figure differs: the second prevalence is used, not ignored.
    assert math.sqrt(pl.cohen_kappa_q(0.5, 5 / 12) / 12) != pytest.approx(0.24650332429581734, rel=1e-3)


@pytest.mark.parametrize(
    "kappa,p1,p2", [(0.6, 0.3, 0.4), (0.4, 0.1, 0.25), (0.8, 0.5, 0.45), (0.2, 0.6, 0.3), (0.1, 0.2, 0.3)]
)
def test_cantors_q_with_two_prevalences_is_the_fleiss_cohen_everitt_variance_of_the_table(kappa, p1, p2):
    """Cantor (1996) drops the equal-marginals assumption for two raters and two categories: Q is the FCE
    variance of the one 2×2 table with the given κ and the two raters' own prevalences."""
    table = _table(kappa, p1, p2)
    assert table.min() > 0 and table[0].sum() == pytest.approx(p1) and table[:, 0].sum() == pytest.approx(p2)
    assert pl.cohen_kappa_q(kappa, p1, p2) == pytest.approx(_fce_q_from_cells(table), rel=1e-12)
    plan = pl.cohen_kappa_plan(kappa, p1, 0.1, p2=p2)
    assert plan.n_items == math.ceil(pl.z_value() ** 2 * _fce_q_from_cells(table) / 0.01 - 1e-9)


# --- Fleiss' kappa: Fleiss, Nee & Landis (1979) --------------------------------------------------------


def test_fleiss_null_variance_reproduces_irr_on_fleiss_1971():
    # R irr::kappam.fleiss(diagnoses) (Fleiss 1971's 30 patients, 6 raters, 5 diagnoses) prints
    # Kappa = 0.43, z = 17.7: z = κ / SE0 with SE0 from Fleiss, Nee & Landis (1979).
    codes = DIAGNOSES - DIAGNOSES.min()
    counts = ag.category_counts(codes, 5)
    p = counts.sum(axis=0) / counts.sum()
    kappa = ag.fleiss_kappa(codes, 5).value
    z = kappa / math.sqrt(pl.fleiss_kappa_null_variance(p, 30, 6))
    assert round(z, 1) == 17.7


def test_simulated_fleiss_variance_reproduces_the_null_variance_at_kappa_zero():
    p = [0.2, 0.3, 0.5]
    n_var, mc_se = pl.simulated_n_variance("fleiss", 0.0, p, 3, n_items=200, n_sim=2000, seed=4)
    assert abs(n_var - 200 * pl.fleiss_kappa_null_variance(p, 200, 3)) <= 3 * mc_se


def test_simulated_kappa_variance_reproduces_fleiss_cohen_everitt_for_two_raters():
    # For two raters, a binary rating and equal marginals, Fleiss' κ and Cohen's κ coincide asymptotically.
    n_var, mc_se = pl.simulated_n_variance("fleiss", 0.6, [0.7, 0.3], 2, n_items=300, n_sim=2000, seed=5)
    assert abs(n_var - pl.cohen_kappa_q(0.6, 0.3)) <= 3 * mc_se


def test_simulated_alpha_matches_the_krippendorff_package_on_a_simulated_table():
    import krippendorff

    rng = np.random.default_rng(1)
    counts = pl.kappa_sampling_model(0.5, np.array([0.5, 0.3, 0.2]), 40, 3, 1, rng)
    ours = pl.krippendorff_alpha_nominal_batch(counts)[0]
    theirs = krippendorff.alpha(value_counts=counts[0], level_of_measurement="nominal")
    assert ours == pytest.approx(theirs, abs=1e-12)
    assert pl.fleiss_kappa_batch(counts)[0] == pytest.approx(ag.fleiss_kappa_from_counts(counts[0]).value, abs=1e-12)


def test_the_simulations_fleiss_kappa_reproduces_fleiss_1971():
    # The vectorised κ the plan simulates with, on Fleiss (1971) p. 381's 30 patients, 6 psychiatrists,
    # 5 diagnoses: published κ = 0.430.
    codes = DIAGNOSES - DIAGNOSES.min()
    counts = ag.category_counts(codes, 5)[np.newaxis, :, :]
    assert round(float(pl.fleiss_kappa_batch(counts)[0]), 3) == 0.430


def test_agreement_plans_are_deterministic_and_reach_the_half_width():
    a = pl.agreement_plan("fleiss", 0.6, 3, 3, 0.05, n_sim=1000, seed=0)
    b = pl.agreement_plan("fleiss", 0.6, 3, 3, 0.05, n_sim=1000, seed=0)
    assert a.n_items == b.n_items
    assert pl.z_value() * a.se_at_n <= 0.05 + 1e-9
    alpha = pl.agreement_plan("alpha", 0.6, 3, 3, 0.05, n_sim=1000, seed=0)
    assert abs(alpha.n_items - a.n_items) / a.n_items < 0.15  # α and κ nearly agree without missing data


@pytest.mark.parametrize(
    "call",
    [
        lambda: pl.auc_plan_hanley_mcneil(0.4, 0.3, 0.05),
        lambda: pl.auc_plan_hanley_mcneil(0.8, 1.2, 0.05),
        lambda: pl.auc_plan_obuchowski(0.8, 0.3, 0.0),
        lambda: pl.cohen_kappa_plan(1.0, 0.3, 0.05),
        lambda: pl.agreement_plan("fleiss", 0.6, 1, 3, 0.05),
        lambda: pl.agreement_plan("fleiss", 0.6, 3, 1, 0.05),
        lambda: pl.fleiss_kappa_null_variance([0.5, 0.6], 10, 3),
    ],
)
def test_inputs_outside_the_formulas_range_are_refused(call):
    with pytest.raises(pl.PlanningError):
        call()


# --- the fixed-precision stopping rule -----------------------------------------------------------------


def _tolerance(replicates: int) -> float:
    """Three Monte Carlo standard errors of a 95% coverage estimated from ``replicates`` runs."""
    return 3 * math.sqrt(0.95 * 0.05 / replicates)


@pytest.mark.slow
def test_the_fixed_precision_rule_keeps_the_95_interval_near_95_percent():
    """Validations that stop by the pools' rule (never before half the planned items; then once the guarded
    half-width of the AUC is within ±0.05), looking every 50 items: the interval at stopping covers the true
    AUC about 95% of the time and the estimate is not pulled away from the truth. Seeded: the outcome is
    fixed; the tolerance is three Monte Carlo standard errors of a 95% proportion over the replicates."""
    replicates = 500
    result = pl.fixed_precision_coverage(
        auc=0.8, prevalence=0.3, half_width=0.05, look_every=50, replicates=replicates, seed=2026
    )
    assert result.stopped_by_rule == replicates
    assert abs(result.coverage - 0.95) <= _tolerance(replicates)
    assert abs(result.mean_estimate - 0.8) <= 0.01


@pytest.mark.slow
def test_at_a_wide_target_the_rules_guards_are_what_keep_the_coverage():
    """At ±0.08, looking every 20 items, stopping on the DeLong width alone from the first look stops on
    lucky early samples (whose AUC looks higher, so its interval is narrower): coverage falls well below 95%
    and the estimate is biased upward. The pools' rule — half the plan first, the Hanley–McNeil half-width
    at the least favourable AUC in the interval — keeps it within the Monte Carlo tolerance."""
    replicates = 400
    guarded = pl.fixed_precision_coverage(half_width=0.08, look_every=20, replicates=replicates, seed=7)
    naive = pl.fixed_precision_coverage(half_width=0.08, look_every=20, replicates=replicates, seed=7, rule="naive")
    assert abs(guarded.coverage - 0.95) <= _tolerance(replicates)
    assert naive.coverage < 0.95 - _tolerance(replicates)
    assert naive.mean_estimate - 0.8 > guarded.mean_estimate - 0.8


@pytest.mark.slow
def test_stopping_on_significance_instead_breaks_the_coverage():
    """The contrast the guide draws: stopping as soon as the AUC is significantly above chance, when the
    metric is in truth useless, leaves the interval at stopping far from 95% coverage."""
    replicates = 400
    result = pl.significance_stopping_coverage(replicates=replicates, seed=3)
    mc_se = math.sqrt(0.95 * 0.05 / replicates)
    assert result.coverage < 0.95 - 5 * mc_se


@pytest.mark.parametrize("planned,first", [(100, 50), (101, 51), (2, 1), (1, 1), (7, 4)])
def test_the_fixed_precision_rule_never_stops_before_half_the_plan(planned, first):
    """The rule may stop at ⌈planned/2⌉ items done, never one item earlier, however narrow the interval."""

    def reached(n_done: int) -> bool:
        return pl.fixed_precision_reached(
            ci95=(0.79, 0.81), n_positive=50_000, n_negative=50_000, n_done=n_done, planned_items=planned, target=0.05
        )

    assert not reached(first - 1)
    assert reached(first)
    assert reached(planned)


def test_the_fixed_precision_rule_stops_at_the_target_and_not_above_it():
    width = pl.auc_stopping_half_width((0.75, 0.85), 50_000, 50_000)
    assert width == pytest.approx(0.05)

    def reached(target: float) -> bool:
        return pl.fixed_precision_reached(
            ci95=(0.75, 0.85), n_positive=50_000, n_negative=50_000, n_done=60, planned_items=100, target=target
        )

    assert reached(width) and not reached(width - 1e-9)
    assert not pl.fixed_precision_reached(
        ci95=None, n_positive=50, n_negative=50, n_done=100, planned_items=100, target=0.5
    )


def test_items_for_half_width_scales_with_the_square_of_the_ratio():
    assert pl.items_for_half_width(100, 0.1, 0.05) == 400
    assert pl.items_for_half_width(100, 0.04, 0.05) == 100
    assert pl.half_width_of((0.7, 0.9)) == pytest.approx(0.1)
