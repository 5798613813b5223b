"""Metric-versus-human validity over plain arrays. No ORM, no Django.

``scores`` are a metric's values (higher = more likely positive), ``labels`` the human judgement as
0/1. ROC AUC comes with DeLong's (1988) variance, computed with the fast midrank algorithm of Sun &
Xu (2014, IEEE Signal Processing Letters 21(11):1389–1393), and with a stratified percentile
bootstrap; two metrics on the same units are compared with the paired DeLong test. Correlations
carry Fisher-z intervals, precision and recall Wilson intervals. Undefined cases (one class, no
variance, too few units) come back as :class:`~adjudication.stats.agreement.Estimate` with ``value=None``
and the reason.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import stats
from sklearn.metrics import roc_curve

from adjudication.stats import agreement as ag
from adjudication.stats.agreement import Z95, Estimate, Progress, percentile_ci, wilson_interval

YOUDEN_WARNING = (
    "The Youden threshold is chosen on these same units, so sensitivity, specificity, precision and "
    "recall at it are optimistic (in-sample); confirm it on held-out units before using it."
)


def _clean(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Drop units whose score or label is missing; return what is left (as booleans) and how many were dropped.

    Nothing is copied that need not be: with no unit dropped the scores come back as given (float64) and boolean
    labels as given, so that a million units cost no further arrays of a million. Callers read them, never write."""
    s = np.asarray(scores, dtype=float)
    given = np.asarray(labels)
    if s.shape != given.shape or s.ndim != 1:
        raise ValueError("scores and labels must be 1-D arrays of the same length")
    if given.dtype == bool:
        ok = np.isfinite(s)
        y = given
    else:
        y_float = given.astype(float, copy=False)
        ok = np.isfinite(s) & np.isfinite(y_float)
        if not np.isin(y_float[ok], (0.0, 1.0)).all():
            raise ValueError("labels must be 0 or 1")
        y = y_float == 1.0
    if ok.all():
        return s, y, 0
    return s[ok], y[ok], int((~ok).sum())


# --- DeLong ----------------------------------------------------------------------------------


def _delong_components(scores: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fast DeLong for k score rows at once: AUCs (k,), V10 (k, m) and V01 (k, n).

    Sun & Xu (2014), Algorithm 1: with T_X, T_Y the midranks within positives and negatives and
    T_Z the midranks in the pooled sample, V10 = (T_Z[pos] − T_X)/n and V01 = 1 − (T_Z[neg] − T_Y)/m.

    T_Z − T_X of a positive is the number of negatives below it plus half those tied with it (the positives
    around it count alike in both midranks), so it is read off the sorted negatives by searchsorted: for a
    million units a few arrays of m and n rather than scipy's rankdata of the pooled sample (eight arrays of
    m + n, three times). The numbers are those the midranks gave, to the last bit: midranks are half-integers,
    and float64 held their sums and differences exactly (far below 2**53), as it holds (below + above)/2 here.
    """
    scores = np.atleast_2d(scores)
    m = int(positive.sum())
    n = int(positive.size - m)
    k = scores.shape[0]
    aucs = np.empty(k)
    v10 = np.empty((k, m))
    v01 = np.empty((k, n))
    for r in range(k):
        x = scores[r, positive]
        y = scores[r, ~positive]
        # Twice T_Z − T_X of each positive: 2·below + tied = (negatives ≤ it) + (negatives < it), exact integers.
        twice = _at_or_below(np.sort(y), x)
        aucs[r] = (twice.sum() / 2.0) / (m * n)
        v10[r] = (twice / 2.0) / n
        del twice
        v01[r] = 1.0 - (_at_or_below(np.sort(x), y) / 2.0) / m
    return aucs, v10, v01


def _at_or_below(sorted_values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """For each of ``at``: how many of ``sorted_values`` are below it, plus how many are at or below it."""
    twice = np.searchsorted(sorted_values, at, side="left")
    twice += np.searchsorted(sorted_values, at, side="right")
    return twice


def _delong_cov(v10: np.ndarray, v01: np.ndarray) -> np.ndarray:
    m, n = v10.shape[1], v01.shape[1]
    s10 = np.atleast_2d(np.cov(v10)) if m > 1 else np.zeros((v10.shape[0], v10.shape[0]))
    s01 = np.atleast_2d(np.cov(v01)) if n > 1 else np.zeros((v01.shape[0], v01.shape[0]))
    return np.asarray(s10 / m + s01 / n, dtype=float)


def _class_check(y: np.ndarray, n_excluded: int) -> Estimate | None:
    n_pos = int(y.sum())
    return class_check(n_pos, int(y.size - n_pos), n_excluded)


def class_check(m: int, n: int, n_excluded: int) -> Estimate | None:
    """The AUC's undefined case, from the classes' sizes: a class with no unit."""
    if m == 0 or n == 0:
        which = "positive" if m == 0 else "negative"
        return Estimate.undefined(
            f"AUC needs both classes; there is no {which} unit", n_units=m + n, n_excluded=n_excluded, n_pos=m, n_neg=n
        )
    return None


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> Estimate:
    """ROC AUC with DeLong's standard error; the interval is AUC ± 1.96·SE clipped to [0, 1]
    (as pROC and Stata's ``roctab`` report it)."""
    s, y, n_excluded = _clean(scores, labels)
    undefined = _class_check(y, n_excluded)
    if undefined:
        return undefined
    aucs, v10, v01 = _delong_components(s[None, :], y)
    return auc_estimate(float(aucs[0]), float(_delong_cov(v10, v01)[0, 0]), int(y.sum()), int((~y).sum()), n_excluded)


def auc_estimate(auc: float, var: float, m: int, n: int, n_excluded: int) -> Estimate:
    """The AUC with DeLong's variance: its SE and AUC ± 1.96·SE clipped to [0, 1]."""
    se = math.sqrt(max(var, 0.0))
    return Estimate(
        value=auc,
        n_units=m + n,
        n_excluded=n_excluded,
        se=se,
        ci95=(max(0.0, auc - Z95 * se), min(1.0, auc + Z95 * se)),
        ci_method="DeLong",
        extra={"n_pos": m, "n_neg": n},
    )


def delong_paired(scores_a: np.ndarray, scores_b: np.ndarray, labels: np.ndarray) -> Estimate:
    """DeLong, DeLong & Clarke-Pearson (1988) test of AUC_a = AUC_b on the same units.

    ``value`` is AUC_a − AUC_b; ``extra`` has z, the two-sided p-value and both AUCs.
    """
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    y_all = np.asarray(labels, dtype=float)
    ok = np.isfinite(a) & np.isfinite(b) & np.isfinite(y_all)
    n_excluded = int((~ok).sum())
    _, y, _ = _clean(a[ok], y_all[ok])
    undefined = _class_check(y, n_excluded)
    if undefined:
        return undefined
    aucs, v10, v01 = _delong_components(np.vstack([a[ok], b[ok]]), y)
    cov = _delong_cov(v10, v01)
    var = float(cov[0, 0] + cov[1, 1] - 2.0 * cov[0, 1])
    return _paired_estimate(float(aucs[0]), float(aucs[1]), var, int(y.sum()), int((~y).sum()), n_excluded)


def _paired_estimate(auc_a: float, auc_b: float, var: float, m: int, n: int, n_excluded: int) -> Estimate:
    """delong_paired's estimate of AUC_a − AUC_b with the variance of the difference."""
    diff = float(auc_a - auc_b)
    extra: dict[str, Any] = {"auc_a": auc_a, "auc_b": auc_b, "n_pos": m, "n_neg": n, "diff": diff}
    if var <= 1e-15:
        return Estimate.undefined(
            "the two metrics rank the units identically, so the difference has no variance",
            n_units=m + n,
            n_excluded=n_excluded,
            **extra,
        )
    se = math.sqrt(var)
    z = diff / se
    extra.update({"z": z, "p_value": float(2.0 * stats.norm.sf(abs(z)))})
    return Estimate(
        value=diff,
        n_units=m + n,
        n_excluded=n_excluded,
        se=se,
        ci95=(diff - Z95 * se, diff + Z95 * se),
        ci_method="DeLong (paired)",
        extra=extra,
    )


@dataclass(frozen=True)
class DelongSums:
    """One class's units and sums over them of two metrics' DeLong components, as exact integers.

    A unit's ``t`` for a metric is twice its component times the other class's size: for a positive,
    2·(negatives below it) + (negatives tied with it), so V10 = t / 2n; for a negative, 2·(positives above it) +
    (positives tied with it), so V01 = 1 − (positives below + half those tied) / m = t / 2m (a variance and a
    covariance are the same of 1 − V as of V). ``a``, ``b``: Σ t_a, Σ t_b; ``aa``, ``bb``, ``ab``: Σ t_a², Σ t_b²,
    Σ t_a·t_b. Sums over the units, however they are grouped: a database adds them up over distinct rows."""

    units: int
    a: int
    b: int
    aa: int
    bb: int
    ab: int

    def cov(self, other_size: int) -> tuple[Fraction, Fraction, Fraction]:
        """The components' sample variances of a and b and their covariance (ddof 1, as np.cov; 0 for one unit,
        as _delong_cov)."""
        k = self.units
        if k < 2:
            return Fraction(0), Fraction(0), Fraction(0)
        scale = (k - 1) * (2 * other_size) ** 2
        return (
            Fraction(self.aa * k - self.a * self.a, k * scale),
            Fraction(self.bb * k - self.b * self.b, k * scale),
            Fraction(self.ab * k - self.a * self.b, k * scale),
        )


def delong_from_sums(
    pos: DelongSums, neg: DelongSums, n_excluded: int = 0
) -> tuple[Estimate, Estimate, Estimate]:
    """roc_auc of metric a, of metric b, and delong_paired of the two, on the units the sums are over (each unit
    with both scores and a label: the caller counts the others in ``n_excluded``).

    The AUCs are the same floats as on the units (2U = Σ t_a over the positives, an exact integer, halved and divided
    by m·n as _delong_components does); the variances are computed exactly from the integer sums and rounded once,
    so they equal np.cov's of the components to rounding (tests: rtol 1e-9)."""
    m, n = pos.units, neg.units
    undefined = class_check(m, n, n_excluded)
    if undefined:
        return undefined, undefined, undefined
    auc_a = (pos.a / 2.0) / (m * n)
    auc_b = (pos.b / 2.0) / (m * n)
    (pa, pb, pab), (na, nb, nab) = pos.cov(n), neg.cov(m)
    var_a, var_b = pa / m + na / n, pb / m + nb / n
    cov_ab = pab / m + nab / n
    return (
        auc_estimate(auc_a, float(var_a), m, n, n_excluded),
        auc_estimate(auc_b, float(var_b), m, n, n_excluded),
        _paired_estimate(auc_a, auc_b, float(var_a + var_b - 2 * cov_ab), m, n, n_excluded),
    )


def auc_bootstrap_ci(
    scores: np.ndarray, labels: np.ndarray, *, n_boot: int, seed: int, progress: Progress | None = None
) -> tuple[tuple[float, float] | None, int]:
    """Percentile bootstrap interval for AUC, resampling positives and negatives separately
    (stratified, as pROC does by default), so every replicate keeps both classes.

    A replicate's AUC is computed from how many times each unit was drawn (:class:`_AucCounter`), not by ranking
    the resample: the same value to the last bit as the Mann-Whitney statistic of the pooled resample's midranks
    (scipy's rankdata), with a few integer arrays of m and n per replicate instead of eight of m + n."""
    s, y, _ = _clean(scores, labels)
    if y.all() or not y.any():
        return None, 0
    counter = _AucCounter(s[y], s[~y])
    out: list[np.ndarray] = []
    for pos_idx, neg_idx in _stratified_blocks(np.random.default_rng(seed), counter.m, counter.n, n_boot, progress):
        out.append(counter.replicates(pos_idx, neg_idx))
    return percentile_ci(np.concatenate(out))


class _AucCounter:
    """The AUC of resamples of fixed positives' and negatives' scores, given as rows of drawn indices.

    The AUC of a resample is U / (m·n), U the Mann-Whitney statistic: over the positives drawn, the number of
    negatives drawn below each plus half the number tied with it. Which negatives are below (or tied with) a
    positive does not depend on the draw: with the negatives sorted once, they are those before ``lo[i]`` (and from
    ``lo[i]`` to ``hi[i]``), the searchsorted positions of positive i's score. A replicate then needs only the
    multiplicities: w_neg (how many times each negative was drawn, in sorted order) and its cumulative sum C (C[j]:
    negatives drawn among the first j sorted), and w_pos; 2U = Σ_i w_pos[i]·(C[lo[i]] + C[hi[i]]), since
    2·below + tied = C[lo] + C[hi].

    The ranking it replaces (rankdata of the pooled resample, AUC = (R − m(m+1)/2) / (m·n), R the positives'
    rank sum) gives the same number: R − m(m+1)/2 is U exactly (the positives' ranks among themselves sum to
    m(m+1)/2), and float64 held every step of it exactly, midranks being half-integers whose partial sums stay
    far below 2**53 (R ≤ m·(m + n)). Here 2U is an exact int64 (at most 2·m·n), halved exactly, and divided by
    m·n as before: the same float, bit for bit."""

    def __init__(self, pos: np.ndarray, neg: np.ndarray) -> None:
        self.m, self.n = int(pos.size), int(neg.size)
        order = np.argsort(neg, kind="stable")
        sorted_neg = neg[order]
        # Each negative's place in sorted order, so that a draw of negative j counts at its place.
        self.neg_place = np.empty(self.n, dtype=np.int64)
        self.neg_place[order] = np.arange(self.n, dtype=np.int64)
        self.lo = np.searchsorted(sorted_neg, pos, side="left")
        self.hi = np.searchsorted(sorted_neg, pos, side="right")

    def replicates(self, pos_idx: np.ndarray, neg_idx: np.ndarray) -> np.ndarray:
        """The AUCs of a block of rows: ``pos_idx`` (rows × m, indices of positives) and ``neg_idx`` (rows × n)."""
        m, n = self.m, self.n
        rows = pos_idx.shape[0]
        # One bincount for the whole block: row r's draws are counted in cells r·m .. r·m + m − 1.
        w_pos = np.bincount((pos_idx + (np.arange(rows) * m)[:, None]).ravel(), minlength=rows * m).reshape(rows, m)
        places = self.neg_place[neg_idx]
        places += (np.arange(rows) * n)[:, None]
        below = np.zeros((rows, n + 1), dtype=np.int64)
        np.cumsum(np.bincount(places.ravel(), minlength=rows * n).reshape(rows, n), axis=1, out=below[:, 1:])
        del places
        two_u: np.ndarray = np.einsum("rm,rm->r", w_pos, below[:, self.lo] + below[:, self.hi])
        return (two_u / 2.0) / (m * n)


# Cells a unit costs a replicate of the AUC: its row of drawn indices, then the multiplicities, their cumulative
# sums and the positives' two lookups into them (a few integer arrays of m or n, none the width of the pooled
# resample as ranking it needed): a block of resamples is counted as that many cells a unit.
_AUC_ARRAYS = 4


def _stratified_blocks(
    rng: np.random.Generator, m: int, n: int, n_boot: int, progress: Progress | None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The stratified resamples a few at a time: blocks of rows of positives' indices (0..m−1) and the same rows of
    negatives' (0..n−1), rows × (m + n) × _AUC_ARRAYS ≤ BOOT_CELLS (one row at least), progress after each batch of
    BOOT_BATCH.

    The seed's stream holds, batch after batch, the batch's rows of positives and then its rows of negatives
    (``rng.integers(0, m, (50, m))`` then ``rng.integers(0, n, (50, n))``). So that a block of positives' rows and
    the same rows of negatives are at hand together without holding the batch, a copy of the generator is moved
    past the batch's positives (drawn and dropped, a block at a time) and draws the negatives; the generator
    draws the positives again, and the copy, at the end of the batch, goes on with the next. Drawing in blocks
    gives the rows the whole batch gives (see :func:`adjudication.stats.agreement.draw_rows`), whatever the block's
    size: only memory depends on it."""
    step = ag.block_rows(m + n, _AUC_ARRAYS)
    done = 0
    while done < n_boot:
        size = min(ag.BOOT_BATCH, n_boot - done)
        negatives = copy.deepcopy(rng)
        for _ in ag.draw_rows(negatives, m, size, step):
            pass
        yield from zip(ag.draw_rows(rng, m, size, step), ag.draw_rows(negatives, n, size, step), strict=True)
        rng = negatives
        done += size
        if progress is not None:
            progress(done, n_boot)


# The ROC curve's points a report keeps: a metric with a distinct score per unit has a point per unit (a million
# units: three lists of a million numbers in the report's JSON, stored and read back with it). Past this many, the
# points kept are evenly spaced along the curve's own (the first and last included), enough to draw it; the AUC and
# everything else are computed from every unit, never from these points.
ROC_MAX_POINTS = 2000


def roc_points(scores: np.ndarray, labels: np.ndarray) -> dict[str, Any] | None:
    """The ROC curve (scikit-learn's roc_curve, collinear points dropped): its false and true positive rates and
    thresholds, at most ROC_MAX_POINTS of them; ``n_points`` is how many the whole curve has."""
    s, y, _ = _clean(scores, labels)
    if y.all() or not y.any():
        return None
    return roc_from_curve(*roc_curve(y, s))


def roc_from_curve(fpr: np.ndarray, tpr: np.ndarray, thresholds: np.ndarray) -> dict[str, Any]:
    """:func:`roc_points` of scikit-learn's curve: at most ROC_MAX_POINTS of its points, evenly spaced along it."""
    n_points = int(fpr.size)
    if n_points > ROC_MAX_POINTS:
        keep = np.unique(np.linspace(0, n_points - 1, ROC_MAX_POINTS).round().astype(np.int64))
        fpr, tpr, thresholds = fpr[keep], tpr[keep], thresholds[keep]
    return {
        "fpr": fpr.tolist(),
        "tpr": tpr.tolist(),
        "thresholds": [float(t) if np.isfinite(t) else None for t in thresholds],
        "n_points": n_points,
    }


# --- correlations ----------------------------------------------------------------------------


def _fisher_ci(r: float, se: float) -> tuple[float, float]:
    if abs(r) >= 1.0:
        return (r, r)
    z = math.atanh(r)
    return (math.tanh(z - Z95 * se), math.tanh(z + Z95 * se))


def _pair_clean(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The units with both values (float64), and how many were dropped: the arrays as given when none was."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.all():
        return x, y, 0
    return x[ok], y[ok], int((~ok).sum())


def _variance_check(x: np.ndarray, y: np.ndarray, n_excluded: int, minimum: int) -> Estimate | None:
    return variance_check(x, y, int(x.size), n_excluded, minimum)


def variance_check(x: np.ndarray, y: np.ndarray, n: int, n_excluded: int, minimum: int) -> Estimate | None:
    """A correlation's undefined cases: fewer than ``minimum`` units (``n``), or no variance in ``x`` or ``y`` (the
    values, or any that span them: the lowest and the highest)."""
    if n < minimum:
        return Estimate.undefined(
            f"needs at least {minimum} units with both values; there are {n}", n_units=n, n_excluded=n_excluded
        )
    if np.ptp(x) == 0:
        return Estimate.undefined("the metric has no variance on these units", n_units=n, n_excluded=n_excluded)
    if np.ptp(y) == 0:
        return Estimate.undefined(
            "the human judgement has no variance on these units", n_units=n, n_excluded=n_excluded
        )
    return None


def pearson(x: np.ndarray, y: np.ndarray) -> Estimate:
    """Pearson's r with the Fisher-z interval (SE = 1/√(n−3)), from scipy."""
    x, y, n_excluded = _pair_clean(x, y)
    bad = _variance_check(x, y, n_excluded, 4)
    if bad:
        return bad
    res = stats.pearsonr(x, y)
    ci = res.confidence_interval(0.95)
    return Estimate(
        value=float(res.statistic),
        n_units=int(x.size),
        n_excluded=n_excluded,
        ci95=(float(ci.low), float(ci.high)),
        ci_method="Fisher z",
        extra={"p_value": float(res.pvalue)},
    )


def spearman(x: np.ndarray, y: np.ndarray) -> Estimate:
    """Spearman's ρ with the Fisher-z interval using Bonett & Wright's (2000) SE √((1+ρ²/2)/(n−3)).

    ρ is Pearson's r of the two columns' midranks (scipy's rankdata), and its p-value the t test of that r on
    n − 2 degrees of freedom, from scipy's pearsonr: what ``scipy.stats.spearmanr`` computes (its docs: "the
    p-value ... is computed using a t-distribution with n − 2 degrees of freedom"; pearsonr's exact null
    distribution of r is that t test's, written as a beta distribution), to rounding. The columns are ranked one
    after the other, not both at once as spearmanr does: a million units cost half as much memory at the peak."""
    x, y, n_excluded = _pair_clean(x, y)
    bad = _variance_check(x, y, n_excluded, 4)
    if bad:
        return bad
    n = int(x.size)
    x_ranks = stats.rankdata(x)
    del x
    y_ranks = stats.rankdata(y)
    del y
    res = stats.pearsonr(x_ranks, y_ranks)
    return spearman_estimate(float(res.statistic), float(res.pvalue), n, n_excluded)


def spearman_estimate(r: float, p_value: float, n: int, n_excluded: int) -> Estimate:
    """Spearman's ρ of ``n`` units as :func:`spearman` reports it: the Fisher-z interval with Bonett & Wright's
    (2000) SE √((1+ρ²/2)/(n−3))."""
    se = math.sqrt((1.0 + r * r / 2.0) / (n - 3))
    return Estimate(
        value=r,
        n_units=n,
        n_excluded=n_excluded,
        ci95=_fisher_ci(r, se),
        ci_method="Fisher z, Bonett–Wright SE",
        extra={"p_value": p_value},
    )


def kendall(x: np.ndarray, y: np.ndarray) -> Estimate:
    """Kendall's τ-b with the Fisher-z interval using Fieller, Hartley & Pearson's (1957) SE √(0.437/(n−4))."""
    x, y, n_excluded = _pair_clean(x, y)
    bad = _variance_check(x, y, n_excluded, 5)
    if bad:
        return bad
    res = stats.kendalltau(x, y)
    return kendall_estimate(float(res.statistic), float(res.pvalue), int(x.size), n_excluded)


def kendall_estimate(tau: float, p_value: float, n: int, n_excluded: int) -> Estimate:
    """Kendall's τ-b of ``n`` units as :func:`kendall` reports it: the Fisher-z interval with Fieller, Hartley &
    Pearson's (1957) SE √(0.437/(n−4))."""
    se = math.sqrt(0.437 / (n - 4))
    return Estimate(
        value=tau,
        n_units=n,
        n_excluded=n_excluded,
        ci95=_fisher_ci(tau, se),
        ci_method="Fisher z, Fieller–Hartley–Pearson SE",
        extra={"p_value": p_value},
    )


# --- thresholds ------------------------------------------------------------------------------


def precision_recall_f1(scores: np.ndarray, labels: np.ndarray, threshold: float) -> dict[str, Any]:
    """Precision, recall and F1 of ``score ≥ threshold``; Wilson intervals for precision and recall.

    F1 has no closed-form interval and is reported as a point value with its counts.
    """
    s, y, n_excluded = _clean(scores, labels)
    predicted = s >= threshold
    tp = int((predicted & y).sum())
    fp = int((predicted & ~y).sum())
    fn = int((~predicted & y).sum())
    tn = int((~predicted & ~y).sum())
    return prf_from_counts(threshold, tp, fp, fn, tn, n_excluded)


def prf_from_counts(threshold: float, tp: int, fp: int, fn: int, tn: int, n_excluded: int) -> dict[str, Any]:
    """:func:`precision_recall_f1` from the confusion counts at ``threshold``."""
    n = tp + fp + fn + tn

    def share(k: int, total: int, what: str) -> Estimate:
        if total == 0:
            return Estimate.undefined(f"no {what}", n_units=n, n_excluded=n_excluded)
        return Estimate(
            value=k / total, n_units=total, n_excluded=n_excluded, ci95=wilson_interval(k, total), ci_method="Wilson"
        )

    precision = share(tp, tp + fp, "unit scored at or above the threshold")
    recall = share(tp, tp + fn, "positive unit")
    if precision.defined and recall.defined and (precision.value + recall.value) > 0:  # type: ignore[operator]
        f1 = Estimate(value=2 * tp / (2 * tp + fp + fn), n_units=n, n_excluded=n_excluded)
    else:
        f1 = Estimate.undefined("precision or recall is undefined or both are 0", n_units=n, n_excluded=n_excluded)
    return {
        "threshold": float(threshold),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": precision.as_dict(),
        "recall": recall.as_dict(),
        "f1": f1.as_dict(),
    }


def youden_threshold(scores: np.ndarray, labels: np.ndarray) -> dict[str, Any] | None:
    """The threshold maximising sensitivity + specificity − 1, with the in-sample warning."""
    s, y, _ = _clean(scores, labels)
    if y.all() or not y.any():
        return None
    return youden_from_curve(*roc_curve(y, s))


def youden_from_curve(fpr: np.ndarray, tpr: np.ndarray, thresholds: np.ndarray) -> dict[str, Any]:
    """:func:`youden_threshold` of scikit-learn's curve."""
    j = tpr - fpr
    j[~np.isfinite(thresholds)] = -np.inf
    best = int(np.argmax(j))
    return {
        "threshold": float(thresholds[best]),
        "sensitivity": float(tpr[best]),
        "specificity": float(1.0 - fpr[best]),
        "youden_j": float(j[best]),
        "warning": YOUDEN_WARNING,
    }


# --- everything that applies -----------------------------------------------------------------


def auc_entry(
    auc: Estimate, n_boot: int, seed: int, bootstrap: Callable[[], tuple[tuple[float, float] | None, int]]
) -> dict[str, Any]:
    """The AUC's entry of a validity summary: the estimate and, when it is defined, its bootstrap interval
    (``bootstrap()``: the interval and the undefined replicates, asked for only when ``n_boot`` > 0)."""
    out = auc.as_dict()
    if n_boot > 0 and auc.defined:
        ci, undefined = bootstrap()
        out["ci95_bootstrap"] = list(ci) if ci else None
        out["bootstrap"] = {"n": n_boot, "seed": seed, "stratified": True, "n_undefined": undefined}
    elif auc.defined:
        out["ci95_bootstrap"] = None
        out["bootstrap"] = None
    return out


def validity_summary(
    scores: np.ndarray,
    labels: np.ndarray,
    *,
    scores_b: np.ndarray | None = None,
    ordinal_target: np.ndarray | None = None,
    n_boot: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Every validity statistic for one metric (or a pair) against one binary human target.

    Correlations use ``ordinal_target`` (e.g. positions on an ordinal human scale) when given,
    else the 0/1 labels (point-biserial / rank-biserial).
    """
    _, y, n_excluded = _clean(scores, labels)
    out: dict[str, Any] = {
        "n": int(y.size),
        "n_pos": int(y.sum()),
        "n_neg": int((~y).sum()),
        "n_excluded_units": n_excluded,
    }
    auc = roc_auc(scores, labels)
    auc_dict = auc_entry(
        auc, n_boot, seed, lambda: auc_bootstrap_ci(scores, labels, n_boot=n_boot, seed=seed, progress=progress)
    )
    out["auc"] = auc_dict
    target = np.asarray(labels, dtype=float) if ordinal_target is None else np.asarray(ordinal_target, dtype=float)
    out["pearson"] = pearson(scores, target).as_dict()
    out["spearman"] = spearman(scores, target).as_dict()
    out["kendall"] = kendall(scores, target).as_dict()
    del target
    youden = youden_threshold(scores, labels)
    out["youden"] = youden
    out["at_youden_threshold"] = precision_recall_f1(scores, labels, youden["threshold"]) if youden else None
    out["roc"] = roc_points(scores, labels)
    if scores_b is not None:
        out["auc_a"] = auc_dict
        out["auc_b"] = roc_auc(scores_b, labels).as_dict()
        paired = delong_paired(scores, scores_b, labels)
        d = paired.as_dict()
        d.setdefault("diff", paired.extra.get("diff"))
        d.setdefault("z", None)
        d.setdefault("p_value", None)
        if "ci95" not in d:
            d["ci95"] = None
        out["delong_paired"] = d
    return out
