"""Inter-rater agreement over plain arrays. No ORM, no Django.

Ratings arrive as a matrix ``codes`` of shape (units, raters), float, with ``NaN`` where a rater
did not rate a unit. For categorical levels (nominal, ordinal) each entry is the 0-based position
of the value on the *declared* scale, so categories nobody used still count, and an ordinal order
comes from the protocol, never from sorting the strings (scikit-learn sorts labels alphabetically,
which would put "moderate" before "none"). :func:`codes_from_values` does that mapping. For the
interval level the entries are the numbers themselves. :class:`SparseRatings` holds the same ratings as
one entry per rating, and :func:`agreement_summary_sparse` computes the whole summary from it without the
matrix (the reports' path: its memory grows with the ratings, not with units × raters).

Every statistic returns an :class:`Estimate`: a value, or ``None`` with the reason it is undefined
(one category only, no variance, no overlapping units), never NaN and never a made-up 1.0; with the
number of units used, the units excluded, and a 95% interval where one is defined.

statsmodels, scikit-learn and krippendorff do the arithmetic where they compute the statistic (but for α's
and Fleiss' κ's point estimates past MAX_UNITS_FOR_PACKAGE units, or past MAX_DISTINCT_FOR_PACKAGE distinct
interval values, where the packages' arrays grow too large: the same statistic from the coincidence matrix, the
count table's integer sums or per-unit sums, tested equal to the package's); the bootstrap replicates are computed
here, each tested equal to the package's statistic on its resample. Their traps are guarded here:

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
# Cells (resamples × units × categories) a bootstrap step draws and computes on at a time: the rows of a batch of
# BOOT_BATCH resamples are drawn a few at a time (the draws stay those of the seed: see resample_blocks) and each
# block's replicates are computed before the next is drawn, so the arrays of a step stay near 16 MB each, whatever
# the number of units.
BOOT_CELLS = 1 << 21
MAX_DISTINCT_FOR_PACKAGE = 2000
# Units past which nominal and ordinal α's point estimate is computed from coincidence_exact (see _alpha_estimate),
# and Fleiss' κ's from fleiss_exact (see _fleiss_from_counts): at 200,000 units the krippendorff package's arrays
# are about 21 MiB, and statsmodels' float copies of the table a few MiB each.
MAX_UNITS_FOR_PACKAGE = 200_000


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


def block_rows(n: int, width: int = 1) -> int:
    """How many resamples of ``n`` units a bootstrap step takes at once: rows × n × ``width`` ≤ BOOT_CELLS, one row
    at least."""
    return max(1, BOOT_CELLS // max(n * width, 1))


def draw_rows(rng: np.random.Generator, n: int, rows: int, step: int) -> Iterator[np.ndarray]:
    """``rows`` resamples of ``n`` units drawn ``step`` rows at a time: the rows ``rng.integers(0, n, (rows, n))``
    gives. numpy's Generator.integers fills its array from the stream element by element in C order, so the blocks
    are those rows; tests/adjudication/stats/test_bootstrap_blocks.py pins it."""
    for start in range(0, rows, step):
        yield rng.integers(0, n, size=(min(step, rows - start), n))


def resample_blocks(
    rng: np.random.Generator, n: int, n_boot: int, width: int, progress: Progress | None
) -> Iterator[np.ndarray]:
    """The rows :func:`resample_indices` yields, drawn a block at a time (rows × units × ``width`` ≤ BOOT_CELLS, one
    row at least), so only one block of indices is held; the caller computes a block's replicates before it asks
    for the next. Each replicate is computed from its own row alone, so the blocks give what whole batches give.
    Progress is reported as :func:`resample_indices` reports it, after each batch of BOOT_BATCH rows."""
    step = block_rows(n, width)
    done = 0
    while done < n_boot:
        size = min(BOOT_BATCH, n_boot - done)
        yield from draw_rows(rng, n, size, step)
        done += size
        if progress is not None:
            progress(done, n_boot)


@dataclass(frozen=True)
class CountPatterns:
    """A units × categories count table as its distinct rows (``rows``, P × k, in :func:`numpy.unique`'s order) and
    how many units have each (``weights``): every unit-level categorical statistic here (percent agreement, Fleiss'
    κ, Krippendorff's α, per-label κ) depends on a unit only through its row of counts, so this is all they need.

    A pool of a million units rated by three raters on two categories has four patterns: a report keeps and computes
    on those, not on a million rows, and its bootstraps resample the patterns (:func:`pattern_resamples`)."""

    rows: np.ndarray
    weights: np.ndarray

    @classmethod
    def of(cls, counts: np.ndarray) -> CountPatterns:
        counts = np.asarray(counts, dtype=np.int64)
        if counts.ndim != 2:
            raise ValueError("a count table is units × categories")
        if counts.shape[0] == 0:
            return cls(np.zeros((0, counts.shape[1]), np.int64), np.zeros(0, np.int64))
        rows, weights = np.unique(counts, axis=0, return_counts=True)
        return cls(rows.astype(np.int64), weights.astype(np.int64))

    @classmethod
    def merged(cls, rows: np.ndarray, weights: np.ndarray) -> CountPatterns:
        """The patterns of ``rows`` (not necessarily distinct), row i held by ``weights[i]`` units."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.shape[0] == 0:
            return cls(rows.reshape(0, rows.shape[1] if rows.ndim == 2 else 0), np.zeros(0, np.int64))
        distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
        totals = np.zeros(distinct.shape[0], dtype=np.int64)
        np.add.at(totals, inverse.reshape(-1), np.asarray(weights, dtype=np.int64))
        return cls(distinct, totals)

    @property
    def n_units(self) -> int:
        return int(self.weights.sum())

    def per_unit(self) -> np.ndarray:
        """Each pattern's number of ratings."""
        per_unit: np.ndarray = self.rows.sum(axis=1)
        return per_unit

    def where(self, keep: np.ndarray) -> CountPatterns:
        return CountPatterns(self.rows[keep], self.weights[keep])

    def expand(self) -> np.ndarray:
        """The count table itself (each row as many times as units have it, in the patterns' order)."""
        table: np.ndarray = np.repeat(self.rows, self.weights, axis=0)
        return table


def pattern_resamples(
    rng: np.random.Generator, weights: np.ndarray, n_boot: int, progress: Progress | None
) -> Iterator[np.ndarray]:
    """Bootstrap resamples of units held as patterns: blocks of rows of how many units of each pattern a resample
    drew (``rng.multinomial(n, weights / n)``), progress after each batch of BOOT_BATCH.

    Drawing n units uniformly with replacement and counting how many of the drawn have each pattern is exactly a
    multinomial draw of n over the patterns with probabilities weights / n, and a statistic of the units depends on
    the resample only through those counts: the same bootstrap distribution as resampling the units, without an
    index per unit. Blocks hold at most BOOT_CELLS counts (one row at least); the draws are those of whole
    batches, whatever the block (numpy's multinomial fills its rows one after another from the stream)."""
    n = int(weights.sum())
    pvals = np.asarray(weights, dtype=float) / n
    step = block_rows(int(weights.size))
    done = 0
    while done < n_boot:
        size = min(BOOT_BATCH, n_boot - done)
        for start in range(0, size, step):
            yield rng.multinomial(n, pvals, size=min(step, size - start))
        done += size
        if progress is not None:
            progress(done, n_boot)


def _unit_counts(patterns: CountPatterns) -> tuple[np.ndarray, int, int]:
    """Each pattern's number of ratings, the units rated at least once and the units rated exactly once."""
    per_unit = patterns.per_unit()
    return (
        per_unit,
        int(patterns.weights[per_unit > 0].sum()),
        int(patterns.weights[per_unit == 1].sum()),
    )


# --- percent agreement -----------------------------------------------------------------------


def percent_agreement(codes: np.ndarray, *, counts: np.ndarray | None = None) -> Estimate:
    """Share of units (rated at least twice) on which every rater gave the same value.

    ``extra["mean_pairwise"]`` is the mean over units of the share of agreeing rater pairs
    (Fleiss' P̄ generalised to unequal numbers of ratings). Wilson interval on the share.
    ``counts``, the units × categories table of categorical ``codes``, gives the same from its patterns
    (:func:`percent_from_patterns`).
    """
    if counts is not None:
        return percent_from_patterns(CountPatterns.of(counts))
    codes = _as_codes(codes)
    n_ratings = (~np.isnan(codes)).sum(axis=1)

    def agreeing(usable: np.ndarray) -> tuple[int, np.ndarray]:
        sub = codes[usable]
        lo = np.nanmin(sub, axis=1)
        hi = np.nanmax(sub, axis=1)
        agreeing_pairs = np.zeros(sub.shape[0])
        for i, j in combinations(range(sub.shape[1]), 2):
            agreeing_pairs += sub[:, i] == sub[:, j]  # NaN never equals anything: absent ratings never agree
        return int((lo == hi).sum()), agreeing_pairs

    return _percent_estimate(n_ratings, agreeing)


def percent_from_patterns(patterns: CountPatterns) -> Estimate:
    """:func:`percent_agreement` of categorical ratings from their count patterns: a unit's ratings all agree when
    one category holds them all, and its agreeing pairs are Σ_c n_c(n_c − 1)/2 of its m(m − 1)/2, whatever the
    number of raters; each pattern counts as many times as units have it."""
    per_unit, _, n_excluded = _unit_counts(patterns)
    usable = per_unit >= 2
    used = patterns.where(usable)
    n_used = used.n_units
    if n_used == 0:
        return Estimate.undefined("no unit was rated by two or more raters", n_excluded=n_excluded)
    m = per_unit[usable]
    agree = int(used.weights[used.rows.max(axis=1) == m].sum())
    agreeing_pairs = (used.rows * (used.rows - 1)).sum(axis=1) / 2.0
    share = agreeing_pairs / (m * (m - 1) / 2.0)
    return _percent_result(agree, n_used, n_excluded, float(share @ used.weights) / n_used)


def _percent_result(agree: int, n_used: int, n_excluded: int, mean_pairwise: float) -> Estimate:
    """Percent agreement's estimate: the share of agreeing units with its Wilson interval, and the mean share of
    agreeing pairs."""
    return Estimate(
        value=agree / n_used,
        n_units=n_used,
        n_excluded=n_excluded,
        ci95=wilson_interval(agree, n_used),
        ci_method="Wilson",
        extra={"n_agreeing_units": agree, "mean_pairwise": mean_pairwise},
    )


def _rows(array: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``array[mask]``, without the copy when the mask keeps every row (a million units' counts are 16 MB a copy);
    the callers only read it."""
    return array if mask.all() else array[mask]


def _percent_estimate(n_ratings: np.ndarray, agreeing: Callable[[np.ndarray], tuple[int, np.ndarray]]) -> Estimate:
    """:func:`percent_agreement` from the ratings per unit and ``agreeing(usable)``: the number of usable units
    whose ratings all agree and the agreeing pairs of each usable unit."""
    rated = n_ratings > 0
    usable = n_ratings >= 2
    n_used = int(usable.sum())
    n_excluded = int((rated & ~usable).sum())
    if n_used == 0:
        return Estimate.undefined("no unit was rated by two or more raters", n_excluded=n_excluded)
    agree, agreeing_pairs = agreeing(usable)
    # Each unit's rater pairs, m(m − 1)/2, in place: the same products and halves as written out, fewer copies.
    unit_pairs = _rows(n_ratings, usable).astype(float)
    unit_pairs *= unit_pairs - 1
    unit_pairs /= 2.0
    agreeing_pairs /= unit_pairs
    del unit_pairs
    return _percent_result(agree, n_used, n_excluded, float(np.mean(agreeing_pairs)))


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


def _fleiss_point(patterns: CountPatterns, m: int) -> float | None:
    """Fleiss' κ of the patterns of units rated ``m`` times: statsmodels' on their count table up to
    MAX_UNITS_FOR_PACKAGE units, :func:`fleiss_exact` past it; None when every rating is one category."""
    n = patterns.n_units
    p = (patterns.weights @ patterns.rows) / (n * m)
    p_e = float((p * p).sum())
    if p_e >= 1.0 - 1e-15:
        return None
    if n > MAX_UNITS_FOR_PACKAGE:
        return fleiss_exact(patterns.rows, m, weights=patterns.weights)
    # statsmodels' own check is a bare assert; the caller guarantees equal rows.
    return float(_sm_fleiss_kappa(patterns.expand(), method="fleiss"))


def fleiss_exact(counts: np.ndarray, m: int, *, weights: np.ndarray | None = None) -> float | None:
    """Fleiss' (1971) κ of a units × categories count table, every unit rated ``m`` times, from sums taken in exact
    integers: P̄ = (Σ_u Σ_j n_uj² − N·m) / (N·m·(m − 1)), p_j = Σ_u n_uj / (N·m), P̄e = Σ_j p_j²,
    κ = (P̄ − P̄e) / (1 − P̄e) (Fleiss 1971, equations 2 to 6). ``weights`` counts row u w_u times (a table of count
    patterns). Tested equal to statsmodels' fleiss_kappa (and on Fleiss' worked example)."""
    rows = np.asarray(counts, dtype=np.int64)
    w = np.ones(rows.shape[0], dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    n = int(w.sum())
    totals = w @ rows
    squares = int(w @ (rows * rows).sum(axis=1))
    p = totals / (n * m)
    p_e = float((p * p).sum())
    if p_e >= 1.0 - 1e-15:
        return None
    p_bar = (squares - n * m) / (n * m * (m - 1))
    return float((p_bar - p_e) / (1.0 - p_e))


def _fleiss_boot(patterns: CountPatterns, m: int, n_boot: int, seed: int, progress: Progress | None) -> np.ndarray:
    """Fleiss' κ of each bootstrap resample of the units (all rated ``m`` times), drawn as pattern counts
    (:func:`pattern_resamples`): a resample's P̄ is its units' agreements' mean and its category totals are its
    patterns' rows times how many of each it drew (exact integers)."""
    n = patterns.n_units
    rows = patterns.rows
    # Each pattern's agreement is (Σ_j n_uj² − m) / (m(m − 1)): its numerator summed over the resample and its
    # category totals, in exact integers (so a replicate is the same whatever the block it is computed in).
    numerators = (rows * rows).sum(axis=1) - m
    out: list[np.ndarray] = []
    for drawn in pattern_resamples(np.random.default_rng(seed), patterns.weights, n_boot, progress):
        p_bar = (drawn @ numerators) / (m * (m - 1)) / n
        p = (drawn @ rows) / (n * m)
        p_e = (p * p).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append(np.where(p_e < 1.0 - 1e-15, (p_bar - p_e) / (1.0 - p_e), np.nan))
    return np.concatenate(out) if out else np.zeros(0)


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


def _modal_patterns(per_unit: np.ndarray, weights: np.ndarray) -> tuple[int, np.ndarray] | None:
    """The modal number of ratings per unit (at least two; ties → the larger) over patterns of ``per_unit`` ratings
    held by ``weights`` units, and the patterns rated that many times; None when no unit was rated twice."""
    twice = per_unit >= 2
    if not twice.any():
        return None
    freq = np.bincount(per_unit[twice], weights=weights[twice])
    m = int(np.flatnonzero(freq == freq.max())[-1])
    return m, per_unit == m


def fleiss_kappa_from_counts(
    counts: np.ndarray, *, n_boot: int = 0, seed: int = 0, progress: Progress | None = None
) -> Estimate:
    """:func:`fleiss_kappa` from the units × categories count table (through its patterns)."""
    return fleiss_kappa_from_patterns(CountPatterns.of(counts), n_boot=n_boot, seed=seed, progress=progress)


def fleiss_kappa_from_patterns(
    patterns: CountPatterns, *, n_boot: int = 0, seed: int = 0, progress: Progress | None = None
) -> Estimate:
    """:func:`fleiss_kappa` from the count table's patterns (:class:`CountPatterns`)."""
    per_unit, n_rated, _ = _unit_counts(patterns)
    modal = _modal_patterns(per_unit, patterns.weights)
    if modal is None:
        return Estimate.undefined("no unit was rated by two or more raters", n_excluded=n_rated)
    m, keep = modal
    kept = patterns.where(keep)
    n_used = kept.n_units
    return _fleiss_estimate(kept, m, n_used, n_rated - n_used, n_boot=n_boot, seed=seed, progress=progress)


def _fleiss_estimate(
    kept: CountPatterns,
    m: int,
    n_used: int,
    n_excluded: int,
    *,
    n_boot: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
) -> Estimate:
    """Fleiss' κ of ``kept``, the patterns of the units rated ``m`` times (see :func:`fleiss_kappa`)."""
    kappa = _fleiss_point(kept, m)
    if kappa is None:
        return Estimate.undefined(
            "every rating is the same category, so chance agreement is 1",
            n_units=n_used,
            n_excluded=n_excluded,
            raters_per_unit=m,
        )
    est = Estimate(value=kappa, n_units=n_used, n_excluded=n_excluded, extra={"raters_per_unit": m})
    if n_boot > 0:
        samples = _fleiss_boot(kept, m, n_boot, seed, progress)
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


def coincidence_exact(counts: np.ndarray, *, block: int = 1 << 16, weights: np.ndarray | None = None) -> np.ndarray:
    """Krippendorff's coincidence matrix of a units × categories count table (every unit rated m ≥ 2 times):
    o_ck = Σ_u (n_uc·n_uk − [c = k]·n_uc) / (m_u − 1) (Krippendorff 2011, "Computing Krippendorff's alpha-reliability",
    section C). The numerators are summed as integers per number of ratings m, a block of units at a time (exact in
    any order, and no units × k × k array), and divided once per m.

    ``weights`` (a non-negative integer per unit) counts unit u w_u times: the coincidence matrix of a table in which
    each unit's row appears w_u times, as a bootstrap resample holds it (w: how many times each unit was drawn),
    without building that table."""
    k = counts.shape[1]
    by_m: dict[int, np.ndarray] = {}
    for start in range(0, counts.shape[0], block):
        part = np.asarray(counts[start : start + block], dtype=np.int64)
        per_unit = part.sum(axis=1)
        weighted = part if weights is None else part * np.asarray(weights[start : start + block], np.int64)[:, None]
        for m in np.unique(per_unit).tolist():
            at = per_unit == m
            rows, weighted_rows = part[at], weighted[at]
            total = weighted_rows.T @ rows - np.diag(weighted_rows.sum(axis=0))
            by_m[m] = by_m[m] + total if m in by_m else total
    o = np.zeros((k, k))
    for m in sorted(by_m):
        o += by_m[m] / (m - 1.0)
    return o


def _interval_boot(values: np.ndarray, n_boot: int, seed: int, progress: Progress | None) -> np.ndarray:
    """Interval α on real values from per-unit sums, exact: Σ_{i≠j}(v_i−v_j)² = 2(mΣv² − (Σv)²)."""
    return _interval_boot_from_sums(*_interval_sums(values), n_boot, seed, progress)


def _interval_sums(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per unit (row): the number of values, their sum and the sum of their squares."""
    mask = ~np.isnan(values)
    m = mask.sum(axis=1).astype(float)
    s1 = np.where(mask, values, 0.0).sum(axis=1)
    s2 = np.where(mask, values * values, 0.0).sum(axis=1)
    return m, s1, s2


def _interval_boot_from_sums(
    m: np.ndarray, s1: np.ndarray, s2: np.ndarray, n_boot: int, seed: int, progress: Progress | None
) -> np.ndarray:
    """:func:`_interval_boot` from the per-unit sums of :func:`_interval_sums` (units rated twice or more)."""
    within = 2.0 * (m * s2 - s1 * s1) / (m - 1.0)
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for idx in resample_blocks(rng, m.shape[0], n_boot, 1, progress):
        n = m[idx].sum(axis=1)
        t1 = s1[idx].sum(axis=1)
        t2 = s2[idx].sum(axis=1)
        d_e = 2.0 * (n * t2 - t1 * t1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append(np.where(d_e > 0, 1.0 - (n - 1.0) * within[idx].sum(axis=1) / d_e, np.nan))
    return np.concatenate(out)


def _categorical_boot(
    patterns: CountPatterns, level: Level, n_boot: int, seed: int, progress: Progress | None
) -> np.ndarray:
    """α of each bootstrap resample of the units (every unit rated twice or more), drawn as pattern counts
    (:func:`pattern_resamples`): the coincidence matrix of a resample is :func:`coincidence_exact` of the patterns
    weighted by how many units of each it drew (exact integers), the same α as the resample's own table gives
    (tested against the krippendorff package on each resample), to rounding."""
    out: list[np.ndarray] = []
    for drawn in pattern_resamples(np.random.default_rng(seed), patterns.weights, n_boot, progress):
        o = np.stack([coincidence_exact(patterns.rows, weights=row) for row in drawn])
        out.append(_alpha_from_coincidence(o, level))
    return np.concatenate(out) if out else np.zeros(0)


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
    if level in ("nominal", "ordinal") and n_categories is not None:
        patterns = CountPatterns.of(category_counts(codes, n_categories) if counts is None else counts)
        return _alpha_estimate(level, n_categories, patterns=patterns, n_boot=n_boot, seed=seed, progress=progress)
    n_ratings = (~np.isnan(codes)).sum(axis=1)
    pairable = n_ratings >= 2
    sub = codes[pairable]
    interval = _IntervalUnits(
        distinct=np.unique(sub[~np.isnan(sub)]),
        package_alpha=lambda: float(krippendorff.alpha(reliability_data=sub.T, level_of_measurement="interval")),
        sums=lambda: _interval_sums(sub),
    )
    return _alpha_estimate(
        level, n_categories, n_ratings=n_ratings, interval=interval, n_boot=n_boot, seed=seed, progress=progress
    )


@dataclass
class _IntervalUnits:
    """What interval α needs of the pairable units' values: the distinct values, the ``krippendorff`` package's
    α, and each unit's number, sum and sum of squares of values (:func:`_interval_sums`)."""

    distinct: np.ndarray
    package_alpha: Callable[[], float]
    sums: Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray]]


def _alpha_estimate(
    level: Level,
    n_categories: int | None,
    *,
    patterns: CountPatterns | None = None,
    n_ratings: np.ndarray | None = None,
    interval: _IntervalUnits | None = None,
    n_boot: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
) -> Estimate:
    """:func:`krippendorff_alpha` from either ``patterns``, the count patterns of the units on a categorical scale,
    or ``interval``, the pairable units' values (then the units are counted from ``patterns`` when given, else from
    ``n_ratings``, the number of ratings of each unit)."""
    table = None
    if patterns is not None:
        per_unit, _, n_excluded = _unit_counts(patterns)
        pairable_patterns = patterns.where(per_unit >= 2)
        n_used = pairable_patterns.n_units
        if interval is None:
            table = pairable_patterns
    elif n_ratings is not None:
        rated = n_ratings > 0
        pairable = n_ratings >= 2
        n_used = int(pairable.sum())
        n_excluded = int((rated & ~pairable).sum())
    else:
        raise ValueError("α needs the count patterns or the ratings per unit")
    if n_used == 0:
        return Estimate.undefined("no unit was rated by two or more raters", n_excluded=n_excluded)
    if table is not None:
        # The distinct values are the categories some pairable unit was rated in.
        n_distinct = int(((table.weights @ table.rows) > 0).sum())
    elif interval is not None:
        n_distinct = int(interval.distinct.size)
    else:
        raise ValueError("α needs the count table or the values")
    if n_distinct < 2:
        return Estimate.undefined(
            "every pairable rating has the same value, so expected disagreement is 0",
            n_units=n_used,
            n_excluded=n_excluded,
        )
    if level in ("nominal", "ordinal"):
        if table is None or n_categories is None:
            raise ValueError("nominal and ordinal α need the declared scale size")
        # The package holds three units × k × k float arrays on the way to the coincidence matrix (107 MiB at a
        # million units); past MAX_UNITS_FOR_PACKAGE the matrix is summed here in exact integers from the patterns
        # (the same statistic, tested equal to the package's).
        if n_used <= MAX_UNITS_FOR_PACKAGE:
            value = float(
                krippendorff.alpha(
                    value_counts=table.expand(), value_domain=np.arange(n_categories), level_of_measurement=level
                )
            )
        else:
            value = float(_alpha_from_coincidence(coincidence_exact(table.rows, weights=table.weights), level))
    elif level == "interval" and interval is not None:
        # The package builds a units × distinct-values table, which grows with every distinct real;
        # past a few thousand distinct values the closed form (same statistic, tested equal) is used.
        if n_distinct <= MAX_DISTINCT_FOR_PACKAGE:
            value = interval.package_alpha()
        else:
            value = _interval_alpha_from_sums(*interval.sums())  # type: ignore[assignment]
    else:
        raise ValueError(f"unknown level {level!r}")
    est = Estimate(value=value, n_units=n_used, n_excluded=n_excluded, extra={"level": level})
    if n_boot > 0:
        if table is not None:
            samples = _categorical_boot(table, level, n_boot, seed, progress)
        elif interval is not None:
            samples = _interval_boot_from_sums(*interval.sums(), n_boot, seed, progress)
        else:  # refused above
            raise ValueError("α needs the count table or the values")
        est.ci95, undefined = percentile_ci(samples)
        est.ci_method = f"percentile bootstrap over units, {n_boot} resamples, seed {seed}"
        est.extra["n_boot_undefined"] = undefined
    return est


def interval_alpha_exact(values: np.ndarray) -> float | None:
    """Interval α in closed form from per-unit sums; equals the package's value (tested)."""
    values = _as_codes(values)
    m, s1, s2 = _interval_sums(values)
    keep = m >= 2
    return _interval_alpha_from_sums(m[keep], s1[keep], s2[keep])


def _interval_alpha_from_sums(m: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> float | None:
    """:func:`interval_alpha_exact` from the per-unit sums of the units rated twice or more."""
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
    return per_label_from_counts(counts, labels)


def per_label_from_counts(counts: np.ndarray, labels: Sequence[str]) -> dict[str, Estimate]:
    """:func:`per_label_agreement` from the units × categories count table."""
    return per_label_from_patterns(CountPatterns.of(counts), labels)


def per_label_from_patterns(patterns: CountPatterns, labels: Sequence[str]) -> dict[str, Estimate]:
    """:func:`per_label_agreement` from the count table's patterns."""
    # Every label's two-column table has the units' total ratings as row sums: the units Fleiss' κ keeps
    # (those rated the modal number of times) are the same for every label, and chosen once.
    per_unit, n_rated, _ = _unit_counts(patterns)
    modal = _modal_patterns(per_unit, patterns.weights)
    if modal is None:
        return {
            str(label): Estimate.undefined("no unit was rated by two or more raters", n_excluded=n_rated)
            for label in labels
        }
    m, keep = modal
    kept = patterns.where(keep)
    n_used = kept.n_units
    return {
        str(label): _fleiss_estimate(
            CountPatterns.merged(np.stack([kept.rows[:, j], m - kept.rows[:, j]], axis=1), kept.weights),
            m, n_used, n_rated - n_used,
        )
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
        out[:, r] = _mode_of_others(by_category, coded[:, r])
    return out


def _mode_of_others(by_category: np.ndarray, own: np.ndarray) -> np.ndarray:
    """The unique modal category of each unit's ratings less ``own`` (one rating; k: none taken out), from
    ``by_category``, the categories × units count table; k where the others tie or did not rate."""
    n_categories = by_category.shape[0]
    top = by_category[0] - (own == 0)
    mode = np.zeros(own.shape[0], dtype=np.int64)
    winners = np.ones(own.shape[0], dtype=np.int64)
    for c in range(1, n_categories):
        others = by_category[c] - (own == c)
        higher = others > top
        winners = np.where(higher, 1, winners + (others == top))
        mode = np.where(higher, c, mode)
        top = np.maximum(top, others)
    return np.where((top > 0) & (winners == 1), mode, n_categories)


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
        out.append(_rest_estimate(table, n_excluded, int(n_rated[r]), reference=reference, weights=weights))
    return out


def _rest_estimate(
    table: np.ndarray, n_excluded: int, n_rated: int, *, reference: float | None, weights: Weights
) -> Estimate:
    """One rater's κ against the rest's majority (see :func:`each_against_rest`) from their k × k table."""
    est = kappa_from_table(table, weights, n_excluded=n_excluded)
    n_both = int(table.sum())
    # The units where the rater and the rest's majority gave the same category: the table's diagonal.
    est.extra["agreement_with_rest"] = int(np.trace(table)) / n_both if n_both else None
    est.extra["n_rated"] = n_rated
    outlier = bool(reference is not None and est.ci95 is not None and est.ci95[1] < reference)
    est.extra["outlier"] = outlier
    return est


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
    :func:`agreement_summary_sparse` gives the same from one entry per rating, without the matrix.
    """
    codes = _as_codes(codes)
    n_ratings = (~np.isnan(codes)).sum(axis=1)
    k = len(scale) if scale is not None else None
    stats = _Summary(
        *_rated_and_single(n_ratings), int(codes.shape[1]), level, scale, rater_names, weights, n_boot, seed, progress
    )
    coded = codes_with_missing(codes, k) if k is not None else None
    counts = _counts_of(coded, k) if coded is not None and k is not None else None
    pa = percent_agreement(codes, counts=counts)
    if k is not None:
        fk = fleiss_kappa(codes, k, n_boot=n_boot, seed=seed, progress=stats.sub_progress(0), counts=counts)
    else:
        fk = Estimate.undefined("Fleiss' κ needs a categorical scale; these ratings are interval numbers")
    alpha = krippendorff_alpha(
        codes, level, k, n_boot=n_boot, seed=seed, progress=stats.sub_progress(1), counts=counts
    )
    if k is None or coded is None or counts is None:
        return stats.as_dict(pa, fk, alpha)
    reference = fk.value if fk.defined else None
    return stats.as_dict(
        pa,
        fk,
        alpha,
        pairs=_pairwise(coded, k, weights),
        rests=_each_against_rest(coded, counts, k, reference=reference, weights=weights)
        if codes.shape[1] >= 3
        else [],
        per_label=per_label_from_counts(counts, [str(v) for v in scale or []]) if k > 2 else {},
    )


def _rated_and_single(n_ratings: np.ndarray) -> tuple[int, int]:
    """The units rated at least once and those rated exactly once, of each unit's number of ratings."""
    return int((n_ratings > 0).sum()), int((n_ratings == 1).sum())


@dataclass
class _Summary:
    """What :func:`agreement_summary` and :func:`agreement_summary_sparse` share: the head of the summary, the
    progress of its two bootstraps, and the assembly of the statistics into plain data."""

    n_units: int  # rated at least once
    n_excluded_units: int  # rated exactly once
    n_raters: int
    level: Level
    scale: Sequence[Any] | None
    rater_names: Sequence[str]
    weights: Weights
    n_boot: int
    seed: int
    progress: Progress | None

    def sub_progress(self, step: int) -> Progress | None:
        """Fleiss' κ's bootstrap (step 0), then α's (step 1); progress is reported only when there is one."""
        progress, steps = self.progress, 2
        if progress is None:
            return None
        return lambda done, total: progress(step * total + done, steps * total)

    def as_dict(
        self,
        pa: Estimate,
        fk: Estimate,
        alpha: Estimate,
        *,
        pairs: dict[tuple[int, int], Estimate] | None = None,
        rests: list[Estimate] | None = None,
        per_label: dict[str, Estimate] | None = None,
    ) -> dict[str, Any]:
        """The summary; ``pairs``, ``rests`` and ``per_label`` are None on the interval level (no κ applies)."""
        names = self.rater_names
        out: dict[str, Any] = {
            "n_units": self.n_units,
            "n_raters": self.n_raters,
            "n_excluded_units": self.n_excluded_units,
            "level": self.level,
            "scale": [str(v) for v in self.scale] if self.scale is not None else None,
            "raters": list(names),
            "percent_agreement": pa.as_dict(),
            "fleiss_kappa": fk.as_dict(),
            "krippendorff_alpha": alpha.as_dict(),
        }
        if pairs is not None and rests is not None and per_label is not None:
            out["cohen_kappa_pairs"] = [
                {"rater_a": names[i], "rater_b": names[j], **est.as_dict()} for (i, j), est in pairs.items()
            ]
            if self.n_raters == 2:
                out["cohen_kappa"] = pairs[(0, 1)].as_dict()
            else:
                out["cohen_kappa"] = Estimate.undefined(
                    f"Cohen's κ compares exactly two raters; there are {self.n_raters} (see cohen_kappa_pairs)"
                ).as_dict()
            out["each_against_rest"] = [{"rater": names[r], **est.as_dict()} for r, est in enumerate(rests)]
            # A list, not a mapping: the declared order must survive storage as jsonb, which sorts keys.
            out["per_label"] = [{"label": label, **est.as_dict()} for label, est in per_label.items()]
            defined_pairs = [p["value"] for p in out["cohen_kappa_pairs"] if p["value"] is not None]
            out["mean_pairwise_cohen_kappa"] = float(np.mean(defined_pairs)) if defined_pairs else None
        else:
            na = Estimate.undefined("Cohen's κ needs a categorical scale; these ratings are interval numbers")
            out["cohen_kappa"] = na.as_dict()
            out["cohen_kappa_pairs"] = []
            out["each_against_rest"] = []
            out["per_label"] = []
            out["mean_pairwise_cohen_kappa"] = None
        out["weights"] = self.weights
        out["bootstrap"] = {"n": self.n_boot, "seed": self.seed} if self.n_boot > 0 else None
        checked: dict[str, Any] = _finite(out)
        return checked


# --- one entry per rating ---------------------------------------------------------------------

# Ratings taken at a time where a step needs a row of k counts per rating (the rest's majorities).
SPARSE_CHUNK = 1 << 16
# Cells of a block of units × raters built at a time where a step needs the matrix's own row sums (interval α).
SPARSE_CELLS = 1 << 20


@dataclass(frozen=True)
class SparseRatings:
    """Ratings as one entry per rating: unit index, rater index and value (what the ``codes`` matrix holds at
    that cell), sorted by unit then rater, for a units × raters matrix of shape (``n_units``, ``n_raters``).

    What it takes grows with the number of ratings, not with units × raters: a pool of a million items and a
    hundred raters, three ratings an item, is three million entries where the matrix is a hundred million
    cells. :func:`agreement_summary_sparse` computes from it; :meth:`dense` builds the matrix for the callers
    that need one.
    """

    unit: np.ndarray
    rater: np.ndarray
    value: np.ndarray
    n_units: int
    n_raters: int

    @classmethod
    def from_entries(
        cls, unit: np.ndarray, rater: np.ndarray, value: np.ndarray, *, n_units: int, n_raters: int
    ) -> SparseRatings:
        """From aligned arrays in any order; NaN values (not rated, as in the matrix) are dropped."""
        unit = np.asarray(unit, dtype=np.int64)
        rater = np.asarray(rater, dtype=np.int64)
        value = np.asarray(value, dtype=float)
        if unit.ndim != 1 or unit.shape != rater.shape or unit.shape != value.shape:
            raise ValueError("unit, rater and value must be aligned one-dimensional arrays")
        keep = ~np.isnan(value)
        if not keep.all():
            unit, rater, value = unit[keep], rater[keep], value[keep]
        if unit.size and (unit.min() < 0 or unit.max() >= n_units or rater.min() < 0 or rater.max() >= n_raters):
            raise ValueError("an entry lies outside the units × raters matrix")
        cell = unit * n_raters + rater
        if cell.size > 1 and not (np.diff(cell) > 0).all():
            order = np.argsort(cell, kind="stable")
            unit, rater, value, cell = unit[order], rater[order], value[order], cell[order]
            if (np.diff(cell) == 0).any():
                raise ValueError("a rater rated a unit twice")
        return cls(unit, rater, value, int(n_units), int(n_raters))

    @classmethod
    def from_dense(cls, codes: np.ndarray) -> SparseRatings:
        """The entries of a units × raters matrix (``NaN`` = not rated)."""
        codes = _as_codes(codes)
        unit, rater = np.nonzero(~np.isnan(codes))
        return cls(
            unit.astype(np.int64), rater.astype(np.int64), codes[unit, rater], int(codes.shape[0]),
            int(codes.shape[1]),
        )

    def dense(self) -> np.ndarray:
        """The units × raters matrix, ``NaN`` where a rater did not rate a unit."""
        out = np.full((self.n_units, self.n_raters), np.nan)
        out[self.unit, self.rater] = self.value
        return out

    def per_unit(self) -> np.ndarray:
        """The number of ratings of each unit."""
        return np.bincount(self.unit, minlength=self.n_units)

    def positions(self, n_categories: int) -> np.ndarray:
        """The values as scale positions 0..k−1 (as :func:`codes_with_missing` reads them)."""
        out = self.value.astype(np.int64)
        if out.size and (out.min() < 0 or out.max() >= n_categories):
            raise ScaleError(f"codes must lie in 0..{n_categories - 1}")
        return out


def agreement_summary_sparse(
    ratings: SparseRatings,
    *,
    level: Level,
    scale: Sequence[Any] | None,
    rater_names: Sequence[str],
    weights: Weights = "none",
    n_boot: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """:func:`agreement_summary` of ``ratings.dense()``, the same to the last digit (tested), without building
    the matrix: every categorical statistic comes from the units × categories counts, the k × k table of
    each pair of raters and each rater's table against the rest's majority; interval α from each unit's sums.
    The bootstraps resample the same units with the same draws."""
    n_ratings = ratings.per_unit()
    k = len(scale) if scale is not None else None
    stats = _Summary(
        *_rated_and_single(n_ratings), ratings.n_raters, level, scale, rater_names, weights, n_boot, seed, progress
    )
    if scale is None or k is None:
        interval = _sparse_interval_units(ratings, n_ratings >= 2)
        pa = _percent_estimate(n_ratings, lambda usable: _sparse_agreeing(ratings, usable))
        fk = Estimate.undefined("Fleiss' κ needs a categorical scale; these ratings are interval numbers")
        alpha = _alpha_estimate(
            level, k, n_ratings=n_ratings, interval=interval, n_boot=n_boot, seed=seed, progress=stats.sub_progress(1)
        )
        return stats.as_dict(pa, fk, alpha)
    return agreement_summary_tables(
        categorical_tables(ratings, k),
        level=level,
        scale=scale,
        rater_names=rater_names,
        weights=weights,
        n_boot=n_boot,
        seed=seed,
        progress=progress,
        interval=_sparse_interval_units(ratings, n_ratings >= 2) if level == "interval" else None,
    )


@dataclass(frozen=True)
class CategoricalTables:
    """Everything the categorical statistics of :func:`agreement_summary_tables` are computed from: the units ×
    categories counts' patterns (``patterns``: what every unit-level statistic and every bootstrap reads), the k × k
    table of each pair of raters (``pairs``, in :func:`itertools.combinations` order), how many ratings each rater
    gave (``n_rated``) and, with three raters or more, each rater's k × k table against the rest's majority
    (``rests``) and the units only one of the two rated (``rest_excluded``).

    None of these grows with the number of units (the patterns are the distinct rows of counts: a handful). The
    units × categories table itself (``counts``, one row of k counts a unit, in unit order) is kept only for the
    callers that need a unit's own counts (a majority per unit): :class:`CategoricalTablesBuilder` builds both from
    the ratings a chunk of units at a time, so a report never holds every rating."""

    counts: np.ndarray | None
    pairs: np.ndarray
    n_rated: np.ndarray
    rests: np.ndarray | None
    rest_excluded: np.ndarray | None
    patterns: CountPatterns = None  # type: ignore[assignment]  # from ``counts`` when not given

    def __post_init__(self) -> None:
        if self.patterns is None:
            if self.counts is None:
                raise ValueError("categorical tables need the counts or their patterns")
            object.__setattr__(self, "patterns", CountPatterns.of(self.counts))

    @property
    def n_raters(self) -> int:
        return int(self.n_rated.size)


class CategoricalTablesBuilder:
    """:class:`CategoricalTables` added up from chunks of ratings (:meth:`add`), each chunk a
    :class:`SparseRatings` of whole units — every rating of a unit in the same chunk — numbered from 0 within the
    chunk, the chunks in unit order; its raters are numbered over the same ``n_raters`` in every chunk. The tables
    are sums over units and the counts are the chunks' rows one after another, so they are exactly those of all the
    ratings at once (tests/adjudication/stats/test_agreement_chunks.py compares them on random data).

    :meth:`finish` may keep only some raters (``keep``): the reports number the raters of every submitted
    assignment of the pool before they read a label, and keep those with a rating. With ``keep_counts`` false the
    units × categories table is not kept (``counts`` is None): what the builder holds does not grow with the units.
    """

    def __init__(self, n_raters: int, n_categories: int, *, keep_counts: bool = True) -> None:
        n, k = n_raters, n_categories
        self.n_raters, self.k = n, k
        self.keep_counts = keep_counts
        self._counts: list[np.ndarray] = []
        self._patterns = CountPatterns.of(np.zeros((0, k), np.int64))
        self._pairs = np.zeros((n * (n - 1) // 2, k, k), dtype=np.int64)
        self._n_rated = np.zeros(n, dtype=np.int64)
        self._rests = np.zeros((n, k, k), dtype=np.int64)
        self._rest_excluded = np.zeros(n, dtype=np.int64)

    def add(self, chunk: SparseRatings) -> np.ndarray:
        """Adds a chunk's ratings; returns its units × categories counts."""
        if chunk.n_raters != self.n_raters:
            raise ValueError(f"a chunk of {chunk.n_raters} raters added to tables of {self.n_raters}")
        k = self.k
        codes = chunk.positions(k)
        counts = np.bincount(chunk.unit * k + codes, minlength=chunk.n_units * k).reshape(chunk.n_units, k)
        if self.keep_counts:
            self._counts.append(counts)
        mine = CountPatterns.of(counts)
        self._patterns = CountPatterns.merged(
            np.concatenate([self._patterns.rows, mine.rows]), np.concatenate([self._patterns.weights, mine.weights])
        )
        self._pairs += _sparse_pair_tables(chunk, codes, k)
        self._n_rated += np.bincount(chunk.rater, minlength=self.n_raters)
        if self.n_raters >= 3:
            rests, excluded = _sparse_rest_tables(chunk, codes, counts)
            self._rests += rests
            self._rest_excluded += excluded
        return counts

    def finish(self, keep: np.ndarray | None = None) -> CategoricalTables:
        """The tables of the chunks added, of the raters ``keep`` (a boolean mask; all when None)."""
        counts = drain_concatenate(self._counts, np.int64, (self.k,)) if self.keep_counts else None
        pairs, n_rated, rests, excluded = self._pairs, self._n_rated, self._rests, self._rest_excluded
        if keep is not None and not keep.all():
            kept = np.flatnonzero(keep)
            n = self.n_raters
            index = [a * (2 * n - a - 1) // 2 + (b - a - 1) for a, b in combinations(kept.tolist(), 2)]
            pairs = pairs[np.array(index, dtype=np.int64)] if index else np.zeros((0, self.k, self.k), np.int64)
            n_rated, rests, excluded = n_rated[kept], rests[kept], excluded[kept]
        if n_rated.size < 3:
            return CategoricalTables(counts, pairs, n_rated, None, None, self._patterns)
        return CategoricalTables(counts, pairs, n_rated, rests, excluded, self._patterns)


def drain_concatenate(
    parts: list[np.ndarray],
    dtype: Any,
    row_shape: tuple[int, ...] = (),
    convert: Callable[[int, np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    """``np.concatenate(parts)`` (rows of ``row_shape``, as ``dtype``) that empties ``parts`` as it goes: each part
    is let go once copied, so the parts and their join are never held whole at once (a million units' counts: 16
    MB, not 32). ``convert(i, part)``, when given, is applied to part i on its way in."""
    total = sum(int(part.shape[0]) for part in parts)
    out = np.empty((total, *row_shape), dtype=dtype)
    at = 0
    parts.reverse()
    i = 0
    while parts:
        part = parts.pop()
        if convert is not None:
            part = convert(i, part)
        out[at : at + part.shape[0]] = part
        at += part.shape[0]
        i += 1
    return out


def categorical_tables(ratings: SparseRatings, n_categories: int) -> CategoricalTables:
    """The :class:`CategoricalTables` of all of ``ratings`` (one chunk)."""
    builder = CategoricalTablesBuilder(ratings.n_raters, n_categories)
    builder.add(ratings)
    return builder.finish()


def agreement_summary_tables(
    tables: CategoricalTables,
    *,
    level: Level,
    scale: Sequence[Any],
    rater_names: Sequence[str],
    weights: Weights = "none",
    n_boot: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
    interval: _IntervalUnits | None = None,
) -> dict[str, Any]:
    """The summary of :func:`agreement_summary_sparse` of categorical ratings from their tables. Ratings coded on a
    scale but analysed at the interval level take α from their values (``interval``)."""
    k = len(scale)
    patterns = tables.patterns
    _, n_rated_units, n_single = _unit_counts(patterns)
    stats = _Summary(
        n_rated_units, n_single, tables.n_raters, level, scale, rater_names, weights, n_boot, seed, progress
    )
    pa = percent_from_patterns(patterns)
    fk = fleiss_kappa_from_patterns(patterns, n_boot=n_boot, seed=seed, progress=stats.sub_progress(0))
    if level in ("nominal", "ordinal"):
        alpha = _alpha_estimate(
            level, k, patterns=patterns, n_boot=n_boot, seed=seed, progress=stats.sub_progress(1)
        )
    elif interval is not None:
        # The units counted from the patterns, α from the values.
        alpha = _alpha_estimate(
            level, k, patterns=patterns, interval=interval, n_boot=n_boot, seed=seed, progress=stats.sub_progress(1)
        )
    else:
        raise ValueError("interval α of ratings on a scale needs their values (interval)")
    n_rated = tables.n_rated
    pairs = {}
    for p, (i, j) in enumerate(combinations(range(tables.n_raters), 2)):
        n_excluded = int(n_rated[i] + n_rated[j] - 2 * tables.pairs[p].sum())
        pairs[(i, j)] = kappa_from_table(tables.pairs[p], weights, n_excluded=n_excluded)
    rests: list[Estimate] = []
    if tables.rests is not None and tables.rest_excluded is not None:
        reference = fk.value if fk.defined else None
        rests = [
            _rest_estimate(
                tables.rests[r], int(tables.rest_excluded[r]), int(n_rated[r]), reference=reference, weights=weights
            )
            for r in range(tables.n_raters)
        ]
    per_label = per_label_from_patterns(patterns, [str(v) for v in scale]) if k > 2 else {}
    return stats.as_dict(pa, fk, alpha, pairs=pairs, rests=rests, per_label=per_label)


def _sparse_agreeing(ratings: SparseRatings, usable: np.ndarray) -> tuple[int, np.ndarray]:
    """Interval percent agreement's parts (see :func:`percent_agreement`) from the entries: the values of each
    unit sorted, runs of equal values are the groups of agreeing raters; a unit agrees when it is one run."""
    order = np.lexsort((ratings.value, ratings.unit))
    unit, value = ratings.unit[order], ratings.value[order]
    starts = np.ones(unit.size, dtype=bool)
    starts[1:] = (unit[1:] != unit[:-1]) | (value[1:] != value[:-1])
    first = np.flatnonzero(starts)
    size = np.diff(np.append(first, unit.size)).astype(float)
    run_unit = unit[first]
    runs = np.bincount(run_unit, minlength=ratings.n_units)
    pairs = np.bincount(run_unit, weights=size * (size - 1.0) / 2.0, minlength=ratings.n_units)
    return int((runs[usable] == 1).sum()), pairs[usable]


def _sparse_interval_units(ratings: SparseRatings, pairable: np.ndarray) -> _IntervalUnits:
    """The pairable units' values for interval α (:class:`_IntervalUnits`), numbered among the pairable units.

    The package's α gets the units × distinct-values count table it would build from the matrix itself
    (the same table, so the same value to the last digit)."""
    on = pairable[ratings.unit]
    index = np.cumsum(pairable) - 1
    unit, rater, value = index[ratings.unit[on]], ratings.rater[on], ratings.value[on]
    n_used = int(pairable.sum())
    distinct = np.unique(value)

    def package_alpha() -> float:
        n_values = distinct.size
        cells = unit * n_values + np.searchsorted(distinct, value)
        table = np.bincount(cells, minlength=n_used * n_values).reshape(n_used, n_values)
        return float(krippendorff.alpha(value_counts=table, value_domain=distinct, level_of_measurement="interval"))

    def sums() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # Row by row over blocks of units × raters, as :func:`_interval_sums` adds a matrix's rows: the same
        # additions in the same order, so the same sums to the last bit; a block holds SPARSE_CELLS cells at most.
        out = np.empty((3, n_used))
        step = max(1, SPARSE_CELLS // max(ratings.n_raters, 1))
        bounds = np.searchsorted(unit, np.arange(0, n_used + step, step))
        for b, start in enumerate(range(0, n_used, step)):
            lo, hi = bounds[b], bounds[b + 1]
            block = np.full((min(step, n_used - start), ratings.n_raters), np.nan)
            block[unit[lo:hi] - start, rater[lo:hi]] = value[lo:hi]
            out[:, start : start + block.shape[0]] = _interval_sums(block)
        return out[0], out[1], out[2]

    return _IntervalUnits(distinct=distinct, package_alpha=package_alpha, sums=sums)


def _sparse_pair_tables(ratings: SparseRatings, codes: np.ndarray, n_categories: int) -> np.ndarray:
    """The k × k table of every pair of raters (in :func:`itertools.combinations` order) on the units both rated.

    The entries are sorted by unit, then rater: the pairs of ratings of one unit are the entries ``d`` apart
    within its run, for d = 1, 2, …; the entries still paired at distance d are a subset of those at d − 1, so
    the work is the number of pairs of ratings, not raters²."""
    n, k = ratings.n_raters, n_categories
    tables = np.zeros(n * (n - 1) // 2 * k * k, dtype=np.int64)
    unit, rater = ratings.unit, ratings.rater
    alive = np.arange(unit.size, dtype=np.int64)
    d = 1
    while alive.size:
        alive = alive[alive + d < unit.size]
        alive = alive[unit[alive + d] == unit[alive]]
        if not alive.size:
            break
        a, b = rater[alive], rater[alive + d]  # a < b: sorted by rater within a unit
        pair = a * (2 * n - a - 1) // 2 + (b - a - 1)
        tables += np.bincount((pair * k + codes[alive]) * k + codes[alive + d], minlength=tables.size)
        d += 1
    return tables.reshape(-1, k, k)


def _sparse_rest_tables(
    ratings: SparseRatings, codes: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each rater's k × k table against the rest's majority (see :func:`each_against_rest`), and the number of
    units only one of the two rated: the rater's ratings where the others tie or did not rate, and the units the
    rater did not rate where all raters' majority stands. A chunk of ratings at a time."""
    n, k = ratings.n_raters, counts.shape[1]
    by_category = np.ascontiguousarray(counts.T)
    whole = _mode_of_others(by_category, np.full(ratings.n_units, k, dtype=np.int64)) < k
    tables = np.zeros(n * k * k, dtype=np.int64)
    no_rest = np.zeros(n, dtype=np.int64)
    whole_on_rated = np.zeros(n, dtype=np.int64)
    for start in range(0, ratings.unit.size, SPARSE_CHUNK):
        unit = ratings.unit[start : start + SPARSE_CHUNK]
        rater = ratings.rater[start : start + SPARSE_CHUNK]
        own = codes[start : start + SPARSE_CHUNK]
        rest = _mode_of_others(by_category[:, unit], own)
        ok = rest < k
        tables += np.bincount((rater[ok] * k + own[ok]) * k + rest[ok], minlength=tables.size)
        no_rest += np.bincount(rater[~ok], minlength=n)
        whole_on_rated += np.bincount(rater[whole[unit]], minlength=n)
    return tables.reshape(n, k, k), no_rest + (int(whole.sum()) - whole_on_rated)


def _finite(obj: Any) -> Any:
    """Assert the no-NaN contract on the way out: a NaN here is a bug, never a value."""
    if isinstance(obj, float) and not math.isfinite(obj):
        raise ArithmeticError("a statistic came out NaN or infinite instead of being reported undefined")
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj
