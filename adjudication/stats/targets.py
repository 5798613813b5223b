"""Human targets from coded ratings: the pool's majority per unit, a binary target from scale positions,
the default positive class, and the coding of one stored answer as a number or a scale position.

Plain numpy and Python values, no Django: :mod:`adjudication.analysis.loading` reads the labels and
questions and calls these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from adjudication.stats import agreement as ag


def majority(codes: np.ndarray, n_categories: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The strict plurality of each unit of a units × raters matrix of codes ``0..n_categories-1``
    (NaN: no rating). Returns the indices of the units that have one, their winning codes (in the same
    order), and how many rated units were left out because two or more codes tie for the most votes."""
    return majority_from_counts(ag.category_counts(codes, n_categories))


def majority_from_entries(ratings: ag.SparseRatings, n_categories: int) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`majority` of ``ratings.dense()`` from one entry per rating, without the matrix."""
    return majority_from_counts(category_counts_from_entries(ratings, n_categories))


def category_counts_from_entries(ratings: ag.SparseRatings, n_categories: int) -> np.ndarray:
    """:func:`ag.category_counts` of ``ratings.dense()`` (units × categories) from the entries."""
    cells = ratings.unit * n_categories + ratings.positions(n_categories)
    return np.bincount(cells, minlength=ratings.n_units * n_categories).reshape(ratings.n_units, n_categories)


def majority_from_counts(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`majority` from the units × categories count table."""
    if counts.shape[0] == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64), 0
    top = counts.max(axis=1)
    winners = (counts == top[:, None]).sum(axis=1)
    mode = counts.argmax(axis=1)
    keep = np.nonzero((top > 0) & (winners == 1))[0]
    ties = int(((top > 0) & (winners > 1)).sum())
    return keep, mode[keep], ties


def binary(positions: np.ndarray, positive: int, *, at_least: bool = False) -> np.ndarray:
    """1.0 where a position is the positive one (with ``at_least``: that one or any later one, for
    ordinal scales), else 0.0; NaN stays NaN."""
    hit = positions >= positive if at_least else positions == positive
    return np.where(np.isnan(positions), np.nan, hit.astype(float))


def default_positive(options: Sequence[str], *, ordinal: bool) -> str:
    """The first option, or for an ordinal scale the middle one (the upper half counts as positive)."""
    return options[len(options) // 2] if ordinal else options[0]


def number_or_nan(value: Any) -> float:
    """A stored answer as a finite number, else NaN (booleans, lists, text that is no number, inf)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return np.nan
    try:
        x = float(value)
    except ValueError:
        return np.nan
    return x if np.isfinite(x) else np.nan


def scale_position(value: Any, options: Sequence[str] | None) -> float | None:
    """The position of a stored answer on a categorical scale (``options``), or, without options, the
    answer as a number; None when it is neither."""
    if options is not None:
        try:
            return float(list(options).index(str(value)))
        except ValueError:
            return None
    x = number_or_nan(value)
    return None if np.isnan(x) else x
