"""Per-annotator quality statistics over plain values (docs/guide/quality.md): the share right on items of
known answer with its interval, agreement with the other annotators' consensus, time per item, and the
share right per window of consecutive judgements (drift).

Intervals are Wilson score intervals (``statsmodels.stats.proportion.proportion_confint``, method
``wilson``): Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison of seven
methods", Statistics in Medicine 17, 857-872, method 3. Unlike the Wald interval they stay inside [0, 1] and
keep their coverage for the small counts one annotator's controls give.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from statsmodels.stats.proportion import proportion_confint

INTERVAL_METHOD = "wilson"
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Share:
    """``k`` of ``n`` with its Wilson interval; ``share`` and the interval are None when ``n`` is 0."""

    k: int
    n: int
    share: float | None
    lower: float | None
    upper: float | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "k": self.k, "n": self.n, "share": self.share, "lower": self.lower, "upper": self.upper,
            "interval": f"{INTERVAL_METHOD} {int(CONFIDENCE * 100)}%",
        }


def share(k: int, n: int, *, confidence: float = CONFIDENCE) -> Share:
    """``k`` successes of ``n`` with the Wilson score interval at ``confidence``."""
    if k < 0 or n < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Share(0, 0, None, None, None)
    low, high = proportion_confint(k, n, alpha=1 - confidence, method=INTERVAL_METHOD)
    return Share(k, n, k / n, float(max(low, 0.0)), float(min(high, 1.0)))


def windows(judgements: Sequence[bool], size: int) -> list[dict[str, Any]]:
    """The share right in consecutive windows of ``size`` judgements (in the order given: chronological),
    the last window holding what is left (fewer when the count is not a multiple of ``size``)."""
    if size < 1:
        raise ValueError("a window holds at least one judgement")
    out = []
    for start in range(0, len(judgements), size):
        chunk = judgements[start : start + size]
        out.append({"first": start + 1, "last": start + len(chunk), **share(sum(chunk), len(chunk)).as_dict()})
    return out


def consensus_agreement(
    units: Mapping[Hashable, Mapping[Hashable, Hashable]], rater: Hashable, *, min_others: int = 2
) -> Share:
    """How often ``rater`` gave the other annotators' consensus, their own label left out of it.

    ``units`` maps each unit to ``{rater: canonical answer}`` (answers only: no None). A unit counts when
    ``rater`` answered it and at least ``min_others`` others did, and the others reached a consensus: a
    strict majority of them gave one answer (so with two others, both). Units where the others split are
    left out, as are units the rater did not answer.
    """
    agree = compared = 0
    for answers in units.values():
        if rater not in answers:
            continue
        others = [v for r, v in answers.items() if r != rater]
        if len(others) < min_others:
            continue
        value, top = Counter(others).most_common(1)[0]
        if top * 2 <= len(others):
            continue
        compared += 1
        agree += int(answers[rater] == value)
    return share(agree, compared)


def time_summary(seconds: Sequence[float]) -> dict[str, Any]:
    """Active seconds per submitted item: count, median, mean and the quartiles (None without items)."""
    if not seconds:
        return {"n": 0, "median": None, "mean": None, "q1": None, "q3": None}
    values = np.asarray(seconds, dtype=float)
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return {
        "n": int(values.size), "median": float(median), "mean": float(values.mean()), "q1": float(q1), "q3": float(q3)
    }
