"""Unit keys: the one place that formats and parses them.

A label, a score and a gold label are attached to a *unit* of an item, named by a short stable key:

=============  ==============================  ==================
key            unit                            question scope
=============  ==============================  ==================
``item``       the answer as a whole           ``item``
``s:<i>``      answer sentence ``i`` (from 0)  ``sentence``
``src:<i>``    source sentence ``i`` (from 0)  (alignment targets)
``c:<rank>``   retrieved chunk of that rank    ``chunk``
``a:<id>``     aspect (database id)            ``aspect``
=============  ==============================  ==================

In exports and import files an aspect is named by its position in the item's aspect list instead of its
database id (``a:<i>``); :func:`parse` reads both, the caller knows which it holds.

Pure Python: no Django, so statistics, metrics and exports can use it on plain data.
"""

from __future__ import annotations

from dataclasses import dataclass

ITEM = "item"
ANSWER_SENTENCE = "s"
SOURCE_SENTENCE = "src"
CHUNK = "c"
ASPECT = "a"

PREFIXES = (ANSWER_SENTENCE, SOURCE_SENTENCE, CHUNK, ASPECT)
# An index, rank or aspect id has at most as many digits as an id (concord.params.MAX_ID_DIGITS; not imported,
# so that this module stays free of the settings package): int() refuses more than 4,300 digits with a
# ValueError that is not InvalidUnitKey, and a longer number names no unit anyway.
MAX_REF_DIGITS = 18
# The question scope each kind of unit answers (source sentences are only alignment targets).
SCOPE_OF_KIND = {ITEM: "item", ANSWER_SENTENCE: "sentence", SOURCE_SENTENCE: "source", CHUNK: "chunk", ASPECT: "aspect"}
KIND_OF_SCOPE = {"item": ITEM, "sentence": ANSWER_SENTENCE, "chunk": CHUNK, "aspect": ASPECT}
SCOPES = ("item", "sentence", "chunk", "aspect")


class InvalidUnitKey(ValueError):
    """The text is not a unit key; the message says what was expected."""


@dataclass(frozen=True, slots=True)
class Unit:
    """A parsed unit key: ``kind`` is one of ``item``, ``s``, ``src``, ``c``, ``a``; ``ref`` is the sentence
    index, chunk rank or aspect id (None for the item)."""

    kind: str
    ref: int | None = None

    @property
    def key(self) -> str:
        return ITEM if self.kind == ITEM else f"{self.kind}:{self.ref}"

    @property
    def scope(self) -> str:
        return SCOPE_OF_KIND[self.kind]

    def __str__(self) -> str:
        return self.key


def item() -> str:
    return ITEM


def sentence(index: int) -> str:
    """An answer sentence, by its index from 0."""
    return f"{ANSWER_SENTENCE}:{int(index)}"


def source_sentence(index: int) -> str:
    """A sentence of the source document, by its index from 0."""
    return f"{SOURCE_SENTENCE}:{int(index)}"


def chunk(rank: int) -> str:
    """A retrieved chunk, by its rank (from 1)."""
    return f"{CHUNK}:{int(rank)}"


def aspect(ref: int) -> str:
    """An aspect: its database id inside Concord, its position in the item's list in files."""
    return f"{ASPECT}:{int(ref)}"


def of_sentence(part: str, index: int) -> str:
    """A sentence of the answer (``part == "answer"``) or of the source document."""
    return sentence(index) if part == "answer" else source_sentence(index)


def for_scope(scope: str, ref: int | None = None) -> str:
    """The key of the unit of ``scope`` (item, sentence, chunk, aspect) with that reference."""
    kind = KIND_OF_SCOPE.get(scope)
    if kind is None:
        raise InvalidUnitKey(f"unknown scope {scope!r}; expected one of {', '.join(SCOPES)}")
    if kind == ITEM:
        return ITEM
    if ref is None:
        raise InvalidUnitKey(f"a {scope} unit needs a number")
    return f"{kind}:{int(ref)}"


def parse(key: str) -> Unit:
    """Parse a unit key, or raise :class:`InvalidUnitKey` saying what a key looks like."""
    if not isinstance(key, str):
        raise InvalidUnitKey(f"a unit key is text, found {type(key).__name__}")
    if key == ITEM:
        return Unit(ITEM)
    kind, sep, rest = key.partition(":")
    if not sep or kind not in PREFIXES or not rest.isdigit() or not rest.isascii() or len(rest) > MAX_REF_DIGITS:
        raise InvalidUnitKey(
            f"{key!r} is not a unit; expected item, s:<sentence>, src:<source sentence>, c:<chunk rank> or a:<aspect>"
        )
    return Unit(kind, int(rest))


def is_valid(key: object) -> bool:
    try:
        parse(key)  # type: ignore[arg-type]
    except InvalidUnitKey:
        return False
    return True


def scope_of(key: str) -> str:
    """The question scope of a unit key (``source`` for source sentences)."""
    return parse(key).scope


def slug(key: str) -> str:
    """The key as it may stand in an HTML id or a URL fragment: ``s-3``, ``c-1``, ``item``."""
    return parse(key).key.replace(":", "-")


def describe(key: str, *, aspect_position: int | None = None) -> str:
    """A unit in words, numbered from 1 as people count: "sentence 3", "chunk 2", "aspect 1"."""
    unit = parse(key)
    if unit.kind == ITEM:
        return "the answer as a whole"
    if unit.kind == ANSWER_SENTENCE:
        return f"sentence {unit.ref + 1}"  # type: ignore[operator]
    if unit.kind == SOURCE_SENTENCE:
        return f"source sentence {unit.ref + 1}"  # type: ignore[operator]
    if unit.kind == CHUNK:
        return f"chunk {unit.ref}"
    return f"aspect {aspect_position if aspect_position is not None else unit.ref}"
