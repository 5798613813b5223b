"""Means and paired differences with intervals, for the validation studies' per-item figures
(coverage, retrieval measures). Pure numpy/scipy, no ORM.

Intervals are Student-t intervals, mean ± t(0.975, n−1)·s/√n (s the sample standard deviation with
n−1 in the denominator), so a report's interval can be checked by hand. With fewer than two values,
or no spread at all, the interval is undefined and said to be, never invented.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from adjudication.stats.agreement import Estimate

T_METHOD = "Student t (mean ± t·s/√n)"


def mean_ci(values: Sequence[float], *, n_excluded: int = 0, what: str = "value") -> Estimate:
    """The mean of ``values`` with its t interval; undefined when there is no value."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return Estimate.undefined(f"no {what} to average", n_excluded=n_excluded)
    if not np.isfinite(x).all():
        raise ValueError("mean_ci takes finite values only; leave undefined ones out and count them")
    mean = float(x.mean())
    if x.size < 2:
        return Estimate(value=mean, n_units=1, n_excluded=n_excluded, extra={"ci_note": "one value: no interval"})
    sd = float(x.std(ddof=1))
    se = sd / math.sqrt(x.size)
    if se == 0.0:
        return Estimate(
            value=mean,
            n_units=int(x.size),
            n_excluded=n_excluded,
            se=0.0,
            extra={"ci_note": "every value is the same: no interval"},
        )
    half = float(stats.t.ppf(0.975, x.size - 1)) * se
    return Estimate(
        value=mean,
        n_units=int(x.size),
        n_excluded=n_excluded,
        se=se,
        ci95=(mean - half, mean + half),
        ci_method=T_METHOD,
    )


def paired_difference(a: Sequence[float], b: Sequence[float], *, n_excluded: int = 0) -> Estimate:
    """Mean of a − b over paired values, with the t interval of the paired differences."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError("paired values must have the same length")
    return mean_ci(x - y, n_excluded=n_excluded, what="pair")
