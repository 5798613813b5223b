"""The validity summary's statistics from a re-readable stream of a score table's rows. No ORM, no Django.

A :class:`~adjudication.stats.validity_table.ScoreTable` holds a metric's units as distinct (score, label, target)
rows; for a continuous metric that is a row a unit. Here the rows are not held: a :class:`RowSource` gives them in
ascending (score, label, target) order a piece at a time (a database table read back a page at a time), as often
as asked, and every statistic of the summary is computed from a few passes over them, in memory that does not grow
with the rows: a piece, a bootstrap pass's replicates × its chunks, and the targets' distinct values.

* :func:`stream_totals`, a first pass: the classes' sizes, the distinct scores, the correlation target's distinct
  values and their units (its midranks and ties), the ROC curve's points, the bootstrap's chunks' classes.
* :func:`stream_points`, one more pass: the AUC with DeLong's SE, Pearson's, Spearman's and Kendall's correlations,
  the ROC curve, the Youden threshold and the counts at it: the numbers validity.validity_summary gives on the
  units (validity_table.points_from_units), the AUC, the curve and the threshold bit for bit, the rest to
  rounding (the same formulas, sums taken in another order).
* :func:`auc_bootstrap_stream`, a pass per BOOT_PASS_REPLICATES replicates: a stratified bootstrap of the units,
  distributed as validity.auc_bootstrap_ci's, drawn chunk by chunk (its draws are not validity's nor
  validity_table's: its interval differs from theirs within Monte Carlo error).

Almost every statistic needs the classes' counts per score, and the rows of one score may be split between pieces:
:func:`_blocks` regroups the pieces into blocks of whole scores, carrying the last score's rows of a piece over to
the next.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np
from scipy import special, stats

from adjudication.stats import agreement as ag
from adjudication.stats import validity as va
from adjudication.stats import validity_table as vt
from adjudication.stats.agreement import Estimate, Progress, percentile_ci
from adjudication.stats.validity_table import ScoreTable

# Rows in a piece of TableRows (a database page: the caller's own RowSource chooses its own).
PIECE_ROWS = 20_000
# Distinct scores in a chunk of the bootstrap: a chunk's positives and negatives are drawn per distinct score for a
# pass's replicates at once, a few arrays of BOOT_PASS_REPLICATES × BOOT_CHUNK_SCORES counts (a few MiB).
BOOT_CHUNK_SCORES = 4096
# Replicates drawn per pass over the rows: a pass holds each replicate's draws per chunk (BOOT_PASS_REPLICATES ×
# chunks counts) and the chunk it is reading.
BOOT_PASS_REPLICATES = 200
# Distinct values of the correlation target: Kendall's τ counts per target value the units read so far, and
# Spearman's ρ needs each value's midrank, so that they are held whole. An ordinal target is a question's options'
# positions (a handful); validity reports refuse a question of more options than this.
MAX_TARGET_LEVELS = 1024
# Replicates whose 2U a chunk's draws are summed into at a time.
_TWICE_U_ROWS = 32
# Score groups × target values Kendall's counts take at a time (an int64 array of 512 KiB, a few of them).
_KENDALL_CELLS = 1 << 16


class RowSource(Protocol):
    def pieces(self) -> Iterator[ScoreTable]:
        """The table's rows in ascending (score, label, target) order, unique, weights > 0, as ScoreTables
        (validity_table.ScoreTable) of some rows each; the rows of one score MAY be split between consecutive
        pieces (and a piece may even be empty). Every call starts again from the first row."""
        ...


class TableRows:
    """A :class:`RowSource` over a ScoreTable in memory: pieces of ``rows`` rows (views of its arrays, no copy)."""

    def __init__(self, table: ScoreTable, rows: int = PIECE_ROWS) -> None:
        if rows < 1:
            raise ValueError("a piece holds at least one row")
        self.table = table
        self.rows = rows

    def pieces(self) -> Iterator[ScoreTable]:
        t = self.table
        for start in range(0, t.scores.size, self.rows):
            end = start + self.rows
            yield ScoreTable(t.scores[start:end], t.labels[start:end], t.targets[start:end], t.weights[start:end])


# --- whole scores ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Block:
    """Consecutive rows holding every row of each of their scores, and the classes' units per distinct score.

    ``starts`` are the rows where each distinct score begins, ``scores`` the distinct scores (ascending),
    ``pos`` and ``neg`` (int64) how many positive and negative units have each; ``group`` is each row's distinct
    score (0-based within the block)."""

    rows: ScoreTable
    starts: np.ndarray
    scores: np.ndarray
    pos: np.ndarray
    neg: np.ndarray

    @classmethod
    def of(cls, rows: ScoreTable) -> _Block:
        s = rows.scores
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        pos = np.add.reduceat(np.where(rows.labels, rows.weights, 0), starts)
        neg = np.add.reduceat(np.where(rows.labels, 0, rows.weights), starts)
        return cls(rows, starts, s[starts], pos, neg)

    @property
    def units(self) -> np.ndarray:
        """Units per distinct score."""
        out: np.ndarray = self.pos + self.neg
        return out

    @property
    def group(self) -> np.ndarray:
        group: np.ndarray = np.repeat(np.arange(self.starts.size), np.diff(np.r_[self.starts, self.rows.scores.size]))
        return group


def _concat(a: ScoreTable, b: ScoreTable) -> ScoreTable:
    return ScoreTable(
        np.concatenate([a.scores, b.scores]),
        np.concatenate([a.labels, b.labels]),
        np.concatenate([a.targets, b.targets]),
        np.concatenate([a.weights, b.weights]),
    )


def _rows(t: ScoreTable, start: int, end: int | None = None) -> ScoreTable:
    return ScoreTable(t.scores[start:end], t.labels[start:end], t.targets[start:end], t.weights[start:end])


def _check_order(rows: ScoreTable) -> None:
    """Refuse rows that are not strictly ascending in (score, label, target), or with a weight not above 0 (a
    NaN fails the order too): the statistics count a score's units from consecutive rows."""
    s, y, t = rows.scores, rows.labels.astype(np.int8), rows.targets
    ascending = (s[1:] > s[:-1]) | ((s[1:] == s[:-1]) & ((y[1:] > y[:-1]) | ((y[1:] == y[:-1]) & (t[1:] > t[:-1]))))
    if not ascending.all() or not np.isfinite(s).all() or not np.isfinite(t).all():
        raise ValueError("the rows must be finite, unique and in ascending (score, label, target) order")
    if (rows.weights <= 0).any():
        raise ValueError("every row must be held by at least one unit")


def _blocks(source: RowSource) -> Iterator[_Block]:
    """The source's rows as blocks of whole scores, in order: a piece's rows but those of its last score, which
    are carried over to the next piece's (a block holds a piece and the rows of one score at most). Empty pieces
    are skipped; the order of the rows is checked, across pieces too."""
    carry: ScoreTable | None = None
    for piece in source.pieces():
        if piece.scores.size == 0:
            continue
        rows = piece if carry is None else _concat(carry, piece)
        _check_order(rows if carry is None else _rows(rows, carry.scores.size - 1))
        s = rows.scores
        cut = int(np.searchsorted(s, s[-1], side="left"))
        if cut > 0:
            yield _Block.of(_rows(rows, 0, cut))
        carry = _rows(rows, cut)
    if carry is not None:
        yield _Block.of(carry)


class _Chunks:
    """Distinct scores (with their positives and negatives) regrouped into the bootstrap's chunks: consecutive
    runs of ``size`` distinct scores in ascending order, the last one shorter. :meth:`feed` takes a block's
    distinct scores and yields the chunks they complete, :meth:`finish` the last one."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.held: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.count = 0

    def feed(self, scores: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> Iterator[tuple[np.ndarray, ...]]:
        at = 0
        while at < scores.size:
            take = min(self.size - self.count, scores.size - at)
            self.held.append((scores[at : at + take], pos[at : at + take], neg[at : at + take]))
            self.count += take
            at += take
            if self.count == self.size:
                yield self._flush()

    def finish(self) -> Iterator[tuple[np.ndarray, ...]]:
        if self.count:
            yield self._flush()

    def _flush(self) -> tuple[np.ndarray, ...]:
        out = tuple(np.concatenate(parts) for parts in zip(*self.held, strict=True))
        self.held, self.count = [], 0
        return out


def _roc_kept(pos: np.ndarray, neg: np.ndarray, before: tuple[int, int] | None) -> np.ndarray:
    """Which of a block's distinct scores are points of roc_curve's curve once drop_intermediate has dropped the
    collinear ones, but for the last score of all (always a point: the caller sets it).

    roc_curve (scikit-learn 1.9, drop_intermediate) keeps, in descending score order, the first and last points
    and each point k where ``np.diff(fps, 2)`` or ``np.diff(tps, 2)`` is not 0; the cumulative counts' second
    difference at k is the next (lower) score's units of the class less point k's own, so point k is kept when the
    score below it has other (positives, negatives) counts than it. In ascending order: a score is a point when it
    is the lowest (``before`` None) or its counts differ from those of the score below it (``before`` for the
    block's first). With 2 distinct scores or fewer both are the first or the last: every point is kept, as
    roc_curve keeps them (it drops only past 2). The counts are integers, exact in float64 as roc_curve sums them."""
    changed = np.empty(pos.size, dtype=bool)
    changed[0] = before is None or (int(pos[0]), int(neg[0])) != before
    changed[1:] = (pos[1:] != pos[:-1]) | (neg[1:] != neg[:-1])
    return changed


# --- the first pass ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamTotals:
    """What a first pass over the rows finds, which the other passes need before they start.

    ``levels`` are the correlation target's distinct values (ascending; the targets when ``ordinal``, else the
    labels as 0.0/1.0) and ``level_counts`` the units having each; ``curve_points`` the points of roc_curve's curve
    after drop_intermediate, the (0, 0) point at an infinite threshold not counted (0 when a class is empty);
    ``chunk_pos`` and ``chunk_neg`` the positives and negatives of each bootstrap chunk of ``chunk_scores``
    distinct scores."""

    ordinal: bool
    n: int
    n_pos: int
    n_scores: int
    score_range: tuple[float, float]
    levels: np.ndarray
    level_counts: np.ndarray
    curve_points: int
    chunk_scores: int
    chunk_pos: np.ndarray
    chunk_neg: np.ndarray

    @property
    def n_neg(self) -> int:
        return self.n - self.n_pos


def stream_totals(source: RowSource, *, ordinal: bool = True) -> StreamTotals:
    """One pass over the rows: the totals every statistic needs first (:class:`StreamTotals`).

    With ``ordinal`` the targets are the correlations' human side and their distinct values are counted: more than
    MAX_TARGET_LEVELS raise ValueError (as soon as they are read). Without it the labels are, and the targets are
    not looked at. The bootstrap's chunks are BOOT_CHUNK_SCORES distinct scores (read at call time)."""
    chunks = _Chunks(BOOT_CHUNK_SCORES)
    chunk_pos: list[int] = []
    chunk_neg: list[int] = []
    n = n_pos = n_scores = kept = 0
    low = high = 0.0
    before: tuple[int, int] | None = None
    last_kept = False
    levels = np.zeros(0)
    counts = np.zeros(0, dtype=np.int64)
    for block in _blocks(source):
        if n_scores == 0:
            low = float(block.scores[0])
        high = float(block.scores[-1])
        n_scores += block.scores.size
        n_pos += int(block.pos.sum())
        n += int(block.pos.sum() + block.neg.sum())
        mask = _roc_kept(block.pos, block.neg, before)
        kept += int(mask.sum())
        last_kept = bool(mask[-1])
        before = (int(block.pos[-1]), int(block.neg[-1]))
        if ordinal:
            levels, counts = _merge_levels(levels, counts, block.rows.targets, block.rows.weights)
        for chunk in chunks.feed(block.scores, block.pos, block.neg):
            chunk_pos.append(int(chunk[1].sum()))
            chunk_neg.append(int(chunk[2].sum()))
    for chunk in chunks.finish():
        chunk_pos.append(int(chunk[1].sum()))
        chunk_neg.append(int(chunk[2].sum()))
    if n_scores and not last_kept:
        kept += 1  # the highest score is always a point
    if not ordinal:
        levels = np.array([value for value, c in ((0.0, n - n_pos), (1.0, n_pos)) if c > 0])
        counts = np.array([c for c in (n - n_pos, n_pos) if c > 0], dtype=np.int64)
    return StreamTotals(
        ordinal=ordinal,
        n=n,
        n_pos=n_pos,
        n_scores=n_scores,
        score_range=(low, high),
        levels=levels,
        level_counts=counts,
        curve_points=kept if 0 < n_pos < n else 0,
        chunk_scores=chunks.size,
        chunk_pos=np.array(chunk_pos, dtype=np.int64),
        chunk_neg=np.array(chunk_neg, dtype=np.int64),
    )


def _merge_levels(
    levels: np.ndarray, counts: np.ndarray, targets: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct target values so far and their units, with a block's rows added; ValueError past
    MAX_TARGET_LEVELS values."""
    values, inverse = np.unique(targets, return_inverse=True)
    merged = np.union1d(levels, values)
    if merged.size > MAX_TARGET_LEVELS:
        raise ValueError(
            f"the correlation target has more than {MAX_TARGET_LEVELS} distinct values: an ordinal target is expected"
        )
    out = np.zeros(merged.size, dtype=np.int64)
    out[np.searchsorted(merged, levels)] += counts
    np.add.at(out, np.searchsorted(merged, values)[inverse], weights)
    return merged, out


# --- the points ---------------------------------------------------------------------------------------------------


def stream_points(
    source: RowSource, *, ordinal: bool, n_excluded: int, totals: StreamTotals | None = None
) -> dict[str, Any]:
    """validity_table.points_from_units's dict (the point statistics of validity.validity_summary on the units)
    from two passes over the rows: :func:`stream_totals` (skipped when ``totals`` of the same ``ordinal`` are
    given) and one computing everything else (:class:`_AucSums`, :class:`_Moments`, :class:`_KendallCounts`,
    :class:`_Curve`). The correlations use the targets when ``ordinal``, else the labels as 0.0/1.0.
    ``n_excluded`` (units the caller dropped) is reported in every estimate and at the threshold."""
    if totals is None:
        totals = stream_totals(source, ordinal=ordinal)
    elif totals.ordinal != ordinal:
        raise ValueError("the totals were taken for the other correlation target")
    auc = _AucSums(m=totals.n_pos)
    pearson, spearman = _Moments(), _Moments()
    kendall = _KendallCounts(totals)
    curve = _Curve(totals)
    y_ranks = _level_midranks(totals.level_counts)
    n_below = 0
    scores_seen = 0
    for block in _blocks(source):
        rows = block.rows
        y = rows.targets if ordinal else rows.labels.astype(float)
        level = _level_of(totals.levels, y)
        group = block.group
        w = rows.weights.astype(float)
        units = block.units
        ends = n_below + np.cumsum(units)
        x_ranks = 0.5 * (ends + (ends - units) + 1)
        curve.add(block, scores_seen, auc.pos_below, auc.neg_below)
        auc.add(block)
        pearson.add(rows.scores, y, w)
        spearman.add(x_ranks[group], y_ranks[level], w)
        kendall.add(block, level, group)
        n_below = int(ends[-1])
        scores_seen += block.scores.size
    if n_below != totals.n or scores_seen != totals.n_scores:
        raise ValueError("the rows changed between passes")
    x_range = np.array(totals.score_range)
    y_range = np.array([totals.levels[0], totals.levels[-1]]) if totals.levels.size else np.zeros(1)
    youden, at_youden = curve.youden(n_excluded)
    return {
        "auc": auc.estimate(totals, n_excluded),
        "pearson": _pearson(pearson, x_range, y_range, totals.n, n_excluded),
        "spearman": _spearman(spearman, x_range, y_range, totals.n, n_excluded),
        "kendall": kendall.estimate(x_range, y_range, n_excluded),
        "youden": youden,
        "at_youden_threshold": at_youden,
        "roc": curve.roc(),
    }


# --- AUC --------------------------------------------------------------------------------------------------------


@dataclass
class _AucSums:
    """The AUC's and DeLong's sums (validity.DelongSums's), block by block, as exact integers (Python ints).

    A positive at score s has t = 2·(negatives below s) + (negatives at s), twice its Sun & Xu placement T_Z − T_X,
    and a negative t = 2·(positives above s) + (positives at s). ``pos_t`` = Σ over positives of t is 2U, the sum
    validity._delong_components takes positive by positive, so the AUC ((2U / 2.0) / (m·n)) is the same float
    bit for bit; DeLong's variances are those of t / (2n) over the positives and t / (2m) over the negatives
    (validity.delong_from_sums: an exact integer ratio rounded once, where np.cov rounds centred float sums, equal
    to rounding). ``m`` is the positives in all; the running ``pos_below`` and ``neg_below`` are the units of each
    class read so far (below the block being read)."""

    m: int = 0
    pos_t: int = 0
    pos_tt: int = 0
    neg_t: int = 0
    neg_tt: int = 0
    pos_below: int = 0
    neg_below: int = 0

    def add(self, block: _Block) -> None:
        pos, neg = block.pos, block.neg
        t_pos = 2 * (self.neg_below + np.cumsum(neg) - neg) + neg
        t_neg = 2 * (self.m - self.pos_below - np.cumsum(pos)) + pos
        s1, s2 = _weighted_sums(t_pos, pos)
        self.pos_t += s1
        self.pos_tt += s2
        s1, s2 = _weighted_sums(t_neg, neg)
        self.neg_t += s1
        self.neg_tt += s2
        self.pos_below += int(pos.sum())
        self.neg_below += int(neg.sum())

    def estimate(self, totals: StreamTotals, n_excluded: int) -> Estimate:
        """validity.delong_from_sums's AUC of the sums (the one metric as both of its two)."""
        pos = va.DelongSums(totals.n_pos, self.pos_t, self.pos_t, self.pos_tt, self.pos_tt, self.pos_tt)
        neg = va.DelongSums(totals.n_neg, self.neg_t, self.neg_t, self.neg_tt, self.neg_tt, self.neg_tt)
        return va.delong_from_sums(pos, neg, n_excluded)[0]


def _weighted_sums(t: np.ndarray, w: np.ndarray) -> tuple[int, int]:
    """Σ w·t and Σ w·t² as exact Python ints: in int64 where the bound Σw · max(t)² fits it, else in Python ints
    (object arrays: a block of few rows holding many units, as a metric with few scores has)."""
    if t.size == 0:
        return 0, 0
    top = int(t.max())
    if int(w.sum()) * max(top * top, 1) < 2**63:
        return int(np.dot(w, t)), int(np.dot(w * t, t))
    wo, to = w.astype(object), t.astype(object)
    return int(np.dot(wo, to)), int(np.dot(wo * to, to))


# --- correlations ---------------------------------------------------------------------------------------------------


@dataclass
class _Moments:
    """Weighted count, means and centred sums of squares and products of (x, y), block by block: each block's
    own, merged into the running ones by Chan, Golub & LeVeque's (1979) pairwise update (M = M_a + M_b + δ_x·δ_y ·
    w_a·w_b / (w_a + w_b), δ the difference of the means), which keeps the sums centred as one pass over the units
    would: equal to a one-pass weighted sum's centred sums to rounding."""

    w: float = 0.0
    mx: float = 0.0
    my: float = 0.0
    sxx: float = 0.0
    syy: float = 0.0
    sxy: float = 0.0

    def add(self, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
        wb = float(w.sum())
        if wb == 0:
            return
        mxb, myb = _dot(w, x) / wb, _dot(w, y) / wb
        dx, dy = x - mxb, y - myb
        total = self.w + wb
        ddx, ddy = mxb - self.mx, myb - self.my
        f = self.w * wb / total
        self.sxx += _dot(w, dx * dx) + ddx * ddx * f
        self.syy += _dot(w, dy * dy) + ddy * ddy * f
        self.sxy += _dot(w, dx * dy) + ddx * ddy * f
        self.mx += ddx * wb / total
        self.my += ddy * wb / total
        self.w = total

    def pearsonr(self) -> tuple[float, float]:
        """r and its two-sided p-value as scipy's pearsonr computes them on the units:
        r clipped to [−1, 1], p = 2·sf(|r|) of the beta distribution on (−1, 1) with a = b = n/2 − 1."""
        r = float(np.clip(self.sxy / math.sqrt(self.sxx) / math.sqrt(self.syy), -1, 1))
        ab = self.w / 2 - 1
        return r, float(2 * special.betaincc(ab, ab, (abs(r) + 1.0) / 2.0))


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Σ a·b in numpy's own loop: a BLAS dot of a piece's rows gains nothing and, where BLAS threads wait for a busy
    core, costs milliseconds."""
    return float(np.einsum("i,i->", a, b))


def _level_of(levels: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each value's place among the first pass's distinct values (ValueError for a value the first pass did not
    read)."""
    level = np.searchsorted(levels, y)
    if y.size and (level.max() >= levels.size or (levels[level] != y).any()):
        raise ValueError("the rows changed between passes")
    return level


def _level_midranks(counts: np.ndarray) -> np.ndarray:
    """Each distinct value's midrank among the units (rankdata's "average"): 0.5·(c_end + c_before + 1)."""
    ends = np.cumsum(counts)
    ranks: np.ndarray = 0.5 * (ends + (ends - counts) + 1)
    return ranks


def _pearson(moments: _Moments, x: np.ndarray, y: np.ndarray, n: int, n_excluded: int) -> Estimate:
    """validity.pearson from the moments: r, its p-value and the Fisher-z interval (SE
    1/√(n−3)) as scipy's PearsonRResult.confidence_interval(0.95) computes it. ``x`` and ``y`` are the lowest and
    highest score and target (their ptp is the units')."""
    bad = va.variance_check(x, y, n, n_excluded, 4)
    if bad:
        return bad
    r, p = moments.pearsonr()
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


def _spearman(moments: _Moments, x: np.ndarray, y: np.ndarray, n: int, n_excluded: int) -> Estimate:
    """validity.spearman from the moments of the midranks: a score's midrank from the units below it and at it
    (counted in score order), a target value's from the first pass's units per value."""
    bad = va.variance_check(x, y, n, n_excluded, 4)
    if bad:
        return bad
    r, p = moments.pearsonr()
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


class _KendallCounts:
    """The counts of scipy.stats.kendalltau's τ-b and its asymptotic test, block by block.

    With scores read in ascending order, a unit's discordant pairs with the units of LOWER scores are those with a
    higher target: dis = Σ over score groups Σ_l c_l × (units at lower scores with target level above l), from the
    running units per target level (``below``). Ties: xtie, x0, x1 (scipy's count_rank_tie) from each score's units,
    ytie, y0, y1 from the first pass's units per level, ntie from each (score, target) pair's units. The exact
    p-value case (no ties, few units) needs the units themselves: no tie in the target means at most a unit per
    level, so at most MAX_TARGET_LEVELS units, which are kept when the first pass says there are no more."""

    def __init__(self, totals: StreamTotals) -> None:
        self.totals = totals
        self.below = np.zeros(totals.levels.size, dtype=np.int64)
        self.dis = self.ntie = self.xtie = 0
        self.x0 = self.x1 = 0.0
        self.keep_units = totals.n <= MAX_TARGET_LEVELS
        self.units: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, block: _Block, level: np.ndarray, group: np.ndarray) -> None:
        c = block.units
        self.xtie += int((c * (c - 1) // 2).sum())
        self.x0 += float((c * (c - 1.0) * (c - 2)).sum())
        self.x1 += float((c * (c - 1.0) * (2 * c + 5)).sum())
        n_levels = self.below.size
        step = max(1, _KENDALL_CELLS // n_levels)
        weights = block.rows.weights
        for g0 in range(0, block.scores.size, step):
            g1 = min(g0 + step, block.scores.size)
            r0 = int(block.starts[g0])
            r1 = int(block.starts[g1]) if g1 < block.scores.size else weights.size
            cells = np.zeros((g1 - g0, n_levels), dtype=np.int64)
            np.add.at(cells, (group[r0:r1] - g0, level[r0:r1]), weights[r0:r1])
            lower = np.cumsum(cells, axis=0)
            lower -= cells
            lower += self.below
            # Units at lower scores with a level above l: the suffix sums of ``lower`` past l.
            above = np.cumsum(lower[:, ::-1], axis=1)[:, ::-1] - lower
            self.dis += int((cells * above).sum())
            self.ntie += int((cells * (cells - 1) // 2).sum())
            self.below += cells.sum(axis=0)
        if self.keep_units:
            self.units.append((np.repeat(block.rows.scores, weights), np.repeat(self.totals.levels[level], weights)))

    def estimate(self, x: np.ndarray, y: np.ndarray, n_excluded: int) -> Estimate:
        """τ-b and its p-value as scipy.stats.kendalltau (1.17, _stats_py.py) computes them from the same counts:
        con − dis = tot − xtie − ytie + ntie − 2·dis, τ-b = (con − dis)/√(tot − xtie)/√(tot − ytie), the normal
        approximation with the tie-corrected variance (its reference [3]) unless it would be exact; with the Fisher-z
        interval of validity.kendall_estimate."""
        n = self.totals.n
        bad = va.variance_check(x, y, n, n_excluded, 5)
        if bad:
            return bad
        ytie, y0, y1 = _tie_sums(self.totals.level_counts)
        xtie, dis = self.xtie, self.dis
        tot = n * (n - 1) // 2
        if xtie == 0 and ytie == 0 and (n <= 33 or min(dis, tot - dis) <= 1):
            # No tie in the target: every unit has its own level, so the units were kept (n ≤ MAX_TARGET_LEVELS).
            res = stats.kendalltau(
                np.concatenate([u[0] for u in self.units]), np.concatenate([u[1] for u in self.units])
            )
            tau, p = float(res.statistic), float(res.pvalue)
        else:
            con_minus_dis = tot - xtie - ytie + self.ntie - 2 * dis
            tau = float(min(1.0, max(-1.0, con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie))))
            pairs = n * (n - 1.0)
            var = (
                (pairs * (2 * n + 5) - self.x1 - y1) / 18
                + (2 * xtie * ytie) / pairs
                + self.x0 * y0 / (9 * pairs * (n - 2))
            )
            p = float(2 * special.ndtr(-abs(con_minus_dis / np.sqrt(var))))
        return va.kendall_estimate(tau, p, n, n_excluded)


# --- the ROC curve and the Youden threshold ---------------------------------------------------------------------


class _Curve:
    """roc_curve's points (drop_intermediate), read in ascending score order, and the Youden threshold among them.

    roc_curve orders the scores descending: at distinct score s it has tps = positives scored ≥ s and fps =
    negatives scored ≥ s (exact integers in float64), keeps the points :func:`_roc_kept` says, prepends (0, 0) at an
    infinite threshold and divides by the totals, fpr = fps / n and tpr = tps / m, each a correctly rounded float64
    quotient: here m − (positives below s) and n − (negatives below s), divided the same way, are the same floats.
    The first pass counted the points (``curve_points``), so the indices roc_from_curve keeps of the whole curve
    (np.unique(np.linspace(...).round()) past va.ROC_MAX_POINTS) are known before the pass: the kept point of
    ascending rank r is the curve's point ``curve_points − r`` (the infinite threshold is point 0), and only those
    are held. The Youden index is j = tpr − fpr of those floats; va.youden_from_curve takes the first maximum in
    descending order, so a later (higher) score replaces the best on a tie here."""

    def __init__(self, totals: StreamTotals) -> None:
        self.totals = totals
        self.defined = totals.curve_points > 0
        n_points = totals.curve_points + 1
        if n_points > va.ROC_MAX_POINTS:
            keep = np.unique(np.linspace(0, n_points - 1, va.ROC_MAX_POINTS).round().astype(np.int64))
        else:
            keep = np.arange(n_points, dtype=np.int64)
        self.n_points = n_points
        self.keep_infinite = bool(keep[0] == 0)
        self.wanted = np.sort(totals.curve_points - keep[keep > 0])
        self.kept = 0
        self.before: tuple[int, int] | None = None
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.best: tuple[float, float, float, float, int, int] | None = None  # j, fpr, tpr, threshold, tp, fp

    def add(self, block: _Block, scores_seen: int, pos_below: int, neg_below: int) -> None:
        """A block's points; ``scores_seen``, ``pos_below`` and ``neg_below`` are the distinct scores, positives and
        negatives below it."""
        if not self.defined:
            return
        m, n = self.totals.n_pos, self.totals.n_neg
        pos, neg = block.pos, block.neg
        mask = _roc_kept(pos, neg, self.before)
        self.before = (int(pos[-1]), int(neg[-1]))
        if scores_seen + pos.size == self.totals.n_scores:
            mask[-1] = True
        at = np.flatnonzero(mask)
        tps = m - (pos_below + np.cumsum(pos) - pos)[at]
        fps = n - (neg_below + np.cumsum(neg) - neg)[at]
        tpr, fpr = tps / m, fps / n
        thresholds = block.scores[at]
        ranks = self.kept + np.arange(at.size)
        self.kept += at.size
        chosen = np.isin(ranks, self.wanted)
        if chosen.any():
            self.parts.append((fpr[chosen], tpr[chosen], thresholds[chosen]))
        if at.size:
            j = tpr - fpr
            last = int(j.size - 1 - np.argmax(j[::-1]))
            if self.best is None or j[last] >= self.best[0]:
                self.best = (
                    float(j[last]),
                    float(fpr[last]),
                    float(tpr[last]),
                    float(thresholds[last]),
                    int(tps[last]),
                    int(fps[last]),
                )

    def _check(self) -> None:
        if self.kept != self.totals.curve_points:
            raise ValueError("the rows changed between passes")

    def roc(self) -> dict[str, Any] | None:
        """va.roc_points's dict: the kept points in descending threshold order, the infinite one first."""
        if not self.defined:
            return None
        self._check()
        fpr = [float(v) for part in reversed(self.parts) for v in part[0][::-1]]
        tpr = [float(v) for part in reversed(self.parts) for v in part[1][::-1]]
        thresholds: list[float | None] = [float(v) for part in reversed(self.parts) for v in part[2][::-1]]
        if self.keep_infinite:
            fpr, tpr, thresholds = [0.0, *fpr], [0.0, *tpr], [None, *thresholds]
        return {"fpr": fpr, "tpr": tpr, "thresholds": thresholds, "n_points": self.n_points}

    def youden(self, n_excluded: int) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """va.youden_from_curve's dict (of the best point alone: the same j, threshold and rates) and
        validity.precision_recall_f1's at its threshold (tp and fp the units scored at or above it)."""
        if not self.defined or self.best is None:
            return None, None
        self._check()
        _, fpr, tpr, threshold, tp, fp = self.best
        youden = va.youden_from_curve(np.array([fpr]), np.array([tpr]), np.array([threshold]))
        m, n = self.totals.n_pos, self.totals.n_neg
        return youden, va.prf_from_counts(threshold, tp, fp, m - tp, n - fp, n_excluded)


# --- the bootstrap ------------------------------------------------------------------------------------------------


class _ChunkDraw(NamedTuple):
    """One chunk's draws for a pass's R replicates: the chunk's distinct scores holding positives and the
    positives drawn at each (R × those scores), likewise the negatives (a class absent from the chunk: no
    columns)."""

    pos_scores: np.ndarray
    pos_drawn: np.ndarray
    neg_scores: np.ndarray
    neg_drawn: np.ndarray


def auc_bootstrap_stream(
    source: RowSource,
    *,
    n_boot: int,
    seed: int,
    progress: Progress | None = None,
    totals: StreamTotals | None = None,
) -> tuple[tuple[float, float] | None, int]:
    """Stratified percentile bootstrap interval for the AUC and how many replicates were undefined (none: each
    has both classes), like validity.auc_bootstrap_ci; (None, 0) when a class is empty.

    A resample draws m positives and n negatives with replacement; what its AUC depends on is how many drawn units
    of each class have each distinct score: a multinomial draw of m over the positives' scores (probabilities
    count / m), likewise of n over the negatives'. A multinomial draw equals drawing first how many fall in each
    group of its categories (a multinomial over the groups, with the groups' probabilities) and then, given those,
    each group's split among its categories (a multinomial of the group's number, with the probabilities within
    the group): so the draws here are distributed as validity.auc_bootstrap_ci's resamples' counts, drawn otherwise.

    The groups are chunks: runs of BOOT_CHUNK_SCORES distinct scores in ascending order (both classes together; the
    first pass counts each chunk's positives P_c and negatives N_c). Replicates are drawn BOOT_PASS_REPLICATES at
    a time (the last group smaller), each group in one pass over the rows. ``np.random.default_rng(seed)`` draws,
    group after group of R replicates:

    1. A = rng.multinomial(m, P / m, size=R) and then B = rng.multinomial(n, N / n, size=R): each replicate's
       positives and negatives per chunk, P and N restricted to the chunks holding that class (the others get 0);
    2. then chunk after chunk in ascending order: rng.multinomial(A[:, c], p_c / P_c), the positives drawn at each
       of the chunk's scores holding positives (p_c their positives; one row per replicate: numpy draws the rows
       of an array of n one after another), and then rng.multinomial(B[:, c], n_c / N_c) likewise for the
       negatives; a class the chunk does not hold draws nothing.

    Restricting the probabilities to the categories holding units keeps each draw's probabilities those of
    integers divided by their integer total, the last one above 0: numpy refuses pvals whose sum but the last
    exceeds 1 + 1e-12, and those sum to 1 − last/total ≤ 1 − 1/total before rounding. A replicate's 2U adds, chunk
    by chunk, Σ_j pos_j × (2·(negatives drawn in lower chunks + negatives drawn below score j in the chunk) +
    negatives drawn at score j), an exact int64; its AUC is (2U / 2.0) / (m·n), what roc_auc gives on the units the
    draws stand for. ``progress(done, n_boot)`` after each group. ``totals`` from :func:`stream_totals` (either
    target) save the first pass."""
    if totals is None:
        totals = stream_totals(source, ordinal=False)
    if totals.n_pos == 0 or totals.n_neg == 0:
        return None, 0
    return percentile_ci(_replicates(source, totals, n_boot=n_boot, seed=seed, progress=progress))


def _replicates(
    source: RowSource, totals: StreamTotals, *, n_boot: int, seed: int, progress: Progress | None = None
) -> np.ndarray:
    """The bootstrap's replicate AUCs in the order they are drawn (see :func:`auc_bootstrap_stream`)."""
    m, n = totals.n_pos, totals.n_neg
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    done = 0
    while done < n_boot:
        size = min(BOOT_PASS_REPLICATES, n_boot - done)
        two_u = np.zeros(size, dtype=np.int64)
        neg_lower = np.zeros(size, dtype=np.int64)
        for draw in _group_draws(source, totals, rng, size):
            two_u += _twice_u(draw, neg_lower)
            neg_lower += draw.neg_drawn.sum(axis=1)
            del draw  # before the next chunk is drawn: a chunk's draws at a time
        out.append((two_u / 2.0) / (m * n))
        done += size
        if progress is not None:
            progress(done, n_boot)
    replicates: np.ndarray = np.concatenate(out) if out else np.zeros(0)
    return replicates


def _twice_u(draw: _ChunkDraw, neg_lower: np.ndarray) -> np.ndarray:
    """A chunk's part of each replicate's 2U: its positives drawn at each score times twice the negatives drawn
    below that score plus those drawn at it, the negatives of lower chunks (``neg_lower``) counted in. With the
    chunk's negatives' cumulative draws C (C[:, k]: drawn at its first k negatives' scores), 2·below + tied is
    C[lo] + C[hi], lo and hi the searchsorted places of the positive's score among the negatives' scores. Computed
    _TWICE_U_ROWS replicates at a time, so that its arrays stay smaller than the draws'."""
    lo = np.searchsorted(draw.neg_scores, draw.pos_scores, side="left")
    hi = np.searchsorted(draw.neg_scores, draw.pos_scores, side="right")
    out: np.ndarray = 2 * neg_lower * draw.pos_drawn.sum(axis=1)
    for r0 in range(0, out.size, _TWICE_U_ROWS):
        pos, neg = draw.pos_drawn[r0 : r0 + _TWICE_U_ROWS], draw.neg_drawn[r0 : r0 + _TWICE_U_ROWS]
        below = np.zeros((neg.shape[0], neg.shape[1] + 1), dtype=np.int64)
        np.cumsum(neg, axis=1, out=below[:, 1:])
        twice = below[:, lo]
        twice += below[:, hi]
        out[r0 : r0 + _TWICE_U_ROWS] += np.einsum("rp,rp->r", pos, twice)
    return out


def _group_draws(source: RowSource, totals: StreamTotals, rng: np.random.Generator, size: int) -> Iterator[_ChunkDraw]:
    """One group's draws, chunk by chunk, in one pass over the rows (steps 1 and 2 of :func:`auc_bootstrap_stream`),
    leaving ``rng`` past the group's draws once exhausted."""
    m, n = totals.n_pos, totals.n_neg
    by_chunk_pos = _multinomial_over(rng, m, totals.chunk_pos, size)
    by_chunk_neg = _multinomial_over(rng, n, totals.chunk_neg, size)
    chunks = _Chunks(totals.chunk_scores)
    c = 0

    def drawn(chunk: tuple[np.ndarray, ...]) -> _ChunkDraw:
        scores, pos, neg = chunk
        if int(pos.sum()) != totals.chunk_pos[c] or int(neg.sum()) != totals.chunk_neg[c]:
            raise ValueError("the rows changed between passes")
        has_pos, has_neg = pos > 0, neg > 0
        return _ChunkDraw(
            scores[has_pos],
            _multinomial_within(rng, by_chunk_pos[:, c], pos[has_pos]),
            scores[has_neg],
            _multinomial_within(rng, by_chunk_neg[:, c], neg[has_neg]),
        )

    for block in _blocks(source):
        for chunk in chunks.feed(block.scores, block.pos, block.neg):
            yield drawn(chunk)
            c += 1
    for chunk in chunks.finish():
        yield drawn(chunk)
        c += 1
    if c != totals.chunk_pos.size:
        raise ValueError("the rows changed between passes")


def _multinomial_over(rng: np.random.Generator, total: int, counts: np.ndarray, size: int) -> np.ndarray:
    """``size`` rows of rng.multinomial(total, counts / total) over the entries of ``counts`` above 0, with 0 at
    the others."""
    held = counts > 0
    out = np.zeros((size, counts.size), dtype=np.int64)
    out[:, held] = rng.multinomial(total, counts[held] / total, size=size)
    return out


def _multinomial_within(rng: np.random.Generator, totals: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """rng.multinomial(totals, counts / Σcounts): a row per entry of ``totals``; no draw without counts."""
    if counts.size == 0:
        return np.zeros((totals.size, 0), dtype=np.int64)
    drawn: np.ndarray = rng.multinomial(totals, counts / int(counts.sum()))
    return drawn


# --- the summary --------------------------------------------------------------------------------------------------


def validity_summary_rows(
    source: RowSource,
    *,
    ordinal: bool = False,
    n_excluded: int = 0,
    n_boot: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """:func:`adjudication.stats.validity.validity_summary`'s dict for one metric, from the rows of its units.

    The correlations use the rows' targets when ``ordinal``, else the labels as 0/1 (what validity_summary does
    without ``ordinal_target``). ``n_excluded`` is the number of units the caller dropped before adding the rows
    (no score, label or target); it is reported as validity_summary reports its own.

    Up to ``agreement.MAX_UNITS_FOR_PACKAGE`` units (read at call time) the rows are read into one table and the
    point statistics are validity.py's functions on it expanded to one entry per unit
    (:func:`~adjudication.stats.validity_table.points_from_units`): the numbers validity_summary gives for the units
    in the table's order, bit for bit. Past it they are computed in passes over the rows (:func:`stream_points`),
    nothing held per row: the AUC, the curve, the threshold and the counts at it bit for bit, the rest to rounding.
    The AUC's bootstrap is always :func:`auc_bootstrap_stream` (the same draws whatever the number of units): a
    stratified bootstrap like validity's, whose draws are not the same, so its interval differs from
    validity_summary's within Monte Carlo error."""
    totals = stream_totals(source, ordinal=ordinal)
    out: dict[str, Any] = {"n": totals.n, "n_pos": totals.n_pos, "n_neg": totals.n_neg, "n_excluded_units": n_excluded}
    if totals.n <= ag.MAX_UNITS_FOR_PACKAGE:
        points = vt.points_from_units(ScoreTable.merged(list(source.pieces())), ordinal, n_excluded)
    else:
        points = stream_points(source, ordinal=ordinal, n_excluded=n_excluded, totals=totals)
    out["auc"] = va.auc_entry(
        points["auc"], n_boot, seed,
        lambda: auc_bootstrap_stream(source, n_boot=n_boot, seed=seed, progress=progress, totals=totals),
    )
    for name in ("pearson", "spearman", "kendall"):
        out[name] = points[name].as_dict()
    out["youden"] = points["youden"]
    out["at_youden_threshold"] = points["at_youden_threshold"]
    out["roc"] = points["roc"]
    return out

