"""Form fields that choose rows by id, reading the id as every request's ids are read (``concord.params``).

Django's ModelMultipleChoiceField looks the posted values up with ``pk__in``, which, unlike an ``exact``
lookup, has no guard for a number past the column's range: 400 digits raised OverflowError on SQLite (a
500). Its ModelChoiceField reads ``"٣"`` as id 3. These refuse anything that is not an id as an invalid
choice, before any query.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from concord.params import parse_id


class ModelChoiceField(forms.ModelChoiceField):
    """One row of the queryset, named by its id (``parse_id``); anything else is an invalid choice."""

    def to_python(self, value: Any) -> Any:
        if value not in self.empty_values and not isinstance(value, self.queryset.model) and parse_id(value) is None:
            raise ValidationError(self.error_messages["invalid_choice"], code="invalid_choice")
        return super().to_python(value)


class ModelMultipleChoiceField(forms.ModelMultipleChoiceField):
    """Rows of the queryset, each named by its id (``parse_id``); a value that is not an id is refused."""

    def _check_values(self, value: Any) -> Any:
        for pk in value:
            if not isinstance(pk, self.queryset.model) and parse_id(pk) is None:
                raise ValidationError(
                    self.error_messages["invalid_pk_value"], code="invalid_pk_value", params={"pk": pk}
                )
        return super()._check_values(value)
