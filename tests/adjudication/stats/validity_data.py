"""Units for the validity statistics' tests: scores, binary labels and correlation targets."""

from __future__ import annotations

import numpy as np


def ordinal(seed: int, n: int, *, decimals: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ordinal targets 0..4, the positive label target ≥ 2, and scores that follow the target with noise, rounded
    to ``decimals`` (ties within and across the classes; None: continuous)."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 5, n).astype(float)
    s = 0.3 * t + rng.normal(size=n)
    if decimals is not None:
        s = np.round(s, decimals)
    return s, t >= 2, t


def binary(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Binary labels with continuous scores, the targets the labels."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.35
    s = rng.normal(size=n) + 0.8 * y
    return s, y, y.astype(float)
