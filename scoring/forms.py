"""The start-a-run form, generated from the metric registry's parameter specs and the backends' descriptors.

Each metric's fields are named ``<metric>__<param>`` (and ``<metric>__backend``), so one page can
carry every metric's fieldset and the server reads only the chosen metric's. The form only parses: every
check of the run (the knowledge base is the study's, the backend is available here, its options are within
their bounds) is ``services.score_run_start``'s, which the REST API calls too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import QueryDict

from concord import parsers
from concord.errors import ValidationFailed
from concord.params import parse_id, parse_int
from scoring.backends import BACKENDS
from scoring.metrics import METRICS, Metric, Param
from scoring.services import MAX_BATCH_SIZE


@dataclass(frozen=True)
class ParamField:
    name: str  # form field name
    key: str
    spec: Param

    @property
    def widget(self) -> str:
        if self.spec.choices is not None:
            return "select"
        if self.spec.type is bool:
            return "checkbox"
        if self.spec.type in (int, float):
            return "number"
        return "text"

    @property
    def step(self) -> str:
        return "1" if self.spec.type is int else "any"


@dataclass(frozen=True)
class MetricEntry:
    metric: type[Metric]
    fields: list[ParamField]

    @property
    def name(self) -> str:
        return self.metric.name


def catalogue() -> dict[str, MetricEntry]:
    return {
        name: MetricEntry(cls, [ParamField(f"{name}__{key}", key, spec) for key, spec in cls.parameters.items()])
        for name, cls in sorted(METRICS.items())
    }


def _value(spec: Param, raw: str | None) -> Any:
    if spec.type is bool:
        return (raw or "").strip().lower() in {"on", "true", "1", "yes"}
    if raw is None or raw.strip() == "":
        return None
    return raw.strip()


@dataclass(frozen=True)
class BackendOptionRules:
    backend: str
    rules: list[tuple[str, str]]  # (option, its rule in words), from the backend's descriptor


def backend_option_rules() -> list[BackendOptionRules]:
    """What a run may ask of each backend, as its descriptor declares it (the bounds the service enforces)."""
    out = []
    for name, descriptor in BACKENDS.items():
        # The study option is the run's own, set by the services: nothing a researcher gives.
        rules = [(key, option.describe()) for key, option in descriptor.options.items() if option.kind != "study"]
        if rules:
            out.append(BackendOptionRules(name, rules))
    return out


def parse_run_form(data: QueryDict) -> dict[str, Any]:
    """Keyword arguments for ``services.score_run_start`` (validated there), from the posted form."""
    metric = (data.get("metric") or "").strip()
    entry = catalogue().get(metric)
    if entry is None:
        raise ValidationFailed(f"Choose a metric (unknown: {metric!r}).")
    parameters: dict[str, Any] = {}
    for field in entry.fields:
        value = _value(field.spec, data.get(field.name))
        if value is not None:
            parameters[field.key] = value
    knowledge_base = None
    kb_raw = (data.get("knowledge_base") or "").strip()
    if kb_raw:
        # An id only; whether it is one of the study's knowledge bases is the service's question.
        knowledge_base = parse_id(kb_raw)
        if knowledge_base is None:
            raise ValidationFailed("The knowledge base must be given by its id.")
    try:
        alpha = float((data.get("retrieval_alpha") or "0.5").strip())
    except ValueError:
        raise ValidationFailed("Alpha must be a number.") from None
    raw_batch = (data.get("batch_size") or "").strip()
    batch_size = parse_int(raw_batch, name="batch size", minimum=1, maximum=MAX_BATCH_SIZE) if raw_batch else None
    raw_options = (data.get("backend_options") or "").strip()
    try:
        backend_options = parsers.loads(raw_options) if raw_options else {}
    except ValueError as exc:
        raise ValidationFailed(f"Backend options must be a JSON object ({getattr(exc, 'msg', exc)}).") from None
    if not isinstance(backend_options, dict):
        raise ValidationFailed("Backend options must be a JSON object.")
    return {
        "metric": metric,
        "backend_options": backend_options,
        "backend": (data.get(f"{metric}__backend") or "").strip(),
        "parameters": parameters,
        "knowledge_base": knowledge_base,
        "retrieval_alpha": alpha,
        "batch_size": batch_size,
    }
