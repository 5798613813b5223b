"""The validity statistics from a re-readable ordered stream of a score table's rows (validity_stream) must be
validity.py's on the units the rows stand for (validity_table.points_from_units): the AUC, the ROC curve and the
Youden threshold bit for bit, the rest to rounding, however the rows are cut into pieces; its AUC bootstrap must be a
stratified bootstrap of the units whose replicates are the AUCs of the resamples it draws, distributed as
validity.auc_bootstrap_ci's; and its memory must not grow with the rows."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from scipy import stats

from adjudication.stats import agreement as ag
from adjudication.stats import validity as va
from adjudication.stats import validity_stream as vs
from adjudication.stats import validity_table as vt
from tests.adjudication.close import assert_close as _assert_close
from tests.adjudication.stats.validity_data import binary, ordinal

# --- data ---------------------------------------------------------------------------------------------------------


def _cross_ties(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A handful of scores, each held by both classes, with labels not a function of the target."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 3, n).astype(float)
    s = np.clip(t + rng.integers(-1, 2, n), 0, 3).astype(float)
    return s, rng.random(n) < 0.3 + 0.2 * t, t


def _long_curve(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Continuous scores with weak signal: a ROC curve of more than ROC_MAX_POINTS points."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.5
    s = rng.normal(size=n) + 0.3 * y
    return s, y, np.round(s * 2 + y).clip(-3, 3)


DATASETS = {
    "binary, continuous": binary(1, 3000),
    "ordinal, heavy ties": ordinal(2, 2500, decimals=1),
    "ordinal, continuous": ordinal(3, 600, decimals=None),
    "ties across classes": _cross_ties(4, 1500),
    "long curve": _long_curve(5, 9000),
    "four units": (np.array([0.1, 0.4, 0.2, 0.3]), np.array([True, False, True, False]), np.array([2.0, 0, 3, 1])),
    "five units": (np.array([0.1, 0.5, 0.2, 0.9, 0.3]), np.array([1, 0, 1, 0, 0], bool), np.array([2.0, 0, 3, 1, 4])),
    "six units, tied": (np.array([0.1, 0.1, 0.2, 0.2, 0.3, 0.3]), np.array([1, 0, 1, 1, 0, 0], bool), np.arange(6.0)),
    "one class": (np.array([0.1, 0.4, 0.2, 0.9, 0.5, 0.3]), np.ones(6, bool), np.arange(6.0)),
    "one negative": (np.array([0.1, 0.4, 0.2, 0.9, 0.5, 0.3]), np.r_[np.ones(5, bool), False], np.arange(6.0)),
    "perfect separation": (np.arange(8.0), np.arange(8) >= 3, np.arange(8.0) // 2),
    "no score variance": (np.full(7, 0.5), np.r_[np.ones(3, bool), np.zeros(4, bool)], np.arange(7.0)),
    "no target variance": (np.arange(7.0), np.r_[np.ones(3, bool), np.zeros(4, bool)], np.full(7, 2.0)),
    "kendall exact, 30 units": (np.random.default_rng(6).normal(size=30), np.arange(30) % 3 == 0, np.arange(30.0)),
    "one unit": (np.array([0.1]), np.array([True]), np.array([2.0])),
    "no unit": (np.zeros(0), np.zeros(0, bool), np.zeros(0)),
}
assert va.roc_points(*DATASETS["long curve"][:2])["n_points"] > va.ROC_MAX_POINTS


class _Gappy:
    """Pieces of ``rows`` rows with an empty piece before, between and after them."""

    def __init__(self, table: vt.ScoreTable, rows: int) -> None:
        self.inner = vs.TableRows(table, rows)

    def pieces(self) -> Iterator[vt.ScoreTable]:
        yield vt.ScoreTable.empty()
        for piece in self.inner.pieces():
            yield piece
            yield vt.ScoreTable.empty()


SOURCES: dict[str, Callable[[vt.ScoreTable], vs.RowSource]] = {
    "pieces of 1": lambda t: vs.TableRows(t, 1),
    "pieces of 3": lambda t: vs.TableRows(t, 3),
    "pieces of 7, empty between": lambda t: _Gappy(t, 7),
    "pieces of 1000": lambda t: vs.TableRows(t, 1000),
    "default pieces": vs.TableRows,
}


def _as_dicts(points: dict[str, Any]) -> dict[str, Any]:
    return {k: v.as_dict() if isinstance(v, ag.Estimate) else v for k, v in points.items()}


def _check_points(table: vt.ScoreTable, source: vs.RowSource, ordinal: bool, n_excluded: int = 0) -> dict[str, Any]:
    got = _as_dicts(vs.stream_points(source, ordinal=ordinal, n_excluded=n_excluded))
    expected = _as_dicts(vt.points_from_units(table, ordinal, n_excluded))
    _assert_close(got, expected, rel=1e-9)
    # The AUC and the counts bit for bit (DeLong's SE is an exact ratio rounded once here, np.cov's centred sums there).
    assert {k: v for k, v in got["auc"].items() if k not in ("se", "ci95")} == {
        k: v for k, v in expected["auc"].items() if k not in ("se", "ci95")
    }
    for key in ("youden", "at_youden_threshold", "roc"):
        assert got[key] == expected[key], key
    return got


# --- the points ---------------------------------------------------------------------------------------------------


# Every dataset in every piece size, but the tables of more than 1,000 rows in pieces of 1 and 3: cut finely once
# (pieces of 7, empty pieces between) they are enough, and the shorter tables cover the finest cuts.
POINT_CASES = [
    (name, source)
    for name in DATASETS
    for source in SOURCES
    if not (vt.ScoreTable.of(*DATASETS[name]).scores.size > 1000 and source in ("pieces of 1", "pieces of 3"))
]


@pytest.mark.parametrize("ordinal", [False, True])
@pytest.mark.parametrize(("name", "source"), POINT_CASES)
def test_the_points_are_validity_pys_on_the_units(name, source, ordinal):
    s, y, t = DATASETS[name]
    table = vt.ScoreTable.of(s, y, t)
    got = _check_points(table, SOURCES[source](table), ordinal, n_excluded=3)
    assert got["pearson"]["n_excluded_units"] == 3


@pytest.mark.parametrize("ordinal", [False, True])
def test_the_points_are_validity_summarys_on_the_units_in_their_own_order(ordinal):
    s, y, t = DATASETS["ordinal, heavy ties"]
    summary = va.validity_summary(s, y, ordinal_target=t if ordinal else None)
    del summary["auc"]["ci95_bootstrap"], summary["auc"]["bootstrap"]
    got = _as_dicts(vs.stream_points(vs.TableRows(vt.ScoreTable.of(s, y, t), 5), ordinal=ordinal, n_excluded=0))
    for key in got:
        _assert_close(got[key], summary[key], rel=1e-9, path=key)
    assert got["auc"]["value"] == summary["auc"]["value"]
    assert got["roc"] == summary["roc"] and got["youden"] == summary["youden"]


def test_undefined_statistics_give_validity_pys_reasons():
    for name in ("one class", "no score variance", "no target variance", "one unit", "no unit"):
        s, y, t = DATASETS[name]
        got = _check_points(vt.ScoreTable.of(s, y, t), vs.TableRows(vt.ScoreTable.of(s, y, t), 2), True)
        assert any(got[k]["value"] is None for k in ("auc", "pearson", "spearman", "kendall")), name
    s, y, t = DATASETS["one class"]
    got = vs.stream_points(vs.TableRows(vt.ScoreTable.of(s, y, t)), ordinal=True, n_excluded=0)
    assert got["auc"].reason == "AUC needs both classes; there is no negative unit"
    assert got["roc"] is None and got["youden"] is None and got["at_youden_threshold"] is None


@pytest.mark.parametrize("max_points", [3, 7, 50, "n_points - 1", "n_points"])
def test_the_roc_curve_keeps_roc_max_points_as_roc_points_does(max_points, monkeypatch):
    s, y, t = DATASETS["binary, continuous"]
    n_points = va.roc_points(s, y)["n_points"]
    limit = eval(max_points, {"n_points": n_points}) if isinstance(max_points, str) else max_points  # noqa: S307
    monkeypatch.setattr(va, "ROC_MAX_POINTS", limit)
    expected = va.roc_points(s, y)
    assert len(expected["fpr"]) == min(limit, n_points) and expected["n_points"] == n_points
    for rows in (5, 20_000):
        assert (
            vs.stream_points(vs.TableRows(vt.ScoreTable.of(s, y, t), rows), ordinal=False, n_excluded=0)["roc"]
            == expected
        )


def test_the_youden_threshold_is_the_first_maximum_in_descending_order():
    # Two points with the same J: (tpr, fpr) = (0.5, 0) at threshold 3 and (1, 0.5) at threshold 1.
    s = np.array([3.0, 3.0, 2.0, 2.0, 1.0, 1.0, 0.0, 0.0])
    y = np.array([True, True, False, False, True, True, False, False])
    table = vt.ScoreTable.of(s, y)
    expected = va.youden_threshold(s, y)
    assert expected["threshold"] == 3.0
    for rows in (1, 2, 5, 100):
        got = vs.stream_points(vs.TableRows(table, rows), ordinal=False, n_excluded=0)
        assert got["youden"] == expected
        assert got["at_youden_threshold"] == va.precision_recall_f1(s, y, 3.0)


def test_the_totals_of_a_first_pass_can_be_given():
    s, y, t = DATASETS["ordinal, heavy ties"]
    source = vs.TableRows(vt.ScoreTable.of(s, y, t), 100)
    totals = vs.stream_totals(source, ordinal=True)
    assert (totals.n, totals.n_pos, totals.n_neg) == (s.size, int(y.sum()), int((~y).sum()))
    assert totals.n_scores == np.unique(s).size
    assert totals.levels.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert totals.level_counts.tolist() == np.bincount(t.astype(int)).tolist()
    assert totals.curve_points + 1 == va.roc_points(s, y)["n_points"]
    assert totals.chunk_pos.sum() == totals.n_pos and totals.chunk_neg.sum() == totals.n_neg
    given = vs.stream_points(source, ordinal=True, n_excluded=0, totals=totals)
    assert _as_dicts(given) == _as_dicts(vs.stream_points(source, ordinal=True, n_excluded=0))
    with pytest.raises(ValueError, match="other correlation target"):
        vs.stream_points(source, ordinal=False, n_excluded=0, totals=totals)
    labels_only = vs.stream_totals(source, ordinal=False)
    assert labels_only.levels.tolist() == [0.0, 1.0]
    assert labels_only.level_counts.tolist() == [totals.n_neg, totals.n_pos]


def test_the_delong_sums_stay_exact_past_int64():
    # A few scores held by millions of units: Σ w·t² is past 2**63, summed as Python ints.
    table = vt.ScoreTable(
        np.array([0.0, 0.0, 1.0, 1.0, 2.0]),
        np.array([False, True, False, True, True]),
        np.array([0.0, 1.0, 0.0, 1.0, 1.0]),
        np.array([3_000_000, 1_000_000, 1_000_000, 2_500_000, 2_000_000], dtype=np.int64),
    )
    got = vs.stream_points(vs.TableRows(table, 2), ordinal=False, n_excluded=0)["auc"]
    # validity.delong_from_sums on the same units, its components written out by hand: a positive's t is
    # 2·(negatives below) + (negatives tied), a negative's 2·(positives above) + (positives tied).
    pos = [(1_000_000, 3_000_000), (2_500_000, 7_000_000), (2_000_000, 8_000_000)]
    neg = [(3_000_000, 10_000_000), (1_000_000, 6_500_000)]

    def sums(rows: list[tuple[int, int]]) -> va.DelongSums:
        t1 = sum(w * t for w, t in rows)
        t2 = sum(w * t * t for w, t in rows)
        return va.DelongSums(sum(w for w, _ in rows), t1, t1, t2, t2, t2)

    expected = va.delong_from_sums(sums(pos), sums(neg))[0]
    _assert_close(got.as_dict(), expected.as_dict(), rel=1e-12)
    m, n = 5_500_000, 4_000_000
    two_u = 1_000_000 * 3_000_000 + 2_500_000 * (2 * 3_000_000 + 1_000_000) + 2_000_000 * 2 * n
    assert got.value == (two_u / 2.0) / (m * n)


# --- refusals -----------------------------------------------------------------------------------------------------


def test_more_target_levels_than_max_target_levels_are_refused():
    n = vs.MAX_TARGET_LEVELS + 1
    s, t = np.arange(3.0 * n), np.arange(3.0 * n) % n
    y = t >= n // 2
    table = vt.ScoreTable.of(s, y, t)
    with pytest.raises(ValueError, match="distinct values"):
        vs.stream_points(vs.TableRows(table, 7), ordinal=True, n_excluded=0)
    with pytest.raises(ValueError, match="distinct values"):
        vs.stream_totals(vs.TableRows(table))
    # Without the targets (the labels are the correlations' side) they are not read.
    _check_points(table, vs.TableRows(table, 7), ordinal=False)
    at_most = vt.ScoreTable.of(s, y, t % vs.MAX_TARGET_LEVELS)
    _check_points(at_most, vs.TableRows(at_most, 7), ordinal=True)


class _Rows:
    """Given pieces, as given, every time (or ``changed`` from the second reading on)."""

    def __init__(self, pieces: list[vt.ScoreTable], changed: list[vt.ScoreTable] | None = None) -> None:
        self.given, self.changed, self.reads = pieces, changed, 0

    def pieces(self) -> Iterator[vt.ScoreTable]:
        self.reads += 1
        yield from (self.changed if self.changed is not None and self.reads > 1 else self.given)


def _piece(scores: list[float], labels: list[bool], targets: list[float], weights: list[int]) -> vt.ScoreTable:
    return vt.ScoreTable(np.array(scores), np.array(labels), np.array(targets), np.array(weights, dtype=np.int64))


@pytest.mark.parametrize(
    "pieces",
    [
        [_piece([0.2, 0.1], [True, False], [1, 0], [1, 1])],
        [_piece([0.1, 0.2], [True, False], [1, 0], [1, 1]), _piece([0.15], [True], [1], [1])],
        [_piece([0.1, 0.1], [True, False], [1, 0], [1, 1])],
        [_piece([0.1], [True], [1], [1]), _piece([0.1], [True], [1], [1])],
        [_piece([0.1, 0.2], [True, False], [1, 0], [1, 0])],
        [_piece([0.1, np.nan], [True, False], [1, 0], [1, 1])],
    ],
    ids=["descending", "across pieces", "label order", "repeated row", "no unit", "NaN"],
)
def test_rows_out_of_order_are_refused(pieces):
    with pytest.raises(ValueError):
        vs.stream_totals(_Rows(pieces))


def test_rows_that_change_between_passes_are_refused():
    first = [_piece([0.1, 0.2, 0.3, 0.4, 0.5], [True, False, True, False, True], [1, 0, 1, 0, 1], [1, 2, 1, 3, 1])]
    fewer = [_piece([0.1, 0.2, 0.3, 0.4], [True, False, True, False], [1, 0, 1, 0], [1, 2, 1, 3])]
    other_target = [_piece([0.1, 0.2, 0.3, 0.4, 0.5], [True, False, True, False, True], [1, 0, 1, 0, 2], [1] * 5)]
    for changed in (fewer, other_target):
        with pytest.raises(ValueError, match="changed between passes"):
            vs.stream_points(_Rows(first, changed), ordinal=True, n_excluded=0)
    # The bootstrap reads the classes' counts per score alone.
    with pytest.raises(ValueError, match="changed between passes"):
        vs.auc_bootstrap_stream(_Rows(first, fewer), n_boot=10, seed=0)


# --- the bootstrap ------------------------------------------------------------------------------------------------


def _group_draws(table: vt.ScoreTable, n_boot: int, seed: int) -> list[list[vs._ChunkDraw]]:
    """The draws of each group of replicates, chunk by chunk, from the seed's generator."""
    source = vs.TableRows(table, 5)
    totals = vs.stream_totals(source, ordinal=False)
    rng = np.random.default_rng(seed)
    groups = []
    for start in range(0, n_boot, vs.BOOT_PASS_REPLICATES):
        groups.append(list(vs._group_draws(source, totals, rng, min(vs.BOOT_PASS_REPLICATES, n_boot - start))))
    return groups


@pytest.mark.parametrize(("chunk", "per_pass"), [(4, 7), (3, 200), (4096, 6)])
def test_each_replicate_is_the_auc_of_the_resample_its_draws_make(chunk, per_pass, monkeypatch):
    monkeypatch.setattr(vs, "BOOT_CHUNK_SCORES", chunk)
    monkeypatch.setattr(vs, "BOOT_PASS_REPLICATES", per_pass)
    s, y, t = ordinal(7, 90, decimals=1)
    table = vt.ScoreTable.of(s, y, t)
    m, n = int(y.sum()), int((~y).sum())
    n_boot = 20
    source = vs.TableRows(table, 5)
    replicates = vs._replicates(source, vs.stream_totals(source, ordinal=False), n_boot=n_boot, seed=9)
    groups = _group_draws(table, n_boot, 9)
    assert len(groups[0]) == -(-np.unique(s).size // chunk)
    got = []
    for group in groups:
        pos_scores = np.concatenate([d.pos_scores for d in group])
        neg_scores = np.concatenate([d.neg_scores for d in group])
        assert set(pos_scores) <= set(s[y]) and set(neg_scores) <= set(s[~y])
        pos = np.concatenate([d.pos_drawn for d in group], axis=1)
        neg = np.concatenate([d.neg_drawn for d in group], axis=1)
        assert (pos.sum(axis=1) == m).all() and (neg.sum(axis=1) == n).all()
        for drawn_pos, drawn_neg in zip(pos, neg, strict=True):
            units = np.r_[np.repeat(pos_scores, drawn_pos), np.repeat(neg_scores, drawn_neg)]
            got.append(va.roc_auc(units, np.r_[np.ones(m, bool), np.zeros(n, bool)]).value)
    np.testing.assert_array_equal(replicates, got)
    assert len(set(got)) > 10
    assert vs.auc_bootstrap_stream(source, n_boot=n_boot, seed=9) == ag.percentile_ci(replicates)


def test_the_bootstrap_depends_on_the_seed_not_on_the_pieces(monkeypatch):
    s, y, t = ordinal(8, 1500, decimals=2)
    table = vt.ScoreTable.of(s, y, t)
    assert np.unique(s).size > 2 * 100
    for chunk in (100, vs.BOOT_CHUNK_SCORES):
        monkeypatch.setattr(vs, "BOOT_CHUNK_SCORES", chunk)
        got = [vs.auc_bootstrap_stream(vs.TableRows(table, rows), n_boot=230, seed=4) for rows in (1, 7, 20_000)]
        assert got[0] == got[1] == got[2]
        assert got[0][1] == 0
        assert vs.auc_bootstrap_stream(_Gappy(table, 11), n_boot=230, seed=4) == got[0]
        assert vs.auc_bootstrap_stream(vs.TableRows(table, 7), n_boot=230, seed=5) != got[0]
        low, high = got[0][0]
        assert low < va.roc_auc(s, y).value < high


def test_the_bootstrap_reports_progress_after_each_pass_and_needs_both_classes():
    s, y, t = ordinal(9, 300, decimals=1)
    calls: list[tuple[int, int]] = []
    vs.auc_bootstrap_stream(
        vs.TableRows(vt.ScoreTable.of(s, y, t)), n_boot=450, seed=0, progress=lambda *a: calls.append(a)
    )
    assert calls == [(200, 450), (400, 450), (450, 450)]
    s, y, t = DATASETS["one class"]
    assert vs.auc_bootstrap_stream(vs.TableRows(vt.ScoreTable.of(s, y, t)), n_boot=50, seed=0) == (None, 0)
    assert vs.auc_bootstrap_stream(vs.TableRows(vt.ScoreTable.empty()), n_boot=50, seed=0) == (None, 0)


@pytest.mark.parametrize("chunk", [8, 4096])
def test_the_bootstrap_is_distributed_as_resampling_the_units(chunk, monkeypatch):
    # Scores of one decimal: about 50 distinct values, unevenly held, so that each stage of the draw matters (chunks
    # of 8 scores: the chunks' totals, then each chunk's split among its scores).
    monkeypatch.setattr(vs, "BOOT_CHUNK_SCORES", chunk)
    s, y, _ = ordinal(12, 400, decimals=1)
    n_boot = 2000
    source = vs.TableRows(vt.ScoreTable.of(s, y), 37)
    streamed = vs._replicates(source, vs.stream_totals(source, ordinal=False), n_boot=n_boot, seed=21)
    counter = va._AucCounter(s[y], s[~y])
    units = np.concatenate(
        [
            counter.replicates(pos_idx, neg_idx)
            for pos_idx, neg_idx in va._stratified_blocks(np.random.default_rng(22), counter.m, counter.n, n_boot, None)
        ]
    )
    sd = units.std(ddof=1)
    assert abs(streamed.mean() - units.mean()) < 4 * sd / np.sqrt(n_boot) * np.sqrt(2)
    assert streamed.std(ddof=1) == pytest.approx(sd, rel=0.10)
    assert stats.ks_2samp(streamed, units).pvalue > 1e-3


# --- memory -------------------------------------------------------------------------------------------------------


class _Generated:
    """``n`` rows generated a piece at a time: scores i/n (distinct), a target 0..4 from a hash of i drifting up with
    the score, the label target ≥ 2; nothing of the whole table is held."""

    def __init__(self, n: int, rows: int = vs.PIECE_ROWS) -> None:
        self.n, self.rows = n, rows

    def pieces(self) -> Iterator[vt.ScoreTable]:
        for start in range(0, self.n, self.rows):
            i = np.arange(start, min(start + self.rows, self.n), dtype=np.int64)
            h = (i * 2654435761) % (1 << 32)
            t = ((h >> 8) % 5 + i * 5 // self.n) // 2
            yield vt.ScoreTable(i / self.n, t >= 2, t.astype(float), np.ones(i.size, dtype=np.int64))


def test_a_million_rows_cost_memory_by_the_piece_not_by_the_rows():
    n = 1_000_000
    source = _Generated(n)
    tracemalloc.start()
    try:
        points = vs.stream_points(source, ordinal=True, n_excluded=0)
        ci, undefined = vs.auc_bootstrap_stream(source, n_boot=200, seed=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The table in memory (float64 scores and targets, int64 weights, labels) would be 25 MiB, validity.py's arrays of
    # the units some 100 MiB. Measured, the peak is about 12 MiB: a chunk's draws for a pass of 200 replicates
    # (200 × 4096 counts of int64 for the two classes together, 6.3 MiB) and the pieces'.
    assert peak < 20 * 2**20, peak
    assert points["auc"].n_units == n and 0.5 < points["auc"].value < 1
    assert points["roc"]["n_points"] > va.ROC_MAX_POINTS == len(points["roc"]["fpr"])
    assert undefined == 0 and ci[0] < points["auc"].value < ci[1]
    assert points["kendall"].value > 0 and points["spearman"].value > 0
