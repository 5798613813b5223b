"""Validation: each record is checked against the schema and the study's questions, every error located.

``scan`` is the first pass of an import: it reads the whole source, writes nothing, and collects every
problem (up to ``MAX_ERRORS``) as a ``RowError`` naming the line or row and the field. ``Validator``
turns one raw record into a ``Record`` ready for the writer, or into its errors; the write pass runs
it again over the same source. Label values go through ``annotation.answers``, the rules the workspace
applies, and are stored normalised as there; unit keys are read by ``annotation.units``.
"""

from __future__ import annotations

import hashlib
import json
import struct
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection

from annotation import answers, units
from annotation.imports.deadline import Deadline
from annotation.imports.schema import EXPORT_HINT, FIELDS, MAX_ERRORS, RecordSource, RowError, type_name
from annotation.models import Chunk, ControlKind, Importance, Item, PoolMembership, Question, ScopeClass, Study
from annotation.pseudonyms import pseudonym_keys
from annotation.quality import MAX_EXPLANATION, known_answers_check
from annotation.segmentation_fast import split_sentences
from concord import rawsql
from concord.errors import ValidationFailed

_ID_CHECK_BATCH = 1000
_MAX_ID = Item._meta.get_field("external_id").max_length
_MAX_SYSTEM = Item._meta.get_field("system").max_length
_MAX_DOC_ID = Chunk._meta.get_field("document_id").max_length
_MAX_PSEUDONYM = PoolMembership._meta.get_field("pseudonym").max_length
# PostgreSQL stores no NUL character in text or JSON; refusing it here keeps both databases alike.
_NUL_REASON = "contains a NUL character (\\u0000), which cannot be stored"
_SCOPE_CLASSES = frozenset(ScopeClass.values)
_IMPORTANCES = frozenset(Importance.values)
_CONTEXT_KEYS = frozenset({"id", "text", "is_target"})
_FIELD_SET = frozenset(FIELDS)
_ASPECT_KEYS = frozenset({"text", "importance"})
_LABEL_KEYS = frozenset({"annotator", "question", "unit", "value"})


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
    metadata_json: str  # ``metadata`` as JSON text, as stored
    control: dict[str, Any] | None = None  # kind, answers (normalised), explanation: an item of known answer


class _RecordErrors:
    def __init__(self, where: str, number: int) -> None:
        self.where, self.number, self.items = where, number, []

    def add(self, field_name: str, reason: str) -> None:
        self.items.append(RowError(self.where, self.number, field_name, reason))


def _target_ids_valid(value: Any) -> bool:
    """``metadata.target_ids``: the documents relevant to the question, retrieved or not (the retrieval metrics
    count a target missing from the contexts as a miss): a list of non-empty strings or integers."""
    return isinstance(value, list) and all(
        (isinstance(v, str) and v.strip() != "") or (isinstance(v, int) and not isinstance(v, bool)) for v in value
    )


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
        errs.add(name, f"must be a string, found {type_name(value)}")
        return ""
    if required and not value.strip():
        errs.add(name, "must not be empty")
    if "\x00" in value:
        errs.add(name, _NUL_REASON)
    if max_length and len(value) > max_length:
        errs.add(name, f"longer than {max_length} characters")
    return value


# ``json.dumps(value, allow_nan=False)`` without building an encoder per call (dumps does, for any
# argument not at its default): the same output.
_ENCODE_FINITE = json.JSONEncoder(allow_nan=False).encode


def _json_text(value: Any) -> str | None:
    """``value`` as JSON text, or None when it cannot be stored (a NUL character, a number that is not
    finite)."""
    try:
        text = _ENCODE_FINITE(value)
    except ValueError:
        return None
    return None if "\\u0000" in text else text


class Pseudonyms:
    """The annotators' pseudonyms of one file: where each spelling first appears, and no two that look alike
    (``annotation.pseudonyms``), since two such spellings in one file are either one annotator written two
    ways or two annotators a reader cannot tell apart; either way the file must say which."""

    def __init__(self) -> None:
        self.first: dict[str, tuple[int, str]] = {}  # spelling → (line or row, field) where it first appears
        self.by_key: dict[str, str] = {}  # comparison key → the spelling that has it

    def __len__(self) -> int:
        return len(self.first)

    def __iter__(self) -> Iterator[str]:
        return iter(self.first)

    def add(self, pseudonym: str, number: int, field_name: str) -> str | None:
        """Records ``pseudonym``; returns the other spelling of the file that looks like it, if any."""
        if pseudonym in self.first:
            return None
        keys = pseudonym_keys(pseudonym)
        for key in keys:
            if key in self.by_key:
                return self.by_key[key]
        for key in keys:
            self.by_key[key] = pseudonym
        self.first[pseudonym] = (number, field_name)
        return None


class Validator:
    def __init__(self, study: Study, *, where: str, accept_extra: bool) -> None:
        self.study = study
        self.where = where
        self.accept_extra = accept_extra
        self.questions = {q.key: q for q in Question.objects.filter(study=study)}
        self.pseudonyms = Pseudonyms()

    def validate(self, number: int, rec: dict[str, Any]) -> tuple[Record | None, list[RowError]]:
        errs = _RecordErrors(self.where, number)
        unknown = [] if rec.keys() <= _FIELD_SET else sorted(k for k in rec if k not in FIELDS)
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
        metadata_json: str | None = "{}"
        if not isinstance(metadata, dict):
            errs.add("metadata", f"must be an object, found {type_name(metadata)}")
            metadata = {}
        elif metadata and (metadata_json := _json_text(metadata)) is None:
            errs.add("metadata", f"{_NUL_REASON}, or a number that is not finite (NaN, Infinity)")
        elif "target_ids" in metadata and not _target_ids_valid(metadata["target_ids"]):
            errs.add("metadata.target_ids", "must be a list of document ids (non-empty strings or integers), as the "
                     "retrieval metrics read it; an id of another form would be ignored and a miss go uncounted")
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
        control = self._control(rec["control"], errs) if "control" in rec else None
        if errs.items:
            return None, errs.items
        record = Record(
            external_id=external_id, question=question, answer=answer, source=source, scope=scope, system=system,
            metadata=metadata, contexts=contexts, aspects=aspects, labels=labels, raw=rec, has_extra=has_extra,
            metadata_json=metadata_json or "{}", control=control,
        )
        return record, []

    def _control(self, value: Any, errs: _RecordErrors) -> dict[str, Any] | None:
        """The ``control`` field: an item of known answer (``annotation.quality``)."""
        if not isinstance(value, dict):
            errs.add("control", f"must be an object, found {type_name(value)}")
            return None
        extra = sorted(k for k in value if k not in ("kind", "answers", "explanation"))
        if extra:
            errs.add("control", f"unknown key(s) {', '.join(extra)} (known: kind, answers, explanation)")
            return None
        kind = value.get("kind", ControlKind.CONTROL)
        if kind not in ControlKind.values:
            errs.add("control.kind", f"must be one of {', '.join(ControlKind.values)}")
            return None
        explanation = value.get("explanation", "")
        if not isinstance(explanation, str) or "\x00" in explanation or len(explanation) > MAX_EXPLANATION:
            errs.add("control.explanation", f"must be text of at most {MAX_EXPLANATION} characters")
            return None
        try:
            answers = known_answers_check(self.questions, value.get("answers"))
        except ValidationFailed as exc:
            errs.add("control.answers", exc.message)
            return None
        return {"kind": kind, "answers": answers, "explanation": explanation}

    @staticmethod
    def _contexts(value: Any, errs: _RecordErrors) -> list[tuple[str, str, bool]]:
        if value is None:
            return []
        if not isinstance(value, list):
            errs.add("contexts", f"must be a list, found {type_name(value)}")
            return []
        out: list[tuple[str, str, bool]] = []
        for i, ctx in enumerate(value):
            if type(ctx) is dict and ctx.keys() <= _CONTEXT_KEYS:
                # The usual context, taken as is when nothing in it needs a message (the checks below).
                text, doc_id, target = ctx.get("text"), ctx.get("id", ""), ctx.get("is_target", False)
                if (type(text) is str and type(doc_id) is str and len(doc_id) <= _MAX_DOC_ID
                        and type(target) is bool and "\x00" not in text and "\x00" not in doc_id):
                    out.append((doc_id, text, target))
                    continue
            where = f"contexts[{i}]"
            if isinstance(ctx, str):
                if "\x00" in ctx:
                    errs.add(where, _NUL_REASON)
                    continue
                out.append(("", ctx, False))
                continue
            if not isinstance(ctx, dict):
                errs.add(where, f"must be a string or an object, found {type_name(ctx)}")
                continue
            extra = sorted(ctx.keys() - _CONTEXT_KEYS)
            if extra:
                errs.add(where, f"unknown key(s) {', '.join(extra)} (known: id, text, is_target)")
            text = ctx.get("text")
            doc_id = ctx.get("id", "")
            target = ctx.get("is_target", False)
            if not isinstance(text, str):
                errs.add(
                    f"{where}.text", "required string" if text is None else f"must be a string, found {type_name(text)}"
                )
                continue
            if isinstance(doc_id, int) and not isinstance(doc_id, bool):
                doc_id = str(doc_id)
            if not isinstance(doc_id, str) or len(doc_id) > _MAX_DOC_ID:
                errs.add(f"{where}.id", f"must be a string of at most {_MAX_DOC_ID} characters")
                continue
            if "\x00" in doc_id:
                errs.add(f"{where}.id", _NUL_REASON)
                continue
            if not isinstance(target, bool):
                errs.add(f"{where}.is_target", f"must be true or false, found {type_name(target)}")
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
            errs.add("aspects", f"must be a list, found {type_name(value)}")
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
                errs.add(where, f"must be a string or an object, found {type_name(aspect)}")
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
            errs.add("labels", f"must be a list, found {type_name(value)}")
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
                errs.add(where, f"must be an object, found {type_name(label)}")
                continue
            extra = sorted(label.keys() - _LABEL_KEYS)
            if extra:
                errs.add(where, f"unknown key(s) {', '.join(extra)} (known: annotator, question, unit, value)")
                continue
            pseudonym, key, unit = label.get("annotator"), label.get("question"), label.get("unit", "item")
            # A pseudonym is trimmed (white space around it is never part of it), then checked and compared.
            pseudonym = pseudonym.strip() if isinstance(pseudonym, str) else None
            if not pseudonym or len(pseudonym) > _MAX_PSEUDONYM:
                errs.add(f"{where}.annotator", f"must be a pseudonym of 1 to {_MAX_PSEUDONYM} characters, "
                                               "not counting white space around it")
                continue
            if "\x00" in pseudonym:
                errs.add(f"{where}.annotator", _NUL_REASON)
                continue
            if not any(pseudonym_keys(pseudonym)):
                errs.add(f"{where}.annotator", f"{pseudonym!r} has no visible character")
                continue
            question = self.questions.get(key) if isinstance(key, str) else None
            if question is None:
                errs.add(f"{where}.question", f"{key!r} is not a question of study {self.study.slug!r}")
                continue
            try:
                parsed = units.parse(unit)
            except units.InvalidUnitKey:
                parsed = None
            if parsed is None or parsed.kind == units.SOURCE_SENTENCE:
                errs.add(f"{where}.unit", f"{unit!r} is not a unit (item, s:<i>, c:<rank>, a:<i>)")
                continue
            unit = parsed.key
            if question.scope != parsed.scope:
                errs.add(f"{where}.unit", f"question {key!r} is asked per {question.scope}, not per {parsed.scope}")
                continue
            if parsed.kind == units.ANSWER_SENTENCE and parsed.ref >= sentence_count("answer"):
                errs.add(f"{where}.unit", f"the answer has {sentence_count('answer')} sentences, no {unit}")
                continue
            if parsed.kind == units.CHUNK and not 1 <= parsed.ref <= n_contexts:
                errs.add(f"{where}.unit", f"the record has {n_contexts} contexts (ranks from 1), no {unit}")
                continue
            if parsed.kind == units.ASPECT and parsed.ref >= n_aspects:
                errs.add(f"{where}.unit", f"the record has {n_aspects} aspects (counted from 0), no {unit}")
                continue
            if "value" not in label:
                errs.add(f"{where}.value", "value is missing")
                continue
            # The workspace's own rules decide what is a valid answer and how it is stored. Alignments
            # point into the same sentences as there: the source's for sentence questions, else the answer's.
            targets = None
            if question.kind == "alignment":
                targets = range(sentence_count("source" if question.scope == "sentence" else "answer"))
            try:
                value = answers.normalise(question, label["value"], alignment_targets=targets)
            except answers.InvalidValue as exc:
                errs.add(f"{where}.value", str(exc))
                continue
            if (pseudonym, key, unit) in seen:
                errs.add(where, f"a second label of {pseudonym!r} for {key!r} on {unit}")
                continue
            seen.add((pseudonym, key, unit))
            other = self.pseudonyms.add(pseudonym, errs.number, f"{where}.annotator")
            if other is not None:
                first, first_field = self.pseudonyms.first[other]
                errs.add(f"{where}.annotator",
                         f"pseudonym {pseudonym!r} looks like {other!r} ({self.where} {first}, {first_field}): "
                         "write one annotator one way, and give two annotators pseudonyms that do not look alike")
                continue
            out.append(LabelIn(pseudonym=pseudonym, question=question, unit=unit, value=value))
        return out


@dataclass
class Scan:
    n_records: int = 0
    n_chunks: int = 0
    n_aspects: int = 0
    n_labels: int = 0
    pseudonyms: Pseudonyms = field(default_factory=Pseudonyms)
    errors: list[RowError] = field(default_factory=list)
    n_errors: int = 0
    # The first records as read (for the dry run's preview) and the answers flagged as long.
    preview: list[Record] = field(default_factory=list)
    long_answers: list[dict[str, Any]] = field(default_factory=list)
    n_long_answers: int = 0

    def error(self, err: RowError) -> None:
        self.n_errors += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(err)


class IdIndex:
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


# How many records the dry run previews, and how many long answers it lists (all are counted).
PREVIEW_RECORDS = 3
MAX_LONG_LISTED = 50


def long_answer(answer: str, *, max_chars: int, max_sentences: int,
                n_sentences: int | None = None) -> dict[str, Any] | None:
    """Why an answer is long enough to tire an annotator (over ``max_chars`` characters or
    ``max_sentences`` sentences), or None. Sentences are counted as the import will split them; an
    answer shorter than ``max_sentences`` characters cannot hold that many and is not split.
    ``n_sentences`` is the count when the caller has split the answer already (the write pass)."""
    n_chars = len(answer)
    if n_chars < max_sentences:
        n_sentences = 0
    elif n_sentences is None:
        n_sentences = len(split_sentences(answer))
    if n_chars <= max_chars and n_sentences <= max_sentences:
        return None
    reasons = []
    if n_chars > max_chars:
        reasons.append(f"{n_chars:,} characters (over {max_chars:,})")
    if n_sentences > max_sentences:
        reasons.append(f"{n_sentences} sentences (over {max_sentences})")
    return {"chars": n_chars, "sentences": n_sentences, "reason": " and ".join(reasons)}


class LongAnswers:
    """The answers flagged as long, in file order: all counted, the first ``MAX_LONG_LISTED`` listed."""

    def __init__(self, where: str, *, max_chars: int | None = None, max_sentences: int | None = None) -> None:
        self.where = where
        self.max_chars = settings.IMPORT_LONG_ANSWER_CHARS if max_chars is None else max_chars
        self.max_sentences = settings.IMPORT_LONG_ANSWER_SENTENCES if max_sentences is None else max_sentences
        self.listed: list[dict[str, Any]] = []
        self.count = 0

    def check(self, number: int, external_id: str, answer: str, n_sentences: int | None = None) -> None:
        flagged = long_answer(answer, max_chars=self.max_chars, max_sentences=self.max_sentences,
                              n_sentences=n_sentences)
        if flagged is not None:
            self.count += 1
            if len(self.listed) < MAX_LONG_LISTED:
                self.listed.append({"location": f"{self.where} {number}", "id": external_id, **flagged})


def _existing_ids(study: Study, external_ids: list[str]) -> list[str]:
    """Which of ``external_ids`` the study has already, in the items' order (as the ORM's query gives them).
    On PostgreSQL the ids go as one array parameter: the ORM's ``IN`` with a thousand placeholders costs
    this process several times as much (about 8 against 1.6 ms per thousand ids)."""
    if connection.vendor != "postgresql":
        existing = Item.objects.filter(study=study, external_id__in=external_ids)
        return list(existing.values_list("external_id", flat=True))
    qn = connection.ops.quote_name
    with rawsql.cursor() as cursor:
        cursor.execute(
            f"SELECT {qn('external_id')} FROM {qn(Item._meta.db_table)} "  # noqa: S608
            f"WHERE {qn('study_id')} = %s AND {qn('external_id')} = ANY(%s) ORDER BY {qn('id')}",
            [study.pk, external_ids],
        )
        return [row[0] for row in cursor.fetchall()]


def _export_header(rec: dict[str, Any]) -> bool:
    return "concord_export" in rec


def pseudonym_clashes(study: Study, pool_name: str, pseudonyms: Pseudonyms, where: str) -> list[RowError]:
    """The file's pseudonyms that look like (``annotation.pseudonyms``) one of the study's people, each
    located where it first appears and naming whom it looks like (the importer is a researcher of the study,
    who sees its people's pseudonyms in the console anyway):

    * a live annotator's, in any pool: imported labels are never attributed to, or mistaken for, a real
      person's work;
    * an imported annotator's of the import's own pool, spelt otherwise: the exact spelling adds to their
      labels (a second import of the same pool), a look-alike would be a second annotator who looks the same.

    The imported annotators of other pools are not compared: each pool's are its own (``ImportIdentity``).
    """
    if not pseudonyms:
        return []
    imported = pseudonyms.by_key
    people = (
        PoolMembership.objects.filter(study=study)
        .values_list("pseudonym", "pool__name", "user__import_identity__id")
        .order_by("pseudonym", "pool__name")
    )
    clashes = []
    for existing, pool, identity in people:
        pseudonym = next((imported[k] for k in pseudonym_keys(existing) if k in imported), None)
        if pseudonym is None:
            continue
        if identity is None:
            whom = f"a live annotator of pool {pool!r}"
            advice = "imported labels need pseudonyms of their own"
        elif pool == pool_name and pseudonym != existing:
            whom = f"an imported annotator of pool {pool!r}"
            advice = f"write {existing!r} to add to their labels, or give this annotator a pseudonym of their own"
        else:
            continue
        number, field_name = pseudonyms.first[pseudonym]
        like = "is" if pseudonym == existing else f"looks like {existing!r},"
        clashes.append(RowError(where, number, field_name,
                                f"pseudonym {pseudonym!r} {like} the pseudonym of {whom}; {advice}"))
    return clashes


def scan(study: Study, source: RecordSource, where: str, accept_extra: bool, *, pool_name: str, deadline: Deadline,
         long_chars: int | None = None, long_sentences: int | None = None, flag_long: bool = True) -> Scan:
    """The validation pass: reads everything, writes nothing; memory does not grow with the file
    beyond the id index (about 24 bytes a record). The labels' pseudonyms are compared with the study's
    people (``pseudonym_clashes``: the import's pool is ``pool_name``) in the dry run as in a real import;
    ``deadline`` is asked before each record.

    Answers over ``long_chars`` characters or ``long_sentences`` sentences (default: the settings
    IMPORT_LONG_ANSWER_CHARS and IMPORT_LONG_ANSWER_SENTENCES) are flagged, not refused; with
    ``flag_long=False`` they are not looked at (a real import flags them in the write pass, which
    splits every answer anyway, so that no answer is split twice). A Concord study export is refused
    at its header line with the command that imports it."""
    long = LongAnswers(where, max_chars=long_chars, max_sentences=long_sentences) if flag_long else None
    validator = Validator(study, where=where, accept_extra=accept_extra)
    scan = Scan()
    index = IdIndex()
    pending: dict[str, int] = {}

    def check_existing() -> None:
        for external_id in _existing_ids(study, list(pending)):
            scan.error(RowError(where, pending[external_id], "id",
                                f"id {external_id!r} already exists in study {study.slug!r}; it is not imported again"))
        pending.clear()

    for number, rec in source():
        deadline.check(where, number)
        if isinstance(rec, RowError):
            scan.error(rec)
            continue
        if _export_header(rec):
            raise ValidationFailed(
                EXPORT_HINT,
                details=[{"location": f"{where} {number}", "field": "concord_export", "reason": EXPORT_HINT}],
            )
        record, errors = validator.validate(number, rec)
        for err in errors:
            scan.error(err)
        if record is None:
            continue
        scan.n_records += 1
        if len(scan.preview) < PREVIEW_RECORDS:
            scan.preview.append(record)
        if long is not None:
            long.check(number, record.external_id, record.answer)
        index.add(record.external_id, number)
        pending[record.external_id] = number
        if len(pending) >= _ID_CHECK_BATCH:
            check_existing()
        scan.n_chunks += len(record.contexts)
        scan.n_aspects += len(record.aspects)
        scan.n_labels += len(record.labels)
    if pending:
        check_existing()
    scan.pseudonyms = validator.pseudonyms
    for clash in pseudonym_clashes(study, pool_name, scan.pseudonyms, where):
        scan.error(clash)
    repeats = index.repeats()
    if repeats:
        # The index holds no ids, so the repeated ones are read back for the message (error path only).
        wanted = {n for pair in repeats for n in pair}
        ids: dict[int, str] = {}
        for number, rec in source():
            deadline.check(where, number)
            if number in wanted and isinstance(rec, dict):
                ids[number] = str(rec.get("id", "")).strip()
        for number, first in repeats:
            scan.error(RowError(where, number, "id", f"duplicate id {ids.get(number, '')!r}: also on {where} {first}"))
    if long is not None:
        scan.long_answers, scan.n_long_answers = long.listed, long.count
    if scan.n_records == 0 and scan.n_errors == 0:
        scan.error(RowError("file", None, "file", "no records found"))
    scan.errors.sort(key=lambda e: (e.number or 0))
    return scan
