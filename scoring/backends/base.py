"""The judgement interface every scoring backend offers to the metrics.

A backend answers a small set of questions that the metrics are built from (the ``Judge`` protocol of
``scoring.metrics.base``, which also defines the judgement types re-exported here). Every
answer is a ``Judgement``: a verdict, the continuous score it was thresholded from (where the backend
has one), and details worth storing with the score (similarities, probabilities, raw LLM output,
prompt hashes). All methods are batched so a backend can encode or prompt once per item.

A backend that cannot answer a question raises ``BackendCapabilityError`` naming what it cannot do;
metrics never substitute another backend's answer.
"""

from __future__ import annotations

from typing import ClassVar

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
    "BEHAVIOURS",
    "RUBRIC_CRITERIA",
    "SENTENCE_KINDS",
    "Backend",
    "BackendCapabilityError",
    "Behaviour",
    "Judgement",
    "RubricJudgement",
    "Statements",
    "apply_contradiction",
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
        """Is each claim supported (entailed) by the evidence passages taken together?"""
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
    a negation, number, dose, frequency, unit, drug or body-part mismatch between the claim and its
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
