"""The readers: the JSONL reader's fast parse (orjson) reads every line exactly as json.loads does, or leaves
it to json.loads (annotation.imports.readers._object_of); both readers cut lines as reading line by line did,
pass over blank lines without a Python call each, and refuse a file past IMPORT_MAX_LINES."""

from __future__ import annotations

import codecs
import contextlib
import csv
import gzip
import io
import json
import math
import sys

import pytest
from django.test import override_settings
from hypothesis import example, given, settings
from hypothesis import strategies as st

from annotation.imports import readers
from annotation.imports.readers import _object_of, csv_records, jsonl_records
from annotation.imports.schema import REQUIRED, RowError, type_name
from concord.errors import PayloadTooLarge


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


# --- lines: cut as Django cuts an upload, blank lines passed over in C -----------------------------
# The readers cut a file into lines with readers._Lines (a line ends at "\n", "\r\n" or a lone "\r") and pass
# over runs of blank lines without a Python call per line. What they yield must be what reading the file line
# by line gave (the readers as they were before, below as references), wherever the blocks are cut.

_BLOCK_SIZES = st.sampled_from([1, 2, 3, 5, 16, 1 << 20])
# Lines that are blank (white space only, as str.strip sees it) and lines that are not.
_BLANK = ["", " ", "\t", "  \t ", "\x0b", "\x0c", "\x1c", "\x1f", "\u00a0", "\u0085", "\u3000", "\u2028", " \u2009 "]
_NOT_BLANK = ['{"id": "a"}', '  {"id": "b", "x": [1, 2]}  ', "x", "[1]", '{"id": "\u00e9\u3000"}', "\u200b",
              '{"id": "long", "t": "' + "y" * 40 + '"}']


def _jsonl_reference(data: bytes) -> list:
    """The JSONL reader before the fast skip: every line by itself, cut as bytes.splitlines cuts them."""
    out = []
    for lineno, raw in enumerate(data.splitlines(keepends=True), start=1):
        fast = _object_of(raw)
        if fast is not None:
            out.append((lineno, fast))
            continue
        try:
            text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            out.append((lineno, RowError("line", lineno, "", f"not valid UTF-8 ({exc.reason} at byte {exc.start})")))
            continue
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            out.append((lineno, RowError("line", lineno, "", f"malformed JSON: {exc.msg} (column {exc.colno})")))
            continue
        out.append((lineno, record if isinstance(record, dict) else RowError(
            "line", lineno, "", f"expected a JSON object, found {type_name(record)}")))
    return out


@contextlib.contextmanager
def _blocks_of(size: int):
    before = readers._BLOCK
    readers._BLOCK = size
    try:
        yield
    finally:
        readers._BLOCK = before


@st.composite
def _files(draw, pieces: list[str]) -> bytes:
    lines = draw(st.lists(st.sampled_from(pieces), max_size=12))
    ends = draw(st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=len(lines), max_size=len(lines)))
    text = "".join(line + end for line, end in zip(lines, ends, strict=True))
    if draw(st.booleans()):
        text += draw(st.sampled_from(pieces))  # a last line without its end
    data = text.encode()
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    if draw(st.booleans()):
        data += b"\xff\n" + draw(st.sampled_from(pieces)).encode()  # invalid UTF-8 on a line
    return data


@settings(max_examples=400, deadline=None)
@given(data=_files(_BLANK + _NOT_BLANK), block=_BLOCK_SIZES)
@example(data=b"\n" * 10 + b'{"id": "x"}\r\n\r\n \r', block=3)
@example(data=b"\r\r\n\n\r" + " \u00a0\r\n".encode() * 3 + b'{"id": 1}', block=2)
def test_jsonl_lines_are_cut_numbered_and_skipped_as_line_by_line(data, block):
    with _blocks_of(block):
        assert list(jsonl_records(io.BytesIO(data))) == _jsonl_reference(data)


def _csv_reference(data: bytes) -> list:
    """The CSV reader before the fast skip, on a valid file: csv over the lines decoded one by one, blank rows
    (no cell, or one blank cell) passed over; rows numbered as csv reads them, the header being row 1."""
    lines = codecs.iterdecode(iter(data.splitlines(keepends=True)), "utf-8-sig")
    reader = csv.reader(lines, strict=True)
    header = next(reader)
    out = []
    for row, cells in enumerate(reader, start=2):
        if not cells or (len(cells) == 1 and not cells[0].strip()):
            continue
        record = {name: cell for name, cell in zip(header, cells, strict=True) if cell != "" or name in REQUIRED}
        out.append((row, record))
    return out


_CSV_ROWS = ["q1,Why?,Because.", 'q2,"Two\nlines",A.', 'q3,"A blank line\n\n  \nin a cell",B.',
             'q4,"cr\rand crlf\r\nin a cell",C.', 'q5,"  ",D.', "q6,\u00e9t\u00e9,\u3000E.", '"  "', '""']


@settings(max_examples=300, deadline=None)
@given(data=_files(_BLANK + _CSV_ROWS), block=_BLOCK_SIZES)
def test_csv_rows_are_cut_numbered_and_skipped_as_line_by_line(data, block):
    data = b"id,question,answer\r\n" + data.removeprefix(b"\xef\xbb\xbf").split(b"\xff")[0]
    with _blocks_of(block):
        assert list(csv_records(io.BytesIO(data))) == _csv_reference(data)


def test_invalid_utf8_in_a_csv_is_reported_at_its_row_whatever_the_blocks():
    data = b"id,question,answer\n\n\nq1,a,b\n  \n\nq2,\xff,c\nq3,a,b\n"
    for block in (1, 4, 1 << 20):
        with _blocks_of(block):
            out = list(csv_records(io.BytesIO(data)))
        assert out[0] == (4, {"id": "q1", "question": "a", "answer": "b"})
        assert out[1][0] == 7 and out[1][1].reason.startswith("not valid UTF-8"), out
        assert len(out) == 2


def test_the_readers_know_every_white_space_character():
    """A blank line is one that str.strip() empties; the skip's character list is taken from str.isspace
    below U+3001 only, so no white space may lie above it."""
    every = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    assert set(readers._SPACE) == every - {"\r", "\n"}


def _python_calls(read) -> int:
    """How many Python-level calls (functions and generator steps) and C calls ``read()`` makes: what a
    line costs, counted rather than timed."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += 1

    sys.setprofile(count)
    try:
        read()
    finally:
        sys.setprofile(None)
    return calls


_BLANK_LINES = "".join(line + end for line in ("", "   ", "\t", " \t ", "\u00a0", "\u3000") for end in ("\n", "\r\n"))


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_blank_lines_cost_no_python_call_each(fmt, gz):
    # 300,000 blank lines (1.2 MB) around one record: read line by line, each cost several Python calls.
    n = 300_000 // 12
    head = b"id,question,answer\n" if fmt == "csv" else b""
    record = b"q1,Why?,Because.\n" if fmt == "csv" else b'{"id": "q1"}\n'
    data = head + (_BLANK_LINES * n).encode() + record + (_BLANK_LINES * n).encode()
    file = io.BytesIO(gzip.compress(data) if gz else data)
    source, _ = readers.file_source(file, filename=f"blank.{fmt}")
    out: list = []
    calls = _python_calls(lambda: out.extend(source()))
    assert [number for number, _ in out] == [(2 if fmt == "csv" else 1) + 12 * n]
    assert calls < 2_000, calls


@override_settings(IMPORT_MAX_LINES=1000)
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_file_of_more_lines_than_the_limit_is_refused_blank_lines_counted(fmt):
    head = "id,question,answer\n" if fmt == "csv" else ""
    record = "q1,Why?,Because." if fmt == "csv" else '{"id": "q1"}'
    at_limit = head + "\n" * (999 - len(head.splitlines())) + record  # line 1000, without its end
    source, _ = readers.file_source(io.BytesIO(at_limit.encode()), filename=f"f.{fmt}")
    assert [n for n, _ in source()] == [1000]
    for over in (at_limit + "\n\r\n", at_limit + "\n ", head + "\r" * 5000 + record):
        source, _ = readers.file_source(io.BytesIO(over.encode()), filename=f"f.{fmt}", fmt=fmt)
        with pytest.raises(PayloadTooLarge) as refused:
            list(source())
        assert refused.value.message.startswith(f"f.{fmt} has more than 1000 lines (IMPORT_MAX_LINES)")
        assert refused.value.details == [{"location": "line 1001", "line": 1001, "field": "file",
                                          "reason": "more than 1000 lines (IMPORT_MAX_LINES)"}]


class _BlocksOnly(io.BytesIO):
    """A file that may be read in blocks only. Django's line iteration of an uploaded file (File.__iter__)
    joins a line that goes on over chunks again at every chunk (64 KiB), so that a line of n bytes costs
    about n * n / 128 Ki bytes copied: some 160 GB for one line of 200 MiB."""

    def __iter__(self):
        raise AssertionError("a reader iterated the file's lines")

    def readline(self, size=-1):
        raise AssertionError("a reader read the file line by line")


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_the_readers_read_blocks_and_join_a_long_line_once(fmt):
    answer = "x" * 3_000_000
    data = (f'{{"id": "long", "answer": "{answer}"}}\n' if fmt == "jsonl"
            else f"id,question,answer\nlong,Why?,{answer}\n").encode()
    with _blocks_of(4096):
        source, _ = readers.file_source(_BlocksOnly(data * 2 if fmt == "jsonl" else data), filename=f"f.{fmt}")
        out = list(source())
    assert [record["answer"] for _, record in out] == [answer] * (2 if fmt == "jsonl" else 1)
