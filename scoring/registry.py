"""The metric registry and the plain-data contract between metrics and the rest of Concord.

Metrics are pure with respect to the database: they receive an ``ItemInput`` (plain data built by
``scoring.services`` from the ORM) and a backend, and return ``UnitScore`` rows. A new metric is one
new module in ``scoring/metrics/`` that defines a ``Metric`` subclass decorated with ``@register``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol

State = Literal["ok", "undetermined", "failed"]


class MetricError(Exception):
    """Raised for a metric that cannot run at all (bad parameters, backend not allowed)."""


class BackendUnavailable(MetricError):
    """The requested backend cannot run here (model not installed, endpoint not configured).

    Never caught to try another backend: the run fails with this message.
    """


class BackendResponseError(MetricError):
    """A backend answered, but not usably (an LLM reply that stays malformed after the bounded
    in-call retries). Not transient: ``score_item`` records it as a ``failed`` item score, with
    ``details`` (e.g. the raw outputs) kept alongside the message."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


class TransientBackendError(Exception):
    """A backend call failed for a reason that may pass (HTTP 429/5xx, a timeout, a refused
    connection) after its in-call retries were spent. Celery tasks retry on this one error type;
    on the last attempt ``score_item(..., final_attempt=True)`` records a ``failed`` item score."""


@dataclass(frozen=True)
class ChunkInput:
    rank: int
    text: str
    document_id: str = ""
    is_target: bool = False


@dataclass(frozen=True)
class AspectInput:
    key: str  # unit key, "a:<id>"
    text: str
    importance: str = "must_have"


@dataclass(frozen=True)
class ItemInput:
    """Everything a metric may read about one item. ``sentences`` are the stored answer sentences
    (split once at import); metrics never re-split the answer."""

    id: str
    question: str
    answer: str
    sentences: list[str]
    contexts: list[ChunkInput] = field(default_factory=list)
    source: str = ""
    source_sentences: list[str] = field(default_factory=list)
    aspects: list[AspectInput] = field(default_factory=list)
    scope_class: str = ""
    # Ranks of chunks that annotators (gold, or majority of a pool) marked as supporting the answer;
    # None when no human relevance labels exist.
    human_relevant_ranks: list[int] | None = None
    # Human sentence kinds (simplification / elaboration) when present, keyed by sentence index.
    sentence_kinds: dict[int, str] | None = None


class Retriever(Protocol):
    """A knowledge-base retriever (scoring.retrieval implements hybrid RRF over dense + BM25)."""

    def retrieve(self, query: str, k: int) -> list[ChunkInput]: ...


@dataclass
class UnitScore:
    unit_key: str  # "item", "s:<i>", "c:<rank>", "a:<id>"
    value: float | None
    state: State
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.state == "ok" and (self.value is None or self.value != self.value):
            raise ValueError(f"an ok score needs a finite value, got {self.value!r} for {self.unit_key}")
        if self.state != "ok" and self.value is not None and self.value != self.value:
            raise ValueError("NaN is never stored; use state 'undetermined' with value None")


@dataclass(frozen=True)
class Param:
    default: Any
    help: str
    type: type = float
    choices: tuple[Any, ...] | None = None


class Metric(ABC):
    name: ClassVar[str]
    version: ClassVar[str]
    title: ClassVar[str]
    definition: ClassVar[str]  # one paragraph, shown in the UI
    units: ClassVar[tuple[str, ...]]  # subset of ("item", "sentence", "chunk", "aspect")
    backends: ClassVar[tuple[str, ...]]
    parameters: ClassVar[dict[str, Param]] = {}

    def resolve_params(self, given: dict[str, Any] | None) -> dict[str, Any]:
        given = dict(given or {})
        unknown = set(given) - set(self.parameters)
        if unknown:
            raise MetricError(f"{self.name}: unknown parameter(s) {sorted(unknown)}")
        resolved: dict[str, Any] = {}
        for key, spec in self.parameters.items():
            value = given.get(key, spec.default)
            try:
                value = spec.type(value) if value is not None else None
            except (TypeError, ValueError):
                raise MetricError(f"{self.name}: parameter {key}={value!r} is not a {spec.type.__name__}") from None
            if spec.choices is not None and value not in spec.choices:
                raise MetricError(f"{self.name}: parameter {key}={value!r} must be one of {list(spec.choices)}")
            resolved[key] = value
        return resolved

    @abstractmethod
    def score(
        self, item: ItemInput, backend: Any, params: dict[str, Any], *, retriever: Retriever | None = None
    ) -> list[UnitScore]:
        """Score one item. Per-unit failures are returned as ``failed`` UnitScores with the error in
        details; only errors that make the whole item unscorable are raised."""


METRICS: dict[str, type[Metric]] = {}


def register(cls: type[Metric]) -> type[Metric]:
    if cls.name in METRICS:
        raise MetricError(f"metric {cls.name!r} registered twice")
    METRICS[cls.name] = cls
    return cls


def get_metric(name: str) -> Metric:
    from scoring import metrics  # noqa: F401 - importing the package registers every metric

    try:
        return METRICS[name]()
    except KeyError:
        raise MetricError(f"unknown metric {name!r}; known: {sorted(METRICS)}") from None


def score_item(
    metric: Metric,
    item: ItemInput,
    backend: Any,
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
            UnitScore("item", None, "failed", {"error": str(exc), "error_type": "BackendResponseError",
                                               "backend_identity": identity, **exc.details})
        ]
    except TransientBackendError as exc:
        if not final_attempt:
            raise
        return [UnitScore("item", None, "failed", {"error": str(exc), "error_type": "TransientBackendError",
                                                   "backend_identity": identity})]
