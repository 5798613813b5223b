"""Question conditions and answer validation, as pure functions over plain data (no ORM).

A question's ``condition`` is empty or ``{"question": <key>, "in": [values]}``. The answer it looks at
is the one of the same unit, except when the conditioning question is item-scoped, in which case it
is the item's answer. A condition that names a question the pool does not ask is ignored (the pool
asks the question unconditionally): a pool answering only ``grounded`` must still be able to answer it.
Conditions chain: a question whose condition depends on a question that is itself not asked is not
asked either.

Answers are stored as JSON: categorical kinds as the option's ``value`` string, ``multilabel`` as a
list of option values, ``alignment`` as a sorted list of sentence indexes, ``text`` as a string,
``number`` as a number. ``None`` means "no answer" (a cleared label).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

ITEM_UNIT = "item"
MAX_TEXT_LENGTH = 10_000
CATEGORICAL = {"binary", "nominal", "ordinal"}
LIST_KINDS = {"multilabel", "alignment"}


class QuestionLike(Protocol):
    key: str
    scope: str
    kind: str
    condition: dict
    required: bool
    min_value: float | None
    max_value: float | None

    @property
    def option_values(self) -> list[str]: ...


Answers = Mapping[tuple[str, str], Any]


class InvalidValue(ValueError):
    """The value does not fit the question; the message says why in words an annotator understands."""


def condition_unit(question: QuestionLike, unit_key: str, scope_of: Mapping[str, str]) -> str | None:
    """The unit whose answer decides ``question`` at ``unit_key``; None when there is no condition."""
    if not question.condition:
        return None
    other = question.condition.get("question")
    if other not in scope_of:
        return None
    return ITEM_UNIT if scope_of[other] == "item" else unit_key


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
    other_unit = ITEM_UNIT if other.scope == "item" else unit_key
    if not is_applicable(other, other_unit, answers, by_key, _depth + 1):
        return False
    value = answers.get((other_key, other_unit))
    if value is None:
        return False
    allowed = {str(v) for v in question.condition.get("in", [])}
    if isinstance(value, list):
        return any(str(v) in allowed for v in value)
    return str(value) in allowed


def is_answered(value: Any) -> bool:
    return value is not None


def validate_value(question: QuestionLike, value: Any, *, alignment_targets: Iterable[int] = ()) -> Any:
    """Return the value normalised for storage, or raise InvalidValue. ``None`` clears an answer."""
    if value is None:
        return None
    kind = question.kind
    if kind in CATEGORICAL:
        return _one_option(question, value)
    if kind == "multilabel":
        if not isinstance(value, list):
            raise InvalidValue("expected a list of options")
        chosen = {_one_option(question, v) for v in value}
        return [v for v in question.option_values if v in chosen]
    if kind == "alignment":
        if not isinstance(value, list):
            raise InvalidValue("expected a list of sentence numbers")
        targets = set(alignment_targets)
        indexes = set()
        for v in value:
            index = _as_int(v)
            if index not in targets:
                raise InvalidValue(f"there is no sentence {v!r} to align to")
            indexes.add(index)
        return sorted(indexes)
    if kind == "text":
        if not isinstance(value, str):
            raise InvalidValue("expected text")
        text = value.strip()
        if len(text) > MAX_TEXT_LENGTH:
            raise InvalidValue(f"text longer than {MAX_TEXT_LENGTH} characters")
        return text or None
    if kind == "number":
        number = _as_number(value)
        if question.min_value is not None and number < question.min_value:
            raise InvalidValue(f"must be at least {question.min_value:g}")
        if question.max_value is not None and number > question.max_value:
            raise InvalidValue(f"must be at most {question.max_value:g}")
        return number
    raise InvalidValue(f"unknown question kind {kind!r}")


def _one_option(question: QuestionLike, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidValue(f"expected one of {', '.join(question.option_values)}")
    text = str(value)
    if text not in question.option_values:
        raise InvalidValue(f"{text!r} is not an option; expected one of {', '.join(question.option_values)}")
    return text


def _as_int(value: Any) -> int:
    if isinstance(value, bool):
        raise InvalidValue("expected a sentence number")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise InvalidValue(f"{value!r} is not a sentence number")


def _as_number(value: Any) -> float | int:
    if isinstance(value, bool):
        raise InvalidValue("expected a number")
    if isinstance(value, str):
        try:
            value = float(value.strip()) if any(c in value for c in ".eE") else int(value.strip())
        except ValueError as exc:
            raise InvalidValue(f"{value!r} is not a number") from exc
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidValue("expected a finite number")
    return value


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
