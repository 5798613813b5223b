"""Shared pieces of the score-run tests: a small metric with controllable failures, eager Celery.

``probe`` is a real metric over the real ``lexical`` backend (fraction of answer sentences the
backend finds supported by the item's contexts); answers containing a marker make it fail in a
chosen way, so the tests can exercise per-item failures and transient retries.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from concord.celery import app
from scoring.metrics import ITEM, METRICS, ItemInput, Metric, Param, TransientBackendError, UnitScore, register
from scoring.metrics.base import sentence_unit

BOOM = "BOOM"  # the item raises an unexpected error
FLAKY = "FLAKY"  # the backend call fails transiently while FLAKY_FAILURES[item id] > 0

FLAKY_FAILURES: dict[str, int] = {}
# An item whose answer holds HOLD waits while the file named by CONCORD_TEST_HOLD_GATE exists: a test
# makes a run stop part-way for as long as it needs (a condition, not a duration).
HOLD = "HOLD"
HOLD_GATE_ENV = "CONCORD_TEST_HOLD_GATE"


class ProbeMetric(Metric):
    name = "probe"
    version = "1"
    title = "Probe (tests)"
    definition = "Fraction of answer sentences the backend finds supported by the item's contexts."
    units = ("item", "sentence")
    backends = ("lexical", "nli")
    parameters = {"threshold": Param(0.5, "support threshold", float)}

    def score(self, item: ItemInput, backend: Any, params: dict[str, Any], *, retriever: Any = None) -> list[UnitScore]:
        if BOOM in item.answer:
            raise RuntimeError(f"cannot score {item.id}")
        gate = os.environ.get(HOLD_GATE_ENV)
        if HOLD in item.answer and gate:
            while Path(gate).exists():
                time.sleep(0.05)
        if FLAKY in item.answer and FLAKY_FAILURES.get(item.id, 0) > 0:
            FLAKY_FAILURES[item.id] -= 1
            raise TransientBackendError("HTTP 429 from the judge")
        if not item.sentences:
            return [UnitScore(ITEM, None, "undetermined", {"reason": "no sentences"})]
        verdicts = backend.supports(item.sentences, [c.text for c in item.contexts], threshold=params["threshold"])
        units = [
            UnitScore(sentence_unit(i), 1.0 if v.verdict else 0.0, "ok", v.as_details()) for i, v in enumerate(verdicts)
        ]
        units.append(UnitScore(ITEM, sum(u.value for u in units) / len(units), "ok", {"n": len(units)}))
        return units


if "probe" not in METRICS:
    register(ProbeMetric)


@contextmanager
def eager_celery(*, propagate: bool = True) -> Iterator[None]:
    """Tasks run in-process when enqueued (settings CELERY_TASK_ALWAYS_EAGER, applied to the live app).

    Eager retries need ``propagate=False``: Celery re-applies a retried task only when the Retry is
    not propagated.
    """
    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, propagate
    try:
        yield
    finally:
        app.conf.task_always_eager, app.conf.task_eager_propagates = saved


def nli_available(settings: Any, directory: Path) -> Path:
    """Make the nli backend available to a run's start: ``NLI_MODEL_DIR`` names a directory holding a
    transformers config, which is what the start checks without loading a model. No model is there, so a
    worker loading it would fail the run: for tests that start runs and never score them."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text("{}")
    settings.NLI_MODEL_DIR = str(directory)
    return directory


def llm_available(settings: Any) -> None:
    """Make the llm backend available to a run's start (an endpoint and a model configured); nothing is called
    at the start, so for tests that start runs and never score them."""
    settings.LLM_BASE_URL = "https://llm.invalid/v1"
    settings.LLM_MODEL = "judge-model"
