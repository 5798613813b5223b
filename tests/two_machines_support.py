"""The metric of tests/test_two_machines.py, imported by its workers with ``--include``: the test-only ``probe``
(tests/scoring/runs_support.py, whose items holding HOLD wait while a gate file exists) on the model backends too,
so that one study's runs go to both worker groups: on ``lexical`` to scoring-cpu, on ``llm`` to scoring-llm."""

from __future__ import annotations

from scoring.metrics import METRICS, register
from tests.scoring.runs_support import ProbeMetric


class ModelProbeMetric(ProbeMetric):
    name = "probe_models"
    title = "Probe on model backends (tests)"
    backends = ("lexical", "llm")


if ModelProbeMetric.name not in METRICS:
    register(ModelProbeMetric)
