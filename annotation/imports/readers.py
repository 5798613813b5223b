"""Readers: a binary file (optionally gzip-compressed) → numbered records, one reader per format.

Each reader yields ``(number, record)`` pairs, or ``(number, RowError)`` for what it cannot parse, so
that validation reports every problem with its line (JSONL) or row (CSV, numbered as a spreadsheet
shows them: the header is row 1). A gzip file is decompressed on the fly, and refused once it grows
past ``IMPORT_MAX_BYTES`` (a gzip bomb stops there). ``file_source`` wraps a file as a re-startable
record source, since an import reads its file twice (check, then write).

Both readers cut lines with ``_Lines``: a line ends at "\n", "\r\n" or a lone "\r", whatever the file
came from; blank lines (nothing but white space) cost next to nothing, since a run of them is passed over
in C; and a file is refused (413) at its line ``IMPORT_MAX_LINES + 1``, blank lines included.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any, Generic, TypeVar

import orjson
from django.conf import settings

from annotation.imports.schema import (
    CSV_EXPORT_COLUMNS,
    CSV_EXPORT_HINT,
    FIELDS,
    REQUIRED,
    Located,
    RecordSource,
    RowError,
    type_name,
)
from concord.errors import PayloadTooLarge, ValidationFailed
from concord.parsers import MAX_JSON_DEPTH, TooDeep, nests_deeper_than
from concord.parsers import loads as client_json

# CSV cells of these fields hold JSON.
JSON_CELLS = ("contexts", "aspects", "metadata", "labels", "gold", "scores")


class _LimitedReader(io.RawIOBase):
    """Counts bytes read through it and refuses to go past ``limit`` (a gzip bomb stops here)."""

    def __init__(self, inner: IO[bytes], limit: int, filename: str) -> None:
        self.inner, self.limit, self.filename, self.count = inner, limit, filename, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self.inner.read(len(buffer))
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise ValidationFailed(
                f"{self.filename} is not a valid gzip file ({exc}); nothing was imported",
                details=[{"location": "file", "field": "file", "reason": f"corrupt or truncated gzip data: {exc}"}],
            ) from None
        self.count += len(data)
        if self.count > self.limit:
            raise PayloadTooLarge(
                f"{self.filename} decompresses to more than {self.limit} bytes (IMPORT_MAX_BYTES)",
                details=[{"location": "file", "field": "file", "reason": "decompressed size over the limit"}],
            )
        buffer[: len(data)] = data
        return len(data)


def _file_size(file: IO[bytes]) -> int:
    size = getattr(file, "size", None)
    if isinstance(size, int):
        return size
    position = file.tell()
    file.seek(0, io.SEEK_END)
    end = file.tell()
    file.seek(position)
    return end


def _is_gzip(file: IO[bytes]) -> bool:
    file.seek(0)
    magic = file.read(2)
    file.seek(0)
    return magic == b"\x1f\x8b"


def binary_stream(file: IO[bytes], filename: str) -> IO[bytes]:
    """A fresh stream over the (decompressed) content, from the start."""
    file.seek(0)
    if _is_gzip(file):
        raw = gzip.GzipFile(fileobj=file, mode="rb")
        return io.BufferedReader(_LimitedReader(raw, settings.IMPORT_MAX_BYTES, filename))
    return file


def detect_format(file: IO[bytes], filename: str, fmt: str | None) -> str:
    if fmt:
        if fmt not in ("jsonl", "csv"):
            raise ValidationFailed(f"unknown format {fmt!r}; use jsonl or csv")
        return fmt
    name = filename.lower().removesuffix(".gz")
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if name.endswith(".csv"):
        return "csv"
    stream = binary_stream(file, filename)
    head = stream.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    return "jsonl" if head.startswith(b"{") else "csv"


# --- lines ---------------------------------------------------------------------------------------

# A file is read in blocks of this size (bytes; CSV's are decoded to text of about as many characters).
_BLOCK = 1 << 20
# Python's white space (str.isspace: what str.strip removes and what the readers have always taken for a
# blank line), less the line ends. Every such character is below U+3001; a test checks all of Unicode.
_SPACE = [c for c in map(chr, range(0x3001)) if c.isspace() and c not in "\r\n"]

T = TypeVar("T", bytes, str)


@dataclass(frozen=True)
class _Kind(Generic[T]):
    """What ``_Lines`` needs to cut lines of one type: bytes (JSONL) or text (CSV)."""

    empty: T
    nl: T
    cr: T
    crlf: T
    # A run of white space and line ends (without backtracking: a flat class or a possessive repeat is
    # matched in C at a few milliseconds a mebibyte, where a repeated group of the shape "(space* end)+"
    # costs a tenth of a second), and what such a run can start with (a cheap first test).
    space_run: re.Pattern[T]
    blank_first: frozenset[Any]


def _bytes_kind() -> _Kind[bytes]:
    encoded = [c.encode() for c in _SPACE]
    one_byte = b"".join(re.escape(e) for e in encoded if len(e) == 1)
    more_bytes = b"|".join(re.escape(e) for e in encoded if len(e) > 1)
    return _Kind(empty=b"", nl=b"\n", cr=b"\r", crlf=b"\r\n",
                 space_run=re.compile(b"(?:[%s\r\n]+|%s)*+" % (one_byte, more_bytes)),
                 blank_first=frozenset(e[0] for e in encoded) | {0x0A, 0x0D})


def _text_kind() -> _Kind[str]:
    return _Kind(empty="", nl="\n", cr="\r", crlf="\r\n",
                 space_run=re.compile("[" + re.escape("".join(_SPACE)) + "\r\n]*"),
                 blank_first=frozenset(_SPACE) | {"\n", "\r"})


_BYTES = _bytes_kind()
_TEXT = _text_kind()


def _whole_line_ends(blocks: Iterator[T], cr: T) -> Iterator[T]:
    """The blocks, none but the last ending in "\r": a "\r" that ends one moves to the start of the next,
    so that no "\r\n" is cut in two."""
    carry: T | None = None
    for block in blocks:
        if carry is not None:
            block = carry + block
        carry = None
        if block.endswith(cr):
            carry, block = cr, block[:-1]
        if block:
            yield block
    if carry is not None:
        yield carry


def _too_many_lines(filename: str, limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"{filename} has more than {limit} lines (IMPORT_MAX_LINES), blank lines included; nothing was imported. "
        "Split the file.",
        details=[{"location": f"line {limit + 1}", "line": limit + 1, "field": "file",
                  "reason": f"more than {limit} lines (IMPORT_MAX_LINES)"}],
    )


class _Lines(Generic[T]):
    """The lines of a file read in blocks, each with its end, numbered from 1 (``number``: the last line's).

    A line ends at "\n", "\r\n" or a lone "\r" (as Django cuts an uploaded file and ``bytes.splitlines``
    does), whatever the file came from. Blank lines are passed over before every line (``every_line``:
    JSONL, where each line is a record) or before the next line only, when the reader says that a record
    starts there (``record_start``: CSV, where a quoted cell may hold blank lines), with one
    regular-expression match and a few counts per block, in C, and counted in ``number`` and ``skipped``:
    a mebibyte of new lines costs a few milliseconds. A line that goes on over several blocks is gathered
    in a list and joined once, so that it costs its length (Django's own line iteration of an upload joins
    it again at every 64 KiB chunk). The file is refused (413) at its line ``IMPORT_MAX_LINES + 1``, blank
    lines included.
    """

    def __init__(self, blocks: Iterator[T], *, kind: _Kind[T], filename: str, every_line: bool) -> None:
        self.blocks = _whole_line_ends(blocks, kind.cr)
        self.kind = kind
        self.filename = filename
        self.limit = settings.IMPORT_MAX_LINES
        self.block: T = kind.empty
        self.pos = 0
        self.number = 0
        self.skipped = 0
        self.every_line = every_line
        self.record_start = False

    def __iter__(self) -> _Lines[T]:
        return self

    def _count(self, n: int) -> None:
        self.number += n
        if self.number > self.limit:
            raise _too_many_lines(self.filename, self.limit)

    def _end(self, block: T, pos: int) -> int:
        """Where the line that starts at ``pos`` ends (after its end), or 0 when it goes on in the next block."""
        nl = block.find(self.kind.nl, pos)
        cr = block.find(self.kind.cr, pos, nl if nl >= 0 else len(block))
        if cr < 0 or cr + 1 == nl:
            return nl + 1
        return cr + 1

    def _skip_blank_lines(self) -> None:
        kind = self.kind
        while True:
            block, pos = self.block, self.pos
            if pos == len(block):
                following = next(self.blocks, None)
                if following is None:
                    return
                self.block, self.pos, block, pos = following, 0, following, 0
            if block[pos] not in kind.blank_first:
                return
            # The blank lines are the run of white space and line ends up to its last line end (what
            # follows is the start of the next line: indentation, or white space that goes on in the next block).
            end = kind.space_run.match(block, pos).end()  # type: ignore[union-attr]  # it matches "" at least
            end = max(block.rfind(kind.nl, pos, end), block.rfind(kind.cr, pos, end)) + 1
            if end <= pos:
                return
            n = block.count(kind.nl, pos, end) + block.count(kind.cr, pos, end) - block.count(kind.crlf, pos, end)
            self.pos = end
            self.skipped += n
            self._count(n)
            if end < len(block):
                return

    def __next__(self) -> T:
        if self.every_line or self.record_start:
            self.record_start = False
            self._skip_blank_lines()
        block, pos = self.block, self.pos
        end = self._end(block, pos)
        if end:
            self.pos = end
            self._count(1)
            return block[pos:end]
        parts = [block[pos:]] if pos < len(block) else []
        self.block, self.pos = self.kind.empty, 0
        for following in self.blocks:
            end = self._end(following, 0)
            if end:
                parts.append(following[:end])
                self.block, self.pos = following, end
                break
            parts.append(following)
        if not parts:
            raise StopIteration
        self._count(1)
        return self.kind.empty.join(parts)


def _byte_blocks(stream: IO[bytes]) -> Iterator[bytes]:
    while block := stream.read(_BLOCK):
        yield block


_BOM = codecs.BOM_UTF8


def _text_blocks(stream: IO[bytes]) -> Iterator[str]:
    """The stream's UTF-8 text in blocks, less a byte-order mark at its start (as "utf-8-sig" reads it).

    Invalid UTF-8 raises UnicodeDecodeError after the text before it has been handed out, so that the
    reader stops at the row that holds it, as when it decoded line by line."""
    pending = b""
    first = True
    while True:
        data = stream.read(_BLOCK)
        final = not data
        data = pending + data if pending else data
        if first:
            if len(data) < len(_BOM) and not final:
                pending = data
                continue
            data, first = data.removeprefix(_BOM), False
        try:
            text, used = codecs.utf_8_decode(data, "strict", final)
        except UnicodeDecodeError as exc:
            good = data[: exc.start].decode("utf-8")
            if good:
                yield good
            raise
        pending = data[used:]
        if text:
            yield text
        if final:
            return


# orjson turns an integer outside 64 bits into a float where json keeps it an int. Such an integer has
# 19 digits or more, so a line with a run of 19 digits (translated to "0", all else to ".") is left to json.
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x2E for b in range(256))
_LONG_DIGIT_RUN = b"0" * 19


def _object_of(raw: bytes) -> dict[str, Any] | None:
    """The JSON object on a line, read by orjson (faster than json), or None when json.loads must
    decide: orjson refuses what json would read differently or reports otherwise (NaN and Infinity,
    lone surrogates, invalid UTF-8, a byte-order mark, deep nesting, anything malformed) and agrees
    with json on what it reads, except integers outside 64 bits, which it is not given.
    tests/annotation/test_import_readers.py checks the two readings against each other."""
    if _LONG_DIGIT_RUN in raw.translate(_DIGITS_AS_ZERO):
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if type(value) is dict else None


def jsonl_records(stream: IO[bytes], *, filename: str = "the file") -> Iterator[Located]:
    lines = _Lines(_byte_blocks(stream), kind=_BYTES, filename=filename, every_line=True)
    for raw in lines:
        lineno = lines.number
        if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and nests_deeper_than(raw.decode("utf-8", "replace")):
            # json.loads would recurse past Python's limit, orjson past 1,024 levels; no record needs this.
            yield lineno, RowError("line", lineno, "", f"malformed JSON: {TooDeep().msg}")
            continue
        fast = _object_of(raw)
        if fast is not None:
            yield lineno, fast
            continue
        try:
            text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            yield lineno, RowError("line", lineno, "", f"not valid UTF-8 ({exc.reason} at byte {exc.start})")
            continue
        if not text.strip():
            continue  # a blank line that the fast skip did not see (one over two blocks, the last, a byte-order mark)
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            yield lineno, RowError("line", lineno, "", f"malformed JSON: {exc.msg} (column {exc.colno})")
            continue
        except ValueError as exc:  # a number of more digits than int() reads (4,300)
            yield lineno, RowError("line", lineno, "", f"malformed JSON: {exc}")
            continue
        if not isinstance(record, dict):
            yield lineno, RowError("line", lineno, "", f"expected a JSON object, found {type_name(record)}")
            continue
        yield lineno, record


def csv_records(stream: IO[bytes], *, filename: str = "the file") -> Iterator[Located]:
    # A long source document can exceed csv's default 128 KiB cell limit; the file limit bounds it.
    csv.field_size_limit(max(csv.field_size_limit(), settings.IMPORT_MAX_BYTES))
    # Blank lines are passed over only where a row starts (a quoted cell may hold them), never before the
    # header; each one is a row, as a spreadsheet shows it.
    lines = _Lines(_text_blocks(stream), kind=_TEXT, filename=filename, every_line=False)
    reader = csv.reader(lines, strict=True)
    row = 1
    try:
        header = next(reader, None)
    except (csv.Error, UnicodeDecodeError) as exc:
        yield row, RowError("row", row, "", f"cannot read the header: {exc}")
        return
    if header is None:
        yield row, RowError("row", row, "", "the file is empty (a header row with id, question, answer is needed)")
        return
    header = [h.strip() for h in header]
    if set(header) >= CSV_EXPORT_COLUMNS:
        yield row, RowError("row", row, "header", CSV_EXPORT_HINT)
        return
    unknown = [h for h in header if h not in FIELDS]
    missing = [h for h in REQUIRED if h not in header]
    if unknown or missing or len(set(header)) != len(header):
        reasons = []
        if missing:
            reasons.append(f"missing column(s) {', '.join(missing)}")
        if unknown:
            reasons.append(f"unknown column(s) {', '.join(unknown)} (known: {', '.join(FIELDS)})")
        if len(set(header)) != len(header):
            reasons.append("a column name is repeated")
        yield row, RowError("row", row, "header", "; ".join(reasons))
        return
    while True:
        lines.record_start, lines.skipped = True, 0
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            row += lines.skipped + 1
            hint = " (a quote that is never closed?)" if "end of data" in str(exc) else ""
            yield row, RowError("row", row, "", f"CSV syntax error near line {lines.number}: {exc}{hint}")
            return
        except UnicodeDecodeError as exc:
            row += lines.skipped + 1
            yield row, RowError("row", row, "", f"not valid UTF-8 ({exc.reason})")
            return
        row += lines.skipped + 1
        if not cells or (len(cells) == 1 and not cells[0].strip()):
            continue
        if len(cells) != len(header):
            yield row, RowError("row", row, "", f"expected {len(header)} cells, found {len(cells)}")
            continue
        record: dict[str, Any] = {}
        bad: RowError | None = None
        for name, cell in zip(header, cells, strict=True):
            if name in JSON_CELLS:
                if not cell.strip():
                    continue
                try:
                    record[name] = client_json(cell, strict=False)
                except ValueError as exc:  # JSONDecodeError, TooDeep, a number int() refuses
                    bad = RowError("row", row, name, f"the cell must hold JSON: {getattr(exc, 'msg', exc)}")
                    break
            elif cell != "" or name in REQUIRED:
                record[name] = cell
        yield row, (bad if bad else record)


READERS: dict[str, Callable[..., Iterator[Located]]] = {"jsonl": jsonl_records, "csv": csv_records}


def records_from(iterable_factory: Callable[[], Iterable[tuple[int, dict[str, Any]]]]) -> RecordSource:
    """Wrap an adapter's generator function (numbered records) as a record source."""

    def source() -> Iterator[Located]:
        yield from iterable_factory()

    return source


def file_source(file: IO[bytes], *, filename: str, fmt: str | None = None) -> tuple[RecordSource, str]:
    """A re-startable record source over an uploaded or opened binary file, and its format."""
    size = _file_size(file)
    limit = settings.IMPORT_MAX_BYTES
    if size > limit:
        raise PayloadTooLarge(
            f"{filename} is {size} bytes; the import limit is {limit} bytes (IMPORT_MAX_BYTES). Split the file.",
            details=[{"location": "file", "field": "file", "reason": f"{size} bytes is over the limit of {limit}"}],
        )
    fmt = detect_format(file, filename, fmt)
    parse = READERS[fmt]

    def source() -> Iterator[Located]:
        return parse(binary_stream(file, filename), filename=filename)

    return source, fmt
