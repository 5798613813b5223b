"""Human measures derived from labels: pure functions over plain values (no ORM).

These are the human counterparts of automated metrics, so a report can put them beside a score run
(adjudication.selectors.human_measure_values feeds them from one annotator's labels or from gold):

* **Human conversational faithfulness** (ASTRID, arXiv 2501.08208): over the sentences of one answer,
  CF = grounded information-bearing sentences / information-bearing sentences, and CF = 1 when no
  sentence bears information. A sentence is grounded when its ``grounded`` answer is ``supported``.
* **Human aspect coverage** (ICAT, arXiv 2501.03545; K-QA comprehensiveness): covered expected
  aspects / expected aspects. Undefined for an item without expected aspects.
* **Human chunk relevance** (ASTRID Context Relevance; PubHealthBench multi-chunk support): relevant
  retrieved chunks / retrieved chunks. Undefined for an item without chunks.

Every function returns a MeasureValue whose ``value`` is None with a ``reason`` when the measure is
undefined (an unanswered unit, nothing to count) — never a number made up to fill the gap.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

INFORMATION_BEARING_YES = "yes"
INFORMATION_BEARING_NO = "no"
GROUNDED_SUPPORTED = "supported"


@dataclass(frozen=True)
class MeasureValue:
    value: float | None
    numerator: int = 0
    denominator: int = 0
    reason: str = ""

    @property
    def defined(self) -> bool:
        return self.value is not None


def _undefined(reason: str) -> MeasureValue:
    return MeasureValue(None, reason=reason)


def conversational_faithfulness(sentences: Sequence[tuple[Any, Any]]) -> MeasureValue:
    """CF of one answer from per-sentence ``(information_bearing, grounded)`` answers, in order.

    ``information_bearing`` is ``"yes"`` / ``"no"``; ``grounded`` is ``"supported"``,
    ``"unsupported"`` or ``"contradicted"`` and is only looked at for information-bearing sentences.
    Undefined when a sentence lacks its information-bearing answer, or an information-bearing one
    lacks its grounded answer: a partial count would bias CF upwards or downwards.
    """
    bearing = 0
    grounded = 0
    for index, (information_bearing, grounded_answer) in enumerate(sentences):
        if information_bearing not in (INFORMATION_BEARING_YES, INFORMATION_BEARING_NO):
            return _undefined(f"sentence {index + 1} has no information-bearing answer")
        if information_bearing == INFORMATION_BEARING_NO:
            continue
        bearing += 1
        if grounded_answer is None:
            return _undefined(f"information-bearing sentence {index + 1} has no grounded answer")
        if grounded_answer == GROUNDED_SUPPORTED:
            grounded += 1
    if bearing == 0:
        # ASTRID defines CF = 1 for an answer with nothing to be unfaithful about.
        return MeasureValue(1.0, 0, 0)
    return MeasureValue(grounded / bearing, grounded, bearing)


def _share(answers: Sequence[Any], positive: Collection[str], *, what: str) -> MeasureValue:
    if not answers:
        return _undefined(f"no {what}s to judge")
    for index, answer in enumerate(answers):
        if answer is None:
            return _undefined(f"{what} {index + 1} has no answer")
    hits = sum(1 for answer in answers if str(answer) in positive)
    return MeasureValue(hits / len(answers), hits, len(answers))


def aspect_coverage(answers: Sequence[Any], *, covered: Collection[str] = ("yes",)) -> MeasureValue:
    """Covered aspects / expected aspects, from one answer per expected aspect (in any order).

    ``covered`` lists the answers that count as covered: ``("yes",)`` for ICAT's ``aspect_covered``,
    ``("entailment",)`` for K-QA's ``aspect_entailment``.
    """
    return _share(answers, covered, what="aspect")


def chunk_relevance(answers: Sequence[Any], *, relevant: Collection[str] = ("yes",)) -> MeasureValue:
    """Relevant chunks / retrieved chunks, from one answer per chunk (``context_relevant`` or
    ``supports_answer``: ``"yes"`` counts)."""
    return _share(answers, relevant, what="chunk")
