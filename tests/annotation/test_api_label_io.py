"""The label save's input and output without a serializer (annotation.api.label_input / label_output) are
LabelInput's and LabelOutput's: on generated request bodies, label_input accepts exactly what LabelInput
accepts, with the same validated data, and refuses the rest with LabelInput's own errors; label_output
answers what LabelOutput answers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from annotation.api import LabelInput, LabelOutput, label_input, label_output

# What clients send, and the near misses that a shortcut could get wrong: white space around a key,
# NUL and surrogate characters, blank strings, numbers and booleans where text or an integer belongs,
# integers as text, negative and huge versions, infinities in values (not JSON: refused).
_TEXT = st.one_of(
    st.sampled_from(["item", "s:0", "c:1", "a:12", "supported", "q_binary", "42"]),
    st.sampled_from(["", " ", " item", "item ", "s:0\n", "\tc:1", "a\x00b", "\ud800", "é", "über", "\u00a0x"]),
    st.text(max_size=8),
)
_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), _TEXT,
    st.sampled_from([float("inf"), float("-inf"), float("nan")]),
)
_VERSION = st.one_of(
    st.integers(min_value=-3, max_value=10),
    st.sampled_from([2**63 - 1, 2**63, 10**1000, True, False, 1.0, 2.5, "3", " 4", "x", None, [], {}]),
)
_VALUE = st.recursive(_SCALAR, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3))


@st.composite
def bodies(draw):
    body = {}
    for key, strategy in (("question", _TEXT | _SCALAR), ("unit_key", _TEXT | _SCALAR), ("value", _VALUE),
                          ("base_version", _VERSION)):
        if draw(st.integers(0, 9)) > 0:  # mostly present
            body[key] = draw(strategy)
    if draw(st.booleans()):
        body["extra"] = draw(_SCALAR)
    return body


@settings(max_examples=600, deadline=None)
@given(st.one_of(bodies(), st.lists(_SCALAR, max_size=2), _SCALAR))
def test_label_input_is_label_input(data):
    _answered_as_label_input_answers(data)


def _answered_as_label_input_answers(data):
    serializer = LabelInput(data=data)
    if serializer.is_valid():
        assert label_input(data) == dict(serializer.validated_data)
    else:
        with pytest.raises(serializers.ValidationError) as refused:
            label_input(data)
        assert refused.value.detail == serializer.errors


@pytest.mark.parametrize(
    "data",
    [
        {"question": "q", "unit_key": " item", "value": 1, "base_version": 0},
        {"question": "q", "unit_key": "item", "value": 1, "base_version": True},
        {"question": "q\x00", "unit_key": "item", "value": 1, "base_version": 0},
        {"question": "q", "unit_key": "item", "value": 1, "base_version": 2**63},
        {"question": "q", "unit_key": "item", "base_version": 0},
        {"question": "", "unit_key": "item", "value": 1, "base_version": 0},
        {"question": 7, "unit_key": "item", "value": 1, "base_version": 0},
        {"question": "q", "unit_key": "item", "value": [float("inf")], "base_version": 0},
        {"question": "q", "unit_key": "item", "value": {"k": float("nan")}, "base_version": 0},
    ],
)
def test_near_misses_are_answered_as_label_input_answers(data):
    """Trimmed, refused, converted or out of the database's range: each is answered as LabelInput answers."""
    _answered_as_label_input_answers(data)


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(["q_binary", "faithful"]),
    unit_key=_TEXT,
    value=_VALUE,
    version=st.integers(min_value=1, max_value=10**6),
    updated_at=st.one_of(
        st.none(),
        st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)),
        st.datetimes(
            min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1),
            timezones=st.just(timezone(timedelta(hours=-5))),
        ),
    ),
)
def test_label_output_is_label_output(key, unit_key, value, version, updated_at):
    label = SimpleNamespace(
        question=SimpleNamespace(key=key), unit_key=unit_key, value=value, version=version, updated_at=updated_at
    )
    assert label_output(label, key) == LabelOutput(label).data
