"""Metric modules; importing this package registers every metric. A new metric is one new module here,
imported below."""

from scoring.metrics import cf, cr, icat, plainqafact, ra, retrieval, rf, rubric

__all__ = ["cf", "cr", "icat", "plainqafact", "ra", "retrieval", "rf", "rubric"]
