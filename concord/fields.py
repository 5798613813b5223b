"""Serializer fields for what REST clients send: ids, bounded whole numbers and JSON values, read as the rest
of the site reads them (``concord.params``, ``concord.parsers``).

DRF's IntegerField reads ``"٣"`` as 3 and, without a ``max_value``, lets a 400-digit number through to the
database, where it overflows the column (a 500); its JSONField decodes a form-encoded value with the
standard library's recursive decoder. These fields accept ASCII digits only, always within bounds that fit
the database, and JSON no deeper than ``concord.parsers.MAX_JSON_DEPTH``.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from concord import parsers
from concord.errors import ValidationFailed
from concord.params import MAX_ID, parse_id, parse_int


class IdField(serializers.IntegerField):
    """The id of a row: a positive whole number of at most 18 ASCII digits (``concord.params.parse_id``), as
    a JSON number or a string. Anything else is refused (400) as not an id; whether the row exists and may be
    seen is the view's access helper's question (404)."""

    default_error_messages = {"invalid": f"An id is required (a whole number from 1 to {MAX_ID})."}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(min_value=1, max_value=MAX_ID, **kwargs)

    def to_internal_value(self, data: Any) -> int:
        value = parse_id(data)
        if value is None:
            self.fail("invalid")
        return value


class WholeNumberField(serializers.IntegerField):
    """A whole number of ASCII digits within ``[min_value, max_value]`` (both required: a number without a
    bound can overflow its column), as a JSON number or a string (``concord.params.parse_int``)."""

    def __init__(self, *, min_value: int, max_value: int, **kwargs: Any) -> None:
        super().__init__(min_value=min_value, max_value=max_value, **kwargs)
        self.bounds = (min_value, max_value)

    def to_internal_value(self, data: Any) -> int:
        low, high = self.bounds
        try:
            return parse_int(data, name=self.field_name or "value", minimum=low, maximum=high)
        except ValidationFailed as exc:
            raise serializers.ValidationError(exc.message, code="invalid") from None


class JSONField(serializers.JSONField):
    """DRF's JSONField, whose JSON text (a form-encoded field's value) is decoded by ``concord.parsers.loads``:
    refused (400) past ``MAX_JSON_DEPTH`` levels instead of recursing until Python gives up (a 500)."""

    def to_internal_value(self, data: Any) -> Any:
        if self.binary or getattr(data, "is_json_string", False):
            try:
                return parsers.loads(data.decode() if isinstance(data, bytes) else data)
            except (TypeError, ValueError):
                self.fail("invalid")
        return super().to_internal_value(data)
