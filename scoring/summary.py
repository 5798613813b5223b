"""Summaries of a run's scores for the researcher's pages, over plain numbers (no Django).

* ``distribution``: a histogram of the item-level values and their mean with a 95% confidence
  interval that respects the scale (``mean_interval``): Wilson's score interval for a share (every value
  0 or 1; statsmodels), a logit-transformed Student-t interval for the mean of values bounded by 0 and 1,
  and the Student-t interval (the interval of ``t.test`` in R) for unbounded values; no interval below
  ``MIN_INTERVAL_ITEMS`` items ("too few items");
* ``paired_agreement``: two runs compared on the units both scored: Pearson's r and Spearman's ρ
  (scipy), and, when both runs give only 0/1 values, the share of equal verdicts and Cohen's κ
  (scikit-learn). Fewer than two pairs, or a constant run, leave a coefficient undefined with the
  reason; nothing is turned into a number it is not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from scipy import stats
from scipy.special import expit, logit
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

BINS = 10
# Below this many items a run's page shows no interval ("too few items"): with two or three values any
# interval is mostly its assumptions.
MIN_INTERVAL_ITEMS = 5
WILSON = "Wilson score"
LOGIT_T = "logit Student t"
STUDENT_T = "Student t"


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    count: int


@dataclass(frozen=True)
class Distribution:
    n: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    bins: list[Bin]
    reason: str = ""
    method: str = ""  # the interval's name, shown beside it

    @property
    def tallest(self) -> int:
        return max((b.count for b in self.bins), default=0)


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float] | None:
    """(mean, low, high): the Student-t interval mean ± t(1 - α/2, n - 1) · s / √n; None below two values."""
    n = len(values)
    if n < 2:
        return None
    mean = math.fsum(values) / n
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    method: str


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> Interval | None:
    """The mean and a confidence interval on the scale of the values; None below two values.

    * Every value 0 or 1 (a share): Wilson's score interval (Wilson 1927; Newcombe 1998, method 3),
      which stays inside [0, 1] and keeps its coverage for small samples and shares near 0 or 1.
    * Every value in [0, 1], not all 0 or 1 (the mean of a bounded score): the Student-t interval of the
      logit of the mean, its standard error by the delta method, s / (√n · m (1 − m)), mapped back with
      the logistic function: inside (0, 1) whatever the sample. Values that are all equal have no spread
      and give the point itself.
    * Otherwise: the Student-t interval (``mean_ci``).
    """
    n = len(values)
    if n < 2:
        return None
    if all(v in (0.0, 1.0) for v in values):
        successes = int(math.fsum(values))
        low, high = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
        return Interval(successes / n, float(low), float(high), WILSON)
    if all(0.0 <= v <= 1.0 for v in values):
        if min(values) == max(values):
            return Interval(values[0], values[0], values[0], LOGIT_T)
        mean = math.fsum(values) / n
        sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
        # Not all values are 0 or 1 and they are not all equal, so 0 < mean < 1 and the logit is finite.
        half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / (math.sqrt(n) * mean * (1 - mean))
        centre = float(logit(mean))
        return Interval(mean, float(expit(centre - half)), float(expit(centre + half)), LOGIT_T)
    mean, low, high = mean_ci(values, confidence)  # type: ignore[misc]  # n >= 2
    return Interval(mean, low, high, STUDENT_T)


def distribution(values: Sequence[float], *, bins: int = BINS) -> Distribution:
    """Histogram over [0, 1] when every value lies there (most metrics), else over [min, max]."""
    n = len(values)
    if not n:
        return Distribution(0, None, None, None, [], "no item has a value yet")
    lo, hi = (0.0, 1.0) if all(0.0 <= v <= 1.0 for v in values) else (min(values), max(values))
    width = (hi - lo) / bins if hi > lo else 1.0
    counts = [0] * bins
    for v in values:
        counts[min(int((v - lo) / width), bins - 1) if hi > lo else 0] += 1
    edges = [Bin(lo + i * width, lo + (i + 1) * width, c) for i, c in enumerate(counts)]
    mean = math.fsum(values) / n
    if n < MIN_INTERVAL_ITEMS:
        reason = f"too few items for a confidence interval: {n}, at least {MIN_INTERVAL_ITEMS} needed"
        return Distribution(n, mean, None, None, edges, reason)
    interval = mean_interval(values)
    assert interval is not None  # n >= MIN_INTERVAL_ITEMS >= 2
    return Distribution(n, interval.mean, interval.low, interval.high, edges, method=interval.method)


@dataclass(frozen=True)
class Agreement:
    n: int
    pearson: float | None = None
    spearman: float | None = None
    binary: bool = False
    equal_share: float | None = None
    kappa: float | None = None
    reasons: list[str] = field(default_factory=list)


def _defined(value: float) -> float | None:
    return None if value != value else float(value)


def paired_agreement(a: Sequence[float], b: Sequence[float]) -> Agreement:
    """Agreement of two runs over the same units (``a[i]`` and ``b[i]`` score the same unit)."""
    n = len(a)
    if n != len(b):
        raise ValueError("paired values must have the same length")
    if n < 2:
        return Agreement(n, reasons=["fewer than two units scored by both runs"])
    reasons = []
    pearson = spearman = None
    if len(set(a)) < 2 or len(set(b)) < 2:
        reasons.append("one run gives the same value to every shared unit: correlation is undefined")
    else:
        pearson = _defined(stats.pearsonr(a, b).statistic)
        spearman = _defined(stats.spearmanr(a, b).statistic)
    binary = set(a) <= {0.0, 1.0} and set(b) <= {0.0, 1.0}
    equal = kappa = None
    if binary:
        equal = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
        if len(set(a) | set(b)) < 2:
            reasons.append("both runs give one verdict only: κ is undefined")
        else:
            kappa = _defined(float(cohen_kappa_score([int(x) for x in a], [int(y) for y in b])))
    return Agreement(n, pearson, spearman, binary, equal, kappa, reasons)
