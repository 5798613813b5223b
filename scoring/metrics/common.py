"""Helpers shared by the metric modules (pure: plain data in, plain data out)."""

from __future__ import annotations

from typing import Any

from scoring.metrics.base import ItemInput, Metric, MetricError


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
