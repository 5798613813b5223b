"""The bootstraps draw their resamples a block of rows at a time (rows × units ≤ BOOT_CELLS) and compute each
block's replicates before drawing the next, so that memory does not grow with the number of units times
BOOT_BATCH. Every interval must stay what drawing each batch of BOOT_BATCH resamples at once gave:

- numpy's Generator.integers fills an array from the stream element by element in C order, so drawing (50, n) at
  once, 50 × (1, n) or (7, n) seven times and (1, n) once gives the same numbers. That is numpy's behaviour, not a
  documented guarantee: pinned here for several n (odd ones, whose 32-bit draws leave half a 64-bit word over),
  several seeds and block sizes that divide nothing, so that a numpy upgrade that changed it fails loudly;
- each bootstrap's replicates (interval α on sums, the stratified AUC) equal, to the last bit, those of the
  functions as they were before the blocks (kept below: the whole batch drawn at once by ``resample_indices``, the
  AUC's positives' batch then its negatives' batch), whatever the block size, with the same progress calls;
- the categorical agreement bootstraps (Fleiss' κ, α nominal/ordinal/interval on counts) resample the count table's
  patterns (``pattern_resamples``: a multinomial draw of the units over the patterns): numpy's multinomial fills
  its rows one after another, so drawing a batch at once or a block of rows at a time gives the same counts (pinned
  here too), and each replicate equals the statistic of its resample's whole table (each pattern's row as many
  times as drawn) computed as before, whatever the block size, with the same progress calls.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from adjudication.stats import agreement as ag
from adjudication.stats import validity as v

SEEDS = (0, 7, 2026)
SIZES = (1, 2, 7, 97, 1001)


# --- the functions as they were: each batch of BOOT_BATCH resamples drawn and computed at once ---------------------


def _pattern_batches(counts, n_boot, seed, progress):
    """Each batch of BOOT_BATCH resamples drawn at once as pattern counts, as the tables of the resamples (indices
    into the rows of ``counts`` sorted as the patterns are, each pattern's first row as many times as drawn)."""
    patterns = ag.CountPatterns.of(counts)
    rng = np.random.default_rng(seed)
    n = patterns.n_units
    done = 0
    while done < n_boot:
        size = min(ag.BOOT_BATCH, n_boot - done)
        drawn = rng.multinomial(n, patterns.weights / n, size=size)
        yield np.stack([np.repeat(patterns.rows, row, axis=0) for row in drawn])
        done += size
        if progress is not None:
            progress(done, n_boot)


def _old_fleiss_boot(counts, m, n_boot, seed, progress):
    n, _ = counts.shape
    out = []
    for tables in _pattern_batches(counts, n_boot, seed, progress):
        per_unit = ((tables * tables).sum(axis=2) - m) / (m * (m - 1))
        p_bar = per_unit.mean(axis=1)
        p = tables.sum(axis=1) / (n * m)
        p_e = (p * p).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append(np.where(p_e < 1.0 - 1e-15, (p_bar - p_e) / (1.0 - p_e), np.nan))
    return np.concatenate(out)


def _old_interval_boot_from_sums(m, s1, s2, n_boot, seed, progress):
    within = 2.0 * (m * s2 - s1 * s1) / (m - 1.0)
    out = []
    for idx in ag.resample_indices(np.random.default_rng(seed), m.shape[0], n_boot, progress):
        n = m[idx].sum(axis=1)
        t1 = s1[idx].sum(axis=1)
        t2 = s2[idx].sum(axis=1)
        d_e = 2.0 * (n * t2 - t1 * t1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out.append(np.where(d_e > 0, 1.0 - (n - 1.0) * within[idx].sum(axis=1) / d_e, np.nan))
    return np.concatenate(out)


def _old_categorical_boot(counts, level, n_boot, seed, progress):
    out = []
    for tables in _pattern_batches(counts, n_boot, seed, progress):
        scaled = tables / (tables.sum(axis=2).astype(float) - 1.0)[:, :, None]
        o = np.einsum("bnk,bnl->bkl", scaled, tables)
        o[:, np.arange(counts.shape[1]), np.arange(counts.shape[1])] -= scaled.sum(axis=1)
        out.append(ag._alpha_from_coincidence(o, level))
    return np.concatenate(out)


def _old_auc_replicates(pos, neg, n_boot, seed, progress):
    m, n = pos.size, neg.size
    rng = np.random.default_rng(seed)
    out = []
    neg_batches = ag.resample_indices(rng, n, n_boot, None)
    for pos_idx in ag.resample_indices(rng, m, n_boot, progress):
        neg_idx = next(neg_batches)
        ranks = stats.rankdata(np.concatenate([pos[pos_idx], neg[neg_idx]], axis=1), axis=1)
        out.append((ranks[:, :m].sum(axis=1) - m * (m + 1) / 2.0) / (m * n))
    return np.concatenate(out)


# --- numpy's stream, pinned --------------------------------------------------------------------------------------


def _blocks(rng: np.random.Generator, high: int, rows: int, step: int) -> np.ndarray:
    return np.vstack([rng.integers(0, high, size=(min(step, rows - s), high)) for s in range(0, rows, step)])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_numpy_draws_the_same_integers_whole_or_in_blocks_of_rows(seed, n):
    """Generator.integers(0, n, (rows, n)) in one call or in blocks of rows: the same numbers, and the generator
    left in the same state (the next draw is the same). If this fails after a numpy upgrade, every bootstrap
    interval of the reports may have changed for a given seed: drawing in blocks no longer reproduces the seed."""
    whole = np.random.default_rng(seed)
    expected = whole.integers(0, n, size=(50, n))
    after = whole.integers(0, n, size=(3, n + 2))
    for step in (1, 3, 7, 49, 50):
        rng = np.random.default_rng(seed)
        np.testing.assert_array_equal(_blocks(rng, n, 50, step), expected)
        np.testing.assert_array_equal(rng.integers(0, n, size=(3, n + 2)), after)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weights", [(1,), (2, 1), (5, 1, 1, 3), (40, 7, 0, 1, 900, 2, 3)])
def test_numpy_draws_the_same_multinomial_counts_whole_or_in_blocks_of_rows(seed, weights):
    """Generator.multinomial(n, p, size=rows) in one call or in blocks of rows: the same counts, and the generator
    left in the same state. If this fails after a numpy upgrade, the agreement intervals may have changed for a
    given seed: drawing in blocks no longer reproduces the seed."""
    w = np.array(weights, dtype=np.int64)
    n, p = int(w.sum()), w / w.sum()
    whole = np.random.default_rng(seed)
    expected = whole.multinomial(n, p, size=50)
    after = whole.multinomial(n, p, size=3)
    for step in (1, 3, 7, 49, 50):
        rng = np.random.default_rng(seed)
        got = np.vstack([rng.multinomial(n, p, size=min(step, 50 - s)) for s in range(0, 50, step)])
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(rng.multinomial(n, p, size=3), after)
    blocks = np.vstack(list(ag.pattern_resamples(np.random.default_rng(seed), w, 50, None)))
    np.testing.assert_array_equal(blocks, expected)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("m", "n"), [(1, 1), (3, 8), (97, 13), (1001, 1)])
def test_numpy_draws_two_interleaved_batches_the_same_in_blocks_and_from_a_copy(seed, m, n):
    """The AUC's stream: a batch of positives' rows, then the batch's negatives' rows, then the next batch. A
    copy of the generator moved past the positives (in blocks) draws the negatives; the copy goes on with the
    next batch."""
    whole = np.random.default_rng(seed)
    expected = [(whole.integers(0, m, size=(50, m)), whole.integers(0, n, size=(50, n))) for _ in range(3)]
    for step in (1, 4, 50):
        rng = np.random.default_rng(seed)
        for pos, neg in expected:
            copy = v.copy.deepcopy(rng)
            _blocks(copy, m, 50, 6)
            np.testing.assert_array_equal(_blocks(rng, m, 50, step), pos)
            np.testing.assert_array_equal(_blocks(copy, n, 50, step), neg)
            rng = copy


@pytest.mark.parametrize("cells", [1, 5, 700, 1 << 21])
@pytest.mark.parametrize("n", SIZES)
def test_resample_blocks_are_the_rows_of_resample_indices_with_the_same_progress(monkeypatch, cells, n):
    monkeypatch.setattr(ag, "BOOT_CELLS", cells)
    for seed in SEEDS:
        old_calls: list[tuple[int, int]] = []
        new_calls: list[tuple[int, int]] = []
        expected = np.vstack(list(ag.resample_indices(np.random.default_rng(seed), n, 123, _append(old_calls))))
        blocks = list(ag.resample_blocks(np.random.default_rng(seed), n, 123, 3, _append(new_calls)))
        assert all(b.shape[0] * n * 3 <= cells or b.shape[0] == 1 for b in blocks)
        np.testing.assert_array_equal(np.vstack(blocks), expected)
        assert new_calls == old_calls == [(50, 123), (100, 123), (123, 123)]


def _append(calls: list[tuple[int, int]]):
    return lambda done, total: calls.append((done, total))


# --- every bootstrap, against the functions as they were ---------------------------------------------------------


def _counts(rng: np.random.Generator, n_units: int, k: int, raters: int) -> np.ndarray:
    counts = np.zeros((n_units, k), dtype=np.int64)
    for _ in range(raters):
        counts[np.arange(n_units), rng.integers(0, k, n_units)] += 1
    return counts


@pytest.mark.parametrize("cells", [1, 13, 700, 1 << 21])
@pytest.mark.parametrize("n_units", [2, 7, 97, 1001])
def test_agreement_bootstraps_are_those_of_the_whole_batch_whatever_the_block(monkeypatch, cells, n_units):
    monkeypatch.setattr(ag, "BOOT_CELLS", cells)
    for seed in SEEDS:
        rng = np.random.default_rng(seed + 100)
        for k, raters in ((2, 3), (3, 2), (5, 4)):
            counts = _counts(rng, n_units, k, raters)
            for n_boot in (1, 50, 123):
                old_calls: list[tuple[int, int]] = []
                new_calls: list[tuple[int, int]] = []
                patterns = ag.CountPatterns.of(counts)
                # κ from the patterns' sums rather than the resample table's: the same draws, the same κ to rounding.
                np.testing.assert_allclose(
                    ag._fleiss_boot(patterns, raters, n_boot, seed, _append(new_calls)),
                    _old_fleiss_boot(counts, raters, n_boot, seed, _append(old_calls)),
                    rtol=1e-12, atol=1e-13,
                )
                for level in ("nominal", "ordinal", "interval"):
                    # α's replicates come from the draws' multiplicities (exact integer coincidences) rather than
                    # float sums over the resample's rows: the same draws, the same α to rounding.
                    np.testing.assert_allclose(
                        ag._categorical_boot(patterns, level, n_boot, seed, _append(new_calls)),
                        _old_categorical_boot(counts, level, n_boot, seed, _append(old_calls)),
                        rtol=1e-12, atol=1e-13,
                    )
                assert new_calls == old_calls
        values = rng.normal(size=(n_units, 4)).round(2)
        values[rng.random(values.shape) < 0.3] = np.nan
        values[:, :2] = np.nan_to_num(values[:, :2])
        sums = ag._interval_sums(values)
        np.testing.assert_array_equal(
            ag._interval_boot_from_sums(*sums, 123, seed, None), _old_interval_boot_from_sums(*sums, 123, seed, None)
        )


def _auc_replicates(monkeypatch, scores, labels, n_boot, seed, progress):
    """The replicates auc_bootstrap_ci hands to percentile_ci, and the interval it returns."""
    seen: list[np.ndarray] = []

    def keep(samples):
        seen.append(samples)
        return ag.percentile_ci(samples)

    monkeypatch.setattr(v, "percentile_ci", keep)
    ci = v.auc_bootstrap_ci(scores, labels, n_boot=n_boot, seed=seed, progress=progress)
    monkeypatch.setattr(v, "percentile_ci", ag.percentile_ci)
    return seen[0], ci


@pytest.mark.parametrize("cells", [1, 13, 700, 1 << 21])
@pytest.mark.parametrize(("m", "n"), [(1, 1), (1, 6), (5, 2), (40, 57), (301, 700)])
def test_auc_bootstrap_is_that_of_the_whole_batch_whatever_the_block(monkeypatch, cells, m, n):
    monkeypatch.setattr(ag, "BOOT_CELLS", cells)
    for seed in SEEDS:
        rng = np.random.default_rng(seed + 200)
        pos = rng.integers(0, 20, m) / 4 + 1.0  # ties, so midranks matter
        neg = rng.integers(0, 20, n) / 4
        scores = np.concatenate([pos, neg])
        labels = np.r_[np.ones(m, dtype=int), np.zeros(n, dtype=int)]
        for n_boot in (1, 50, 123):
            old_calls: list[tuple[int, int]] = []
            new_calls: list[tuple[int, int]] = []
            expected = _old_auc_replicates(pos, neg, n_boot, seed, _append(old_calls))
            got, ci = _auc_replicates(monkeypatch, scores, labels, n_boot, seed, _append(new_calls))
            np.testing.assert_array_equal(got, expected)
            assert ci == ag.percentile_ci(expected)
            assert new_calls == old_calls


def test_reports_json_does_not_depend_on_the_block(monkeypatch):
    """The summaries the reports write: the same JSON text one row at a time as with the default blocks."""
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 3, size=(250, 4)).astype(float)
    codes[rng.random(codes.shape) < 0.4] = np.nan
    sparse = ag.SparseRatings.from_dense(codes)
    scores = rng.normal(size=400)
    labels = (scores + rng.normal(size=400) > 0).astype(int)

    def summaries() -> str:
        out = [v.validity_summary(scores, labels, n_boot=130, seed=3)]
        for level in ("nominal", "ordinal", "interval"):
            out.append(
                ag.agreement_summary_sparse(
                    sparse, level=level, scale=[0, 1, 2], rater_names=list("abcd"), n_boot=130, seed=3
                )
            )
        return json.dumps(out, default=str)

    default = summaries()
    monkeypatch.setattr(ag, "BOOT_CELLS", 1)
    assert summaries() == default
