"""How many items a validation needs for a wanted precision, and what a fixed-precision stopping rule does.

Pure: numbers in, numbers out (no Django, no app). Every figure is the number of *items* (subjects) for a
two-sided ``confidence`` interval of half-width ``half_width`` around the expected value.

* **AUC, Hanley & McNeil (1982)** — the standard error of the area from its exponential approximation
  ``Q1 = A/(2−A)``, ``Q2 = 2A²/(1+A)`` (Radiology 143:29, eq. 2); the smallest total whose
  positives and negatives (split by the prevalence) give ``z·SE ≤ half_width``.
* **AUC, Obuchowski** — the binormal variance of Obuchowski (1994; in the form of Obuchowski, Lieber &
  Wians 2004, Clin Chem 50:1118, eq. 3): ``V = 0.0099·e^{−a²/2}·(5a² + 8 + (a² + 8)/R)`` with
  ``a = 1.414·Φ⁻¹(A)`` and ``R`` negatives per positive; positives ``= z²V/L²``.
* **Cohen's κ, two raters, binary** — the large-sample variance of Fleiss, Cohen & Everitt (1969) for a
  table with the given marginals and κ, as used for sample sizes by Flack et al. (1988) and Cantor (1996):
  ``Q = n·Var(κ̂)``, ``n = z²Q/L²``.
* **Fleiss' κ, m raters, c categories** — Fleiss, Nee & Landis (1979) give its asymptotic variance *under
  κ = 0* (:func:`fleiss_kappa_null_variance`). No closed form serves at κ > 0, so the plan simulates
  Fleiss' κ under a model with the wanted κ and marginals (:func:`kappa_sampling_model`) and scales the
  simulated variance; at κ = 0 the simulation reproduces the Fleiss–Nee–Landis variance (a test holds it).
* **Krippendorff's α (nominal)** — likewise by simulation, no closed form being available.
* :func:`fixed_precision_coverage` — the coverage of the 95% interval when a study stops as soon as the
  interval is narrow enough (the fixed-precision rule), by simulation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from adjudication.stats.validity import roc_auc

DEFAULT_CONFIDENCE = 0.95
MAX_ITEMS = 10_000_000
SIMULATE_AT_MOST = 2000
# The narrowest interval a plan is made for, and the confidence levels it accepts: below 0.001 (or above
# 99.9%) the items needed run to millions, and at 1e-300 the formulas divide by a half-width squared to 0.
MIN_HALF_WIDTH = 0.001
MAX_CONFIDENCE = 0.999
# A prevalence (a share of positives) further from 0 and 1 than this: at 1e-300 a plan needs no positives
# at all, or more negatives than there are numbers.
MIN_SHARE = 0.001

Progress = Callable[[int, int], None]


class PlanningError(ValueError):
    """An input outside the range where the formula means anything."""


@dataclass
class Plan:
    """The items a figure needs: ``n_items`` in all (``n_positive`` / ``n_negative`` for an AUC)."""

    figure: str
    method: str
    expected: float
    half_width: float
    confidence: float
    n_items: int
    n_positive: int | None = None
    n_negative: int | None = None
    raters: int | None = None
    categories: int | None = None
    se_at_n: float | None = None
    reference: str = ""
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- checks --------------------------------------------------------------------------------------------


def z_value(confidence: float = DEFAULT_CONFIDENCE) -> float:
    if not _is_number(confidence) or not 0.5 <= confidence <= MAX_CONFIDENCE:
        raise PlanningError(f"confidence must lie in [0.5, {MAX_CONFIDENCE:g}]")
    return float(stats.norm.ppf(0.5 + confidence / 2))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_open(value: float, name: str, low: float = 0.0, high: float = 1.0) -> float:
    if not _is_number(value):
        raise PlanningError(f"{name} must be a number")
    if not low < value < high:
        raise PlanningError(f"{name} must lie strictly between {low:g} and {high:g}")
    return float(value)


def _check_auc(auc: float) -> float:
    return _check_open(auc, "the expected AUC", 0.5, 1.0)


def _check_half_width(half_width: float) -> float:
    h = _check_open(half_width, "the half-width", 0.0, 1.0)
    if h < MIN_HALF_WIDTH:
        raise PlanningError(f"the half-width must be at least {MIN_HALF_WIDTH:g}")
    return h


def _check_share(value: float, name: str) -> float:
    p = _check_open(value, name)
    if not MIN_SHARE <= p <= 1 - MIN_SHARE:
        raise PlanningError(f"{name} must lie between {MIN_SHARE:g} and {1 - MIN_SHARE:g}")
    return p


def _items(exact: float, what: str) -> int:
    """``exact`` rounded up to whole items, refused beyond ``MAX_ITEMS`` (never an overflow)."""
    if not exact <= MAX_ITEMS:
        raise PlanningError(f"more than ten million {what} would be needed; widen the half-width")
    return math.ceil(exact - 1e-9)


# --- AUC ------------------------------------------------------------------------------------------------


def hanley_mcneil_se(auc: float, n_positive: int, n_negative: int) -> float:
    """Standard error of the ROC area (Hanley & McNeil 1982, eq. 2 with their Q1, Q2 approximation)."""
    a = _check_open(auc, "the AUC", 0.0, 1.0)
    if n_positive < 1 or n_negative < 1:
        raise PlanningError("the AUC needs at least one positive and one negative item")
    q1 = a / (2 - a)
    q2 = 2 * a * a / (1 + a)
    var = (a * (1 - a) + (n_positive - 1) * (q1 - a * a) + (n_negative - 1) * (q2 - a * a)) / (n_positive * n_negative)
    return math.sqrt(var)


def _split(n: int, prevalence: float) -> tuple[int, int]:
    pos = min(max(1, round(n * prevalence)), n - 1)
    return pos, n - pos


def auc_plan_hanley_mcneil(
    auc: float, prevalence: float, half_width: float, confidence: float = DEFAULT_CONFIDENCE
) -> Plan:
    """The smallest number of items whose positives and negatives (``prevalence`` of them positive) give
    a Hanley–McNeil interval no wider than ``±half_width``."""
    a, prev, h, z = (
        _check_auc(auc),
        _check_share(prevalence, "the prevalence"),
        _check_half_width(half_width),
        z_value(confidence),
    )

    def ok(n: int) -> bool:
        pos, neg = _split(n, prev)
        return z * hanley_mcneil_se(a, pos, neg) <= h

    hi = 2
    while not ok(hi):
        hi *= 2
        if hi > MAX_ITEMS:
            raise PlanningError("more than ten million items would be needed; widen the half-width")
    lo = max(2, hi // 2)
    # The SE falls with n except for the rounding of the split: scan down from the first n found.
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    pos, neg = _split(hi, prev)
    return Plan(
        figure="auc",
        method="Hanley & McNeil (1982)",
        expected=a,
        half_width=h,
        confidence=confidence,
        n_items=hi,
        n_positive=pos,
        n_negative=neg,
        se_at_n=hanley_mcneil_se(a, pos, neg),
        reference="Hanley JA, McNeil BJ. Radiology 1982;143:29-36, eq. 2 (exponential approximation of Q1, Q2).",
    )


def obuchowski_variance(auc: float, ratio: float) -> float:
    """Variance of the AUC times the number of positives, binormal model with equal variances
    (Obuchowski 1994; Obuchowski, Lieber & Wians 2004, eq. 3). ``ratio``: negatives per positive."""
    a_ = _check_auc(auc)
    if not ratio > 0 or not math.isfinite(ratio):
        raise PlanningError("the ratio of negatives to positives must be positive")
    a = 1.414 * float(stats.norm.ppf(a_))
    return 0.0099 * math.exp(-a * a / 2) * ((5 * a * a + 8) + (a * a + 8) / ratio)


def auc_plan_obuchowski(
    auc: float, prevalence: float, half_width: float, confidence: float = DEFAULT_CONFIDENCE
) -> Plan:
    """Positives ``= z²·V/L²`` (rounded up), negatives ``= R`` times as many, ``R = (1 − p)/p``."""
    a, prev, h, z = (
        _check_auc(auc),
        _check_share(prevalence, "the prevalence"),
        _check_half_width(half_width),
        z_value(confidence),
    )
    ratio = (1 - prev) / prev
    v = obuchowski_variance(a, ratio)
    pos = _items(z * z * v / (h * h), "positive items")
    neg = _items(pos * ratio, "negative items")
    return Plan(
        figure="auc",
        method="Obuchowski (binormal)",
        expected=a,
        half_width=h,
        confidence=confidence,
        n_items=pos + neg,
        n_positive=pos,
        n_negative=neg,
        se_at_n=math.sqrt(v / pos),
        reference=(
            "Obuchowski NA. Invest Radiol 1994;29:238-43; Obuchowski, Lieber, Wians. Clin Chem 2004;50:1118, eq. 3."
        ),
    )


# --- Cohen's kappa, two raters, binary ------------------------------------------------------------------


def cohen_kappa_q(kappa: float, p1: float, p2: float | None = None) -> float:
    """``Q = n·Var(κ̂)``: the Fleiss, Cohen & Everitt (1969) large-sample variance for two raters, a
    binary rating with positive proportions ``p1``, ``p2`` and agreement κ (Cantor 1996's Q)."""
    k = _check_open(kappa, "the expected kappa", -1.0, 1.0)
    a = _check_share(p1, "the prevalence")
    b = a if p2 is None else _check_share(p2, "the second rater's prevalence")
    cross = a * (1 - b) + b * (1 - a)
    num = (1 - k) * (4 * a * b * (1 - a) * (1 - b) * (1 + k) + (1 - 2 * a) * (1 - 2 * b) * cross * k * (2 - k))
    return num / (cross * cross)


def cohen_kappa_plan(
    kappa: float,
    prevalence: float,
    half_width: float,
    confidence: float = DEFAULT_CONFIDENCE,
    *,
    p2: float | None = None,
    rounding: str = "up",
) -> Plan:
    """Items for two raters and a binary rating: ``n = z²·Q/L²``. ``rounding`` "up" (default) or
    "nearest" (as Reichenheim's sskdlg prints)."""
    h, z = _check_half_width(half_width), z_value(confidence)
    q = cohen_kappa_q(kappa, prevalence, p2)
    exact = z * z * q / (h * h)
    if not exact <= MAX_ITEMS:
        raise PlanningError("more than ten million items would be needed; widen the half-width")
    if rounding == "up":
        n = _items(exact, "items")
    elif rounding == "nearest":
        n = math.floor(exact + 0.5)
    else:
        raise PlanningError("rounding must be 'up' or 'nearest'")
    return Plan(
        figure="cohen_kappa",
        method="Fleiss, Cohen & Everitt (1969) variance (Flack et al. 1988; Cantor 1996)",
        expected=float(kappa),
        half_width=h,
        confidence=confidence,
        n_items=max(n, 2),
        raters=2,
        categories=2,
        se_at_n=math.sqrt(q / max(n, 2)),
        reference="Fleiss, Cohen, Everitt. Psychol Bull 1969;72:323-7; Cantor AB. Psychol Methods 1996;1:150-3.",
        notes=[f"n·Var(κ) = Q = {q:.4f}"],
    )


# --- Fleiss' kappa: the null variance -------------------------------------------------------------------


def fleiss_kappa_null_variance(proportions: np.ndarray | list[float], n_items: int, raters: int) -> float:
    """Var(κ̂) under κ = 0 (Fleiss, Nee & Landis 1979):
    ``2/(N·m(m−1)) · [(Σpq)² − Σpq(q−p)] / (Σpq)²``."""
    p = np.asarray(proportions, dtype=float)
    if p.ndim != 1 or p.size < 2 or np.any(p < 0) or abs(float(p.sum()) - 1) > 1e-9:
        raise PlanningError("the category proportions must be at least two non-negative numbers summing to 1")
    if n_items < 1 or raters < 2:
        raise PlanningError("Fleiss' kappa needs at least one item and two raters per item")
    q = 1 - p
    spq = float((p * q).sum())
    if spq <= 0:
        raise PlanningError("every rating in one category: kappa is undefined")
    return 2.0 / (n_items * raters * (raters - 1)) * (spq * spq - float((p * q * (q - p)).sum())) / (spq * spq)


# --- simulation of kappa and alpha ----------------------------------------------------------------------


def kappa_sampling_model(
    kappa: float, proportions: np.ndarray, n_items: int, raters: int, n_sim: int, rng: np.random.Generator
) -> np.ndarray:
    """Simulated category counts, shape (n_sim, n_items, categories).

    Each item has a true category drawn from ``proportions``; each rater reports it with probability
    ``s = √κ`` and otherwise a category drawn afresh from ``proportions``. The marginals stay
    ``proportions`` and two ratings of an item agree beyond chance by exactly κ (the intraclass κ of
    the model is s²), so Fleiss' κ and Krippendorff's α estimate κ.
    """
    p = np.asarray(proportions, dtype=float)
    c = p.size
    s = math.sqrt(kappa)
    truth = rng.choice(c, size=(n_sim, n_items), p=p)
    keep = rng.random((n_sim, n_items, raters)) < s
    fresh = rng.choice(c, size=(n_sim, n_items, raters), p=p)
    ratings = np.where(keep, truth[:, :, None], fresh)
    counts = np.zeros((n_sim, n_items, c), dtype=np.int64)
    for j in range(c):
        counts[:, :, j] = (ratings == j).sum(axis=2)
    return counts


def fleiss_kappa_batch(counts: np.ndarray) -> np.ndarray:
    """Fleiss' (1971) κ of each simulated table (n_sim × items × categories, m ratings per item)."""
    m = counts.sum(axis=2)[:, :1].astype(float)
    n = counts.shape[1]
    p_bar = ((counts * counts).sum(axis=2) - m) / (m * (m - 1))
    p_j = counts.sum(axis=1) / (n * m)
    p_e = (p_j * p_j).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = (p_bar.mean(axis=1) - p_e) / (1 - p_e)
    return out


def krippendorff_alpha_nominal_batch(counts: np.ndarray) -> np.ndarray:
    """Krippendorff's nominal α of each simulated table with no missing ratings (m per item):
    ``α = 1 − (n·m − 1)·Σ_u (m² − Σ_c n_uc²)/(m − 1) / (n_··² − Σ_c n_c²)``."""
    m = counts.sum(axis=2)[:, :1].astype(float)
    n = counts.shape[1]
    total = n * m[:, 0]
    observed = ((m * m - (counts * counts).sum(axis=2)) / (m - 1)).sum(axis=1)
    n_c = counts.sum(axis=1)
    expected = total * total - (n_c * n_c).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = 1 - (total - 1) * observed / expected
    return out


def simulated_n_variance(
    statistic: str,
    kappa: float,
    proportions: np.ndarray | list[float],
    raters: int,
    *,
    n_items: int,
    n_sim: int = 2000,
    seed: int = 0,
    progress: Progress | None = None,
) -> tuple[float, float]:
    """``n·Var`` of Fleiss' κ (``statistic="fleiss"``) or nominal α (``"alpha"``) at ``n_items`` items,
    by simulation, and its Monte Carlo standard error (from the sampling variance of a variance).
    ``progress(done, n_sim)`` is called after each batch of simulated tables."""
    p = np.asarray(proportions, dtype=float)
    if p.ndim != 1 or p.size < 2 or np.any(p <= 0) or abs(float(p.sum()) - 1) > 1e-9:
        raise PlanningError("the category proportions must be at least two positive numbers summing to 1")
    _check_open(kappa, "the expected agreement", -1e-12, 1.0)
    if raters < 2:
        raise PlanningError("agreement needs at least two raters per item")
    rng = np.random.default_rng(seed)
    values: list[np.ndarray] = []
    batch = max(1, min(n_sim, 2_000_000 // max(1, n_items * raters)))
    done = 0
    while done < n_sim:
        size = min(batch, n_sim - done)
        counts = kappa_sampling_model(kappa, p, n_items, raters, size, rng)
        values.append(fleiss_kappa_batch(counts) if statistic == "fleiss" else krippendorff_alpha_nominal_batch(counts))
        done += size
        if progress is not None:
            progress(done, n_sim)
    est = np.concatenate(values)
    est = est[np.isfinite(est)]
    var = float(est.var(ddof=1))
    # SE of a sample variance: var·sqrt(2/(R−1)) for near-normal estimates.
    return n_items * var, n_items * var * math.sqrt(2 / (est.size - 1))


def agreement_plan(
    statistic: str,
    kappa: float,
    raters: int,
    categories: int,
    half_width: float,
    confidence: float = DEFAULT_CONFIDENCE,
    *,
    proportions: list[float] | None = None,
    n_sim: int = 2000,
    seed: int = 0,
    progress: Progress | None = None,
) -> Plan:
    """Items for Fleiss' κ or nominal α among ``raters`` raters on ``categories`` categories (equal
    proportions unless given), from the simulated variance at a pilot size and again at the planned size.
    ``progress(done, total)`` counts simulated tables over both rounds (the second may not be needed)."""
    if statistic not in ("fleiss", "alpha"):
        raise PlanningError("statistic must be fleiss or alpha")
    h, z = _check_half_width(half_width), z_value(confidence)
    if categories < 2:
        raise PlanningError("agreement needs at least two categories")
    p = np.full(categories, 1 / categories) if proportions is None else np.asarray(proportions, dtype=float)
    if p.size != categories:
        raise PlanningError("give one proportion per category")
    # A pilot at 200 items, then once more at the planned size (n·Var settles as n grows; beyond
    # SIMULATE_AT_MOST items the pilot's n·Var is used, which keeps the cost bounded).
    n, sim_n = 200, 200
    for round_ in range(2):

        def report(done: int, total: int, before: int = round_ * n_sim) -> None:
            if progress is not None:
                progress(before + done, 2 * n_sim)

        n_var, mc_se = simulated_n_variance(
            statistic, kappa, p, raters, n_items=sim_n, n_sim=n_sim, seed=seed, progress=report
        )
        n = max(10, _items(z * z * n_var / (h * h), "items"))
        if n > SIMULATE_AT_MOST:
            break
        sim_n = n
    if progress is not None:
        progress(2 * n_sim, 2 * n_sim)
    name = "Fleiss' kappa" if statistic == "fleiss" else "Krippendorff's alpha (nominal)"
    return Plan(
        figure="fleiss_kappa" if statistic == "fleiss" else "krippendorff_alpha",
        method=f"{name}: simulated variance ({n_sim} tables, seed {seed})",
        expected=float(kappa),
        half_width=h,
        confidence=confidence,
        n_items=n,
        raters=raters,
        categories=categories,
        se_at_n=math.sqrt(n_var / n),
        reference=(
            "Fleiss JL, Nee JCM, Landis JR. Psychol Bull 1979;86:974-7 (the null variance the simulation "
            "reproduces at κ = 0); model: true category kept by each rater with probability √κ."
            if statistic == "fleiss"
            else "Krippendorff K. Content Analysis, 2004 (nominal α; no closed-form variance, so simulated); "
            "model: true category kept by each rater with probability √α."
        ),
        notes=[
            f"n·Var = {n_var:.4f} ± {mc_se:.4f} (Monte Carlo SE)",
            "category proportions: " + ", ".join(f"{x:.3f}" for x in p),
        ],
    )


# --- the fixed-precision stopping rule ------------------------------------------------------------------


@dataclass
class CoverageResult:
    replicates: int
    coverage: float
    mc_se: float
    mean_stop_n: float
    stopped_by_rule: int
    mean_estimate: float
    true_value: float

    @classmethod
    def of_replicates(
        cls, *, covered: int, replicates: int, stop_ns: list[int], stopped: int, estimates: list[float],
        true_value: float,
    ) -> CoverageResult:
        """Coverage with its Monte Carlo SE, from the tallies of a stopping-rule simulation."""
        cov = covered / replicates
        return cls(
            replicates=replicates,
            coverage=cov,
            mc_se=math.sqrt(cov * (1 - cov) / replicates),
            mean_stop_n=float(np.mean(stop_ns)),
            stopped_by_rule=stopped,
            mean_estimate=float(np.mean(estimates)) if estimates else float("nan"),
            true_value=true_value,
        )


def fixed_precision_reached(
    *,
    ci95: tuple[float, float] | list[float] | None,
    n_positive: int,
    n_negative: int,
    n_done: int,
    planned_items: int,
    target: float,
) -> bool:
    """The fixed-precision rule for an AUC, as the pools apply it: never before half the planned items,
    then stop once the guarded half-width (:func:`auc_stopping_half_width`) is at most ``target``."""
    if ci95 is None or n_done < math.ceil(planned_items / 2):
        return False
    width = auc_stopping_half_width(ci95, n_positive, n_negative)
    return width is not None and width <= target


def fixed_precision_coverage(
    *,
    auc: float = 0.8,
    prevalence: float = 0.3,
    half_width: float = 0.05,
    look_every: int = 50,
    max_items: int = 2000,
    rule: str = "fixed_precision",
    fixed_items: int | None = None,
    replicates: int = 400,
    seed: int = 0,
) -> CoverageResult:
    """Simulate validations that look every ``look_every`` items and stop by ``rule``, and report how often
    the DeLong 95% interval at stopping contains the true AUC.

    ``rule``: ``"fixed_precision"`` — :func:`fixed_precision_reached` with the Hanley–McNeil plan for
    ``auc``, ``prevalence`` and ``half_width``; ``"naive"`` — as soon as the DeLong half-width alone is at
    most ``half_width``, from the first look; ``"fixed"`` — no rule, ``fixed_items`` items. Scores are
    binormal: negatives N(0, 1), positives N(d, 1) with ``d = √2·Φ⁻¹(auc)``, so the true AUC is ``auc``."""
    _check_auc(auc)
    if rule not in ("fixed_precision", "naive", "fixed"):
        raise PlanningError("rule must be fixed_precision, naive or fixed")
    planned = auc_plan_hanley_mcneil(auc, prevalence, half_width).n_items
    d = math.sqrt(2) * float(stats.norm.ppf(auc))
    rng = np.random.default_rng(seed)
    covered = stopped = 0
    stop_ns: list[int] = []
    estimates: list[float] = []
    for _ in range(replicates):
        labels = (rng.random(max_items) < prevalence).astype(float)
        scores = rng.normal(size=max_items) + d * labels
        n = min(fixed_items or max_items, max_items) if rule == "fixed" else look_every
        while True:
            est = roc_auc(scores[:n], labels[:n])
            if rule == "fixed":
                break
            n_pos = int(labels[:n].sum())
            if rule == "naive":
                width = half_width_of(est.ci95)
                reached = width is not None and width <= half_width
            else:
                reached = fixed_precision_reached(
                    ci95=est.ci95,
                    n_positive=n_pos,
                    n_negative=n - n_pos,
                    n_done=n,
                    planned_items=planned,
                    target=half_width,
                )
            if reached:
                stopped += 1
                break
            if n >= max_items:
                break
            n = min(n + look_every, max_items)
        stop_ns.append(n)
        if est.ci95 is not None and est.value is not None:
            estimates.append(est.value)
            covered += int(est.ci95[0] <= auc <= est.ci95[1])
    return CoverageResult.of_replicates(
        covered=covered, replicates=replicates, stop_ns=stop_ns, stopped=stopped, estimates=estimates,
        true_value=auc,
    )


def half_width_of(ci95: tuple[float, float] | list[float] | None) -> float | None:
    """Half the width of an interval (``None`` when there is none)."""
    if ci95 is None:
        return None
    return (float(ci95[1]) - float(ci95[0])) / 2


def items_for_half_width(current_n: int, current_half_width: float, target: float) -> int:
    """Items needed in all for ``target`` when ``current_n`` give ``current_half_width`` (width ∝ 1/√n)."""
    if current_n < 1 or not current_half_width > 0 or not target > 0:
        raise PlanningError("need a positive sample size and half-widths")
    return max(current_n, math.ceil(current_n * (current_half_width / target) ** 2 - 1e-9))


def auc_stopping_half_width(
    ci95: tuple[float, float] | list[float], n_positive: int, n_negative: int, confidence: float = DEFAULT_CONFIDENCE
) -> float | None:
    """The half-width the stopping rule compares with its target: the larger of the interval's own
    half-width and ``z`` times the Hanley–McNeil SE at the value in the interval nearest 0.5 (where the
    SE is largest). The AUC's standard error shrinks as the estimate grows, so a rule on the interval
    alone would stop early precisely when the sample looks better than it is; guarding with the least
    favourable value in the interval keeps the decision (nearly) independent of the estimate's luck."""
    if n_positive < 1 or n_negative < 1:
        return None
    lo, hi = float(ci95[0]), float(ci95[1])
    nearest = min(max(0.5, lo), hi) if hi >= 0.5 else hi
    nearest = min(max(nearest, 1e-6), 1 - 1e-6)
    guard = z_value(confidence) * hanley_mcneil_se(nearest, n_positive, n_negative)
    return max((hi - lo) / 2, guard)


def significance_stopping_coverage(
    *, prevalence: float = 0.3, look_every: int = 50, max_items: int = 500, replicates: int = 400, seed: int = 0
) -> CoverageResult:
    """The contrast: stop as soon as the AUC is "significant" (its 95% interval excludes 0.5), with a true
    AUC of 0.5 (a useless metric); otherwise stop at ``max_items``. Coverage of the true value is what
    the interval at stopping achieves — far below 95%, because every look is another chance to stop on
    a fluke and the stopping decision is made *on the estimate itself*."""
    rng = np.random.default_rng(seed)
    covered = stopped = 0
    stop_ns: list[int] = []
    estimates: list[float] = []
    for _ in range(replicates):
        labels = (rng.random(max_items) < prevalence).astype(float)
        scores = rng.normal(size=max_items)
        n = look_every
        while True:
            est = roc_auc(scores[:n], labels[:n])
            if est.ci95 is not None and not est.ci95[0] <= 0.5 <= est.ci95[1]:
                stopped += 1
                break
            if n >= max_items:
                break
            n = min(n + look_every, max_items)
        stop_ns.append(n)
        if est.ci95 is not None and est.value is not None:
            estimates.append(est.value)
            covered += int(est.ci95[0] <= 0.5 <= est.ci95[1])
    return CoverageResult.of_replicates(
        covered=covered, replicates=replicates, stop_ns=stop_ns, stopped=stopped, estimates=estimates,
        true_value=0.5,
    )
