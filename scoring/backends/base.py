"""The judgement interface every scoring backend offers to the metrics.

A backend answers a small set of questions that the metrics are built from (the ``Judge`` protocol of
``scoring.metrics.base``, which also defines the judgement types re-exported here). Every
answer is a ``Judgement``: a verdict, the continuous score it was thresholded from (where the backend
has one), and details worth storing with the score (similarities, probabilities, raw LLM output,
prompt hashes). All methods are batched so a backend can encode or prompt once per item.

A backend that cannot answer a question raises ``BackendCapabilityError`` naming what it cannot do;
metrics never substitute another backend's answer.

What the rest of Concord knows about a backend is its ``BackendDescriptor``: each backend module registers
one (``register``, as metrics register their classes) and the run services, the option checks
(``scoring.backend_options``), the status page and the start-a-run form read it there, never a table of
their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from scoring.metrics import contradiction
from scoring.metrics.base import (
    BEHAVIOURS,
    RUBRIC_CRITERIA,
    SENTENCE_KINDS,
    Behaviour,
    Judgement,
    MetricError,
    RubricJudgement,
    Statements,
)

__all__ = [
    "AVAILABLE",
    "BACKENDS",
    "BEHAVIOURS",
    "RUBRIC_CRITERIA",
    "SENTENCE_KINDS",
    "Availability",
    "Backend",
    "BackendCapabilityError",
    "BackendDescriptor",
    "Behaviour",
    "Judgement",
    "Option",
    "RubricJudgement",
    "Statements",
    "apply_contradiction",
    "best_passage",
    "register",
]


class BackendCapabilityError(MetricError):
    """The backend exists but cannot answer this kind of question (e.g. an NLI model asked for a rubric)."""


class Backend:
    """Base class; subclasses override the judgements they can make.

    ``identity`` names the backend, the model (name or path) and its revision or content hash, and is
    recorded with every score. ``defaults`` documents each decision threshold; every method accepts
    ``threshold=None`` meaning "the documented default", and reports the threshold it used.
    """

    name: ClassVar[str]
    defaults: ClassVar[dict[str, float]] = {}
    identity: str

    def _cannot(self, what: str) -> BackendCapabilityError:
        return BackendCapabilityError(f"the {self.name} backend cannot {what}")

    def threshold(self, key: str, given: float | None) -> float:
        return float(self.defaults[key] if given is None else given)

    def supports(self, claims: list[str], evidence: list[str], *, threshold: float | None = None) -> list[Judgement]:
        """Is each claim supported (entailed) by one of the evidence passages? Every backend judges the claim
        against each passage on its own and returns the best single passage's judgement (``best_passage``):
        words or facts spread over several passages never ground a claim that no one passage supports."""
        raise self._cannot("verify claims against evidence")

    def informative(
        self, sentences: list[str], *, question: str = "", threshold: float | None = None
    ) -> list[Judgement]:
        """Is each answer sentence information-bearing (verdict True) rather than conversational?"""
        raise self._cannot("classify information-bearing sentences")

    def relevance(self, question: str, passages: list[str], *, threshold: float | None = None) -> list[Judgement]:
        """Is each passage relevant to the question? ``score`` is a graded relevance in [0, 1]."""
        raise self._cannot("judge passage relevance")

    def behaviour(self, question: str, answer: str, *, threshold: float | None = None) -> Behaviour:
        """Did the answer answer, refuse, or escalate (refer to emergency services)?"""
        raise self._cannot("detect refusals and escalations")

    def statements(
        self, question: str, answer: str, sentences: list[str], *, drop_conversational: bool = False
    ) -> Statements:
        """Standalone statements made by the answer: from the whole answer, as RAGAS extracts them
        (every sentence yields statements), or, with ``drop_conversational``, only from its
        information-bearing part (claims for ICAT)."""
        raise self._cannot("extract statements")

    def covers(self, aspects: list[str], claims: list[str], *, threshold: float | None = None) -> list[Judgement]:
        """Is each aspect covered by the claims taken together?"""
        raise self._cannot("match claims to aspects")

    def sentence_kinds(
        self, sentences: list[str], source_sentences: list[str], *, threshold: float | None = None
    ) -> list[Judgement]:
        """verdict True = source simplification, False = elaborative explanation (details["kind"])."""
        raise self._cannot("classify sentences as simplification or elaboration")

    def rubric(
        self, question: str, answer: str, context: list[str], *, reference: list[str] | None = None
    ) -> RubricJudgement:
        """1–5 ratings for each of RUBRIC_CRITERIA; faithfulness against ``reference`` when one is given."""
        raise self._cannot("rate answers on the judge rubric")

    def qa_support(self, sentences: list[str], evidence: list[list[str]]) -> list[Judgement]:
        """PlainQAFact's QA pipeline: per sentence, answers extracted and questions generated from it, the
        questions answered from that sentence's evidence; ``score`` = mean answer-overlap F1."""
        raise self._cannot("run the question-answering pipeline")


def apply_contradiction(
    judgement: Judgement, claim: str, sentences: list[str], *, best_index: int | None = None
) -> Judgement:
    """The mismatch check every backend applies to a ``supports`` judgement (``scoring.metrics.contradiction``):
    a negation, number, dose, frequency, unit, drug, body-part or polarity mismatch between the claim and its
    best-matching evidence sentence makes the claim contradicted (verdict False, label ``contradicted``),
    whatever the similarity. Otherwise the label is ``supported`` or ``unsupported`` from the verdict, unless
    the backend already set one (an NLI model's own contradiction)."""
    found, index = contradiction.check(claim, sentences, best_index)
    if found and index is not None:
        judgement.details["contradiction"] = {
            "mismatches": [m.as_dict() for m in found], "evidence_sentence": sentences[index][:300],
            "verdict_before": judgement.verdict,
        }
        judgement.verdict = False
        judgement.label = "contradicted"
        if judgement.probability is not None:
            judgement.probability = 0.0
        return judgement
    if judgement.label is None and judgement.verdict is not None:
        judgement.label = "supported" if judgement.verdict else "unsupported"
    return judgement


def best_passage(per_passage: list[Judgement], passages: list[str]) -> Judgement:
    """The judgement of a claim against several passages: the best single passage's judgement, with that passage
    reported as the evidence (``details["evidence_passage"]``: its index among ``passages`` and its text).

    ``per_passage[i]`` is the claim judged against ``passages[i]`` alone, the mismatch check
    (``apply_contradiction``) already applied against that passage's sentences. The best passage is one whose
    verdict is True, if any; among those (or, when none supports the claim, among all) the one with the highest
    probability where the backend gives one, else the highest score; the first on a tie. So a claim is supported
    exactly when one passage supports it, and otherwise reports the passage that came closest, with its label
    (``contradicted`` or ``unsupported``). No passage: not supported, label ``unsupported``."""
    if not per_passage:
        return Judgement(False, 0.0, {"reason": "no evidence passage", "evidence_passage": None},
                         label="unsupported")

    def key(index: int) -> tuple[bool, float]:
        j = per_passage[index]
        value = j.probability if j.probability is not None else j.score
        return bool(j.verdict), float("-inf") if value is None else float(value)

    best = max(range(len(per_passage)), key=key)  # max keeps the first of equal keys
    chosen = per_passage[best]
    chosen.details["evidence_passage"] = {"index": best, "text": passages[best][:300]}
    chosen.details["passages_judged"] = len(per_passage)
    chosen.details["passages_supporting"] = sum(bool(j.verdict) for j in per_passage)
    return chosen


# --- Descriptors: what the rest of Concord knows about each backend ---------------------------------------


@dataclass(frozen=True)
class Option:
    """One option a score run may give a backend; ``scoring.backend_options`` checks a run's options
    against these (type, bounds, length, choices, where a model may lie) and nothing else.

    ``kind``: ``integer`` / ``number`` (within ``bounds``, inclusive; ``nullable``: null means the backend's
    default), ``boolean``, ``text`` (at most ``max_length`` characters; one of ``choices`` when given; with
    ``model_setting``, a model location: the one that setting configures, or a directory inside
    ``SCORING_MODEL_DIRS``), or ``study`` (the run's own study, which services set and a run never names).
    """

    kind: Literal["integer", "number", "boolean", "text", "study"]
    bounds: tuple[float, float] | None = None
    max_length: int = 0
    choices: tuple[str, ...] = ()
    model_setting: str = ""
    nullable: bool = False

    def __post_init__(self) -> None:
        if (self.kind in ("integer", "number")) != (self.bounds is not None):
            raise ValueError(f"a {self.kind} option needs bounds exactly when it is a number")
        if (self.kind == "text") != (self.max_length > 0):
            raise ValueError(f"a {self.kind} option needs a maximum length exactly when it is text")

    def describe(self) -> str:
        """The rule in a few words, as the start-a-run form shows it."""
        if self.kind in ("integer", "number"):
            assert self.bounds is not None
            low, high = self.bounds
            return f"{'an integer' if self.kind == 'integer' else 'a number'} from {low:g} to {high:g}"
        if self.kind == "boolean":
            return "true or false"
        if self.kind == "study":
            return "always the run's own study"
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.model_setting:
            return f"the configured model ({self.model_setting}) or a directory inside SCORING_MODEL_DIRS"
        return f"text of at most {self.max_length} characters"


@dataclass(frozen=True)
class Availability:
    """Whether a backend can run here, and why not (a sentence for the researcher)."""

    available: bool
    reason: str = ""


AVAILABLE = Availability(True)


@dataclass(frozen=True)
class BackendDescriptor:
    """Everything about a backend that is not its judgements, in one place.

    ``queue`` and ``batch_size`` are the defaults of the Celery queue its scoring tasks go to and of the
    items per task; the environment may override each per backend (``SCORING_QUEUE_<NAME>``,
    ``SCORING_BATCH_SIZE[_<NAME>]``: ``settings.SCORING_QUEUES`` / ``SCORING_BATCH_SIZES`` hold only those).
    ``settings`` names every setting the backend reads; ``model_settings`` those that name its model or
    endpoint, which stand for its identity while a run waits for a worker to load it. ``options`` is the
    schema of what a run may ask of it. ``check`` answers ``availability``: can a run with these (checked)
    options run here, decided without loading a model — the conditions ``build`` raises
    ``BackendUnavailable`` for, as far as they can be seen without loading. ``build`` returns the backend for
    a run's options (loading the model, once per process).
    """

    name: str
    queue: str
    batch_size: int
    build: Callable[..., Backend]
    check: Callable[[Mapping[str, Any], int | None], Availability]
    settings: tuple[str, ...] = ()
    model_settings: tuple[str, ...] = ()
    options: Mapping[str, Option] = field(default_factory=dict)

    def availability(self, *, study_id: int | None, options: Mapping[str, Any] | None = None) -> Availability:
        """Can this backend run here for a run of ``study_id`` with ``options`` (already checked by
        ``scoring.backend_options``; none: its configured defaults, as the status page shows them)?"""
        return self.check(options or {}, study_id)


BACKENDS: dict[str, BackendDescriptor] = {}


def register(descriptor: BackendDescriptor) -> BackendDescriptor:
    """Add a backend's descriptor to :data:`BACKENDS` under its ``name`` (each backend module registers its own)."""
    if descriptor.name in BACKENDS:
        raise ValueError(f"backend {descriptor.name!r} registered twice")
    BACKENDS[descriptor.name] = descriptor
    return descriptor
