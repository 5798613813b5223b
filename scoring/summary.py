"""Summaries of a run's scores for the researcher's pages, over plain numbers (no Django).

* ``distribution``: a histogram of the item-level values and their mean with a Student-t 95%
  confidence interval (the interval of ``t.test`` in R, from scipy's t quantiles);
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
from sklearn.metrics import cohen_kappa_score

BINS = 10


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
    ci = mean_ci(values)
    if ci is None:
        return Distribution(n, values[0], None, None, edges, "one value: no confidence interval")
    return Distribution(n, ci[0], ci[1], ci[2], edges)


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
