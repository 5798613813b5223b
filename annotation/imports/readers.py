"""Readers: a binary file (optionally gzip-compressed) → numbered records, one reader per format.

Each reader yields ``(number, record)`` pairs, or ``(number, RowError)`` for what it cannot parse, so
that validation reports every problem with its line (JSONL) or row (CSV, numbered as a spreadsheet
shows them: the header is row 1). A gzip file is decompressed on the fly, and refused once it grows
past ``IMPORT_MAX_BYTES`` (a gzip bomb stops there). ``file_source`` wraps a file as a re-startable
record source, since an import reads its file twice (check, then write).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

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


def jsonl_records(stream: IO[bytes]) -> Iterator[Located]:
    for lineno, raw in enumerate(stream, start=1):
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
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            yield lineno, RowError("line", lineno, "", f"malformed JSON: {exc.msg} (column {exc.colno})")
            continue
        if not isinstance(record, dict):
            yield lineno, RowError("line", lineno, "", f"expected a JSON object, found {type_name(record)}")
            continue
        yield lineno, record


def csv_records(stream: IO[bytes]) -> Iterator[Located]:
    # A long source document can exceed csv's default 128 KiB cell limit; the file limit bounds it.
    csv.field_size_limit(max(csv.field_size_limit(), settings.IMPORT_MAX_BYTES))
    lines = codecs.iterdecode(stream, "utf-8-sig")
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
        row += 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            hint = " (a quote that is never closed?)" if "end of data" in str(exc) else ""
            yield row, RowError("row", row, "", f"CSV syntax error near line {reader.line_num}: {exc}{hint}")
            return
        except UnicodeDecodeError as exc:
            yield row, RowError("row", row, "", f"not valid UTF-8 ({exc.reason})")
            return
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
                    record[name] = json.loads(cell)
                except json.JSONDecodeError as exc:
                    bad = RowError("row", row, name, f"the cell must hold JSON: {exc.msg}")
                    break
            elif cell != "" or name in REQUIRED:
                record[name] = cell
        yield row, (bad if bad else record)


READERS: dict[str, Callable[[IO[bytes]], Iterator[Located]]] = {"jsonl": jsonl_records, "csv": csv_records}


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
        return parse(binary_stream(file, filename))

    return source, fmt
