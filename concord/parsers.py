"""JSON from clients, read with a bound on its nesting: the REST API's JSON parser and the one loader every
plain view uses for JSON text it is sent (a form field that holds JSON).

The standard library's decoder recurses once per level of nesting, so ``[[[[…]]]]`` a few thousand levels
deep raised RecursionError inside DRF's parser and answered 500 on every endpoint that reads a body, the
anonymous token endpoint included. No request Concord takes needs more than a handful of levels (a label
value, a consensus rule, backend options), so a body nested deeper than ``MAX_JSON_DEPTH`` (64) levels is
refused before it is decoded: 400, saying so. The depth is counted without recursion, in time linear in
the body, and only when the body holds more than ``MAX_JSON_DEPTH`` brackets at all.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping
from itertools import accumulate
from typing import IO, Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils import json

MAX_JSON_DEPTH = 64
# A JSON string literal (written unrolled, so that a long one is matched in one pass): brackets inside it
# nest nothing.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def nests_deeper_than(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the arrays and objects of the JSON ``text`` nest more than ``limit`` levels: more than
    ``limit`` brackets open at once outside string literals. For text that is not JSON the count is at
    least the depth a decoder reaches before it finds the error, so the bound holds for its recursion too."""
    if text.count("[") + text.count("{") <= limit:
        return False  # the usual case: too few brackets to nest that deep, nothing more to read
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    # The running count of open brackets, stopping at the first that goes past the limit (all in C).
    return next(filter(limit.__lt__, accumulate(map(_STEP.__getitem__, brackets))), None) is not None


class TooDeep(ValueError):
    """JSON text nested more than ``MAX_JSON_DEPTH`` levels deep. ``msg`` says so, as JSONDecodeError's does."""

    def __init__(self) -> None:
        self.msg = f"arrays and objects nested more than {MAX_JSON_DEPTH} levels deep"
        super().__init__(self.msg)


def loads(text: str, *, strict: bool = True) -> Any:
    """The JSON value of ``text`` a client sent, or ValueError: ``TooDeep`` past ``MAX_JSON_DEPTH`` levels
    (checked first, so the decoder never recurses deeper), JSONDecodeError for what is not JSON, and the
    ValueError of a number longer than ``int()`` reads (4,300 digits). ``strict`` refuses NaN and Infinity,
    as DRF's parser does. Every request path that decodes JSON text goes through here."""
    if nests_deeper_than(text):
        raise TooDeep
    return json.loads(text, parse_constant=json.strict_constant if strict else None)


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser (the same errors, the same strictness) that refuses a body nested more than
    ``MAX_JSON_DEPTH`` levels deep with a 400 before decoding it. The default parser of the REST API."""

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        # DRF's own choice of charset (text codecs only: a bz2 "charset" would decompress a small body).
        encoding = parsers.get_encoding(parser_context or {})  # type: ignore[attr-defined]
        try:
            text = codecs.getreader(encoding)(stream).read()
        except UnicodeDecodeError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
        try:
            return loads(text, strict=self.strict)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc
