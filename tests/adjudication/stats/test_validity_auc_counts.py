"""The AUC bootstrap computes each replicate from how many times each unit was drawn (validity._AucCounter), not by
ranking the pooled resample with scipy's rankdata: a few arrays of m and n per replicate instead of eight of m + n.
Its replicates must be the rankdata ones to the last bit (the Mann-Whitney U is exact in both: half-integer midranks
summed in float64 there, 2U an exact integer here), and the interval the reports write must not move: the old
implementation is kept below, whole, and compared with on the same seeds."""

from __future__ import annotations

import copy
from unittest import mock

import numpy as np
import pytest
from scipy import stats

from adjudication.stats import agreement as ag
from adjudication.stats import validity as v

# --- the implementation as it was: rankdata of the pooled resample, eight arrays a unit ---------------------------


def _old_stratified_blocks(rng, m, n, n_boot, progress):
    step = ag.block_rows(m + n, 8)
    done = 0
    while done < n_boot:
        size = min(ag.BOOT_BATCH, n_boot - done)
        negatives = copy.deepcopy(rng)
        for _ in ag.draw_rows(negatives, m, size, ag.block_rows(m)):
            pass
        yield from zip(ag.draw_rows(rng, m, size, step), ag.draw_rows(negatives, n, size, step), strict=True)
        rng = negatives
        done += size
        if progress is not None:
            progress(done, n_boot)


def _old_rank_replicates(pos, neg, pos_idx, neg_idx):
    m, n = pos.size, neg.size
    ranks = stats.rankdata(np.concatenate([pos[pos_idx], neg[neg_idx]], axis=1), axis=1)
    return (ranks[:, :m].sum(axis=1) - m * (m + 1) / 2.0) / (m * n)


def _old_auc_bootstrap_ci(scores, labels, *, n_boot, seed, progress=None):
    s, y, _ = v._clean(scores, labels)
    if y.all() or not y.any():
        return None, 0
    pos, neg = s[y], s[~y]
    m, n = pos.size, neg.size
    out = [
        _old_rank_replicates(pos, neg, pos_idx, neg_idx)
        for pos_idx, neg_idx in _old_stratified_blocks(np.random.default_rng(seed), m, n, n_boot, progress)
    ]
    return ag.percentile_ci(np.concatenate(out))


# --- data ---------------------------------------------------------------------------------------------------------


def _scores(rng: np.random.Generator, size: int, ties: bool) -> np.ndarray:
    """Integers in a small range (ties within and across the classes), or continuous values (no ties)."""
    return rng.integers(0, 6, size).astype(float) if ties else rng.normal(size=size)


SIZES = [(1, 1), (1, 9), (9, 1), (2, 3), (17, 40), (250, 113), (1000, 1500)]


@pytest.mark.parametrize("ties", [True, False])
@pytest.mark.parametrize(("m", "n"), SIZES)
def test_a_replicate_from_multiplicities_is_the_rank_sums_bit_for_bit(ties, m, n):
    for seed in range(4):
        rng = np.random.default_rng(seed)
        pos, neg = _scores(rng, m, ties) + (0.5 if seed % 2 else 0.0), _scores(rng, n, ties)
        if seed == 3:
            neg[: n // 2] = -0.0  # -0.0 and 0.0 tie, in rankdata as in searchsorted
            pos[: m // 2] = 0.0
        pos_idx = rng.integers(0, m, (23, m))
        neg_idx = rng.integers(0, n, (23, n))
        got = v._AucCounter(pos, neg).replicates(pos_idx, neg_idx)
        expected = _old_rank_replicates(pos, neg, pos_idx, neg_idx)
        assert got.dtype == expected.dtype == np.float64
        np.testing.assert_array_equal(got, expected)
        # One row at a time (the block's size) gives the same numbers.
        counter = v._AucCounter(pos, neg)
        one = np.concatenate([counter.replicates(pos_idx[r : r + 1], neg_idx[r : r + 1]) for r in range(23)])
        np.testing.assert_array_equal(one, expected)


def test_a_replicate_is_exact_where_every_unit_ties():
    """All scores equal: every replicate is 0.5 exactly; all positives above all negatives: 1.0."""
    rng = np.random.default_rng(0)
    pos_idx, neg_idx = rng.integers(0, 30, (5, 30)), rng.integers(0, 20, (5, 20))
    np.testing.assert_array_equal(v._AucCounter(np.ones(30), np.ones(20)).replicates(pos_idx, neg_idx), 0.5)
    np.testing.assert_array_equal(v._AucCounter(np.ones(30), np.zeros(20)).replicates(pos_idx, neg_idx), 1.0)


@pytest.mark.parametrize("cells", [1, 97, 1 << 21])
@pytest.mark.parametrize("ties", [True, False])
@pytest.mark.parametrize(("m", "n"), [(1, 1), (1, 30), (30, 1), (40, 57), (700, 301)])
def test_the_bootstrap_interval_is_the_old_implementations(monkeypatch, cells, ties, m, n):
    monkeypatch.setattr(ag, "BOOT_CELLS", cells)
    for seed in (0, 11):
        rng = np.random.default_rng(seed + 50)
        scores = np.concatenate([_scores(rng, m, ties) + 1.0, _scores(rng, n, ties)])
        labels = np.r_[np.ones(m), np.zeros(n)]
        order = rng.permutation(m + n)  # the classes mixed, as a report's units are
        scores, labels = scores[order], labels[order]
        scores[rng.random(m + n) < 0.05] = np.nan  # units without a score are dropped by both
        if np.isnan(scores[labels == 1]).all() or np.isnan(scores[labels == 0]).all():
            continue
        for n_boot in (1, 50, 123):
            old_calls: list[tuple[int, int]] = []
            new_calls: list[tuple[int, int]] = []
            expected = _old_auc_bootstrap_ci(scores, labels, n_boot=n_boot, seed=seed, progress=_append(old_calls))
            got = v.auc_bootstrap_ci(scores, labels, n_boot=n_boot, seed=seed, progress=_append(new_calls))
            assert got == expected
            assert new_calls == old_calls


def _append(calls: list[tuple[int, int]]):
    return lambda done, total: calls.append((done, total))


def test_a_block_of_the_auc_bootstrap_is_sized_for_the_counts_not_the_ranks():
    """At a million units a block is one row, and the rows of a block cost _AUC_ARRAYS cells a unit."""
    assert ag.block_rows(1_000_000, v._AUC_ARRAYS) == 1
    assert v._AUC_ARRAYS < 8


# --- DeLong's components from the sorted other class, against the midranks ------------------------------------------


def _old_delong_components(scores, positive):
    scores = np.atleast_2d(scores)
    x = scores[:, positive]
    y = scores[:, ~positive]
    m, n = x.shape[1], y.shape[1]
    tx = stats.rankdata(x, axis=1)
    ty = stats.rankdata(y, axis=1)
    tz = stats.rankdata(np.concatenate([x, y], axis=1), axis=1)
    aucs = (tz[:, :m].sum(axis=1) - m * (m + 1) / 2.0) / (m * n)
    v10 = (tz[:, :m] - tx) / n
    v01 = 1.0 - (tz[:, m:] - ty) / m
    return aucs, v10, v01


@pytest.mark.parametrize("rows", [1, 2])
@pytest.mark.parametrize("ties", [True, False])
@pytest.mark.parametrize(("m", "n"), SIZES)
def test_delong_components_are_the_midranks_bit_for_bit(rows, ties, m, n):
    for seed in range(3):
        rng = np.random.default_rng(seed + 10)
        positive = rng.permutation(np.r_[np.ones(m, dtype=bool), np.zeros(n, dtype=bool)])
        scores = np.vstack([_scores(rng, m + n, ties) + positive * (seed * 0.5) for _ in range(rows)])
        if seed == 2:
            scores[:, : (m + n) // 2] = 0.0
            scores[:, : (m + n) // 4] = -0.0
        old = _old_delong_components(scores, positive)
        for got, expected in zip(v._delong_components(scores, positive), old, strict=True):
            assert got.shape == expected.shape and got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)
        # What the reports print from them: the same text.
        labels = positive.astype(float)
        assert repr(v.roc_auc(scores[0], labels)) == repr(_old_roc_auc(scores[0], labels))
        if rows == 2:
            assert repr(v.delong_paired(scores[0], scores[1], labels).as_dict()) == repr(
                _old_delong_paired(scores[0], scores[1], labels)
            )


def _old_roc_auc(scores, labels):
    with mock.patch.object(v, "_delong_components", _old_delong_components):
        return v.roc_auc(scores, labels)


def _old_delong_paired(a, b, labels):
    with mock.patch.object(v, "_delong_components", _old_delong_components):
        return v.delong_paired(a, b, labels).as_dict()
