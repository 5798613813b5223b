"""The export card's agreement statistics, computed from answer patterns (adjudication.stats.pattern_agreement).

Checked two ways: equal to adjudication.stats.agreement (tested there against published values) on the
same random ratings, and against K-QA's three physicians — Fleiss' κ 0.7189 and Krippendorff's α
(nominal) 0.7191 over 399 statements, as computed in data/demo/kqa/MANIFEST.md.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings

from adjudication.stats import agreement
from adjudication.stats import pattern_agreement as pa


def _patterns(codes: np.ndarray) -> list[tuple[list[float], int]]:
    counter: Counter[tuple[float, ...]] = Counter()
    for row in codes:
        values = tuple(sorted(float(v) for v in row if not np.isnan(v)))
        if values:
            counter[values] += 1
    return [(list(k), n) for k, n in counter.items()]


def _ratings(seed: int, units: int = 300, raters: int = 4, k: int = 4, missing: float = 0.2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, size=units)
    codes = np.where(
        rng.random((units, raters)) < 0.6, truth[:, None], rng.integers(0, k, size=(units, raters))
    ).astype(float)
    codes[rng.random((units, raters)) < missing] = np.nan
    return codes


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_percent_agreement_equals_the_matrix_version(seed):
    codes = _ratings(seed)
    expected = agreement.percent_agreement(codes)
    got = pa.percent_agreement(_patterns(codes))
    assert got.value == pytest.approx(expected.value) and got.n_units == expected.n_units


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fleiss_kappa_equals_the_matrix_version(seed):
    codes = _ratings(seed, missing=0.1)
    expected = agreement.fleiss_kappa(codes, 4)
    got = pa.fleiss_kappa(_patterns(codes), 4)
    assert got.value == pytest.approx(expected.value) and got.n_units == expected.n_units


@pytest.mark.parametrize(("seed", "level"), [(1, "nominal"), (2, "ordinal"), (3, "interval"), (4, "ordinal")])
def test_krippendorff_alpha_equals_the_matrix_version(seed, level):
    codes = _ratings(seed)
    expected = agreement.krippendorff_alpha(codes, level, 4)
    got = pa.krippendorff_alpha(_patterns(codes), level, 4)
    assert got.value == pytest.approx(expected.value, abs=1e-9)


def test_undefined_cases_say_why():
    assert pa.fleiss_kappa([([0.0, 0.0], 5)], 2).value is None
    assert pa.krippendorff_alpha([([1.0], 3)], "nominal", 2).reason.startswith("no unit")
    assert pa.percent_agreement([]).value is None


def test_kqa_physicians_agreement_matches_the_published_figures():
    path = Path(settings.BASE_DIR) / "data" / "demo" / "kqa" / "NLI_medical_annotator.csv"
    scale = {"Entailment": 0.0, "Neutral": 1.0, "Contradiction": 2.0}
    counter: Counter[tuple[float, ...]] = Counter()
    with open(path, newline="", encoding="utf-8") as stream:
        for row in csv.DictReader(stream):
            counter[tuple(sorted(scale[row[f"label_{i}"]] for i in range(3)))] += 1
    patterns = [(list(k), n) for k, n in counter.items()]
    assert sum(n for _, n in patterns) == 399
    assert pa.fleiss_kappa(patterns, 3).value == pytest.approx(0.7189, abs=5e-4)
    assert pa.krippendorff_alpha(patterns, "nominal", 3).value == pytest.approx(0.7191, abs=5e-4)
    assert pa.percent_agreement(patterns).value == pytest.approx(312 / 399)
