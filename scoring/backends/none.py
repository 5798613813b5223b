"""The ``none`` backend: for metrics computed from labels alone (``retrieval``); it makes no judgements at all."""

from __future__ import annotations

from typing import Any

from scoring.backends.base import AVAILABLE, Backend, BackendDescriptor, register
from scoring.metrics.base import BackendUnavailable


class NoBackend(Backend):
    name = "none"
    identity = "none: computed from labelled ranks, no model"


def get_no_backend(**options: Any) -> NoBackend:
    if options:
        raise BackendUnavailable(f"the none backend takes no options, got {sorted(options)}")
    return NoBackend()


DESCRIPTOR = register(BackendDescriptor(
    name="none",
    queue="scoring-cpu",
    batch_size=1000,
    build=get_no_backend,
    check=lambda options, study_id: AVAILABLE,
))
