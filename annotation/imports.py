"""The one import service: JSONL / CSV files (and dataset adapters) → items, sentences, chunks, aspects
and, optionally, existing labels of pseudonymous annotators.

Schema of one record (a JSON object per line, or a CSV row whose list/object cells hold JSON):

=========  ========  ===========================================================================
field      required  value
=========  ========  ===========================================================================
id         yes       string or integer; unique within the study (the item's external id)
question   yes       non-empty string
answer     yes       non-empty string (split into sentences ``s:0``, ``s:1``, … at import)
contexts   no        list of strings, or of ``{"id": str, "text": str, "is_target": bool}``;
                     the n-th context becomes chunk ``c:<n>`` (1-based rank)
source     no        string: the source document, for plain-language summaries (split too)
aspects    no        list of strings, or of ``{"text": str, "importance": "must_have"|"nice_to_have"}``
scope      no        ``emergency`` | ``in_scope`` | ``out_of_scope`` | ``non_clinical``
system     no        string: the system that produced the answer
metadata   no        JSON object
labels     no        list of ``{"annotator": pseudonym, "question": key, "unit": unit, "value": v}``
                     with unit ``item`` | ``s:<i>`` | ``c:<rank>`` | ``a:<i>`` (``i`` counts from 0 in this
                     record's ``aspects`` list); values are checked against the study's questions
gold       no        list of objects; only with an ``extra_writer`` (``manage.py import_study_export``)
scores     no        list of objects; only with an ``extra_writer`` (``manage.py import_study_export``)
=========  ========  ===========================================================================

All or nothing: the file is read twice. The first pass validates every record and collects every
error (up to ``MAX_ERRORS``) as ``{line|row, field, reason}``; only a clean file gets the second pass,
which writes everything in one transaction with ``bulk_create`` in batches, so memory stays flat
however long the file is. CSV rows are numbered as a spreadsheet shows them (the header is row 1).
Text is stored exactly as given (HTML included); templates escape it when it is shown.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import hashlib
import io
import json
import math
import re
import secrets
import struct
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone
from django.utils.text import slugify

from annotation.models import (
    Aspect,
    Assignment,
    AssignmentStatus,
    Chunk,
    Importance,
    ImportBatch,
    Item,
    Label,
    LabelHistory,
    Pool,
    PoolMembership,
    Question,
    Role,
    ScopeClass,
    Sentence,
    Study,
    StudyRole,
)
from annotation.segmentation_fast import split_sentences
from annotation.services import _submitted_handlers
from concord.errors import Conflict, PayloadTooLarge, ValidationFailed

MAX_ERRORS = 200
BATCH_SIZE = 500
_ID_CHECK_BATCH = 1000
DEFAULT_POOL = "imported"

FIELDS = ("id", "question", "answer", "contexts", "source", "aspects", "scope", "system", "metadata", "labels",
          "gold", "scores")
REQUIRED = ("id", "question", "answer")
_JSON_CELLS = ("contexts", "aspects", "metadata", "labels", "gold", "scores")
_UNIT = re.compile(r"^(item|s:(\d+)|c:(\d+)|a:(\d+))$")
_MAX_ID = Item._meta.get_field("external_id").max_length
_MAX_SYSTEM = Item._meta.get_field("system").max_length
_MAX_DOC_ID = Chunk._meta.get_field("document_id").max_length
_MAX_PSEUDONYM = PoolMembership._meta.get_field("pseudonym").max_length
# PostgreSQL stores no NUL character in text or JSON; refusing it here keeps both databases alike.
_NUL_REASON = "contains a NUL character (\\u0000), which cannot be stored"
_SCOPE_CLASSES = frozenset(ScopeClass.values)
_IMPORTANCES = frozenset(Importance.values)
_CONTEXT_KEYS = frozenset({"id", "text", "is_target"})
_ASPECT_KEYS = frozenset({"text", "importance"})
_LABEL_KEYS = frozenset({"annotator", "question", "unit", "value"})

ExtraWriter = Callable[[Item, dict[str, Any]], None]


@dataclass(frozen=True)
class RowError:
    """One problem, located as the user will look for it: ``line`` (JSONL), ``row`` (CSV), ``record``
    (an adapter's source row) or ``file`` (the file as a whole)."""

    where: str
    number: int | None
    field: str
    reason: str

    @property
    def location(self) -> str:
        return self.where if self.number is None else f"{self.where} {self.number}"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"location": self.location, "field": self.field, "reason": self.reason}
        if self.number is not None:
            out[self.where] = self.number
        return out

    def __str__(self) -> str:
        return f"{self.location}: {self.field or '-'}: {self.reason}"


class ImportRejected(ValidationFailed):
    """The file has errors; nothing was written. ``errors`` holds at most MAX_ERRORS of them."""

    def __init__(self, errors: list[RowError], *, total: int, filename: str) -> None:
        more = f" (showing the first {len(errors)})" if total > len(errors) else ""
        super().__init__(
            f"{filename}: {total} error{'s' if total != 1 else ''}{more}; nothing was imported",
            details=[e.as_dict() for e in errors],
        )
        self.errors = errors
        self.total = total
        self.filename = filename


@dataclass
class ImportResult:
    filename: str
    dry_run: bool
    adapter: str = ""
    n_items: int = 0
    n_sentences: int = 0
    n_chunks: int = 0
    n_aspects: int = 0
    n_labels: int = 0
    n_annotators: int = 0
    pool_name: str = ""
    batch_id: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "filename": self.filename, "dry_run": self.dry_run, "adapter": self.adapter, "items": self.n_items,
            "sentences": self.n_sentences, "chunks": self.n_chunks, "aspects": self.n_aspects,
            "labels": self.n_labels, "annotators": self.n_annotators, "pool": self.pool_name,
            "batch_id": self.batch_id,
        }

    def summary(self) -> str:
        verb = "would import" if self.dry_run else "imported"
        parts = [f"{self.n_items} items"]
        if not self.dry_run:
            parts.append(f"{self.n_sentences} sentences")
        parts += [f"{self.n_chunks} chunks", f"{self.n_aspects} aspects", f"{self.n_labels} labels"]
        if self.n_annotators:
            parts.append(f"{self.n_annotators} annotators in pool {self.pool_name!r}")
        return f"{self.filename}: {verb} " + ", ".join(parts)


# --- Reading -------------------------------------------------------------------------------------


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


def _binary_stream(file: IO[bytes], filename: str) -> IO[bytes]:
    """A fresh stream over the (decompressed) content, from the start."""
    file.seek(0)
    if _is_gzip(file):
        raw = gzip.GzipFile(fileobj=file, mode="rb")
        return io.BufferedReader(_LimitedReader(raw, settings.IMPORT_MAX_BYTES, filename))
    return file


def _detect_format(file: IO[bytes], filename: str, fmt: str | None) -> str:
    if fmt:
        if fmt not in ("jsonl", "csv"):
            raise ValidationFailed(f"unknown format {fmt!r}; use jsonl or csv")
        return fmt
    name = filename.lower().removesuffix(".gz")
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if name.endswith(".csv"):
        return "csv"
    stream = _binary_stream(file, filename)
    head = stream.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    return "jsonl" if head.startswith(b"{") else "csv"


Located = tuple[int, dict[str, Any] | RowError]
RecordSource = Callable[[], Iterator[Located]]


def _jsonl_records(stream: IO[bytes]) -> Iterator[Located]:
    for lineno, raw in enumerate(stream, start=1):
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
            yield lineno, RowError("line", lineno, "", f"expected a JSON object, found {_type_name(record)}")
            continue
        yield lineno, record


def _csv_records(stream: IO[bytes]) -> Iterator[Located]:
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
            if name in _JSON_CELLS:
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


def file_source(file: IO[bytes], *, filename: str, fmt: str | None = None) -> tuple[RecordSource, str]:
    """A re-startable record source over an uploaded or opened binary file, and its format."""
    size = _file_size(file)
    limit = settings.IMPORT_MAX_BYTES
    if size > limit:
        raise PayloadTooLarge(
            f"{filename} is {size} bytes; the import limit is {limit} bytes (IMPORT_MAX_BYTES). Split the file.",
            details=[{"location": "file", "field": "file", "reason": f"{size} bytes is over the limit of {limit}"}],
        )
    fmt = _detect_format(file, filename, fmt)
    parse = _jsonl_records if fmt == "jsonl" else _csv_records

    def source() -> Iterator[Located]:
        return parse(_binary_stream(file, filename))

    return source, fmt


# --- Validation ----------------------------------------------------------------------------------


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


@dataclass
class LabelIn:
    pseudonym: str
    question: Question
    unit: str
    value: Any


@dataclass
class Record:
    external_id: str
    question: str
    answer: str
    source: str
    scope: str
    system: str
    metadata: dict[str, Any]
    contexts: list[tuple[str, str, bool]]
    aspects: list[tuple[str, str]]
    labels: list[LabelIn]
    raw: dict[str, Any]
    has_extra: bool


class _RecordErrors:
    def __init__(self, where: str, number: int) -> None:
        self.where, self.number, self.items = where, number, []

    def add(self, field_name: str, reason: str) -> None:
        self.items.append(RowError(self.where, self.number, field_name, reason))


def _text(rec: dict[str, Any], name: str, errs: _RecordErrors, *, required: bool = False,
          max_length: int | None = None) -> str:
    value = rec.get(name)
    if value is None:
        if required:
            errs.add(name, "required field is missing")
        return ""
    if name == "id" and isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        errs.add(name, f"must be a string, found {_type_name(value)}")
        return ""
    if required and not value.strip():
        errs.add(name, "must not be empty")
    if "\x00" in value:
        errs.add(name, _NUL_REASON)
    if max_length and len(value) > max_length:
        errs.add(name, f"longer than {max_length} characters")
    return value


def _json_storable(value: Any) -> bool:
    try:
        text = json.dumps(value, allow_nan=False)
    except ValueError:
        return False
    return "\\u0000" not in text


def _validate_value(question: Question, value: Any, sentence_counts: dict[str, int], n_answer: int | None) -> str | None:
    """None when ``value`` is a valid answer to ``question``, else the reason."""
    kind = question.kind
    if value is None:
        return "value is missing"
    if kind in ("binary", "nominal", "ordinal"):
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return f"must be one of {question.option_values}, found {_type_name(value)}"
        if str(value) not in question.option_values:
            return f"{value!r} is not an option of {question.key!r} ({', '.join(question.option_values)})"
        return None
    if kind == "multilabel":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"must be a list of options of {question.key!r}"
        unknown = [v for v in value if v not in question.option_values]
        if unknown:
            return f"{unknown} are not options of {question.key!r} ({', '.join(question.option_values)})"
        if len(set(value)) != len(value):
            return "repeats an option"
        return None
    if kind == "text":
        if not isinstance(value, str):
            return f"must be a string, found {_type_name(value)}"
        return _NUL_REASON if "\x00" in value else None
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"must be a number, found {_type_name(value)}"
        if not math.isfinite(value):
            return "must be a finite number"
        if question.min_value is not None and value < question.min_value:
            return f"below the minimum {question.min_value}"
        if question.max_value is not None and value > question.max_value:
            return f"above the maximum {question.max_value}"
        return None
    if kind == "alignment":
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return "must be a list of sentence indices (integers)"
        # Sentence-scoped alignments point into the source; aspect-scoped ones into the answer.
        bound = sentence_counts.get("source") if question.scope == "sentence" else n_answer
        if bound is not None:
            out = [v for v in value if v < 0 or v >= bound]
            if out:
                return f"sentence indices {out} do not exist (there are {bound})"
        return None
    return f"questions of kind {kind!r} cannot be imported"


class _Validator:
    def __init__(self, study: Study, *, where: str, accept_extra: bool) -> None:
        self.study = study
        self.where = where
        self.accept_extra = accept_extra
        self.questions = {q.key: q for q in Question.objects.filter(study=study)}

    def validate(self, number: int, rec: dict[str, Any]) -> tuple[Record | None, list[RowError]]:
        errs = _RecordErrors(self.where, number)
        unknown = sorted(k for k in rec if k not in FIELDS)
        if unknown:
            errs.add(unknown[0], f"unknown field(s) {', '.join(unknown)} (known: {', '.join(FIELDS)})")
        external_id = _text(rec, "id", errs, required=True, max_length=_MAX_ID).strip()
        question = _text(rec, "question", errs, required=True)
        answer = _text(rec, "answer", errs, required=True)
        source = _text(rec, "source", errs)
        system = _text(rec, "system", errs, max_length=_MAX_SYSTEM)
        scope = _text(rec, "scope", errs)
        if scope and scope not in _SCOPE_CLASSES:
            errs.add("scope", f"{scope!r} is not one of {', '.join(ScopeClass.values)}")
        metadata = rec.get("metadata", {})
        if not isinstance(metadata, dict):
            errs.add("metadata", f"must be an object, found {_type_name(metadata)}")
            metadata = {}
        elif metadata and not _json_storable(metadata):
            errs.add("metadata", f"{_NUL_REASON}, or a number that is not finite (NaN, Infinity)")
        contexts = self._contexts(rec.get("contexts"), errs)
        aspects = self._aspects(rec.get("aspects"), errs)
        has_extra = False
        for name in ("gold", "scores"):
            if name not in rec:
                continue
            value = rec[name]
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                errs.add(name, "must be a list of objects")
            elif not self.accept_extra:
                errs.add(name, f"{name} are imported with `python manage.py import_study_export`, not as items")
            has_extra = True
        labels = self._labels(rec.get("labels"), errs, answer, source, len(contexts), len(aspects))
        if errs.items:
            return None, errs.items
        record = Record(
            external_id=external_id, question=question, answer=answer, source=source, scope=scope, system=system,
            metadata=metadata, contexts=contexts, aspects=aspects, labels=labels, raw=rec, has_extra=has_extra,
        )
        return record, []

    @staticmethod
    def _contexts(value: Any, errs: _RecordErrors) -> list[tuple[str, str, bool]]:
        if value is None:
            return []
        if not isinstance(value, list):
            errs.add("contexts", f"must be a list, found {_type_name(value)}")
            return []
        out: list[tuple[str, str, bool]] = []
        for i, ctx in enumerate(value):
            where = f"contexts[{i}]"
            if isinstance(ctx, str):
                if "\x00" in ctx:
                    errs.add(where, _NUL_REASON)
                    continue
                out.append(("", ctx, False))
                continue
            if not isinstance(ctx, dict):
                errs.add(where, f"must be a string or an object, found {_type_name(ctx)}")
                continue
            extra = sorted(ctx.keys() - _CONTEXT_KEYS)
            if extra:
                errs.add(where, f"unknown key(s) {', '.join(extra)} (known: id, text, is_target)")
            text = ctx.get("text")
            doc_id = ctx.get("id", "")
            target = ctx.get("is_target", False)
            if not isinstance(text, str):
                errs.add(f"{where}.text", "required string" if text is None else f"must be a string, found {_type_name(text)}")
                continue
            if isinstance(doc_id, int) and not isinstance(doc_id, bool):
                doc_id = str(doc_id)
            if not isinstance(doc_id, str) or len(doc_id) > _MAX_DOC_ID:
                errs.add(f"{where}.id", f"must be a string of at most {_MAX_DOC_ID} characters")
                continue
            if not isinstance(target, bool):
                errs.add(f"{where}.is_target", f"must be true or false, found {_type_name(target)}")
                continue
            if "\x00" in text:
                errs.add(f"{where}.text", _NUL_REASON)
                continue
            out.append((doc_id, text, target))
        return out

    @staticmethod
    def _aspects(value: Any, errs: _RecordErrors) -> list[tuple[str, str]]:
        if value is None:
            return []
        if not isinstance(value, list):
            errs.add("aspects", f"must be a list, found {_type_name(value)}")
            return []
        out: list[tuple[str, str]] = []
        for i, aspect in enumerate(value):
            where = f"aspects[{i}]"
            if isinstance(aspect, str):
                text, importance = aspect, Importance.MUST_HAVE.value
            elif isinstance(aspect, dict):
                extra = sorted(aspect.keys() - _ASPECT_KEYS)
                if extra:
                    errs.add(where, f"unknown key(s) {', '.join(extra)} (known: text, importance)")
                text = aspect.get("text")
                importance = aspect.get("importance", Importance.MUST_HAVE.value)
                if importance not in _IMPORTANCES:
                    errs.add(f"{where}.importance", f"{importance!r} is not one of {', '.join(Importance.values)}")
                    continue
            else:
                errs.add(where, f"must be a string or an object, found {_type_name(aspect)}")
                continue
            if not isinstance(text, str) or not text.strip():
                errs.add(f"{where}.text" if isinstance(aspect, dict) else where, "must be a non-empty string")
                continue
            if "\x00" in text:
                errs.add(f"{where}.text" if isinstance(aspect, dict) else where, _NUL_REASON)
                continue
            out.append((text, importance))
        return out

    def _labels(self, value: Any, errs: _RecordErrors, answer: str, source: str, n_contexts: int,
                n_aspects: int) -> list[LabelIn]:
        if value is None:
            return []
        if not isinstance(value, list):
            errs.add("labels", f"must be a list, found {_type_name(value)}")
            return []
        counts: dict[str, int] = {}

        def sentence_count(part: str) -> int:
            # Segment only when a label needs it; the write pass segments every record anyway.
            if part not in counts:
                counts[part] = len(split_sentences(answer if part == "answer" else source))
            return counts[part]

        out: list[LabelIn] = []
        seen: set[tuple[str, str, str]] = set()
        for i, label in enumerate(value):
            where = f"labels[{i}]"
            if not isinstance(label, dict):
                errs.add(where, f"must be an object, found {_type_name(label)}")
                continue
            extra = sorted(label.keys() - _LABEL_KEYS)
            if extra:
                errs.add(where, f"unknown key(s) {', '.join(extra)} (known: annotator, question, unit, value)")
                continue
            pseudonym, key, unit = label.get("annotator"), label.get("question"), label.get("unit", "item")
            if not isinstance(pseudonym, str) or not pseudonym.strip() or len(pseudonym) > _MAX_PSEUDONYM:
                errs.add(f"{where}.annotator", f"must be a pseudonym of 1 to {_MAX_PSEUDONYM} characters")
                continue
            question = self.questions.get(key) if isinstance(key, str) else None
            if question is None:
                errs.add(f"{where}.question", f"{key!r} is not a question of study {self.study.slug!r}")
                continue
            match = _UNIT.match(unit) if isinstance(unit, str) else None
            if match is None:
                errs.add(f"{where}.unit", f"{unit!r} is not a unit (item, s:<i>, c:<rank>, a:<i>)")
                continue
            kind = unit.split(":")[0]
            expected = {"item": "item", "s": "sentence", "c": "chunk", "a": "aspect"}[kind]
            if question.scope != expected:
                errs.add(f"{where}.unit", f"question {key!r} is asked per {question.scope}, not per {expected}")
                continue
            if kind == "s" and int(match.group(2)) >= sentence_count("answer"):
                errs.add(f"{where}.unit", f"the answer has {sentence_count('answer')} sentences, no {unit}")
                continue
            if kind == "c" and not 1 <= int(match.group(3)) <= n_contexts:
                errs.add(f"{where}.unit", f"the record has {n_contexts} contexts (ranks from 1), no {unit}")
                continue
            if kind == "a" and int(match.group(4)) >= n_aspects:
                errs.add(f"{where}.unit", f"the record has {n_aspects} aspects (counted from 0), no {unit}")
                continue
            if question.kind == "alignment":
                sentence_count("answer")
                if question.scope == "sentence":
                    sentence_count("source")
            reason = _validate_value(question, label.get("value"), counts, counts.get("answer"))
            if reason:
                errs.add(f"{where}.value", reason)
                continue
            if (pseudonym, key, unit) in seen:
                errs.add(where, f"a second label of {pseudonym!r} for {key!r} on {unit}")
                continue
            seen.add((pseudonym, key, unit))
            value_ = label["value"]
            if question.is_categorical:
                value_ = str(value_)
            out.append(LabelIn(pseudonym=pseudonym.strip(), question=question, unit=unit, value=value_))
        return out


@dataclass
class _Scan:
    n_records: int = 0
    n_chunks: int = 0
    n_aspects: int = 0
    n_labels: int = 0
    pseudonyms: set[str] = field(default_factory=set)
    errors: list[RowError] = field(default_factory=list)
    n_errors: int = 0

    def error(self, err: RowError) -> None:
        self.n_errors += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(err)


class _IdIndex:
    """Finds ids repeated within one file in about 24 bytes per record, whatever the ids' length.

    Each id is kept as a 128-bit BLAKE2 digest next to its line number; after the pass the digests
    are sorted and equal neighbours are the duplicates. A collision of 128-bit digests among even
    10^9 ids has a probability below 10^-20, so equal digests are taken as equal ids.
    """

    def __init__(self) -> None:
        self.high, self.low, self.numbers = array("Q"), array("Q"), array("Q")

    def add(self, external_id: str, number: int) -> None:
        high, low = struct.unpack(">QQ", hashlib.blake2b(external_id.encode(), digest_size=16).digest())
        self.high.append(high)
        self.low.append(low)
        self.numbers.append(number)

    def repeats(self) -> list[tuple[int, int]]:
        """(number, number of the first occurrence) for every repeated occurrence, in file order."""
        if len(self.numbers) < 2:
            return []
        high = np.frombuffer(self.high, dtype=np.uint64)
        low = np.frombuffer(self.low, dtype=np.uint64)
        numbers = np.frombuffer(self.numbers, dtype=np.uint64)
        order = np.lexsort((numbers, low, high))
        high, low, numbers = high[order], low[order], numbers[order]
        same = (high[1:] == high[:-1]) & (low[1:] == low[:-1])
        out: list[tuple[int, int]] = []
        first = int(numbers[0])
        for i, repeated in enumerate(same.tolist(), start=1):
            if repeated:
                out.append((int(numbers[i]), first))
            else:
                first = int(numbers[i])
        return sorted(out)


def _scan(study: Study, source: RecordSource, where: str, accept_extra: bool) -> _Scan:
    """The validation pass: reads everything, writes nothing; memory does not grow with the file
    beyond the id index (about 24 bytes a record)."""
    validator = _Validator(study, where=where, accept_extra=accept_extra)
    scan = _Scan()
    index = _IdIndex()
    pending: dict[str, int] = {}

    def check_existing() -> None:
        existing = Item.objects.filter(study=study, external_id__in=list(pending)).values_list("external_id", flat=True)
        for external_id in existing:
            scan.error(RowError(where, pending[external_id], "id",
                                f"id {external_id!r} already exists in study {study.slug!r}; it is not imported again"))
        pending.clear()

    for number, rec in source():
        if isinstance(rec, RowError):
            scan.error(rec)
            continue
        record, errors = validator.validate(number, rec)
        for err in errors:
            scan.error(err)
        if record is None:
            continue
        scan.n_records += 1
        index.add(record.external_id, number)
        pending[record.external_id] = number
        if len(pending) >= _ID_CHECK_BATCH:
            check_existing()
        scan.n_chunks += len(record.contexts)
        scan.n_aspects += len(record.aspects)
        scan.n_labels += len(record.labels)
        scan.pseudonyms.update(label.pseudonym for label in record.labels)
    if pending:
        check_existing()
    repeats = index.repeats()
    if repeats:
        # The index holds no ids, so the repeated ones are read back for the message (error path only).
        wanted = {n for pair in repeats for n in pair}
        ids = {number: str(rec.get("id", "")).strip() for number, rec in source()
               if number in wanted and isinstance(rec, dict)}
        for number, first in repeats:
            scan.error(RowError(where, number, "id", f"duplicate id {ids.get(number, '')!r}: also on {where} {first}"))
    if scan.n_records == 0 and scan.n_errors == 0:
        scan.error(RowError("file", None, "file", "no records found"))
    scan.errors.sort(key=lambda e: (e.number or 0))
    return scan


# --- Writing -------------------------------------------------------------------------------------


def _unique_username(base: str) -> str:
    User = get_user_model()
    base = base[:140]
    candidate = base
    while User.objects.filter(username=candidate).exists():
        candidate = f"{base}-{secrets.token_hex(3)}"
    return candidate


def _annotators_ensure(*, study: Study, pool: Pool, pseudonyms: set[str]) -> dict[str, Any]:
    """Pseudonym → user for the imported annotators: existing members of the pool keep their account;
    new ones get an inactive account that cannot log in (the labels are theirs, not the importer's)."""
    User = get_user_model()
    members = {m.pseudonym: m.user for m in PoolMembership.objects.filter(pool=pool).select_related("user")}
    for pseudonym in sorted(pseudonyms - set(members)):
        user = User(username=_unique_username(f"imported-{study.pk}-{slugify(pool.name)}-{slugify(pseudonym)}"),
                    is_active=False)
        user.set_unusable_password()
        user.save()
        StudyRole.objects.get_or_create(study=study, user=user, role=Role.ANNOTATOR)
        PoolMembership.objects.create(pool=pool, study=study, user=user, independent=study.independent_pools,
                                      pseudonym=pseudonym)
        members[pseudonym] = user
    return members


def _rows_insert(model: type[models.Model], fields: tuple[str, ...], rows: Iterable[tuple[Any, ...]]) -> None:
    """Insert plain rows without building model instances (COPY on PostgreSQL, executemany elsewhere).

    Only for tables whose rows need no defaults, signals or returned keys: items (with ids drawn
    beforehand), sentences and chunks, which make up ten of the eleven rows of a typical item.
    ``rows`` may be a generator: on PostgreSQL it is consumed while COPY streams, so the database
    stores one part of a batch while the next part is being computed (segmented).
    """
    qn = connection.ops.quote_name
    columns = ", ".join(qn(model._meta.get_field(name).column) for name in fields)
    table = qn(model._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # The raw psycopg cursor bypasses Django's error translation; restore it (IntegrityError).
            with connection.wrap_database_errors, cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            rows = list(rows)
            if rows:
                placeholders = ", ".join(["%s"] * len(fields))
                cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({placeholders})", rows)  # noqa: S608


_ITEM_FIELDS = ("id", "study", "external_id", "question", "answer", "source", "scope_class", "system", "metadata",
                "created_at")


def _items_insert(study: Study, batch: list[Record], now: Any) -> list[int]:
    """Insert the batch's items; returns their ids in batch order."""
    if connection.vendor != "postgresql":
        items = Item.objects.bulk_create(
            Item(study=study, external_id=r.external_id, question=r.question, answer=r.answer, source=r.source,
                 scope_class=r.scope, system=r.system, metadata=r.metadata)
            for r in batch
        )
        return [item.pk for item in items]
    # Ids are drawn from the table's own sequence first, so that COPY can write the rows with them.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [Item._meta.db_table, len(batch)],
        )
        ids = [row[0] for row in cursor.fetchall()]
    _rows_insert(Item, _ITEM_FIELDS, [
        (item_id, study.pk, r.external_id, r.question, r.answer, r.source, r.scope, r.system,
         json.dumps(r.metadata), now)
        for item_id, r in zip(ids, batch, strict=True)
    ])
    return ids


class _Writer:
    def __init__(self, *, study: Study, pool_name: str, pseudonyms: set[str], extra_writer: ExtraWriter | None) -> None:
        self.study = study
        self.extra_writer = extra_writer
        self.result_counts = {"items": 0, "sentences": 0, "chunks": 0, "aspects": 0, "labels": 0}
        self.pool: Pool | None = None
        self.members: dict[str, Any] = {}
        self.questions_used: set[int] = set()
        if pseudonyms:
            self.pool, _ = Pool.objects.get_or_create(study=study, name=pool_name)
            self.members = _annotators_ensure(study=study, pool=self.pool, pseudonyms=pseudonyms)
        self.now = timezone.now()

    def write(self, batch: list[Record]) -> None:
        item_ids = _items_insert(self.study, batch, self.now)
        chunk_rows: list[tuple[Any, ...]] = []
        aspects: list[Aspect] = []
        aspect_slices: list[tuple[int, int]] = []
        for item_id, r in zip(item_ids, batch, strict=True):
            chunk_rows.extend(
                (item_id, rank, text, doc_id, target) for rank, (doc_id, text, target) in enumerate(r.contexts, start=1)
            )
            aspect_slices.append((len(aspects), len(aspects) + len(r.aspects)))
            aspects.extend(Aspect(item_id=item_id, text=text, importance=importance) for text, importance in r.aspects)
        n_sentences = 0

        def sentence_rows() -> Iterator[tuple[Any, ...]]:
            nonlocal n_sentences
            for item_id, r in zip(item_ids, batch, strict=True):
                for part, text in (("answer", r.answer), ("source", r.source)):
                    for i, span in enumerate(split_sentences(text)):
                        n_sentences += 1
                        yield (item_id, part, i, span.text, span.start, span.end)

        _rows_insert(Sentence, ("item", "part", "index", "text", "start", "end"), sentence_rows())
        _rows_insert(Chunk, ("item", "rank", "text", "document_id", "is_labelled_target"), chunk_rows)
        # Aspects go through the ORM: labels address them by the primary keys it returns.
        Aspect.objects.bulk_create(aspects, batch_size=2000)
        labelled = self._write_labels(item_ids, batch, aspects, aspect_slices)
        if self.extra_writer is not None:
            wanted = [(item_id, r) for item_id, r in zip(item_ids, batch, strict=True) if r.has_extra]
            items = Item.objects.in_bulk([item_id for item_id, _ in wanted])
            for item_id, r in wanted:
                self.extra_writer(items[item_id], r.raw)
        if labelled:
            # Imported assignments arrive submitted: what happens on submit (disagreement detection)
            # happens for them too, after any imported gold so that it is never overridden.
            handlers = _submitted_handlers()
            for item_id in labelled:
                for handler in handlers:
                    handler(pool_id=self.pool.pk, item_id=item_id)
        counts = self.result_counts
        counts["items"] += len(item_ids)
        counts["sentences"] += n_sentences
        counts["chunks"] += len(chunk_rows)
        counts["aspects"] += len(aspects)

    def _write_labels(self, item_ids: list[int], batch: list[Record], aspects: list[Aspect],
                      aspect_slices: list[tuple[int, int]]) -> list[int]:
        """Writes the batch's labels; returns the ids of the items that got any."""
        if self.pool is None:
            return []
        assignments: list[Assignment] = []
        pending: list[tuple[int, LabelIn, str]] = []
        for item_id, r, (a_start, _a_end) in zip(item_ids, batch, aspect_slices, strict=True):
            by_annotator: dict[str, int] = {}
            for label in r.labels:
                if label.pseudonym not in by_annotator:
                    by_annotator[label.pseudonym] = len(assignments)
                    assignments.append(Assignment(
                        pool=self.pool, item_id=item_id, annotator=self.members[label.pseudonym],
                        status=AssignmentStatus.SUBMITTED, started_at=self.now, submitted_at=self.now,
                    ))
                unit = label.unit
                if unit.startswith("a:"):
                    # Aspects are addressed by position in the file and by primary key in the database.
                    unit = f"a:{aspects[a_start + int(unit[2:])].pk}"
                pending.append((by_annotator[label.pseudonym], label, unit))
        if not assignments:
            return []
        Assignment.objects.bulk_create(assignments, batch_size=2000)
        labels = Label.objects.bulk_create(
            (Label(assignment=assignments[a], question=label.question, unit_key=unit, value=label.value, version=1,
                   updated_by=assignments[a].annotator, updated_at=self.now)
             for a, label, unit in pending),
            batch_size=2000,
        )
        LabelHistory.objects.bulk_create(
            (LabelHistory(label=lab, old_value=None, new_value=lab.value, old_version=None, new_version=1,
                          actor=lab.updated_by, at=self.now) for lab in labels),
            batch_size=2000,
        )
        used = {label.question.pk for _, label, _ in pending}
        if used - self.questions_used:
            # The pool answers the questions its imported labels answer.
            self.pool.questions.add(*(used - self.questions_used))
            self.questions_used |= used
        self.result_counts["labels"] += len(labels)
        return sorted({a.item_id for a in assignments})


def records_import(
    *,
    study: Study,
    source: RecordSource,
    filename: str,
    actor: Any = None,
    where: str = "record",
    adapter: str = "",
    dry_run: bool = False,
    pool_name: str | None = None,
    extra_writer: ExtraWriter | None = None,
) -> ImportResult:
    """Import the records of a re-startable ``source`` (called once to validate, once to write).

    Raises ImportRejected listing every error when any record is bad; nothing is written then.
    """
    pool_name = (pool_name or DEFAULT_POOL).strip() or DEFAULT_POOL
    scan = _scan(study, source, where, accept_extra=extra_writer is not None)
    if scan.n_errors:
        raise ImportRejected(scan.errors, total=scan.n_errors, filename=filename)
    result = ImportResult(filename=filename, dry_run=dry_run, adapter=adapter, n_items=scan.n_records,
                          n_chunks=scan.n_chunks, n_aspects=scan.n_aspects, n_labels=scan.n_labels,
                          n_annotators=len(scan.pseudonyms), pool_name=pool_name if scan.pseudonyms else "")
    if dry_run:
        return result
    validator = _Validator(study, where=where, accept_extra=extra_writer is not None)
    try:
        with transaction.atomic():
            return _write(study=study, source=source, validator=validator, result=result, filename=filename,
                          actor=actor, adapter=adapter, pool_name=pool_name, scan=scan, extra_writer=extra_writer)
    except IntegrityError as exc:
        # The check pass found none of these ids; another import wrote some of them since.
        raise Conflict(
            f"{filename}: another import into study {study.slug!r} added some of these items meanwhile; "
            "nothing was imported (run it again to see which ids exist now)"
        ) from exc


def _write(*, study: Study, source: RecordSource, validator: _Validator, result: ImportResult, filename: str,
           actor: Any, adapter: str, pool_name: str, scan: _Scan, extra_writer: ExtraWriter | None) -> ImportResult:
    """The write pass; runs inside the caller's transaction."""
    writer = _Writer(study=study, pool_name=pool_name, pseudonyms=scan.pseudonyms, extra_writer=extra_writer)
    batch: list[Record] = []
    for number, rec in source():
        record, errors = (None, [rec]) if isinstance(rec, RowError) else validator.validate(number, rec)
        if record is None:
            # The source changed between the passes; the transaction undoes what was written.
            raise ImportRejected(errors, total=len(errors), filename=filename)
        batch.append(record)
        if len(batch) >= BATCH_SIZE:
            writer.write(batch)
            batch = []
    if batch:
        writer.write(batch)
    counts = writer.result_counts
    batch_row = ImportBatch.objects.create(
        study=study, filename=filename[:300], adapter=adapter, n_items=counts["items"], n_labels=counts["labels"],
        by=actor if getattr(actor, "pk", None) else None,
    )
    result.n_items, result.n_sentences = counts["items"], counts["sentences"]
    result.n_chunks, result.n_aspects, result.n_labels = counts["chunks"], counts["aspects"], counts["labels"]
    result.batch_id = batch_row.pk
    return result


def items_import(
    *,
    study: Study,
    file: IO[bytes],
    filename: str,
    actor: Any = None,
    fmt: str | None = None,
    dry_run: bool = False,
    pool_name: str | None = None,
    extra_writer: ExtraWriter | None = None,
) -> ImportResult:
    """Import a JSONL or CSV file (optionally gzip-compressed) into ``study``; all or nothing.

    ``file`` is a seekable binary file (an upload, or ``open(path, "rb")``). Raises PayloadTooLarge
    before parsing when it is over ``settings.IMPORT_MAX_BYTES``, ImportRejected with the full error
    list when any record is bad.
    """
    source, fmt = file_source(file, filename=filename, fmt=fmt)
    return records_import(
        study=study, source=source, filename=filename, actor=actor, where="line" if fmt == "jsonl" else "row",
        dry_run=dry_run, pool_name=pool_name, extra_writer=extra_writer,
    )


def records_from(iterable_factory: Callable[[], Iterable[tuple[int, dict[str, Any]]]]) -> RecordSource:
    """Wrap an adapter's generator function (numbered records) as a record source."""

    def source() -> Iterator[Located]:
        yield from iterable_factory()

    return source
