"""The JSONL reader's fast parse (orjson) reads every line exactly as json.loads does, or leaves it to
json.loads (annotation.imports.readers._object_of)."""

from __future__ import annotations

import io
import json
import math

from hypothesis import example, given, settings
from hypothesis import strategies as st

from annotation.imports.readers import _object_of, jsonl_records
from annotation.imports.schema import RowError


def _same(a, b) -> bool:
    """Equal values of the same types all the way down (-0.0 is not 0.0, 1.0 is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**30])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.floats(min_value=-1e25, max_value=1e25)
    | st.text()
    | st.text(alphabet=st.sampled_from(["\x00", "\t", "\n", "\\", '"', "\ud800", "\udc00", "é", "\u2028", "a"]))
)
_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


def _reference(raw: bytes, first: bool = False):
    """What the reader did before the fast parse: decode, then json.loads (None for what it refuses)."""
    try:
        return json.loads(raw.decode("utf-8-sig" if first else "utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


@settings(max_examples=600, deadline=None)
@given(
    record=st.dictionaries(st.text(max_size=6), _values, max_size=6),
    ensure_ascii=st.booleans(),
    duplicate=st.booleans(),
    spaces=st.sampled_from(["", " ", "\t", "\r", "\r\n"]),
)
@example(record={"n": 2**64}, ensure_ascii=True, duplicate=False, spaces="")
@example(record={"n": -(2**63) - 1}, ensure_ascii=True, duplicate=False, spaces="")
@example(record={"n": [1e300, -0.0, float("nan")]}, ensure_ascii=True, duplicate=False, spaces="")
def test_a_line_is_read_as_json_reads_it_or_left_to_json(record, ensure_ascii, duplicate, spaces):
    text = json.dumps(record, ensure_ascii=ensure_ascii)
    if duplicate and record:
        # The same key twice: json keeps the last value at the first key's place.
        key = json.dumps(next(iter(record)), ensure_ascii=ensure_ascii)
        text = text[:-1] + f", {key}: 1}}"
    try:
        raw = (spaces + text + spaces + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate written as is (ensure_ascii=False): not UTF-8
        raw = (text + "\n").encode("utf-8", "surrogatepass")
    fast = _object_of(raw)
    if fast is not None:
        assert _same(fast, _reference(raw))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40), st.binary(max_size=40))
def test_arbitrary_bytes_are_read_as_json_reads_them_or_left_to_json(head, tail):
    raw = head + b'{"a": [1, 2.5, "x"]}' + tail
    fast = _object_of(raw)
    if fast is not None:
        assert _same(fast, _reference(raw))


def test_integers_beyond_64_bits_stay_integers():
    lines = b'{"id": 1, "metadata": {"n": 18446744073709551616, "m": -9223372036854775809}}\n'
    [(number, record)] = list(jsonl_records(io.BytesIO(lines)))
    assert number == 1
    assert record["metadata"] == {"n": 2**64, "m": -(2**63) - 1}
    assert type(record["metadata"]["n"]) is int


def test_what_orjson_refuses_gets_the_readers_messages():
    lines = b'\xef\xbb\xbf{"id": "bom"}\n{"x": NaN}\n{"x": "\\ud800"}\n\n{"x": \n[1]\n\xff\n'
    out = list(jsonl_records(io.BytesIO(lines)))
    assert [n for n, _ in out] == [1, 2, 3, 5, 6, 7]
    assert out[0][1] == {"id": "bom"}
    assert math.isnan(out[1][1]["x"]) and out[2][1] == {"x": "\ud800"}
    errors = [rec for _, rec in out[3:]]
    assert all(isinstance(e, RowError) for e in errors)
    assert errors[0].reason.startswith("malformed JSON") and errors[1].reason.startswith("expected a JSON object")
    assert errors[2].reason.startswith("not valid UTF-8")
