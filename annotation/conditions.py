"""Question conditions and answer validation, as pure functions over plain data (no ORM).

A question's ``condition`` is empty or ``{"question": <key>, "in": [values]}``. The answer it looks at
is the one of the same unit, except when the conditioning question is item-scoped, in which case it
is the item's answer. A condition that names a question the pool does not ask is ignored (the pool
asks the question unconditionally): a pool answering only ``grounded`` must still be able to answer it.
Conditions chain: a question whose condition depends on a question that is itself not asked is not
asked either.

What a valid answer is, per question kind, lives in ``annotation.answers``; unit keys in
``annotation.units``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from annotation import units
from annotation.answers import QuestionLike, is_answered

Answers = Mapping[tuple[str, str], Any]


def is_applicable(
    question: QuestionLike,
    unit_key: str,
    answers: Answers,
    by_key: Mapping[str, QuestionLike],
    _depth: int = 0,
) -> bool:
    """Whether the pool asks ``question`` at ``unit_key`` given the answers so far."""
    if not question.condition or _depth > len(by_key):
        return True
    other_key = question.condition.get("question")
    other = by_key.get(other_key)
    if other is None:
        return True
    other_unit = units.ITEM if other.scope == "item" else unit_key
    if not is_applicable(other, other_unit, answers, by_key, _depth + 1):
        return False
    value = answers.get((other_key, other_unit))
    if value is None:
        return False
    allowed = {str(v) for v in question.condition.get("in", [])}
    if isinstance(value, list):
        return any(str(v) in allowed for v in value)
    return str(value) in allowed


@dataclass(frozen=True)
class Missing:
    question_key: str
    unit_key: str


def missing_answers(
    questions: Iterable[QuestionLike],
    units_by_scope: Mapping[str, list[str]],
    answers: Answers,
    *,
    alignment_targets_by_scope: Mapping[str, list[int]] | None = None,
) -> list[Missing]:
    """Required, applicable questions that have no answer, in question order then unit order.

    An alignment question with nothing to align to (a sentence-scoped alignment on an item without a
    source document) cannot be answered and is therefore not required.
    """
    questions = list(questions)
    by_key = {q.key: q for q in questions}
    targets = alignment_targets_by_scope or {}
    missing: list[Missing] = []
    for q in questions:
        if not q.required:
            continue
        if q.kind == "alignment" and not targets.get(q.scope):
            continue
        for unit in units_by_scope.get(q.scope, []):
            if is_applicable(q, unit, answers, by_key) and not is_answered(answers.get((q.key, unit))):
                missing.append(Missing(q.key, unit))
    return missing


def dependents_to_clear(
    changed_key: str,
    unit_key: str,
    answers: Answers,
    by_key: Mapping[str, QuestionLike],
) -> list[tuple[str, str]]:
    """Stored answers whose condition no longer holds after ``changed_key`` changed at ``unit_key``.

    A question-scoped change (item) can turn off dependents at every unit, so every stored answer of
    a dependent question is checked; otherwise only the same unit. Chains are followed.
    """
    changed_scope = by_key[changed_key].scope if changed_key in by_key else None
    stale: list[tuple[str, str]] = []
    current = dict(answers)
    frontier = [(changed_key, unit_key)]
    seen: set[tuple[str, str]] = set()
    while frontier:
        key, unit = frontier.pop()
        for dep in by_key.values():
            if not dep.condition or dep.condition.get("question") != key:
                continue
            scope = changed_scope if key == changed_key else by_key[key].scope
            candidate_units = (
                [u for (k, u) in current if k == dep.key] if scope == "item" else [unit]
            )
            for u in candidate_units:
                if (dep.key, u) in seen or current.get((dep.key, u)) is None:
                    continue
                if not is_applicable(dep, u, current, by_key):
                    seen.add((dep.key, u))
                    stale.append((dep.key, u))
                    current[(dep.key, u)] = None
                    frontier.append((dep.key, u))
    return stale
