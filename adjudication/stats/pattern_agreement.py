"""Agreement from answer patterns with unit counts: pure functions over plain data (no ORM).

An export sees each unit's answers once, as it streams; percent agreement, Fleiss' κ and
Krippendorff's α depend only on each unit's multiset of answers (not on which rater gave which), so
the distinct multisets with how many units showed them are a sufficient statistic — a handful of
entries however many units, which keeps an export's memory flat. The formulas are the textbook
ones, computed with unit weights; the tests check them against adjudication.stats.agreement (itself
checked against published values) on the same data.

* Percent agreement: share of units with two or more answers on which all answers are equal.
* Fleiss (1971): over units with the modal number m of answers (ties → the larger m), P_i =
  (Σ_j n_ij² − m) / (m(m − 1)), P_e = Σ_j p_j², κ = (P̄ − P_e) / (1 − P_e).
* Krippendorff (2011, "Computing Krippendorff's alpha-reliability"): coincidences o_ck summed over
  pairable units as (n_uc n_uk − [c = k] n_uc) / (m_u − 1); α = 1 − (n − 1) Σ o_ck δ_ck / Σ n_c n_k δ_ck
  with the nominal, ordinal (δ_ck = (Σ_{g=c..k} n_g − (n_c + n_k)/2)²) or interval ((v_c − v_k)²) metric.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

Pattern = tuple[Sequence[float], int]  # (a unit's answers as codes, how many units answered so)


@dataclass(frozen=True)
class PatternStat:
    value: float | None
    n_units: int
    n_excluded: int
    reason: str = ""


def percent_agreement(patterns: Iterable[Pattern]) -> PatternStat:
    agree = used = excluded = 0
    for codes, count in patterns:
        if len(codes) >= 2:
            used += count
            if len(set(codes)) == 1:
                agree += count
        elif len(codes) == 1:
            excluded += count
    if used == 0:
        return PatternStat(None, 0, excluded, "no unit was rated by two or more raters")
    return PatternStat(agree / used, used, excluded)


def fleiss_kappa(patterns: Iterable[Pattern], n_categories: int) -> PatternStat:
    """``codes`` are positions 0..n_categories-1 on the declared scale."""
    patterns = [(list(codes), count) for codes, count in patterns if len(codes) > 0]
    sizes: Counter[int] = Counter()
    for codes, count in patterns:
        if len(codes) >= 2:
            sizes[len(codes)] += count
    rated = sum(count for _, count in patterns)
    if not sizes:
        return PatternStat(None, 0, rated, "no unit was rated by two or more raters")
    top = max(sizes.values())
    m = max(size for size, n in sizes.items() if n == top)
    kept = [(codes, count) for codes, count in patterns if len(codes) == m]
    n = sum(count for _, count in kept)
    totals = np.zeros(n_categories)
    p_bar = 0.0
    for codes, count in kept:
        per_category = np.bincount(np.asarray(codes, dtype=int), minlength=n_categories)
        totals += count * per_category
        p_bar += count * (float((per_category**2).sum()) - m) / (m * (m - 1))
    p_bar /= n
    p = totals / (n * m)
    p_e = float((p * p).sum())
    if p_e >= 1.0 - 1e-15:
        return PatternStat(None, n, rated - n, "every rating is the same category, so chance agreement is 1")
    return PatternStat((p_bar - p_e) / (1.0 - p_e), n, rated - n)


def krippendorff_alpha(patterns: Iterable[Pattern], level: str, n_categories: int | None = None) -> PatternStat:
    """``level`` nominal / ordinal (codes are positions on the declared scale of ``n_categories``)
    or interval (codes are the numbers themselves)."""
    patterns = [(list(codes), count) for codes, count in patterns if len(codes) > 0]
    excluded = sum(count for codes, count in patterns if len(codes) == 1)
    pairable = [(codes, count) for codes, count in patterns if len(codes) >= 2]
    used = sum(count for _, count in pairable)
    if used == 0:
        return PatternStat(None, 0, excluded, "no unit was rated by two or more raters")
    if level == "interval":
        values = sorted({v for codes, _ in pairable for v in codes})
        index = {v: i for i, v in enumerate(values)}
        k = len(values)
    else:
        if n_categories is None:
            raise ValueError("nominal and ordinal α need the declared scale size")
        values, index, k = list(range(n_categories)), {v: int(v) for codes, _ in pairable for v in codes}, n_categories
    distinct = {v for codes, _ in pairable for v in codes}
    if len(distinct) < 2:
        return PatternStat(
            None, used, excluded, "every pairable rating has the same value, so expected disagreement is 0"
        )
    o = np.zeros((k, k))
    for codes, count in pairable:
        n_u = np.bincount([index[v] for v in codes], minlength=k).astype(float)
        o += count * (np.outer(n_u, n_u) - np.diag(n_u)) / (len(codes) - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta = 1.0 - np.eye(k)
    elif level == "ordinal":
        cum = np.cumsum(n_c)
        delta = np.zeros((k, k))
        for c in range(k):
            for d in range(k):
                lo, hi = min(c, d), max(c, d)
                span = cum[hi] - (cum[lo - 1] if lo > 0 else 0.0)
                delta[c, d] = (span - (n_c[lo] + n_c[hi]) / 2.0) ** 2
    elif level == "interval":
        v = np.asarray(values, dtype=float)
        delta = (v[:, None] - v[None, :]) ** 2
    else:
        raise ValueError(f"unknown level {level!r}")
    d_o = float((o * delta).sum())
    d_e = float((np.outer(n_c, n_c) * delta).sum())
    if d_e <= 0:
        return PatternStat(None, used, excluded, "expected disagreement is 0")
    return PatternStat(1.0 - (n - 1.0) * d_o / d_e, used, excluded)
