"""aggregate=mean_probability (Concord's continuous extension) for cf, rf and ICAT factuality: the mean of
the support probabilities instead of the count of supported units; hard-verdict backends refuse it."""

from __future__ import annotations

import pytest

from scoring.backends.base import Judgement
from scoring.metrics import ITEM, AspectInput, ChunkInput, ItemInput, MetricError, get_metric
from tests.scoring.backend_double import BackendDouble

PROBABILITY = {"Metformin lowers glucose.": 0.9, "Statins cure cancer.": 0.2, "Aspirin thins blood.": 0.7}
ITEM_INPUT = ItemInput(
    id="x", question="q", answer="", sentences=["Hello there!", *PROBABILITY],
    contexts=[ChunkInput(rank=1, text="Metformin lowers glucose. Aspirin thins blood.")],
    aspects=[AspectInput(ref=1, text="Metformin")],
)


class ProbabilityDouble(BackendDouble):
    """Support judgements with the stated probabilities (verdict = probability ≥ 0.5)."""

    def supports(self, claims, evidence, *, threshold=None):
        return [Judgement(PROBABILITY[c] >= 0.5, PROBABILITY[c], {}, probability=PROBABILITY[c]) for c in claims]


def _item_value(metric: str, backend, **params) -> float:
    spec = get_metric(metric)
    units = spec.score(ITEM_INPUT, backend, spec.resolve_params(params))
    return next(u for u in units if u.unit == ITEM).value


@pytest.mark.parametrize("metric, backend_name, extra", [
    ("cf", "learned", {"information_bearing": "rules"}),
    ("rf", "learned", {}),
])
def test_mean_probability_is_the_mean_over_the_information_bearing_sentences(metric, backend_name, extra):
    backend = ProbabilityDouble(backend_name, statements=list(PROBABILITY))
    # Hand-worked: the greeting is not information-bearing; (0.9 + 0.2 + 0.7) / 3 = 0.6; count: 2 / 3.
    assert _item_value(metric, backend, aggregate="mean_probability", **extra) == pytest.approx(0.6)
    assert _item_value(metric, backend, **extra) == pytest.approx(2 / 3)


def test_icat_factuality_becomes_the_mean_probability():
    backend = ProbabilityDouble("nli", statements=list(PROBABILITY))
    spec = get_metric("icat")
    (item, *_) = spec.score(ITEM_INPUT, backend, spec.resolve_params({"aggregate": "mean_probability"}))
    assert item.details["factuality"] == pytest.approx(0.6)
    counted = spec.score(ITEM_INPUT, backend, spec.resolve_params({}))[0]
    assert counted.details["factuality"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("metric, extra", [("cf", {"information_bearing": "rules"}), ("rf", {}), ("icat", {})])
def test_a_hard_verdict_backend_refuses_mean_probability(metric, extra):
    backend = BackendDouble("lexical", supported=set(PROBABILITY), statements=list(PROBABILITY))
    with pytest.raises(MetricError, match="aggregate=mean_probability needs support probabilities, and the lexical"):
        _item_value(metric, backend, aggregate="mean_probability", **extra)


def test_an_unknown_aggregate_is_refused():
    with pytest.raises(MetricError, match="aggregate"):
        get_metric("cf").resolve_params({"aggregate": "median"})
