"""The one way to read an id or a bounded whole number from a request (query string, form, JSON body).

``str.isdigit()`` accepts digits that ``int()`` refuses or reads differently (``"²"``, ``"٣"``), and
``int()`` refuses strings of more than 4,300 digits (CPython's limit on integer conversion): both used to
reach ``int()`` unguarded and answer 500. Here only ASCII digits count, and an id has at most 18 of
them (every primary key fits in a signed 64-bit integer), so nothing a client sends can raise.
"""

from __future__ import annotations

from typing import Any

from concord.errors import ValidationFailed

MAX_ID_DIGITS = 18  # 999,999,999,999,999,999 < 2**63 - 1: any longer string cannot name a row
MAX_ID = 10**MAX_ID_DIGITS - 1  # the largest id (or version) a request may name: it fits a bigint column
MAX_BIGINT = 2**63 - 1  # the most a BigIntegerField (or a primary key) column holds
MAX_INT = 2**31 - 1  # the most an IntegerField or PositiveIntegerField column holds on PostgreSQL


def _ascii_digits(raw: Any, max_digits: int) -> str | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        raw = str(raw)
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    if not text or len(text) > max_digits or not text.isascii() or not text.isdigit():
        return None
    return text


def parse_id(raw: Any) -> int | None:
    """The id ``raw`` names (a positive whole number of ASCII digits, surrounding white space allowed), or
    None for anything else: empty, signed, Unicode digits, too long, a float, a list. Callers answer None
    with the same 404 as an id that exists nowhere, so no input tells an id apart from a missing one."""
    text = _ascii_digits(raw, MAX_ID_DIGITS)
    if text is None:
        return None
    value = int(text)
    return value if value > 0 else None


def parse_ids(raw: Any) -> list[int]:
    """The ids of a list of raw values, dropping every value that names no id (see :func:`parse_id`)."""
    if not isinstance(raw, list | tuple):
        return []
    return [i for i in (parse_id(x) for x in raw) if i is not None]


def parse_int(raw: Any, *, name: str, minimum: int, maximum: int, default: int | None = None) -> int:
    """A whole number of ASCII digits (optionally signed) within [minimum, maximum], or ValidationFailed
    naming ``name`` and the bounds. Empty or missing gives ``default`` when one is set."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        if default is not None:
            return default
        raise ValidationFailed(f"{name} is required (a whole number from {minimum} to {maximum})")
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = str(raw)
    text = raw.strip() if isinstance(raw, str) else raw
    sign = 1
    if isinstance(text, str) and text[:1] in "+-" and len(text) > 1:
        sign, text = (-1 if text[0] == "-" else 1), text[1:]
    # Any length int() accepts quickly; the bounds then decide.
    digits = _ascii_digits(text, 4000)
    if digits is None:
        raise ValidationFailed(f"{name} must be a whole number from {minimum} to {maximum}")
    value = sign * int(digits)
    if not minimum <= value <= maximum:
        raise ValidationFailed(f"{name} must be a whole number from {minimum} to {maximum}")
    return value
