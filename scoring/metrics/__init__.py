"""Metrics: declarative, pure functions of plain data (``scoring.metrics.base`` holds the contract).

Importing this package registers every metric. A new metric is one new module here, imported below.
:func:`get_metric` and :func:`score_item` are what the scoring services and the ``score`` command call.
"""

from __future__ import annotations

from typing import Any

from scoring.metrics import cf, cr, icat, plainqafact, ra, retrieval, rf, rubric
from scoring.metrics.base import (
    ITEM,
    METRICS,
    AspectInput,
    BackendResponseError,
    BackendUnavailable,
    ChunkInput,
    ItemInput,
    Judge,
    Metric,
    MetricError,
    Param,
    Retriever,
    TransientBackendError,
    UnitRef,
    UnitScore,
    register,
)

__all__ = [
    "ITEM",
    "METRICS",
    "AspectInput",
    "BackendResponseError",
    "BackendUnavailable",
    "ChunkInput",
    "ItemInput",
    "Judge",
    "Metric",
    "MetricError",
    "Param",
    "Retriever",
    "TransientBackendError",
    "UnitRef",
    "UnitScore",
    "cf",
    "cr",
    "get_metric",
    "icat",
    "plainqafact",
    "ra",
    "register",
    "retrieval",
    "rf",
    "rubric",
    "score_item",
]


def get_metric(name: str) -> Metric:
    try:
        return METRICS[name]()
    except KeyError:
        raise MetricError(f"unknown metric {name!r}; known: {sorted(METRICS)}") from None


def score_item(
    metric: Metric,
    item: ItemInput,
    backend: Judge,
    params: dict[str, Any],
    *,
    retriever: Retriever | None = None,
    final_attempt: bool = True,
) -> list[UnitScore]:
    """Score one item, turning per-item backend failures into a ``failed`` item score.

    ``TransientBackendError`` propagates (so the caller can retry) unless ``final_attempt``;
    ``BackendResponseError`` always becomes a failed score. Any other ``MetricError`` (bad
    parameters, backend not allowed, backend unavailable) propagates: the whole run cannot work.
    """
    if backend is not None and getattr(backend, "name", None) not in metric.backends:
        raise MetricError(
            f"{metric.name} cannot use the {getattr(backend, 'name', backend)!r} backend; "
            f"allowed: {', '.join(metric.backends)}"
        )
    identity = str(getattr(backend, "identity", "") or "")
    try:
        scores = metric.score(item, backend, params, retriever=retriever)
        # Every stored score names the backend and model that produced it, not only its run.
        for unit in scores:
            unit.details.setdefault("backend_identity", identity)
        return scores
    except BackendResponseError as exc:
        return [
            UnitScore(ITEM, None, "failed", {"error": str(exc), "error_type": "BackendResponseError",
                                             "backend_identity": identity, **exc.details})
        ]
    except TransientBackendError as exc:
        if not final_attempt:
            raise
        return [UnitScore(ITEM, None, "failed", {"error": str(exc), "error_type": "TransientBackendError",
                                                 "backend_identity": identity})]
