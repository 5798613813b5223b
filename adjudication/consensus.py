"""When do annotators agree? Pure rules over plain values (no ORM), used by disagreement detection.

Agreement is exact agreement of canonical forms:

* ``binary`` / ``nominal`` / ``ordinal``: the option value, compared as a string.
* ``number``: the number, compared as a float (``2`` equals ``2.0``).
* ``multilabel`` and ``alignment``: exact set equality — order and repeats do not matter, every
  element does (``["background", "example"]`` agrees with ``["example", "background"]`` but not with
  ``["background"]``). An empty list is an answer ("none apply"), different from no answer.
* ``text``: the text after trimming and collapsing runs of whitespace; case and punctuation count.

A unit an annotator did not answer (``None``) counts as its own answer: when some annotators
answered and others did not (typically a conditional question asked only of those whose earlier
answer met the condition), the unit goes to an adjudicator rather than to gold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Outcome = Literal["unanimous", "majority", "disagreement", "empty"]

CATEGORICAL_KINDS = {"binary", "nominal", "ordinal"}
SET_KINDS = {"multilabel", "alignment"}


def canonical(kind: str, value: Any) -> Hashable:
    """The form in which two answers to a question of ``kind`` are compared; ``None`` stays ``None``."""
    if value is None:
        return None
    if kind in CATEGORICAL_KINDS:
        return str(value)
    if kind == "number":
        return float(value)
    if kind in SET_KINDS:
        if not isinstance(value, list | tuple):
            return (str(value),)
        return tuple(sorted({str(v) for v in value}))
    if kind == "text":
        return " ".join(str(value).split())
    raise ValueError(f"unknown question kind {kind!r}")


@dataclass(frozen=True)
class Consensus:
    outcome: Outcome
    value: Any = None  # one annotator's original value of the agreeing group (not the canonical form)
    support: int = 0  # how many annotators gave it
    n: int = 0  # how many annotators were asked


def consensus(values: Sequence[Any], *, kind: str, majority: bool = False) -> Consensus:
    """Unanimity, a strict majority (only when ``majority`` and at least three annotators), or disagreement.

    ``values`` holds one entry per annotator who submitted, ``None`` where they gave no answer.
    ``empty`` means nobody answered: there is nothing to decide.
    """
    n = len(values)
    if n == 0 or all(v is None for v in values):
        return Consensus("empty", n=n)
    keys = [canonical(kind, v) for v in values]
    counts = Counter(keys)
    top_key, top = counts.most_common(1)[0]
    representative = next(v for v, k in zip(values, keys, strict=True) if k == top_key)
    if top == n:
        return Consensus("unanimous", representative, top, n)
    if majority and n >= 3 and top_key is not None and top > n / 2:
        return Consensus("majority", representative, top, n)
    return Consensus("disagreement", None, top, n)

