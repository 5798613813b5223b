"""Prediction-powered estimates against the reference implementation, hand-worked examples and simulation.

Reference values: ``ppi-python`` 0.2.3 (github.com/aangelopoulos/ppi_py, the authors' implementation of
Angelopoulos et al., Science 2023, and PPI++, Angelopoulos, Duchi & Zrnic 2023), run once on the fixed
arrays below with

    ppi_py.classical_mean_ci(Y, alpha=0.05)
    ppi_py.ppi_mean_ci(Y, F, FU, alpha=0.05, lam=1)           # plain PPI
    ppi_py.ppi_mean_ci(Y, F, FU, alpha=0.05)                  # PPI++ (λ̂ clipped to [0, 1])
    ppi_py.ppi.ppi_mean_pointestimate(Y, F, FU)
    ppi_py.ppi._calc_lam_glm(Y - θ, F - θ, FU - θ, np.eye(1), clip=True)
    ppi_py.ppi_mean_ci(Y - Y_B, F - F_B, FU - FU_B, alpha=0.05)   # paired difference
    ppi_py.crossppi_mean_ci(Y, F, FU_FOLDS, alpha=0.05)       # Zrnic & Candès, PNAS 2024

The active (inverse-probability-weighted) estimator of Zrnic & Candès (ICML 2024) has no ppi-python
counterpart: its reference is worked by hand below from the paper's formula.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from adjudication.stats import ppi as P

# 20 labelled items (0/1 labels, metric predictions) and 40 unlabelled ones; generated once
# (numpy default_rng(26)), then frozen here.
Y = [0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0]
F = [0.26, 0.18, 0.25, 0.55, 0.61, 0.34, 0.59, 0.12, 0.29, 0.13, 0.37, 0.23, 0.74, 0.29, 0.23, 0.25, 0.4, 0.56, 0.23,
     0.85]  # fmt: skip
FU = [0.12, 0.91, 0.55, 0.86, 0.68, 0.31, 0.5, 0.24, 0.49, 0.36, 0.29, 0.33, 0.18, 0.28, 0.36, 0.56, 0.5, 0.21, 0.48,
      0.41, 0.24, 0.04, 0.34, 0.62, 0.16, 0.05, 0.63, 0.35, 0.32, 0.56, 0.3, 0.27, 0.56, 0.56, 0.35, 0.63, 0.43, 0.52,
      0.19, 0.32]  # fmt: skip
# A second system on the same items (paired difference).
Y_B = [1, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1]
F_B = [0.31, 0.32, 0.25, 0.6, 0.65, 0.5, 0.52, 0.12, 0.18, 0.18, 0.38, 0.51, 0.99, 0.49, 0.49, 0.21, 0.45, 0.8, 0.3,
       0.77]  # fmt: skip
FU_B = [0.3, 0.79, 0.71, 0.63, 0.89, 0.41, 0.5, 0.18, 0.51, 0.26, 0.42, 0.28, 0.25, 0.56, 0.31, 0.76, 0.62, 0.12, 0.36,
        0.46, 0.2, 0.25, 0.3, 0.74, 0.12, 0.29, 0.57, 0.35, 0.29, 0.68, 0.5, 0.44, 0.47, 0.84, 0.28, 0.91, 0.35, 0.24,
        0.19, 0.53]  # fmt: skip
# Three fold models' predictions on the unlabelled items (cross-prediction).
FU_FOLDS = [[0.15, 0.19, 0.1], [0.94, 0.89, 0.88], [0.57, 0.55, 0.46], [0.89, 0.83, 0.96], [0.68, 0.69, 0.6],
            [0.36, 0.34, 0.26], [0.48, 0.43, 0.6], [0.18, 0.3, 0.19], [0.61, 0.57, 0.54], [0.35, 0.33, 0.39],
            [0.31, 0.24, 0.35], [0.35, 0.31, 0.33], [0.21, 0.21, 0.18], [0.29, 0.19, 0.37], [0.36, 0.31, 0.4],
            [0.48, 0.55, 0.42], [0.48, 0.45, 0.5], [0.27, 0.27, 0.19], [0.55, 0.57, 0.54], [0.36, 0.38, 0.46],
            [0.16, 0.29, 0.24], [0.16, 0.04, 0.08], [0.32, 0.28, 0.34], [0.58, 0.66, 0.66], [0.18, 0.15, 0.16],
            [0.02, 0.04, 0.06], [0.65, 0.61, 0.64], [0.3, 0.36, 0.45], [0.33, 0.31, 0.3], [0.5, 0.57, 0.59],
            [0.31, 0.27, 0.3], [0.25, 0.33, 0.25], [0.6, 0.53, 0.52], [0.56, 0.56, 0.53], [0.4, 0.28, 0.34],
            [0.63, 0.59, 0.64], [0.36, 0.36, 0.44], [0.53, 0.58, 0.54], [0.2, 0.2, 0.21],
            [0.26, 0.35, 0.31]]  # fmt: skip

TIGHT = {"rel": 1e-9, "abs": 1e-12}


def _interval(e: P.Estimate) -> tuple[float, float]:
    return (e.lower, e.upper)


# --- reference values (ppi-python 0.2.3) ---------------------------------------------------------------


def test_classical_reproduces_ppi_python():
    e = P.classical(Y)
    assert e.point == pytest.approx(0.3, **TIGHT)
    assert _interval(e) == pytest.approx((0.0991634554736407, 0.5008365445263593), **TIGHT)
    assert (e.method, e.lam, e.n_labelled, e.n_unlabelled) == ("classical", 0.0, 20, 0)
    assert e.effective_labels == pytest.approx(20, **TIGHT)


def test_plain_ppi_reproduces_ppi_python():
    e = P.ppi(Y, F, FU)
    assert e.point == pytest.approx(0.328, **TIGHT)
    assert _interval(e) == pytest.approx((0.13750671270747875, 0.5184932872925214), **TIGHT)
    assert (e.lam, e.n_labelled, e.n_unlabelled) == (1.0, 20, 40)


def test_ppipp_reproduces_ppi_python_lambda_point_and_interval():
    e = P.ppipp(Y, F, FU)
    assert e.lam == pytest.approx(0.6740471851387926, **TIGHT)
    assert e.point == pytest.approx(0.3188733211838862, **TIGHT)
    assert _interval(e) == pytest.approx((0.13157048918650063, 0.5061761531812718), **TIGHT)
    # α = 0.1 (ppi-python's default): same point, the 90% interval.
    e90 = P.ppipp(Y, F, FU, alpha=0.1)
    assert _interval(e90) == pytest.approx((0.16168382944866916, 0.4760628129191033), **TIGHT)
    assert e90.point == e.point


def test_ppipp_clips_lambda_to_zero_and_one_as_ppi_python():
    # A metric pointing the wrong way: unclipped λ̂ < 0; ppi-python clips to 0 = the classical interval.
    anti = P.ppipp(Y, 1 - np.array(F), 1 - np.array(FU))
    assert anti.lam == 0.0
    assert _interval(anti) == pytest.approx((0.0991634554736407, 0.5008365445263593), **TIGHT)
    # A metric on too small a scale: unclipped λ̂ = 2.2468 (ppi-python, clip=False); clipped to 1.
    small = P.ppipp(Y, 0.3 * np.array(F), 0.3 * np.array(FU))
    assert small.lam == 1.0
    assert _interval(small) == pytest.approx((0.11680693080956783, 0.49999307), rel=1e-8)


def test_ppipp_with_a_given_lambda_is_ppi_or_classical():
    assert _interval(P.ppipp(Y, F, FU, lam=1.0)) == pytest.approx(_interval(P.ppi(Y, F, FU)), **TIGHT)
    assert _interval(P.ppipp(Y, F, FU, lam=0.0)) == pytest.approx(_interval(P.classical(Y)), **TIGHT)


def test_paired_difference_reproduces_ppi_python_on_the_differences():
    e = P.paired_difference(Y, Y_B, F, F_B, FU, FU_B)
    assert e.point == pytest.approx(-0.25, **TIGHT)
    assert _interval(e) == pytest.approx((-0.5228154406388111, 0.022815440638811135), **TIGHT)
    assert e.method == "paired ppi++"


def test_cross_ppi_reproduces_ppi_python():
    e = P.cross_ppi_mean(Y, F, FU_FOLDS)
    assert e.point == pytest.approx(0.33025, **TIGHT)
    assert _interval(e) == pytest.approx((0.13996881902677347, 0.5205311809732264), **TIGHT)
    assert (e.method, e.lam) == ("cross-ppi", 1.0)


def test_effective_labels_is_the_classical_sample_size_with_the_same_standard_error():
    e = P.ppipp(Y, F, FU)
    # Var(Y) = 0.3·0.7 = 0.21 (divisor n); n_eff = Var(Y)/se², se from the ppi-python interval's half-width.
    se = (0.5061761531812718 - 0.13157048918650063) / 2 / 1.959963984540054
    assert e.effective_labels == pytest.approx(0.21 / se**2, rel=1e-9)
    assert e.effective_labels == pytest.approx(22.994649225120455, rel=1e-9)
    assert P.effective_labels(0.21, math.sqrt(0.21 / 20)) == pytest.approx(20)
    assert P.effective_labels(0.21, 0.0) == math.inf
    assert e.as_dict()["half_width"] == pytest.approx(e.half_width)


# --- active inference: a hand-worked example ---------------------------------------------------------------


# Five items; three were drawn for labelling with known probabilities π = 0.5, 0.25, 1.
A_Y, A_F, A_PI, A_FU = [1, 0, 1], [0.8, 0.2, 0.4], [0.5, 0.25, 1.0], [0.1, 0.6]
Z95 = 1.959963984540054


def test_active_mean_with_lambda_one_matches_the_hand_worked_terms():
    # Zrnic & Candès (ICML 2024), mean: t_i = λf_i + (Y_i − λf_i)ξ_i/π_i, θ̂ = mean t, se² = Var(t)/M.
    # λ = 1: labelled 0.8 + 0.2/0.5 = 1.2, 0.2 − 0.2/0.25 = −0.6, 0.4 + 0.6/1 = 1.0; unlabelled 0.1, 0.6.
    # mean = 2.3/5 = 0.46; deviations .74 −1.06 .54 −.36 .14 → Σ² = 2.112, Var = 0.4224, se² = 0.08448.
    e = P.active_mean(A_Y, A_F, A_PI, A_FU, lam=1.0)
    assert e.point == pytest.approx(0.46, **TIGHT)
    assert e.se == pytest.approx(math.sqrt(0.08448), **TIGHT)
    assert _interval(e) == pytest.approx((0.46 - Z95 * math.sqrt(0.08448), 0.46 + Z95 * math.sqrt(0.08448)))
    assert (e.n_labelled, e.n_unlabelled, e.method) == (3, 2, "active ppi")


def test_active_mean_with_lambda_zero_is_the_inverse_probability_weighted_mean():
    # λ = 0: t = Yξ/π = 2, 0, 1, 0, 0 → mean 0.6; deviations 1.4 −.6 .4 −.6 −.6 → Var 3.2/5 = 0.64, se² = 0.128.
    e = P.active_mean(A_Y, A_F, A_PI, A_FU, lam=0.0)
    assert e.point == pytest.approx(0.6, **TIGHT)
    assert e.se == pytest.approx(math.sqrt(0.128), **TIGHT)
    assert e.method == "active classical"


def test_active_mean_tunes_lambda_to_the_variance_minimiser():
    # a = Yξ/π = (2, 0, 1, 0, 0), b = f(ξ/π − 1) = (0.8, 0.6, 0, −0.1, −0.6); t = a − λb.
    # Cov(a, b) = 1.18/5 = 0.236, Var(b) = 1.272/5 = 0.2544 → λ̂ = 0.236/0.2544 = 0.92767;
    # θ̂ = 0.6 − λ̂·0.14; Var(t) = 0.64 − 0.236²/0.2544; se² = Var(t)/5.
    e = P.active_mean(A_Y, A_F, A_PI, A_FU)
    lam = 0.236 / 0.2544
    assert e.lam == pytest.approx(lam, **TIGHT)
    assert e.point == pytest.approx(0.6 - lam * 0.14, **TIGHT)
    assert e.se == pytest.approx(math.sqrt((0.64 - 0.236**2 / 0.2544) / 5), **TIGHT)
    assert e.method == "active ppi++"


def test_active_mean_with_every_item_labelled_for_sure_is_the_classical_mean():
    e = P.active_mean(Y, F, np.ones(len(Y)), [])
    c = P.classical(Y)
    assert (e.point, e.se) == pytest.approx((c.point, c.se), **TIGHT)


def test_active_mean_with_equal_probabilities_and_lambda_one_is_ppi_over_the_whole_population():
    # π = n/M for every item: t averages to mean over all M of f plus mean over the labelled of (Y − f).
    y, f, fu = np.array(Y, float), np.array(F), np.array(FU)
    e = P.active_mean(y, f, np.full(20, 20 / 60), fu, lam=1.0)
    assert e.point == pytest.approx(np.r_[f, fu].mean() + (y - f).mean(), **TIGHT)


# --- planning -----------------------------------------------------------------------------------------------


def test_labels_without_the_metric_follow_the_textbook_proportion_formula():
    # Cochran (Sampling Techniques, 1977, eq. 4.2 with no finite-population correction): a proportion near 0.5
    # with a 95% half-width of 0.05 needs n = 1.96²·0.25/0.05² = 384.15 → 385 labels.
    y = np.array([0, 1] * 25, float)
    rng = np.random.default_rng(0)
    plan = P.labels_for_half_width(y, y + rng.normal(0, 0.3, 50), rng.uniform(size=5000), 0.05)
    assert plan.without_metric == 385
    assert plan.without_metric_more == 335
    assert plan.n_labelled == 50 and plan.population == 5050


def test_labels_with_the_metric_reach_the_target_at_the_pilot_exactly_when_the_pilot_interval_does():
    e = P.ppipp(Y, F, FU)
    at = P.labels_for_half_width(Y, F, FU, e.half_width * (1 + 1e-9))
    assert at.with_metric == 20 and at.with_metric_more == 0
    assert at.lam == pytest.approx(e.lam)
    beyond = P.labels_for_half_width(Y, F, FU, e.half_width * 0.99)
    assert beyond.with_metric is not None and beyond.with_metric > 20


def test_a_good_metric_needs_fewer_labels_and_a_useless_one_about_as_many():
    rng = np.random.default_rng(7)
    p = rng.uniform(size=20_100) ** 2
    y = (rng.uniform(size=100) < p[:100]).astype(float)
    good = P.labels_for_half_width(y, p[:100], p[100:], 0.03)
    assert good.with_metric is not None and good.without_metric is not None
    assert good.with_metric < 0.8 * good.without_metric
    noise = rng.uniform(size=20_100)
    useless = P.labels_for_half_width(y, noise[:100], noise[100:], 0.03)
    assert useless.with_metric is not None and useless.without_metric is not None
    assert useless.with_metric >= 0.9 * useless.without_metric


def test_an_unreachable_target_is_said_to_be():
    plan = P.labels_for_half_width(Y, F, FU, 0.001)
    assert plan.without_metric is None and plan.with_metric is None
    assert len(plan.notes) == 2


# --- input errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: P.classical([]), "labels is empty"),
        (lambda: P.classical([1]), "at least 2"),
        (lambda: P.ppi(Y, F[:-1], FU), "differ in length"),
        (lambda: P.ppi(Y, F, []), "unlabelled items is empty"),
        (lambda: P.ppipp([*Y[:-1], math.nan], F, FU), "NaN"),
        (lambda: P.ppipp(Y, F, [*FU[:-1], math.inf]), "position 39"),
        (lambda: P.ppipp(Y, F, FU, alpha=0.0), "alpha"),
        (lambda: P.ppipp(Y, F, FU, alpha=1.0), "alpha"),
        (lambda: P.classical(Y, alpha=-0.05), "alpha"),
        (lambda: P.classical(Y, alpha=True), "alpha"),
        (lambda: P.ppipp(Y, F, FU, lam=math.nan), "lam"),
        (lambda: P.ppipp([[0, 1], [1, 0]], F, FU), "one-dimensional"),
        (lambda: P.ppipp(["a", "b"], F, FU), "numbers"),
        (lambda: P.active_mean(A_Y, A_F, [0.5, 0.0, 1.0], A_FU), "position 1"),
        (lambda: P.active_mean(A_Y, A_F, [0.5, 1.5, 1.0], A_FU), "(0, 1]"),
        (lambda: P.active_mean(A_Y, A_F, [0.5, 1.0], A_FU), "inclusion probabilities differ"),
        (lambda: P.paired_difference(Y, Y_B[:-1], F, F_B[:-1], FU, FU_B), "same items"),
        (lambda: P.paired_difference(Y, Y_B, F, F_B, FU, FU_B[:-1]), "same unlabelled items"),
        (lambda: P.cross_ppi_mean(Y, F, FU), "N × K"),
        (lambda: P.cross_ppi_mean(Y, F, [[x] for x in FU]), "K ≥ 2"),
        (lambda: P.labels_for_half_width(Y, F, FU, 0.0), "half-width"),
        (lambda: P.sampling_probabilities([0.1, -0.2], 1), "≥ 0"),
        (lambda: P.sampling_probabilities([0.1, 0.2], 3), "expected number"),
        (lambda: P.effective_labels(-1.0, 0.1), "label variance"),
    ],
)
def test_bad_input_is_refused_with_a_message_that_names_it(call, message):
    with pytest.raises(P.PPIError, match=None) as info:
        call()
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_labels_without_spread_carry_a_note():
    e = P.ppipp([0] * 10, [0.1] * 10, [0.2] * 30)
    assert e.notes and "every label is the same" in e.notes[0]


def test_sampling_probabilities_sum_to_the_budget_and_respect_the_floor():
    rng = np.random.default_rng(3)
    f = rng.uniform(size=1000) ** 3
    pi = P.sampling_probabilities(np.sqrt(f * (1 - f)), 100, floor=0.2)
    assert pi.sum() == pytest.approx(100, rel=1e-9)
    assert pi.min() >= 0.2 * 100 / 1000 - 1e-12 and pi.max() <= 1.0
    order = np.argsort(np.sqrt(f * (1 - f)))
    assert np.all(np.diff(pi[order]) >= -1e-12)  # more uncertain, more likely drawn
    assert P.sampling_probabilities(np.zeros(10), 5) == pytest.approx(np.full(10, 0.5))


# --- simulations: coverage and width -------------------------------------------------------------------------

REPS = 1000


def _draw(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Items whose label is unfaithful with probability p = X², X ~ U(0, 1) (population share 1/3), scored by a
    biased, noisy metric f = 0.8p + 0.15 + N(0, 0.1²) clipped to [0, 1] (its mean is about 0.42, not 1/3)."""
    x = rng.uniform(size=size)
    p = x**2
    y = (rng.uniform(size=size) < p).astype(float)
    f = np.clip(0.8 * p + 0.15 + rng.normal(0, 0.1, size), 0, 1)
    return p, y, f


def test_random_sample_coverage_is_near_95_percent_and_ppi_is_narrower():
    rng = np.random.default_rng(2024)
    n, big_n, theta = 200, 2000, 1 / 3
    hits = {"classical": 0, "ppi": 0, "ppi++": 0}
    widths: dict[str, list[float]] = {k: [] for k in hits}
    naive_hits = 0
    for _ in range(REPS):
        _, y, f = _draw(rng, n + big_n)
        y_l, f_l, f_u = y[:n], f[:n], f[n:]
        for e in (P.classical(y_l), P.ppi(y_l, f_l, f_u), P.ppipp(y_l, f_l, f_u)):
            hits[e.method] += e.lower <= theta <= e.upper
            widths[e.method].append(e.upper - e.lower)
        naive = P.classical(f)  # the metric alone, as if it were the truth
        naive_hits += naive.lower <= theta <= naive.upper
    coverage = {k: v / REPS for k, v in hits.items()}
    width = {k: float(np.mean(v)) for k, v in widths.items()}
    for method, c in coverage.items():
        assert 0.93 <= c <= 0.97, (method, coverage)
    assert width["ppi++"] < 0.9 * width["classical"], width
    assert width["ppi++"] <= width["ppi"] * 1.01, width
    assert naive_hits / REPS < 0.05  # without the rectifier the metric's bias is never corrected


def test_active_sampling_covers_and_is_narrower_than_uniform_at_the_same_label_count():
    rng = np.random.default_rng(11)
    m, budget, theta = 2000, 400, 0.25  # p = X³: share E[X³] = 1/4; the metric is calibrated (f = p)
    active_hits = uniform_hits = 0
    active_w: list[float] = []
    uniform_w: list[float] = []
    drawn: list[int] = []
    for _ in range(REPS):
        p = rng.uniform(size=m) ** 3
        y = (rng.uniform(size=m) < p).astype(float)
        pi = P.sampling_probabilities(np.sqrt(p * (1 - p)), budget)
        xi = rng.uniform(size=m) < pi
        a = P.active_mean(y[xi], p[xi], pi[xi], p[~xi])
        active_hits += a.lower <= theta <= a.upper
        active_w.append(a.upper - a.lower)
        drawn.append(int(xi.sum()))
        idx = rng.permutation(m)
        u = P.ppipp(y[idx[:budget]], p[idx[:budget]], p[idx[budget:]])
        uniform_hits += u.lower <= theta <= u.upper
        uniform_w.append(u.upper - u.lower)
    assert 0.93 <= active_hits / REPS <= 0.97
    assert 0.93 <= uniform_hits / REPS <= 0.97
    assert abs(np.mean(drawn) - budget) < 2  # the same number of labels on average
    assert np.mean(active_w) < 0.92 * np.mean(uniform_w), (np.mean(active_w), np.mean(uniform_w))


def test_paired_difference_covers_and_pairing_narrows_the_interval():
    rng = np.random.default_rng(5)
    n, big_n = 200, 2000
    truth = -0.05  # E[X²] − E[X² + 0.1X] with X ~ U(0, 1)
    hits = 0
    paired_w: list[float] = []
    unpaired_w: list[float] = []
    for _ in range(REPS):
        x = rng.uniform(size=n + big_n)
        pa, pb = x**2, np.clip(x**2 + 0.1 * x, 0, 1)
        # The two systems tend to fail on the same items: on 70% of the items one draw decides both labels.
        u = rng.uniform(size=n)
        v = np.where(rng.uniform(size=n) < 0.7, u, rng.uniform(size=n))
        ya, yb = (u < pa[:n]).astype(float), (v < pb[:n]).astype(float)
        fa = np.clip(0.8 * pa + 0.15 + rng.normal(0, 0.1, n + big_n), 0, 1)
        fb = np.clip(0.8 * pb + 0.15 + rng.normal(0, 0.1, n + big_n), 0, 1)
        e = P.paired_difference(ya, yb, fa[:n], fb[:n], fa[n:], fb[n:])
        hits += e.lower <= truth <= e.upper
        paired_w.append(e.upper - e.lower)
        a, b = P.ppipp(ya, fa[:n], fa[n:]), P.ppipp(yb, fb[:n], fb[n:])
        unpaired_w.append(2 * Z95 * math.hypot(a.se, b.se))
    assert 0.93 <= hits / REPS <= 0.97
    assert np.mean(paired_w) < 0.7 * np.mean(unpaired_w)
