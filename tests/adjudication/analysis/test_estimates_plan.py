"""Planning on the estimates report: labels for a target half-width with and without the metric, from the
labels of the pool's uniform sample so far (adjudication.stats.ppi.labels_for_half_width on the same arrays),
and the target's parsing (bounds, ASCII digits; anything else a ValidationFailed, a 400)."""

from __future__ import annotations

import numpy as np
import pytest

from adjudication.analysis.estimates import (
    DEFAULT_HALF_WIDTH,
    PROBABILITY,
    UNIFORM,
    SamplingDesign,
    estimate_compute,
    half_width_parse,
    plan_compute,
)
from adjudication.stats import ppi as ppi_stats
from concord.errors import ValidationFailed

RNG = np.random.default_rng(11)
N_POP = 400
SCORES = {1000 + i: float(s) for i, s in enumerate(RNG.uniform(size=N_POP))}
LABELS = {i: float(RNG.uniform() < 0.2 + 0.6 * s) for i, s in SCORES.items()}
DRAWN = sorted(RNG.choice(sorted(SCORES), 60, replace=False).tolist())


def _plan(design, labels=LABELS, half_width=0.05):
    result = estimate_compute(scores=SCORES, labels=labels, design=design, alpha=0.05)
    return plan_compute(scores=SCORES, labels=labels, design=design, result=result, half_width=half_width, alpha=0.05)


def test_a_uniform_sample_plans_with_labels_for_half_width_on_its_labels():
    design = SamplingDesign(UNIFORM, dict.fromkeys(DRAWN, 60 / N_POP), N_POP)
    plan = _plan(design)
    rest = [i for i in sorted(SCORES) if i not in set(DRAWN)]
    expected = ppi_stats.labels_for_half_width(
        [LABELS[i] for i in DRAWN], [SCORES[i] for i in DRAWN], [SCORES[i] for i in rest], 0.05
    )
    assert plan["available"] is True and plan["n_labelled"] == 60 and plan["population"] == N_POP
    assert plan["with_metric"] == expected.with_metric and plan["without_metric"] == expected.without_metric
    assert plan["with_metric_more"] == expected.with_metric - 60
    assert plan["with_metric"] < plan["without_metric"]  # the metric carries information here
    wider = _plan(design, half_width=0.1)
    assert wider["without_metric"] < plan["without_metric"]


def test_no_plan_without_a_valid_estimate_when_exact_or_for_a_probability_design():
    assert "no valid estimate" in _plan(None, labels={DRAWN[0]: 1.0})["reason"]
    assert "every item of the population is labelled" in _plan(None)["reason"]
    design = SamplingDesign(PROBABILITY, dict.fromkeys(DRAWN, 0.15), N_POP)
    plan = _plan(design)
    assert plan["available"] is False and "unequal probabilities" in plan["reason"]


@pytest.mark.parametrize("raw, value", [(None, DEFAULT_HALF_WIDTH), ("", DEFAULT_HALF_WIDTH), (" 0.1 ", "0.1"),
                                        (".02", ".02"), ("0.5", "0.5"), ("0.005", "0.005")])  # fmt: skip
def test_the_half_width_takes_a_short_decimal_within_bounds(raw, value):
    assert half_width_parse(raw) == value


@pytest.mark.parametrize("raw", ["0.004", "0.6", "1", "1e-2", "٠.٠٥", "0.05x", "-0.05", "0.00001", "nan", 0.05])
def test_a_half_width_outside_the_bounds_or_not_a_plain_decimal_is_refused(raw):
    with pytest.raises(ValidationFailed, match=r"half_width must be a number from 0\.005 to 0\.5"):
        half_width_parse(raw)
