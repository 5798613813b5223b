"""A deterministic backend double for metric tests where the backend is not what is under test.

Its judgements come from sets and callables the test states, so the metric arithmetic can be checked
against hand-worked values. Calls are recorded for assertions about the evidence a metric passed.
Tests only: production code never contains a fake backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scoring.backends.base import Backend, Behaviour, Judgement, Statements


class BackendDouble(Backend):
    def __init__(
        self,
        name: str = "embedding",
        *,
        supported: Callable[[str, list[str]], bool] | set[str] = frozenset(),
        non_informative: set[str] = frozenset(),
        can_classify_information: bool = True,
        relevance: dict[str, float] | None = None,
        behaviour: str = "answer",
        statements: list[str] | None = None,
        covers: Callable[[str, list[str]], bool] | None = None,
        simplifications: set[str] = frozenset(),
    ) -> None:
        self.name = name  # type: ignore[misc] - a double may pose as any backend
        self.identity = f"double:{name}"
        self._supported = supported if callable(supported) else (lambda claim, evidence: claim in supported)
        self._non_informative = non_informative
        self._can_inform = can_classify_information
        self._relevance = relevance or {}
        self._behaviour = behaviour
        self._statements = statements
        self._covers = covers or (lambda aspect, claims: any(aspect.lower() in c.lower() for c in claims))
        self._simplifications = simplifications
        self.calls: list[tuple[str, Any]] = []

    def supports(self, claims: list[str], evidence: list[str], *, threshold: float | None = None) -> list[Judgement]:
        self.calls.append(("supports", (list(claims), list(evidence))))
        return [Judgement(bool(self._supported(c, evidence)), None, {}) for c in claims]

    def informative(
        self, sentences: list[str], *, question: str = "", threshold: float | None = None
    ) -> list[Judgement]:
        if not self._can_inform:
            raise self._cannot("classify information-bearing sentences")
        return [Judgement(s not in self._non_informative, None, {}) for s in sentences]

    def relevance(self, question: str, passages: list[str], *, threshold: float | None = None) -> list[Judgement]:
        return [Judgement(self._relevance.get(p, 0.0) >= 0.5, self._relevance.get(p, 0.0), {}) for p in passages]

    def behaviour(self, question: str, answer: str, *, threshold: float | None = None) -> Behaviour:
        return Behaviour(self._behaviour, {})

    def statements(
        self, question: str, answer: str, sentences: list[str], *, drop_conversational: bool = False
    ) -> Statements:
        texts = self._statements
        if texts is None:
            texts = [s for s in sentences if not drop_conversational or s not in self._non_informative]
        return Statements(list(texts), {"method": "double"})

    def covers(self, aspects: list[str], claims: list[str], *, threshold: float | None = None) -> list[Judgement]:
        self.calls.append(("covers", (list(aspects), list(claims))))
        return [Judgement(bool(self._covers(a, claims)), None, {}) for a in aspects]

    def sentence_kinds(
        self, sentences: list[str], source_sentences: list[str], *, threshold: float | None = None
    ) -> list[Judgement]:
        return [
            Judgement(s in self._simplifications, None,
                      {"kind": "simplification" if s in self._simplifications else "elaboration"})
            for s in sentences
        ]
