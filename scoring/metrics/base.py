"""The contract between metrics and the rest of Concord: plain data in, plain data out.

A metric receives an :class:`ItemInput` (built from the ORM by ``scoring.selectors.item_inputs``, or
from an import-schema record by the ``score`` command) and a backend offering the judgements of
:class:`Judge`, and returns :class:`UnitScore` rows. A score names its unit structurally
(:class:`UnitRef`: scope and number); ``scoring.services`` turns it into the stored unit key with
``annotation.units``, the one place unit keys are formatted.

A new metric is one new module in ``scoring/metrics/`` defining a :class:`Metric` subclass decorated
with :func:`register`, imported by ``scoring/metrics/__init__.py``; docs/architecture.md walks through it.

Pure Python: no Django and no app, so this package is checked with mypy --strict and import-linter
keeps it free of the ORM.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple, Protocol, TypeVar

State = Literal["ok", "undetermined", "failed"]
Scope = Literal["item", "sentence", "chunk", "aspect"]


# --- Errors ---------------------------------------------------------------------------------------------


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


# --- What backends answer ------------------------------------------------------------------------------

# What a system did with a question: answered it, declined it, or referred the user to emergency care.
BEHAVIOURS = ("answer", "refuse", "escalate")
SENTENCE_KINDS = ("simplification", "elaboration")
RUBRIC_CRITERIA = ("faithfulness", "completeness", "factual_consistency", "clarity")


@dataclass
class Judgement:
    """One decision of a backend — the interface every backend gives every metric.

    * ``verdict``: the hard decision (for ``supports``: the claim is supported). None only when the backend
      could not decide (recorded, never guessed).
    * ``score``: the backend's raw similarity or confidence, on the backend's own scale (not comparable
      across backends).
    * ``label``: for ``supports`` judgements, ``supported``, ``contradicted`` or ``unsupported`` when the
      backend tells a contradiction from a mere lack of support (``verdict`` is then True only for
      ``supported``); None for backends or judgements without that distinction.
    * ``probability``: the model's probability that ``verdict`` is True (learned: the classifier's predicted
      probability, whose calibration its training report shows; nli: the model's softmax P(entailment) of the
      best passage, 0 after a detected contradiction), for metrics' continuous aggregates (e.g. the mean
      support probability used for AUC). None for backends that give only hard verdicts: a metric asked
      for a continuous aggregate refuses such a backend with a clear message rather than turning
      verdicts into 0/1 "probabilities".
    """

    verdict: bool | None
    score: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    label: str | None = None
    probability: float | None = None

    def as_details(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict, "score": self.score}
        if self.label is not None:
            out["label"] = self.label
        if self.probability is not None:
            out["probability"] = self.probability
        return {**out, **self.details}


@dataclass
class Behaviour:
    behaviour: str  # one of BEHAVIOURS
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Statements:
    texts: list[str]
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class RubricJudgement:
    ratings: dict[str, float]  # criterion -> 1..5 (mean over samples)
    details: dict[str, Any] = field(default_factory=dict)


class Judge(Protocol):
    """The judgements a metric may ask of a backend (``scoring.backends.base.Backend`` implements them;
    one that cannot make a judgement raises a ``MetricError``). ``identity`` names backend and model."""

    @property
    def name(self) -> str: ...

    @property
    def identity(self) -> str: ...

    def supports(self, claims: list[str], evidence: list[str], *, threshold: float | None = None) -> list[Judgement]:
        """Per claim, the best single evidence passage's judgement: a claim is supported when one passage
        supports it on its own, never by words or facts spread over several (``details["evidence_passage"]``
        names the passage)."""
        ...

    def informative(
        self, sentences: list[str], *, question: str = "", threshold: float | None = None
    ) -> list[Judgement]: ...

    def relevance(self, question: str, passages: list[str], *, threshold: float | None = None) -> list[Judgement]:
        ...

    def behaviour(self, question: str, answer: str, *, threshold: float | None = None) -> Behaviour: ...

    def statements(
        self, question: str, answer: str, sentences: list[str], *, drop_conversational: bool = False
    ) -> Statements: ...

    def covers(self, aspects: list[str], claims: list[str], *, threshold: float | None = None) -> list[Judgement]:
        ...

    def sentence_kinds(
        self, sentences: list[str], source_sentences: list[str], *, threshold: float | None = None
    ) -> list[Judgement]: ...

    def rubric(
        self, question: str, answer: str, context: list[str], *, reference: list[str] | None = None
    ) -> RubricJudgement: ...

    def qa_support(self, sentences: list[str], evidence: list[list[str]]) -> list[Judgement]: ...


# --- What metrics read ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkInput:
    """A retrieved chunk of the item (or a knowledge-base passage, from a :class:`Retriever`).

    ``unit_key`` is the chunk's unit key as the caller formats it (``annotation.units.chunk``), quoted
    as evidence in details; empty for knowledge-base passages, which are not units.
    """

    rank: int
    text: str
    document_id: str = ""
    is_target: bool = False
    unit_key: str = ""


@dataclass(frozen=True)
class AspectInput:
    """An expected aspect; ``ref`` is its database id in Concord, its position in the item's list in files."""

    ref: int
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
    # The document ids of the item's relevant targets, known apart from what was retrieved (the import's
    # ``metadata.target_ids``), so that a target the retriever missed still counts; None when not given.
    target_ids: list[str] | None = None


class Retriever(Protocol):
    """A knowledge-base retriever (``scoring.retrieval`` implements hybrid RRF over dense + BM25)."""

    def retrieve(self, query: str, k: int) -> list[ChunkInput]: ...


# --- What metrics return -------------------------------------------------------------------------------


class UnitRef(NamedTuple):
    """The unit a score is for: a question scope and its number (answer sentence index from 0, chunk
    rank, aspect ref; None for the item). ``annotation.units.for_scope(*unit)`` gives its key."""

    scope: Scope
    ref: int | None = None


ITEM = UnitRef("item")


def sentence_unit(index: int) -> UnitRef:
    """Answer sentence ``index`` (from 0)."""
    return UnitRef("sentence", index)


def chunk_unit(rank: int) -> UnitRef:
    """The retrieved chunk of that rank (from 1)."""
    return UnitRef("chunk", rank)


def aspect_unit(ref: int) -> UnitRef:
    """The aspect with that ref (see :class:`AspectInput`)."""
    return UnitRef("aspect", ref)


@dataclass
class UnitScore:
    unit: UnitRef
    value: float | None
    state: State
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.state == "ok" and (self.value is None or self.value != self.value):
            where = self.unit.scope if self.unit.ref is None else f"{self.unit.scope} {self.unit.ref}"
            raise ValueError(f"an ok score needs a finite value, got {self.value!r} for {where}")
        if self.state != "ok" and self.value is not None and self.value != self.value:
            raise ValueError("NaN is never stored; use state 'undetermined' with value None")


# --- Metrics -------------------------------------------------------------------------------------------


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
    units: ClassVar[tuple[Scope, ...]]  # the scopes it scores, "item" first
    backends: ClassVar[tuple[str, ...]]
    parameters: ClassVar[dict[str, Param]] = {}
    # The keys of the human questions (annotation presets) whose answers this metric estimates; reports and
    # validation studies offer a metric only against these. Empty: no human question (compare it otherwise).
    estimates: ClassVar[tuple[str, ...]] = ()

    def estimated_questions(self, params: dict[str, Any] | None = None) -> tuple[str, ...]:
        """The human questions a run with these parameters estimates (a metric whose value depends on a
        parameter, e.g. the rubric's criterion, narrows the class's list)."""
        return self.estimates

    @classmethod
    def computed_as(cls, backend: str, params: dict[str, Any] | None = None) -> str:
        """What a run of this metric with this backend and these parameters computes, as run pages and reports
        name it (a metric whose non-LLM form is not the paper's says so here)."""
        return cls.title

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
        self, item: ItemInput, backend: Judge, params: dict[str, Any], *, retriever: Retriever | None = None
    ) -> list[UnitScore]:
        """Score one item. Per-unit failures are returned as ``failed`` UnitScores with the error in
        details; only errors that make the whole item unscorable are raised."""


METRICS: dict[str, type[Metric]] = {}
M = TypeVar("M", bound=type[Metric])


def register(cls: M) -> M:
    """Class decorator: add a metric to :data:`METRICS` under its ``name``."""
    if cls.name in METRICS:
        raise MetricError(f"metric {cls.name!r} registered twice")
    METRICS[cls.name] = cls
    return cls
