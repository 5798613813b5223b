"""The answer vocabulary: per question kind, what a valid answer is, how it is stored, how it is read
from a form and how it is shown. The workspace, the importer, adjudication, exports and the API all use
these functions, so that a value one accepts the others accept too, stored the same way.

Storage (JSON): categorical kinds (``binary``, ``nominal``, ``ordinal``) as the option's ``value`` string;
``multilabel`` as the chosen option values in the protocol's option order, each once; ``alignment`` as the
sorted list of distinct sentence indexes (from 0); ``text`` as a stripped string of at most
``MAX_TEXT_LENGTH`` characters; ``number`` as a finite int or float within the question's bounds.
``None`` means "no answer" (a cleared label); blank text normalises to ``None``.

Pure Python over plain data (anything with the attributes of :class:`QuestionLike`): no ORM.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Protocol

MAX_TEXT_LENGTH = 10_000
CATEGORICAL = frozenset({"binary", "nominal", "ordinal"})
LIST_KINDS = frozenset({"multilabel", "alignment"})
KINDS = ("binary", "nominal", "ordinal", "multilabel", "alignment", "text", "number")
NO_ANSWER = "no answer"
MAX_INDEX = 2**31 - 1  # a sentence number fits the database's PositiveIntegerField
MAX_WHOLE = 2**63 - 1  # a whole-number answer fits 64 bits (what exports and reports read)


class QuestionLike(Protocol):
    key: str
    scope: str
    kind: str
    condition: dict
    required: bool
    min_value: float | None
    max_value: float | None
    options: list

    @property
    def option_values(self) -> list[str]: ...


class InvalidValue(ValueError):
    """The value does not fit the question; the message says why in words an annotator understands."""


def normalise(question: QuestionLike, value: Any, *, alignment_targets: Iterable[int] | None = ()) -> Any:
    """The value as stored, or raise :class:`InvalidValue`. ``None`` (and blank text) is "no answer".

    ``alignment_targets`` are the sentence indexes an alignment may point to; ``None`` means they are not
    known yet (an import validating before its sentences exist) and only the form of the list is checked.
    """
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
        indexes = {_as_index(v) for v in value}
        if alignment_targets is not None:
            targets = set(alignment_targets)
            outside = sorted(i for i in indexes if i not in targets)
            if outside:
                raise InvalidValue(f"there is no sentence {outside[0]!r} to align to")
        return sorted(indexes)
    if kind == "text":
        if not isinstance(value, str):
            raise InvalidValue("expected text")
        if "\x00" in value:
            raise InvalidValue("text contains a NUL character")
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


def is_answered(value: Any) -> bool:
    return value is not None


def from_form(question: QuestionLike, data: Any, *, field: str = "value") -> Any:
    """The raw value a form posted for ``question`` (a QueryDict or a plain mapping), before
    :func:`normalise`: for list kinds every value of the repeated field (nothing ticked: an empty list);
    for ``number`` a blank field is ``None``; for the other kinds the text as posted (``None`` when absent,
    blank text is left to :func:`normalise`, which refuses it for options and clears a text answer)."""
    if question.kind in LIST_KINDS:
        if hasattr(data, "getlist"):
            return data.getlist(field)
        raw = data.get(field)
        return [] if raw is None else raw if isinstance(raw, list) else [raw]
    raw = data.get(field)
    if question.kind == "number" and isinstance(raw, str) and not raw.strip():
        return None
    return raw


def display(question: QuestionLike, value: Any, *, empty: str = NO_ANSWER) -> str:
    """An answer in words: option labels rather than stored values, sentence numbers from 1."""
    if value is None:
        return empty
    if question.kind == "alignment" and isinstance(value, list):
        return ", ".join(f"sentence {int(v) + 1}" for v in value) or "none"
    labels = {str(o["value"]): str(o.get("label") or o["value"]) for o in (question.options or [])}
    if isinstance(value, list):
        return ", ".join(labels.get(str(v), str(v)) for v in value) or "none"
    if question.kind == "number" and isinstance(value, float) and value.is_integer():
        return f"{value:g}"
    return labels.get(str(value), str(value))


def _one_option(question: QuestionLike, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidValue(f"expected one of {', '.join(question.option_values)}")
    text = str(value)
    if text not in question.option_values:
        raise InvalidValue(f"{text!r} is not an option; expected one of {', '.join(question.option_values)}")
    return text


def _as_index(value: Any) -> int:
    if isinstance(value, bool):
        raise InvalidValue("expected a sentence number")
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 10:
        value = int(value.strip())  # at most 10 ASCII digits: int() reads them, and reads them as written
    if isinstance(value, int) and 0 <= value <= MAX_INDEX:
        return value
    raise InvalidValue(f"{_short(value)} is not a sentence number")


def _short(value: Any) -> str:
    """A refused value as a message names it: an integer by its size, anything else cut to 40 characters."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_WHOLE:
        return "a number that long"
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:39] + "…"


def _as_number(value: Any) -> float | int:
    if isinstance(value, bool):
        raise InvalidValue("expected a number")
    if isinstance(value, str):
        text = value.strip()
        try:
            is_float = any(c in text for c in ".eE") or text.lower() in ("nan", "inf", "-inf")
            value = float(text) if is_float else int(text)
        except ValueError as exc:
            raise InvalidValue(f"{value!r} is not a number") from exc
    if isinstance(value, int) and not -MAX_WHOLE - 1 <= value <= MAX_WHOLE:
        # Exports (64-bit integers) and reports (floats) could not read it; a 400-digit one broke isfinite().
        raise InvalidValue("a whole number must lie within ±9,223,372,036,854,775,807 (write a larger one as 1.5e20)")
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidValue("expected a finite number")
    return value
