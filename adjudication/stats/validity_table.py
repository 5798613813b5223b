"""A metric's units as a weighted table of distinct (score, label, target) triples. No ORM, no Django.

Every statistic of :func:`adjudication.stats.validity.validity_summary` depends on the units only through the
multiset of their (score, label, correlation target) triples: the AUC and its DeLong variance through how many
positives and negatives have each score, the correlations through the joint counts of scores and targets, the ROC
curve, the Youden threshold and the counts at it through the classes' counts per score. A :class:`ScoreTable` holds
those triples once each with how many units have them: a range of a report's units at a time (the rows a report
adds to its joined rows, adjudication/analysis/joined_rows.py), or a piece of the rows read back in order
(:mod:`adjudication.stats.validity_stream`, which computes the summary from them).

:func:`points_from_units` is the summary's point statistics by validity.py's own functions on the table expanded to
one entry per unit: what the summary uses up to ``agreement.MAX_UNITS_FOR_PACKAGE`` units.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from adjudication.stats import validity as va


@dataclass(frozen=True)
class ScoreTable:
    """Units as their distinct (score, label, target) triples and how many units have each.

    ``scores`` and ``targets`` are finite float64, ``labels`` booleans, ``weights`` int64 and every weight above 0.
    The target is the correlations' human side (an ordinal position, or the label as 0.0/1.0). Rows are unique and
    sorted by (score, label, target) ascending, as ``np.lexsort((targets, labels, scores))`` orders them; -0.0 is
    held as 0.0 (they are one value to every statistic), so a table does not depend on the order units came in."""

    scores: np.ndarray
    labels: np.ndarray
    targets: np.ndarray
    weights: np.ndarray

    @classmethod
    def of(cls, scores: np.ndarray, labels: np.ndarray, targets: np.ndarray | None = None) -> ScoreTable:
        """From one entry per unit; the targets default to the labels as 0.0/1.0.

        A unit whose score, label or target is missing (not finite) is refused with ValueError, not dropped: the
        caller drops such units and passes how many as ``n_excluded`` to the summary
        (validity_stream.validity_summary_rows)."""
        s = np.asarray(scores, dtype=float)
        y = _labels_of(labels)
        t = y.astype(float) if targets is None else np.asarray(targets, dtype=float)
        if s.ndim != 1 or s.shape != y.shape or s.shape != t.shape:
            raise ValueError("scores, labels and targets must be 1-D arrays of the same length")
        if not (np.isfinite(s).all() and np.isfinite(t).all()):
            raise ValueError("scores and targets must be finite: drop and count the units without them first")
        return cls._grouped(s + 0.0, y, t + 0.0, np.ones(s.size, dtype=np.int64))

    @classmethod
    def merged(cls, tables: Sequence[ScoreTable]) -> ScoreTable:
        """One table of several: a triple in several tables is held once, with the sum of their weights."""
        if not tables:
            return cls.empty()
        return cls._grouped(
            np.concatenate([t.scores for t in tables]),
            np.concatenate([t.labels for t in tables]),
            np.concatenate([t.targets for t in tables]),
            np.concatenate([t.weights for t in tables]),
        )

    @classmethod
    def empty(cls) -> ScoreTable:
        return cls(np.zeros(0), np.zeros(0, dtype=bool), np.zeros(0), np.zeros(0, dtype=np.int64))

    @classmethod
    def _grouped(cls, s: np.ndarray, y: np.ndarray, t: np.ndarray, w: np.ndarray) -> ScoreTable:
        """The table of rows (s, y, t), row i held by ``w[i]`` units, not necessarily distinct or sorted."""
        if s.size == 0:
            return cls.empty()
        order = np.lexsort((t, y, s))
        s, y, t, w = s[order], y[order], t[order], np.asarray(w, dtype=np.int64)[order]
        starts = np.flatnonzero(np.r_[True, (s[1:] != s[:-1]) | (y[1:] != y[:-1]) | (t[1:] != t[:-1])])
        return cls(s[starts], y[starts], t[starts], np.add.reduceat(w, starts))

    @property
    def n_units(self) -> int:
        return int(self.weights.sum())

    def expand(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Scores, labels (as float 0.0/1.0) and targets: one entry per unit, in the table's order."""
        s, y, t = self._expanded()
        return s, y.astype(float), t

    def _expanded(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s: np.ndarray = np.repeat(self.scores, self.weights)
        y: np.ndarray = np.repeat(self.labels, self.weights)
        t: np.ndarray = np.repeat(self.targets, self.weights)
        return s, y, t


def _labels_of(labels: np.ndarray) -> np.ndarray:
    """Booleans as given; numbers must be 0 or 1 (a missing label is refused like a missing score)."""
    given = np.asarray(labels)
    if given.dtype == bool:
        return given
    as_float = given.astype(float)
    if not np.isin(as_float, (0.0, 1.0)).all():
        raise ValueError("labels must be 0 or 1 (drop and count the units without one first)")
    y: np.ndarray = as_float == 1.0
    return y


def points_from_units(table: ScoreTable, ordinal: bool, n_excluded: int) -> dict[str, Any]:
    """validity.py's functions on one entry per unit; the units the caller dropped are counted in."""
    s, y, t = table._expanded()
    target = t if ordinal else y.astype(float)
    del t
    estimates = {
        "auc": va.roc_auc(s, y),
        "pearson": va.pearson(s, target),
        "spearman": va.spearman(s, target),
        "kendall": va.kendall(s, target),
    }
    for estimate in estimates.values():
        estimate.n_excluded = n_excluded
    youden = va.youden_threshold(s, y)
    at_youden = va.precision_recall_f1(s, y, youden["threshold"]) if youden else None
    if at_youden is not None:
        for key in ("precision", "recall", "f1"):
            at_youden[key]["n_excluded_units"] = n_excluded
    return {**estimates, "youden": youden, "at_youden_threshold": at_youden, "roc": va.roc_points(s, y)}
