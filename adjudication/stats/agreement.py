"""Inter-rater agreement over plain arrays. No ORM, no Django.

Ratings arrive as a matrix ``codes`` of shape (units, raters), float, with ``NaN`` where a rater
did not rate a unit. For categorical levels (nominal, ordinal) each entry is the 0-based position
of the value on the *declared* scale, so categories nobody used still count, and an ordinal order
comes from the protocol, never from sorting the strings (scikit-learn sorts labels alphabetically,
which would put "moderate" before "none"). :func:`codes_from_values` does that mapping. For the
interval level the entries are the numbers themselves.

Every statistic returns an :class:`Estimate`: a value, or ``None`` with the reason it is undefined
(one category only, no variance, no overlapping units), never NaN and never a made-up 1.0; with the
number of units used, the units excluded, and a 95% interval where one is defined.

statsmodels, scikit-learn and krippendorff do the arithmetic where they compute the statistic;
their traps are guarded here:

* ``statsmodels.stats.inter_rater.fleiss_kappa`` checks "equal raters per item" with a bare
  ``assert`` (gone under ``python -O``): the table is built here and units with another number of
  ratings are excluded and counted before the call.
* ``aggregate_raters`` turns NaN into a category of its own: it is never used; the count table is
  built with ``bincount`` over the declared scale.
* weighted κ must be built over the declared scale, not over the observed values: the contingency
  table is k × k for the declared k.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Literal

import krippendorff
import numpy as np
from statsmodels.stats.inter_rater import cohens_kappa as _sm_cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as _sm_fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

Level = Literal["nominal", "ordinal", "interval"]
Weights = Literal["none", "linear", "quadratic"]
Progress = Callable[[int, int], None]

Z95 = 1.959963984540054
BOOT_BATCH = 50
MAX_DISTINCT_FOR_PACKAGE = 2000


@dataclass
class Estimate:
    """One statistic. ``value is None`` means undefined, and ``reason`` says why."""

    value: float | None
    n_units: int = 0
    n_excluded: int = 0
    reason: str | None = None
    ci95: tuple[float, float] | None = None
    ci_method: str | None = None
    se: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def undefined(cls, reason: str, *, n_units: int = 0, n_excluded: int = 0, **extra: Any) -> Estimate:
        return cls(value=None, reason=reason, n_units=n_units, n_excluded=n_excluded, extra=extra)

    @property
    def defined(self) -> bool:
        return self.value is not None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value}
        if self.value is None:
            out["reason"] = self.reason
        out["n_units"] = self.n_units
        out["n_excluded_units"] = self.n_excluded
        if self.ci95 is not None:
            out["ci95"] = [self.ci95[0], self.ci95[1]]
            out["ci_method"] = self.ci_method
        if self.se is not None:
            out["se"] = self.se
        out.update(self.extra)
        return out


# --- input -----------------------------------------------------------------------------------


class ScaleError(ValueError):
    """A value that is not on the declared scale."""


def codes_from_values(values: Sequence[Sequence[Any]], scale: Sequence[Any]) -> np.ndarray:
    """Map a units × raters grid of values (``None`` = not rated) to scale positions."""
    position = {v: i for i, v in enumerate(scale)}
    if len(position) != len(scale):
        raise ScaleError("the declared scale repeats a value")
    out = np.full((len(values), len(values[0]) if len(values) else 0), np.nan)
    for u, row in enumerate(values):
        for r, v in enumerate(row):
            if v is None:
                continue
            if v not in position:
                raise ScaleError(f"value {v!r} is not on the declared scale {list(scale)!r}")
            out[u, r] = position[v]
    return out


def _as_codes(codes: np.ndarray) -> np.ndarray:
    arr = np.asarray(codes, dtype=float)
    if arr.ndim != 2:
        raise ValueError("ratings must be a units × raters matrix")
    return arr


def category_counts(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """Units × categories count table over the declared scale (missing ratings are not a category)."""
    return _counts_of(codes_with_missing(codes, n_categories), n_categories)


def _counts_of(coded: np.ndarray, n_categories: int) -> np.ndarray:
    """:func:`category_counts` from :func:`codes_with_missing`: one ``bincount`` over units × (k+1) cells,
    the last column (not rated) dropped."""
    n_units = coded.shape[0]
    width = n_categories + 1
    cells = (np.arange(n_units, dtype=np.int64)[:, None] * width + coded).ravel()
    flat = np.bincount(cells, minlength=n_units * width)
    return np.ascontiguousarray(flat.reshape(n_units, width)[:, :n_categories])


def codes_with_missing(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """Scale positions as integers, with ``n_categories`` (one past the scale) standing for a missing rating.

    What the pair and rater-against-rest tables are counted from: one ``bincount`` per pair over these
    gives the k × k table of the units both rated and, in the extra row and column, the units only one rated.
    """
    codes = _as_codes(codes)
    missing = np.isnan(codes)
    out = np.where(missing, n_categories, codes).astype(np.int64)
    # A rated code at or past the scale's end would pass for "not rated": count them apart.
    if out.size and (out.min() < 0 or int((out >= n_categories).sum()) != int(missing.sum())):
        raise ScaleError(f"codes must lie in 0..{n_categories - 1}")
    return out


# --- intervals -------------------------------------------------------------------------------


def wilson_interval(successes: int, n: int) -> tuple[float, float] | None:
    """Wilson (1927) score interval, as tabulated by Newcombe (1998), via statsmodels."""
    if n <= 0:
        return None
    low, high = proportion_confint(successes, n, alpha=0.05, method="wilson")
    return float(low), float(high)


def percentile_ci(samples: np.ndarray) -> tuple[tuple[float, float] | None, int]:
    """Percentile interval over the defined replicates, and how many replicates were undefined."""
    finite = samples[np.isfinite(samples)]
    n_undefined = int(samples.size - finite.size)
    if finite.size < 2:
        return None, n_undefined
    low, high = np.percentile(finite, [2.5, 97.5])
    return (float(low), float(high)), n_undefined


def resample_indices(rng: np.random.Generator, n: int, n_boot: int, progress: Progress | None) -> Iterator[np.ndarray]:
    """Yield batches of bootstrap index rows, reporting progress after each batch."""
    done = 0
    while done < n_boot:
        size = min(BOOT_BATCH, n_boot - done)
        yield rng.integers(0, n, size=(size, n))
        done += size
        if progress is not None:
            progress(done, n_boot)


# --- percent agreement -----------------------------------------------------------------------


def percent_agreement(codes: np.ndarray, *, counts: np.ndarray | None = None) -> Estimate:
    """Share of units (rated at least twice) on which every rater gave the same value.

    ``extra["mean_pairwise"]`` is the mean over units of the share of agreeing rater pairs
    (Fleiss' P̄ generalised to unequal numbers of ratings). Wilson interval on the share.
    """
    codes = _as_codes(codes)
    n_ratings = counts.sum(axis=1) if counts is not None else (~np.isnan(codes)).sum(axis=1)
    rated = n_ratings > 0
    usable = n_ratings >= 2
    n_used = int(usable.sum())
    n_excluded = int((rated & ~usable).sum())
    if n_used == 0:
        return Estimate.undefined("no unit was rated by two or more raters", n_excluded=n_excluded)
    m = n_ratings[usable].astype(float)
    if counts is not None:
        # Categorical: every rating of a unit is the same category when one category holds them all, and
        # the agreeing pairs of a unit are Σ_c n_c(n_c − 1)/2, whatever the number of raters.
        used = counts[usable]
        agree = int((used.max(axis=1) == n_ratings[usable]).sum())
        used_f = used.astype(float)
        agreeing_pairs = (used_f * (used_f - 1.0)).sum(axis=1) / 2.0
    else:
        sub = codes[usable]
        lo = np.nanmin(sub, axis=1)
        hi = np.nanmax(sub, axis=1)
        agree = int((lo == hi).sum())
        agreeing_pairs = np.zeros(sub.shape[0])
        for i, j in combinations(range(sub.shape[1]), 2):
            agreeing_pairs += sub[:, i] == sub[:, j]  # NaN never equals anything: absent ratings never agree
    pairwise = float(np.mean(agreeing_pairs / (m * (m - 1) / 2.0)))
    return Estimate(
        value=agree / n_used,
        n_units=n_used,
        n_excluded=n_excluded,
        ci95=wilson_interval(agree, n_used),
        ci_method="Wilson",
        extra={"n_agreeing_units": agree, "mean_pairwise": pairwise},
    )


# --- Cohen's kappa ---------------------------------------------------------------------------


def cohen_kappa(a: np.ndarray, b: np.ndarray, n_categories: int, weights: Weights = "none") -> Estimate:
    """Cohen's κ for two raters on the units both rated, from a k × k table over the declared scale.

    Weighted κ uses Cicchetti–Allison (linear) or Fleiss–Cohen (quadratic) disagreement weights on
    the scale positions 0..k−1. The standard error is statsmodels' asymptotic one (Fleiss, Cohen &
    Everitt 1969); the interval is κ ± 1.96·SE, clipped to [−1, 1].
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    both = ~np.isnan(a) & ~np.isnan(b)
    either = ~np.isnan(a) | ~np.isnan(b)
    n = int(both.sum())
    n_excluded = int((either & ~both).sum())
    if n == 0:
        return Estimate.undefined("the two raters have no unit in common", n_excluded=n_excluded)
    ia = a[both].astype(np.int64)
    ib = b[both].astype(np.int64)
    table = np.bincount(ia * n_categories + ib, minlength=n_categories * n_categories).reshape(
        n_categories, n_categories
    )
    return kappa_from_table(table, weights, n_excluded=n_excluded)


def pair_table(x: np.ndarray, y: np.ndarray, n_categories: int) -> tuple[np.ndarray, int]:
    """The k × k table of two raters on the units both rated, and the number of units only one of them rated,
    from columns of :func:`codes_with_missing` (one ``bincount`` over the (k+1) × (k+1) cells)."""
    k1 = n_categories + 1
    full = np.bincount(x * k1 + y, minlength=k1 * k1).reshape(k1, k1)
    return full[:n_categories, :n_categories], int(
        full[:n_categories, n_categories].sum() + full[n_categories, :n_categories].sum()
    )


def kappa_from_table(table: np.ndarray, weights: Weights = "none", *, n_excluded: int = 0) -> Estimate:
    """Cohen's κ (see :func:`cohen_kappa`) from the k × k count table of two raters over the declared scale."""
    n_categories = table.shape[0]
    n = int(table.sum())
    if n == 0:
        return Estimate.undefined("the two raters have no unit in common", n_excluded=n_excluded)
    table = table.astype(float)
    p = table / n
    row, col = p.sum(axis=1), p.sum(axis=0)
    positions = np.arange(n_categories, dtype=float)
    if weights == "none":
        w = 1.0 - np.eye(n_categories)
    elif weights == "linear":
        w = np.abs(positions[:, None] - positions[None, :])
    elif weights == "quadratic":
        w = (positions[:, None] - positions[None, :]) ** 2
    else:
        raise ValueError(f"unknown weights {weights!r}")
    expected_disagreement = float((w * np.outer(row, col)).sum())
    if expected_disagreement <= 1e-15:
        return Estimate.undefined(
            "chance agreement is 1: both raters used one and the same category", n_units=n, n_excluded=n_excluded
        )
    res = _sm_cohens_kappa(table) if weights == "none" else _sm_cohens_kappa(table, wt=weights)
    kappa = float(res.kappa)
    se = float(res.std_kappa) if np.isfinite(res.std_kappa) else None
    ci = (max(-1.0, kappa - Z95 * se), min(1.0, kappa + Z95 * se)) if se is not None else None
    observed = float(np.trace(p))
    return Estimate(
        value=kappa,
        n_units=n,
        n_excluded=n_excluded,
        se=se,
        ci95=ci,
        ci_method="asymptotic (Fleiss, Cohen & Everitt 1969)" if ci else None,
        extra={"weights": weights, "observed_agreement": observed},
    )


# --- Fleiss' kappa ---------------------------------------------------------------------------


def _fleiss_from_counts(counts: np.ndarray, m: int) -> float | None:
    n = counts.shape[0]
    p = counts.sum(axis=0) / (n * m)
    p_e = float((p * p).sum())
    if p_e >= 1.0 - 1e-15:
        return None
    # statsmodels' own check is a bare assert; the caller guarantees equal rows.
    return float(_sm_fleiss_kappa(counts, method="fleiss"))


def _fleiss_boot(counts: np.ndarray, m: int, n_boot: int, seed: int, progress: Progress | None) -> np.ndarray:
    n, _ = counts.shape
    per_unit = ((counts * counts).sum(axis=1) - m) / (m * (m - 1))
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for idx in resample_indices(rng, n, n_boot, progress):
        p_bar = per_unit[idx].mean(axis=1)
        p = counts[idx].sum(axis=1) / (n * m)
        p_e = (p * p).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append(np.where(p_e < 1.0 - 1e-15, (p_bar - p_e) / (1.0 - p_e), np.nan))
    return np.concatenate(out)


def fleiss_kappa(
    codes: np.ndarray,
    n_categories: int,
    *,
    n_boot: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
    counts: np.ndarray | None = None,
) -> Estimate:
    """Fleiss' (1971) κ over the units rated by the modal number of raters (at least two).

    Fleiss' κ assumes the same number of ratings per unit; units with another number are excluded
    and counted in ``n_excluded``. The interval is a percentile bootstrap over units. ``counts``, the
    units × categories table of ``codes`` when the caller has it already, saves recounting.
    """
    if counts is None:
        counts = category_counts(codes, n_categories)
    return fleiss_kappa_from_counts(counts, n_boot=n_boot, seed=seed, progress=progress)


def _modal_units(per_unit: np.ndarray) -> tuple[int, np.ndarray] | None:
    """The modal number of ratings per unit (at least two; ties → the larger) and the units rated that
    many times; None when no unit was rated twice."""
    candidates = per_unit[per_unit >= 2]
    if candidates.size == 0:
        return None
    freq = np.bincount(candidates)
    m = int(np.flatnonzero(freq == freq.max())[-1])
    return m, per_unit == m


def fleiss_kappa_from_counts(
    counts: np.ndarray, *, n_boot: int = 0, seed: int = 0, progress: Progress | None = None
) -> Estimate:
    per_unit = counts.sum(axis=1)
    rated = per_unit > 0
    modal = _modal_units(per_unit)
    if modal is None:
        return Estimate.undefined("no unit was rated by two or more raters", n_excluded=int(rated.sum()))
    m, keep = modal
    n_used = int(keep.sum())
    n_excluded = int((rated & ~keep).sum())
    return _fleiss_estimate(counts[keep], m, n_used, n_excluded, n_boot=n_boot, seed=seed, progress=progress)


def _fleiss_estimate(
    sub: np.ndarray,
    m: int,
    n_used: int,
    n_excluded: int,
    *,
    n_boot: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
) -> Estimate:
    """Fleiss' κ of ``sub``, the count table of the units rated ``m`` times (see :func:`fleiss_kappa`)."""
    kappa = _fleiss_from_counts(sub, m)
    if kappa is None:
        return Estimate.undefined(
            "every rating is the same category, so chance agreement is 1",
            n_units=n_used,
            n_excluded=n_excluded,
            raters_per_unit=m,
        )
    est = Estimate(value=kappa, n_units=n_used, n_excluded=n_excluded, extra={"raters_per_unit": m})
    if n_boot > 0:
        samples = _fleiss_boot(sub, m, n_boot, seed, progress)
        est.ci95, undefined = percentile_ci(samples)
        est.ci_method = f"percentile bootstrap over units, {n_boot} resamples, seed {seed}"
        est.extra["n_boot_undefined"] = undefined
    return est


# --- Krippendorff's alpha --------------------------------------------------------------------


def _ordinal_delta(n_c: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal metric from the value totals n_c (last axis = categories)."""
    k = n_c.shape[-1]
    cum = np.cumsum(n_c, axis=-1)
    lo = np.minimum.outer(np.arange(k), np.arange(k))
    hi = np.maximum.outer(np.arange(k), np.arange(k))
    # Σ_{g=lo}^{hi} n_g − (n_lo + n_hi)/2
    before = np.where(lo > 0, np.take(cum, np.maximum(lo - 1, 0), axis=-1), 0.0)
    span = np.take(cum, hi, axis=-1) - before
    half = (np.take(n_c, lo, axis=-1) + np.take(n_c, hi, axis=-1)) / 2.0
    return np.asarray((span - half) ** 2, dtype=float)


def _alpha_from_coincidence(o: np.ndarray, level: Level) -> np.ndarray:
    """α from coincidence matrices o (…, k, k) for nominal/ordinal/interval on positions."""
    k = o.shape[-1]
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    if level == "nominal":
        delta = np.broadcast_to(1.0 - np.eye(k), o.shape)
    elif level == "ordinal":
        delta = _ordinal_delta(n_c)
    else:
        pos = np.arange(k, dtype=float)
        delta = np.broadcast_to((pos[:, None] - pos[None, :]) ** 2, o.shape)
    d_o = (o * delta).sum(axis=(-2, -1))
    d_e = (n_c[..., :, None] * n_c[..., None, :] * delta).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d_e > 0, 1.0 - (n - 1.0) * d_o / d_e, np.nan)


def _interval_boot(values: np.ndarray, n_boot: int, seed: int, progress: Progress | None) -> np.ndarray:
    """Interval α on real values from per-unit sums, exact: Σ_{i≠j}(v_i−v_j)² = 2(mΣv² − (Σv)²)."""
    mask = ~np.isnan(values)
    m = mask.sum(axis=1).astype(float)
    s1 = np.where(mask, values, 0.0).sum(axis=1)
    s2 = np.where(mask, values * values, 0.0).sum(axis=1)
    within = 2.0 * (m * s2 - s1 * s1) / (m - 1.0)
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for idx in resample_indices(rng, values.shape[0], n_boot, progress):
        n = m[idx].sum(axis=1)
        t1 = s1[idx].sum(axis=1)
        t2 = s2[idx].sum(axis=1)
        d_e = 2.0 * (n * t2 - t1 * t1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append(np.where(d_e > 0, 1.0 - (n - 1.0) * within[idx].sum(axis=1) / d_e, np.nan))
    return np.concatenate(out)


def _categorical_boot(
    counts: np.ndarray, level: Level, n_boot: int, seed: int, progress: Progress | None
) -> np.ndarray:
    m = counts.sum(axis=1).astype(float)
    scaled = counts / (m - 1.0)[:, None]
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for idx in resample_indices(rng, counts.shape[0], n_boot, progress):
        c = counts[idx]
        o = np.einsum("bnk,bnl->bkl", scaled[idx], c)
        diag = scaled[idx].sum(axis=1)
        o[:, np.arange(counts.shape[1]), np.arange(counts.shape[1])] -= diag
        out.append(_alpha_from_coincidence(o, level))
    return np.concatenate(out)


def krippendorff_alpha(
    codes: np.ndarray,
    level: Level = "nominal",
    n_categories: int | None = None,
    *,
    n_boot: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
    counts: np.ndarray | None = None,
) -> Estimate:
    """Krippendorff's α with missing data; units rated fewer than twice are unpairable (excluded).

    For nominal and ordinal levels, ``codes`` are scale positions and ``n_categories`` is the
    declared scale's size (the ordinal metric weighs the values between two categories by how
    often they were used, so the order must be the declared one). For interval, ``codes`` are the
    numbers. The point estimate is the ``krippendorff`` package's; the interval is a percentile
    bootstrap over units.
    """
    codes = _as_codes(codes)
    n_ratings = (~np.isnan(codes)).sum(axis=1)
    rated = n_ratings > 0
    pairable = n_ratings >= 2
    n_used = int(pairable.sum())
    n_excluded = int((rated & ~pairable).sum())
    if n_used == 0:
        return Estimate.undefined("no unit was rated by two or more raters", n_excluded=n_excluded)
    table = None  # the pairable units' count table, on a categorical scale
    if level in ("nominal", "ordinal") and n_categories is not None:
        table = category_counts(codes[pairable], n_categories) if counts is None else counts[pairable]
        # The distinct values are the categories some pairable unit was rated in.
        n_distinct = int((table.sum(axis=0) > 0).sum())
    else:
        sub = codes[pairable]
        distinct = np.unique(sub[~np.isnan(sub)])
        n_distinct = int(distinct.size)
    if n_distinct < 2:
        return Estimate.undefined(
            "every pairable rating has the same value, so expected disagreement is 0",
            n_units=n_used,
            n_excluded=n_excluded,
        )
    if level in ("nominal", "ordinal"):
        if table is None or n_categories is None:
            raise ValueError("nominal and ordinal α need the declared scale size")
        value = float(
            krippendorff.alpha(value_counts=table, value_domain=np.arange(n_categories), level_of_measurement=level)
        )
    elif level == "interval":
        # The package builds a units × distinct-values table, which grows with every distinct real;
        # past a few thousand distinct values the closed form (same statistic, tested equal) is used.
        if n_distinct <= MAX_DISTINCT_FOR_PACKAGE:
            value = float(krippendorff.alpha(reliability_data=sub.T, level_of_measurement="interval"))
        else:
            value = interval_alpha_exact(sub)  # type: ignore[assignment]
    else:
        raise ValueError(f"unknown level {level!r}")
    est = Estimate(value=value, n_units=n_used, n_excluded=n_excluded, extra={"level": level})
    if n_boot > 0:
        if table is not None:
            samples = _categorical_boot(table, level, n_boot, seed, progress)
        else:
            samples = _interval_boot(sub, n_boot, seed, progress)
        est.ci95, undefined = percentile_ci(samples)
        est.ci_method = f"percentile bootstrap over units, {n_boot} resamples, seed {seed}"
        est.extra["n_boot_undefined"] = undefined
    return est


def interval_alpha_exact(values: np.ndarray) -> float | None:
    """Interval α in closed form from per-unit sums; equals the package's value (tested)."""
    values = _as_codes(values)
    mask = ~np.isnan(values)
    m = mask.sum(axis=1).astype(float)
    keep = m >= 2
    values, mask, m = values[keep], mask[keep], m[keep]
    s1 = np.where(mask, values, 0.0).sum(axis=1)
    s2 = np.where(mask, values * values, 0.0).sum(axis=1)
    within = (2.0 * (m * s2 - s1 * s1) / (m - 1.0)).sum()
    n, t1, t2 = m.sum(), s1.sum(), s2.sum()
    d_e = 2.0 * (n * t2 - t1 * t1)
    if d_e <= 0:
        return None
    return float(1.0 - (n - 1.0) * within / d_e)


# --- per label, per pair, per annotator ------------------------------------------------------


def per_label_agreement(
    codes: np.ndarray, labels: Sequence[str], *, counts: np.ndarray | None = None
) -> dict[str, Estimate]:
    """Fleiss' κ of each category against all others (Fleiss 1971's per-category κ)."""
    if counts is None:
        counts = category_counts(codes, len(labels))
    # Every label's two-column table has the units' total ratings as row sums: the units Fleiss' κ keeps
    # (those rated the modal number of times) are the same for every label, and chosen once.
    total = counts.sum(axis=1)
    rated = total > 0
    modal = _modal_units(total)
    if modal is None:
        return {
            str(label): Estimate.undefined("no unit was rated by two or more raters", n_excluded=int(rated.sum()))
            for label in labels
        }
    m, keep = modal
    n_used = int(keep.sum())
    n_excluded = int((rated & ~keep).sum())
    sub = counts[keep]
    return {
        str(label): _fleiss_estimate(np.stack([sub[:, j], m - sub[:, j]], axis=1), m, n_used, n_excluded)
        for j, label in enumerate(labels)
    }


def pairwise_matrix(codes: np.ndarray, n_categories: int, weights: Weights = "none") -> dict[tuple[int, int], Estimate]:
    """Cohen's κ for every pair of raters (column indices), on the units both rated."""
    return _pairwise(codes_with_missing(codes, n_categories), n_categories, weights)


def _pairwise(coded: np.ndarray, n_categories: int, weights: Weights) -> dict[tuple[int, int], Estimate]:
    out = {}
    for i, j in combinations(range(coded.shape[1]), 2):
        table, n_excluded = pair_table(coded[:, i], coded[:, j], n_categories)
        out[(i, j)] = kappa_from_table(table, weights, n_excluded=n_excluded)
    return out


def rest_majority(codes: np.ndarray, rater: int, n_categories: int, *, counts: np.ndarray | None = None) -> np.ndarray:
    """The modal value of the other raters on each unit; NaN where they tie or did not rate.

    ``counts`` is the table of all raters; the rater's own rating is taken out of it.
    """
    return rest_majorities(codes, n_categories, counts=counts)[:, rater]


def rest_majorities(codes: np.ndarray, n_categories: int, *, counts: np.ndarray | None = None) -> np.ndarray:
    """:func:`rest_majority` of every rater at once: column ``r`` is rater ``r``'s."""
    coded = codes_with_missing(codes, n_categories)
    if counts is None:
        counts = _counts_of(coded, n_categories)
    rests = _rest_majorities(coded, counts, n_categories)
    return np.where(rests == n_categories, np.nan, rests.astype(float))


def _rest_majorities(coded: np.ndarray, counts: np.ndarray, n_categories: int) -> np.ndarray:
    """:func:`rest_majorities` as :func:`codes_with_missing` codes (k where the others tie or did not rate).

    Category by category over whole columns of the categories × units table (a reduction along a short
    row axis is slow in numpy): the others' count of c is the count minus the rater's own rating; the
    mode is the first category with the highest count, and it stands only when no other category has
    that count.
    """
    by_category = np.ascontiguousarray(counts.T)
    out = np.empty(coded.shape, dtype=np.int64)
    for r in range(coded.shape[1]):
        own = coded[:, r]
        top = by_category[0] - (own == 0)
        mode = np.zeros(own.shape[0], dtype=np.int64)
        winners = np.ones(own.shape[0], dtype=np.int64)
        for c in range(1, n_categories):
            others = by_category[c] - (own == c)
            higher = others > top
            winners = np.where(higher, 1, winners + (others == top))
            mode = np.where(higher, c, mode)
            top = np.maximum(top, others)
        out[:, r] = np.where((top > 0) & (winners == 1), mode, n_categories)
    return out


def each_against_rest(
    codes: np.ndarray,
    n_categories: int,
    *,
    reference: float | None = None,
    weights: Weights = "none",
    counts: np.ndarray | None = None,
) -> list[Estimate]:
    """Each rater's Cohen κ against the majority of the other raters (ties excluded).

    A rater is flagged as an outlier when the upper end of their 95% interval lies below
    ``reference`` (the pool's overall agreement): their agreement with colleagues is then
    credibly lower than the pool's. With no interval, nobody is flagged.
    """
    coded = codes_with_missing(codes, n_categories)
    if counts is None:
        counts = _counts_of(coded, n_categories)
    return _each_against_rest(coded, counts, n_categories, reference=reference, weights=weights)


def _each_against_rest(
    coded: np.ndarray, counts: np.ndarray, n_categories: int, *, reference: float | None, weights: Weights
) -> list[Estimate]:
    rests = _rest_majorities(coded, counts, n_categories)
    n_rated = (coded < n_categories).sum(axis=0)
    out: list[Estimate] = []
    for r in range(coded.shape[1]):
        table, n_excluded = pair_table(coded[:, r], rests[:, r], n_categories)
        est = kappa_from_table(table, weights, n_excluded=n_excluded)
        n_both = int(table.sum())
        # The units where the rater and the rest's majority gave the same category: the table's diagonal.
        est.extra["agreement_with_rest"] = int(np.trace(table)) / n_both if n_both else None
        est.extra["n_rated"] = int(n_rated[r])
        outlier = bool(reference is not None and est.ci95 is not None and est.ci95[1] < reference)
        est.extra["outlier"] = outlier
        out.append(est)
    return out


# --- everything that applies -----------------------------------------------------------------


def agreement_summary(
    codes: np.ndarray,
    *,
    level: Level,
    scale: Sequence[Any] | None,
    rater_names: Sequence[str],
    weights: Weights = "none",
    n_boot: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Every statistic that applies to these ratings, as plain data (the CLI's and reports' JSON).

    ``scale`` is the declared scale for nominal/ordinal levels (``codes`` are positions on it);
    for interval it may be ``None`` (codes are numbers) — then κ statistics do not apply.
    """
    codes = _as_codes(codes)
    n_ratings = (~np.isnan(codes)).sum(axis=1)
    rated = n_ratings > 0
    used_any = n_ratings >= 2
    k = len(scale) if scale is not None else None

    steps = 2  # Fleiss' κ's bootstrap, then α's (progress is reported only when there is one)

    def sub_progress(step: int) -> Progress | None:
        if progress is None:
            return None
        return lambda done, total: progress(step * total + done, steps * total)

    out: dict[str, Any] = {
        "n_units": int(rated.sum()),
        "n_raters": int(codes.shape[1]),
        "n_excluded_units": int((rated & ~used_any).sum()),
        "level": level,
        "scale": [str(v) for v in scale] if scale is not None else None,
        "raters": list(rater_names),
    }
    coded = codes_with_missing(codes, k) if k is not None else None
    counts = _counts_of(coded, k) if coded is not None and k is not None else None
    out["percent_agreement"] = percent_agreement(codes, counts=counts).as_dict()
    if k is not None:
        fk = fleiss_kappa(codes, k, n_boot=n_boot, seed=seed, progress=sub_progress(0), counts=counts)
    else:
        fk = Estimate.undefined("Fleiss' κ needs a categorical scale; these ratings are interval numbers")
    out["fleiss_kappa"] = fk.as_dict()
    alpha = krippendorff_alpha(codes, level, k, n_boot=n_boot, seed=seed, progress=sub_progress(1), counts=counts)
    out["krippendorff_alpha"] = alpha.as_dict()

    if k is not None and scale is not None and coded is not None and counts is not None:
        pairs = _pairwise(coded, k, weights)
        out["cohen_kappa_pairs"] = [
            {"rater_a": rater_names[i], "rater_b": rater_names[j], **est.as_dict()} for (i, j), est in pairs.items()
        ]
        if codes.shape[1] == 2:
            out["cohen_kappa"] = pairs[(0, 1)].as_dict()
        else:
            out["cohen_kappa"] = Estimate.undefined(
                f"Cohen's κ compares exactly two raters; there are {codes.shape[1]} (see cohen_kappa_pairs)"
            ).as_dict()
        reference = fk.value if fk.defined else None
        out["each_against_rest"] = (
            [
                {"rater": rater_names[r], **est.as_dict()}
                for r, est in enumerate(_each_against_rest(coded, counts, k, reference=reference, weights=weights))
            ]
            if codes.shape[1] >= 3
            else []
        )
        # A list, not a mapping: the declared order must survive storage as jsonb, which sorts keys.
        out["per_label"] = (
            [
                {"label": label, **est.as_dict()}
                for label, est in per_label_agreement(codes, [str(s) for s in scale], counts=counts).items()
            ]
            if k > 2
            else []
        )
        defined_pairs = [p["value"] for p in out["cohen_kappa_pairs"] if p["value"] is not None]
        out["mean_pairwise_cohen_kappa"] = float(np.mean(defined_pairs)) if defined_pairs else None
    else:
        na = Estimate.undefined("Cohen's κ needs a categorical scale; these ratings are interval numbers").as_dict()
        out["cohen_kappa"] = na
        out["cohen_kappa_pairs"] = []
        out["each_against_rest"] = []
        out["per_label"] = []
        out["mean_pairwise_cohen_kappa"] = None
    out["weights"] = weights
    out["bootstrap"] = {"n": n_boot, "seed": seed} if n_boot > 0 else None
    checked: dict[str, Any] = _finite(out)
    return checked


def _finite(obj: Any) -> Any:
    """Assert the no-NaN contract on the way out: a NaN here is a bug, never a value."""
    if isinstance(obj, float) and not math.isfinite(obj):
        raise ArithmeticError("a statistic came out NaN or infinite instead of being reported undefined")
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj
