"""The validity summary from a weighted table of distinct (score, label, target) triples. No ORM, no Django.

Every statistic of :func:`adjudication.stats.validity.validity_summary` depends on the units only through the
multiset of their (score, label, correlation target) triples: the AUC and its DeLong variance through how many
positives and negatives have each score, the correlations through the joint counts of scores and targets, the ROC
curve, the Youden threshold and the counts at it through the classes' counts per score. A :class:`ScoreTable` holds
those triples once each with how many units have them, so that a report can read its units a range at a time and
keep only the table (its size is the number of distinct triples, not of units).

:func:`validity_summary_table` computes the summary from it in two regimes. Up to
``agreement.MAX_UNITS_FOR_PACKAGE`` units (read at call time, as agreement's own regimes read it) the table is
expanded to one entry per unit and validity.py's functions compute every point statistic, as they do today. Past
it, the same statistics come from the table with weighted formulas, tested equal to those functions to rounding:
nothing of the size of the units is held. The AUC's bootstrap is always computed from the table (the same draws in
both regimes): the positives and the negatives are resampled separately, each stratum as a multinomial draw over
its distinct scores, which is what drawing its units with replacement and counting each score gives.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats
from sklearn.metrics import roc_curve

from adjudication.stats import agreement as ag
from adjudication.stats import validity as va
from adjudication.stats.agreement import Z95, Estimate, Progress, percentile_ci

# Rows a unit past which the point statistics are computed from the expanded table even past
# agreement.MAX_UNITS_FOR_PACKAGE units: the table's formulas take 30 to 110 bytes a row at their peak (Kendall's
# merge sort, the ROC's rows of each class), validity.py's functions 30 to 50 bytes a unit, so a table of nearly a row
# a unit (a continuous metric) costs less expanded.
MAX_ROWS_PER_UNIT = 0.5


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
        caller drops such units and passes how many as ``n_excluded`` to :func:`validity_summary_table`."""
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


@dataclass(frozen=True)
class _ByScore:
    """The table's distinct scores (ascending) and how many positives and negatives have each (int64)."""

    scores: np.ndarray
    pos: np.ndarray
    neg: np.ndarray

    @classmethod
    def of(cls, table: ScoreTable) -> _ByScore:
        if table.scores.size == 0:
            return cls(np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        s = table.scores
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        pos = np.add.reduceat(np.where(table.labels, table.weights, 0), starts)
        neg = np.add.reduceat(np.where(table.labels, 0, table.weights), starts)
        return cls(s[starts], pos, neg)

    @property
    def m(self) -> int:
        return int(self.pos.sum())

    @property
    def n(self) -> int:
        return int(self.neg.sum())


# --- the summary -----------------------------------------------------------------------------


def validity_summary_table(
    table: ScoreTable,
    *,
    ordinal: bool = False,
    n_excluded: int = 0,
    n_boot: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """:func:`adjudication.stats.validity.validity_summary`'s dict for one metric, from the table.

    The correlations use the table's targets when ``ordinal``, else the labels as 0/1 (what validity_summary does
    without ``ordinal_target``). ``n_excluded`` is the number of units the caller dropped before building the
    table (no score, label or target); it is reported as validity_summary reports its own.

    Up to ``agreement.MAX_UNITS_FOR_PACKAGE`` units the point statistics are validity.py's, computed on the
    expanded table: the numbers validity_summary gives for the units in the table's order, bit for bit (for units
    in another order sums taken in another order can differ in the last bits). Past it they are computed from the
    table (:func:`_points_from_table`), unless the table has more than ``MAX_ROWS_PER_UNIT`` rows a unit (a metric
    with a distinct score for most units): the formulas' arrays of rows would then be larger than validity.py's
    arrays of units, and the table is expanded as below the limit. The AUC's bootstrap is always drawn from the table
    (:func:`_auc_bootstrap_table`): a stratified bootstrap like validity's, whose draws are not the same, so its
    interval differs from validity_summary's within Monte Carlo error."""
    n = table.n_units
    n_pos = int(table.weights[table.labels].sum())
    out: dict[str, Any] = {"n": n, "n_pos": n_pos, "n_neg": n - n_pos, "n_excluded_units": n_excluded}
    by_score: _ByScore | None = None  # built when needed: expanded, the table's units are held once at a time
    if n <= ag.MAX_UNITS_FOR_PACKAGE or table.scores.size > MAX_ROWS_PER_UNIT * n:
        points = _points_from_package(table, ordinal, n_excluded)
    else:
        by_score = _ByScore.of(table)
        points = _points_from_table(table, by_score, ordinal, n_excluded)
    out["auc"] = va.auc_entry(
        points["auc"], n_boot, seed,
        lambda: _auc_bootstrap_table(by_score or _ByScore.of(table), n_boot=n_boot, seed=seed, progress=progress),
    )
    for name in ("pearson", "spearman", "kendall"):
        out[name] = points[name].as_dict()
    out["youden"] = points["youden"]
    out["at_youden_threshold"] = points["at_youden_threshold"]
    out["roc"] = points["roc"]
    return out


def _points_from_package(table: ScoreTable, ordinal: bool, n_excluded: int) -> dict[str, Any]:
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


def _points_from_table(table: ScoreTable, by_score: _ByScore, ordinal: bool, n_excluded: int) -> dict[str, Any]:
    """The point statistics from the table alone: arrays of its rows, none of its units."""
    if ordinal:
        x, target, w = table.scores, table.targets, table.weights
    else:
        # The labels as 0/1: the rows of one score and label (several targets) are one row here.
        x, target, w = _by_score_rows(by_score)
    curve = _roc_from_counts(by_score)
    youden = va.youden_from_curve(*curve) if curve else None
    return {
        "auc": _auc_from_counts(by_score, n_excluded),
        "pearson": _pearson_from_table(x, target, w, n_excluded),
        "spearman": _spearman_from_table(x, target, w, n_excluded),
        "kendall": _kendall_from_table(x, target, w, n_excluded),
        "youden": youden,
        "at_youden_threshold": _prf_from_counts(by_score, youden["threshold"], n_excluded) if youden else None,
        "roc": va.roc_from_curve(*curve) if curve else None,
    }


def _by_score_rows(by_score: _ByScore) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows (score, label as 0.0/1.0, units) of the classes' counts per score, rows with no unit left out."""
    scores = np.repeat(by_score.scores, 2)
    labels = np.tile(np.array([0.0, 1.0]), by_score.scores.size)
    counts = np.column_stack([by_score.neg, by_score.pos]).ravel()
    held = counts > 0
    return scores[held], labels[held], counts[held]


# --- AUC -------------------------------------------------------------------------------------


def _class_check(m: int, n: int, n_excluded: int) -> Estimate | None:
    """validity._class_check from the classes' sizes."""
    if m == 0 or n == 0:
        which = "positive" if m == 0 else "negative"
        return Estimate.undefined(
            f"AUC needs both classes; there is no {which} unit", n_units=m + n, n_excluded=n_excluded, n_pos=m, n_neg=n
        )
    return None


def _auc_from_counts(by_score: _ByScore, n_excluded: int) -> Estimate:
    """ROC AUC with DeLong's (1988) standard error from the classes' counts per distinct score.

    With Sun & Xu's (2014) midranks, a positive's V10 is (negatives below it + half those tied with it) / n and a
    negative's V01 is 1 − (positives below it + half those tied) / m: the same for every unit of one score and
    class, so their variances (ddof 1, as np.cov in validity._delong_cov) are the counts-weighted variances of the
    distinct values. 2U = Σ over scores of positives × (2·negatives below + negatives tied) is an exact integer,
    the sum validity._delong_components takes over positives one by one: the AUC is the same float, bit for bit."""
    m, n = by_score.m, by_score.n
    undefined = _class_check(m, n, n_excluded)
    if undefined:
        return undefined
    pos, neg = by_score.pos, by_score.neg
    twice_pos = 2 * (np.cumsum(neg) - neg) + neg
    twice_neg = 2 * (np.cumsum(pos) - pos) + pos
    auc = float((np.sum(pos * twice_pos) / 2.0) / (m * n))
    has_pos, has_neg = pos > 0, neg > 0
    v10 = (twice_pos[has_pos] / 2.0) / n
    v01 = 1.0 - (twice_neg[has_neg] / 2.0) / m
    s10 = float(np.cov(v10, fweights=pos[has_pos])) if m > 1 else 0.0
    s01 = float(np.cov(v01, fweights=neg[has_neg])) if n > 1 else 0.0
    se = math.sqrt(max(s10 / m + s01 / n, 0.0))
    return Estimate(
        value=auc,
        n_units=m + n,
        n_excluded=n_excluded,
        se=se,
        ci95=(max(0.0, auc - Z95 * se), min(1.0, auc + Z95 * se)),
        ci_method="DeLong",
        extra={"n_pos": m, "n_neg": n},
    )


# Cells a distinct score costs a replicate: the positives' and negatives' drawn counts, the negatives' cumulative
# sums and the positives' two lookups into them.
_AUC_ARRAYS = 4


def _auc_bootstrap_table(
    by_score: _ByScore, *, n_boot: int, seed: int, progress: Progress | None = None
) -> tuple[tuple[float, float] | None, int]:
    """Stratified percentile bootstrap interval for the AUC, and how many replicates were undefined (none: every
    replicate has both classes), from the classes' counts per distinct score.

    A resample draws m positives and n negatives with replacement (stratified, as validity.auc_bootstrap_ci and
    pROC do); counting how many of the drawn positives have each distinct score is a multinomial draw of m over the
    positives' distinct scores with probabilities count / m, likewise for the negatives (see
    agreement.pattern_resamples), and the AUC of the resample depends on nothing else. A replicate's 2U is
    Σ over the positives' distinct scores of drawn × (2·negatives drawn below + negatives drawn tied), an exact
    int64, halved and divided by m·n as validity._AucCounter does: the AUC roc_auc gives on the resample's units.

    The seed's stream holds, batch after batch of BOOT_BATCH, the batch's positives' rows
    (``rng.multinomial(m, pos / m, size)``) and then its negatives' rows. Blocks of rows hold rows × distinct scores
    × _AUC_ARRAYS ≤ BOOT_CELLS (one row at least); where a batch takes several blocks, a copy of the generator is
    moved past the batch's positives and draws the negatives, as validity._stratified_blocks does. numpy's
    multinomial draws its rows one after another from the stream, so the replicates do not depend on the blocks.
    Progress after each batch."""
    if by_score.m == 0 or by_score.n == 0:
        return None, 0
    return percentile_ci(_auc_replicates(by_score, n_boot=n_boot, seed=seed, progress=progress))


def _auc_replicates(by_score: _ByScore, *, n_boot: int, seed: int, progress: Progress | None) -> np.ndarray:
    """The bootstrap's replicate AUCs, in the order they are drawn (both classes present)."""
    m, n = by_score.m, by_score.n
    has_pos, has_neg = by_score.pos > 0, by_score.neg > 0
    pos_scores, neg_scores = by_score.scores[has_pos], by_score.scores[has_neg]
    pos_p = by_score.pos[has_pos] / m
    neg_p = by_score.neg[has_neg] / n
    lo = np.searchsorted(neg_scores, pos_scores, side="left")
    hi = np.searchsorted(neg_scores, pos_scores, side="right")
    step = ag.block_rows(pos_scores.size + neg_scores.size, _AUC_ARRAYS)
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    done = 0
    while done < n_boot:
        size = min(ag.BOOT_BATCH, n_boot - done)
        for drawn_pos, drawn_neg in _stratified_draws(rng, (m, pos_p), (n, neg_p), size, step):
            below = np.zeros((drawn_neg.shape[0], neg_scores.size + 1), dtype=np.int64)
            np.cumsum(drawn_neg, axis=1, out=below[:, 1:])
            two_u: np.ndarray = np.einsum("rp,rp->r", drawn_pos, below[:, lo] + below[:, hi])
            out.append((two_u / 2.0) / (m * n))
        done += size
        if progress is not None:
            progress(done, n_boot)
    replicates: np.ndarray = np.concatenate(out) if out else np.zeros(0)
    return replicates


def _stratified_draws(
    rng: np.random.Generator, positives: tuple[int, np.ndarray], negatives: tuple[int, np.ndarray], size: int, step: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """One batch of ``size`` rows: blocks of the positives' multinomial rows and the same rows of the negatives'.

    Leaves ``rng`` past the batch (the positives' rows, then the negatives'), whatever ``step``."""
    if step >= size:
        yield rng.multinomial(*positives, size=size), rng.multinomial(*negatives, size=size)
        return
    ahead = copy.deepcopy(rng)
    for _ in _multinomial_rows(ahead, positives, size, step):
        pass
    yield from zip(
        _multinomial_rows(rng, positives, size, step), _multinomial_rows(ahead, negatives, size, step), strict=True
    )
    # The copy is where the batch ends: move the caller's generator there.
    rng.bit_generator.state = ahead.bit_generator.state


def _multinomial_rows(
    rng: np.random.Generator, stratum: tuple[int, np.ndarray], rows: int, step: int
) -> Iterator[np.ndarray]:
    for start in range(0, rows, step):
        yield rng.multinomial(*stratum, size=min(step, rows - start))


# --- correlations ----------------------------------------------------------------------------


def _variance_check(x: np.ndarray, y: np.ndarray, n: int, n_excluded: int, minimum: int) -> Estimate | None:
    """validity._variance_check from the rows (values x and y, held by n units in all)."""
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


def _weighted_pearsonr(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Pearson's r of rows held by ``w`` units each and its two-sided p-value, as scipy.stats.pearsonr computes
    them on the units: r from the centred sums, clipped to [−1, 1]; p from r's exact null distribution under
    independent normal samples, the beta distribution on (−1, 1) with a = b = n/2 − 1 (pearsonr's docs), two-sided
    as 2·sf(|r|)."""
    weights = w.astype(float)
    n = float(weights.sum())
    xm = x - (weights @ x) / n
    ym = y - (weights @ y) / n
    r = float(np.clip((weights @ (xm * ym)) / math.sqrt(weights @ (xm * xm)) / math.sqrt(weights @ (ym * ym)), -1, 1))
    ab = n / 2 - 1
    p = float(2 * special.betaincc(ab, ab, (abs(r) + 1.0) / 2.0))
    return r, p


def _pearson_from_table(x: np.ndarray, y: np.ndarray, w: np.ndarray, n_excluded: int) -> Estimate:
    """validity.pearson from the rows: r, its p-value and the Fisher-z interval (SE 1/√(n−3), the normal quantile
    of a 95% two-sided level) as scipy's PearsonRResult.confidence_interval(0.95) computes them."""
    n = int(w.sum())
    bad = _variance_check(x, y, n, n_excluded, 4)
    if bad:
        return bad
    r, p = _weighted_pearsonr(x, y, w)
    with np.errstate(divide="ignore"):
        zr = np.arctanh(r)
    se = np.sqrt(1 / (n - 3.0))
    h = special.ndtri(0.5 + 0.95 / 2)
    return Estimate(
        value=r,
        n_units=n,
        n_excluded=n_excluded,
        ci95=(float(np.tanh(zr - h * se)), float(np.tanh(zr + h * se))),
        ci_method="Fisher z",
        extra={"p_value": p},
    )


def _midranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each row's midrank among the units (scipy's rankdata, method "average"): with c_before and c_end the units
    below the row's value and at or below it, 0.5·(c_end + c_before + 1), rankdata's own expression."""
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.cumsum(np.add.reduceat(weights[order], starts))
    befores = np.r_[0, ends[:-1]]
    group = np.cumsum(np.r_[True, sorted_values[1:] != sorted_values[:-1]]) - 1
    ranks = np.empty(values.size)
    ranks[order] = 0.5 * (ends + befores + 1)[group]
    return ranks


def _spearman_from_table(x: np.ndarray, y: np.ndarray, w: np.ndarray, n_excluded: int) -> Estimate:
    """validity.spearman from the rows: Pearson's r of the midranks (weighted), pearsonr's p-value of it, and the
    Fisher-z interval with Bonett & Wright's (2000) SE."""
    n = int(w.sum())
    bad = _variance_check(x, y, n, n_excluded, 4)
    if bad:
        return bad
    r, p = _weighted_pearsonr(_midranks(x, w), _midranks(y, w), w)
    return va.spearman_estimate(r, p, n, n_excluded)


def _tie_sums(counts: np.ndarray) -> tuple[int, int, int]:
    """scipy kendalltau's count_rank_tie from the counts of the distinct values: Σ c(c−1)/2, Σ c(c−1)(c−2) and
    Σ c(c−1)(2c+5), the last two in float64 as scipy sums them."""
    cnt = counts[counts > 1]
    return (
        int((cnt * (cnt - 1) // 2).sum()),
        int((cnt * (cnt - 1.0) * (cnt - 2)).sum()),
        int((cnt * (cnt - 1.0) * (2 * cnt + 5)).sum()),
    )


def _weighted_inversions(ranks: np.ndarray, weights: np.ndarray) -> int:
    """Σ w_i·w_j over the row pairs i < j with ranks[i] > ranks[j] (``ranks`` non-negative integers): the
    discordant pairs of units when the rows are in ascending order of the other variable (ties in it ordered by
    ascending rank, so that no tied pair counts).

    A bottom-up merge sort, each level vectorised: with the rows ordered by rank inside blocks of ``width``
    positions, a right block's row is discordant with the rows of its left neighbour that rank above it, read off
    the left block's cumulative weights by searchsorted; the pair of blocks is then one block, sorted by rank.
    log2(rows) levels of a sort of the rows: O(rows) memory."""
    size = int(ranks.size)
    if size < 2:
        return 0
    k = int(ranks.max()) + 1
    perm = np.arange(size)
    total = 0
    width = 1
    while width < size:
        pair = perm // (2 * width)
        right = (perm // width) % 2 == 1
        key = pair * k + ranks[perm]
        left_keys = key[~right]
        cum = np.zeros(left_keys.size + 1, dtype=np.int64)
        np.cumsum(weights[perm[~right]], out=cum[1:])
        pair_end = np.searchsorted(left_keys, pair[right] * k + k, side="left")
        at_or_below = np.searchsorted(left_keys, key[right], side="right")
        total += int(np.sum(weights[perm[right]] * (cum[pair_end] - cum[at_or_below])))
        perm = perm[np.argsort(key, kind="stable")]
        width *= 2
    return total


def _kendall_from_table(x: np.ndarray, y: np.ndarray, w: np.ndarray, n_excluded: int) -> Estimate:
    """validity.kendall from the rows: τ-b and its p-value as scipy.stats.kendalltau computes them, with the
    Fisher-z interval of Fieller, Hartley & Pearson's (1957) SE √(0.437/(n−4)).

    kendalltau (scipy 1.17, _stats_py.py) counts the discordant pairs, the pairs tied in x (xtie), in y (ytie) and in
    both (ntie): con − dis = tot − xtie − ytie + ntie − 2·dis and τ-b = (con − dis)/√(tot − xtie)/√(tot − ytie), all
    from counts of units here. Its p-value ("auto") is the normal approximation with the tie-corrected variance
    (its reference [3]) unless there are no ties and n ≤ 33 or nearly every pair agrees (or disagrees), where it is
    exact: then no row has two units, so kendalltau itself is called on the rows."""
    n = int(w.sum())
    bad = _variance_check(x, y, n, n_excluded, 5)
    if bad:
        return bad
    order = np.lexsort((y, x))
    x, y, w = x[order], y[order], w[order]
    pair_starts = np.flatnonzero(np.r_[True, (x[1:] != x[:-1]) | (y[1:] != y[:-1])])
    x, y, w = x[pair_starts], y[pair_starts], np.add.reduceat(w, pair_starts)
    ntie = int((w * (w - 1) // 2).sum())
    xtie, x0, x1 = _tie_sums(np.add.reduceat(w, np.flatnonzero(np.r_[True, x[1:] != x[:-1]])))
    distinct_y, y_ranks = np.unique(y, return_inverse=True)
    y_counts = np.zeros(distinct_y.size, dtype=np.int64)
    np.add.at(y_counts, y_ranks, w)
    ytie, y0, y1 = _tie_sums(y_counts)
    tot = n * (n - 1) // 2
    dis = _weighted_inversions(y_ranks.astype(np.int64), w)
    if xtie == 0 and ytie == 0 and (n <= 33 or min(dis, tot - dis) <= 1):
        res = stats.kendalltau(x, y)
        tau, p = float(res.statistic), float(res.pvalue)
    else:
        con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
        tau = float(min(1.0, max(-1.0, con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie))))
        pairs = n * (n - 1.0)
        var = (pairs * (2 * n + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / pairs + x0 * y0 / (9 * pairs * (n - 2))
        p = float(2 * special.ndtr(-abs(con_minus_dis / np.sqrt(var))))
    return va.kendall_estimate(tau, p, n, n_excluded)


# --- the ROC curve and the Youden threshold --------------------------------------------------


def _roc_from_counts(by_score: _ByScore) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """scikit-learn's roc_curve of the units, from the classes' counts per score as sample weights.

    roc_curve sums the weights of each class down the scores (float64 cumulative sums: exact for integer counts
    below 2**53) and reads them at each distinct score's last row, which are the units' counts; dropping collinear
    points and dividing by the totals then see the same numbers as on the units: the same curve, bit for bit."""
    if by_score.m == 0 or by_score.n == 0:
        return None
    scores, labels, counts = _by_score_rows(by_score)
    fpr, tpr, thresholds = roc_curve(labels, scores, sample_weight=counts)
    return fpr, tpr, thresholds


def _prf_from_counts(by_score: _ByScore, threshold: float, n_excluded: int) -> dict[str, Any]:
    """validity.precision_recall_f1 of ``score ≥ threshold`` from the classes' counts per score."""
    predicted = by_score.scores >= threshold
    tp = int(by_score.pos[predicted].sum())
    fp = int(by_score.neg[predicted].sum())
    fn = by_score.m - tp
    tn = by_score.n - fp
    return va.prf_from_counts(threshold, tp, fp, fn, tn, n_excluded)
