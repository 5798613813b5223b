"""What an import reads and what it answers: the record schema, the located errors, the result.

Imports turn JSONL / CSV files (and dataset adapters) into items, sentences, chunks, aspects and,
optionally, existing labels of pseudonymous annotators.

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
control    no        ``{"kind": "control"|"attention"|"qualification", "answers": {question key: value},
                     "explanation": str}``: an item of known answer (``annotation.quality``); the answers are
                     checked against the study's item questions; never stored in ``metadata``
gold       no        list of objects; only with an ``extra_writer`` (``manage.py import_study_export``)
scores     no        list of objects; only with an ``extra_writer`` (``manage.py import_study_export``)
=========  ========  ===========================================================================

All or nothing: the file is read twice. The first pass validates every record and collects every
error (up to ``MAX_ERRORS``) as ``{line|row, field, reason}``; only a clean file gets the second pass,
which writes everything in one transaction in batches (COPY on PostgreSQL, see ``writer``), so memory
stays flat however long the file is. CSV rows are numbered as a spreadsheet shows them (the header is row 1).
Text is stored exactly as given (HTML included); templates escape it when it is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from annotation.models import Item
from concord.errors import ValidationFailed

MAX_ERRORS = 200
DEFAULT_POOL = "imported"

FIELDS = ("id", "question", "answer", "contexts", "source", "aspects", "scope", "system", "metadata", "labels",
          "control", "gold", "scores")
REQUIRED = ("id", "question", "answer")

# A study export (adjudication.exports) is not an item file; an import given one says what to run.
EXPORT_HINT = (
    "this is a Concord study export, not an item file: rebuild the study from it with "
    "`python manage.py import_study_export FILE` (it restores the questions, pools, labels, gold and scores)"
)
CSV_EXPORT_HINT = (
    "this is a Concord long CSV export (one row per label), not an item file: import the study's JSONL "
    "export with `python manage.py import_study_export FILE` instead"
)
# Columns that only Concord's long CSV export has.
CSV_EXPORT_COLUMNS = frozenset({"record", "item_id", "unit", "annotator"})

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
    # Dry-run extras: the first records as an annotator will see them, and the answers flagged as long.
    preview: list[dict[str, Any]] = field(default_factory=list)
    long_answers: list[dict[str, Any]] = field(default_factory=list)
    n_long_answers: int = 0
    long_limits: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "filename": self.filename, "dry_run": self.dry_run, "adapter": self.adapter, "items": self.n_items,
            "sentences": self.n_sentences, "chunks": self.n_chunks, "aspects": self.n_aspects,
            "labels": self.n_labels, "annotators": self.n_annotators, "pool": self.pool_name,
            "batch_id": self.batch_id, "preview": self.preview, "long_answers": self.long_answers,
            "n_long_answers": self.n_long_answers, "long_limits": self.long_limits,
        }

    def summary(self) -> str:
        verb = "would import" if self.dry_run else "imported"
        parts = [f"{self.n_items} items"]
        if not self.dry_run:
            parts.append(f"{self.n_sentences} sentences")
        parts += [f"{self.n_chunks} chunks", f"{self.n_aspects} aspects", f"{self.n_labels} labels"]
        if self.n_annotators:
            parts.append(f"{self.n_annotators} annotators in pool {self.pool_name!r}")
        text = f"{self.filename}: {verb} " + ", ".join(parts)
        if self.n_long_answers:
            shown = "; ".join(f"{a['location']} (id {a['id']}): {a['reason']}" for a in self.long_answers[:10])
            text += f"\n{self.n_long_answers} long answer{'s' if self.n_long_answers != 1 else ''} flagged: {shown}"
        return text



Located = tuple[int, dict[str, Any] | RowError]
RecordSource = Callable[[], Iterator[Located]]


def type_name(value: Any) -> str:
    """How an error message names the JSON type of ``value``."""
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)
