"""Helpers shared by the metric modules (pure: plain data in, plain data out)."""

from __future__ import annotations

from typing import Any

from scoring.metrics.base import ItemInput, Judgement, Metric, MetricError, Param


def require_backend(metric: Metric, backend: Any) -> None:
    """Refuse a backend the metric does not declare; never substitute another one."""
    name = getattr(backend, "name", None)
    if name not in metric.backends:
        raise MetricError(f"{metric.name} cannot use the {name!r} backend; allowed: {', '.join(metric.backends)}")


def context_texts(item: ItemInput) -> list[str]:
    """The retrieved chunks' texts in rank order: the context the answer was generated from."""
    return [c.text for c in sorted(item.contexts, key=lambda c: c.rank)]


def fraction(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


AGGREGATES = ("count", "mean_probability")


def aggregate_param() -> Param:
    """The ``aggregate`` parameter of the fraction metrics (cf, rf, icat factuality): Concord's extension."""
    return Param(
        "count", "count: the fraction of units whose verdict is positive (the paper's definition); "
        "mean_probability: the mean of the backend's support probabilities (Concord's continuous extension, "
        "for metric-vs-human AUC; backends with hard verdicts only refuse it).", str, AGGREGATES,
    )


def mean_probability(metric: str, backend_name: str, judgements: list[Judgement]) -> float | None:
    """The mean support probability of the judgements (None when there are none); a judgement without a
    probability (a hard-verdict backend) refuses the aggregate rather than counting a verdict as 0 or 1."""
    if not judgements:
        return None
    probabilities = [j.probability for j in judgements]
    if any(p is None for p in probabilities):
        raise MetricError(
            f"{metric} with aggregate=mean_probability needs support probabilities, and the {backend_name} backend "
            "gives hard verdicts only; use aggregate=count or a backend that gives probabilities (learned, nli)"
        )
    return float(sum(p for p in probabilities if p is not None) / len(probabilities))
