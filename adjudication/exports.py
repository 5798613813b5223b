"""Streaming exports of a study: JSONL, CSV (long format) and a Hugging Face ``datasets`` folder.

Memory stays flat as studies grow: items are read in keyset-paginated chunks (``CHUNK`` items by
primary key), every related table is fetched once per chunk with ``values_list`` (no model
instances), and each record is written as soon as it is built.

JSONL layout (the round trip reads it back: adjudication.roundtrip):

* line 1 — a header object ``{"concord_export": 1, "exported_at": …, "study": …, "questions": …,
  "pools": …, "score_runs": …}``: everything needed to rebuild the study around the items;
* every other line — one item: ``id``, ``question``, ``answer``, ``source``, ``scope``, ``system``,
  ``metadata``, ``sentences``, ``contexts``, ``aspects`` (with ``origin``, ``status``, ``version``),
  ``assignments`` (pool, annotator pseudonym, status, time on task), ``labels`` (pool, annotator
  pseudonym, question, unit, value, version), ``gold`` (every version, with its provenance),
  ``cases`` and ``scores`` (with metric, metric version, backend, model identity).

Units are stable ids, never database ids: ``item``, ``s:<i>`` (answer sentence), ``src:<i>`` (source
sentence), ``c:<rank>`` (chunk) and ``a:<i>`` — the position of the aspect in the record's ``aspects``
list (0-based), which is also what annotation.imports expects. Annotators appear only under their
stable pool pseudonym; adjudicators under their username (they sign their decisions).

The CSV is long format, one row per label and per gold version: ``record, item_id, unit, pool,
question, annotator, value, version, source, item_question, item_answer, unit_text`` (the item's
question and answer and the text of the sentence, passage or aspect the unit names, so that a
spreadsheet needs no join). Its scores go to their own CSV, ``<file>.scores.csv``: ``item_id, unit,
run, metric, metric_version, backend, model_identity, value, state, item_question, item_answer,
unit_text``. Any export may be limited (``ExportFilters``: gold only, chosen pools, chosen
questions); the header's ``filters`` and the card say so, and a limited export cannot rebuild a study.
Cells that a spreadsheet would run as a formula (beginning with ``=``, ``+``, ``-``, ``@``, tab or
carriage return) are prefixed with ``'``; plain numbers such as ``-1.5`` are left alone because they cannot be formulas.

The ``hf`` folder holds ``data/train.jsonl`` (the item records, without the header line, with every
free-form JSON field — label and gold values, metadata, score details — as a JSON-encoded string so
that Arrow sees one type per column) and ``README.md``, a dataset card with a YAML header that
``datasets.load_dataset(folder)`` reads.

Every export has a card (README.md for ``hf``; ``<file>.card.md`` next to a JSONL or CSV file):
counts, pools, blinding settings, the agreement table, gold provenance and the licence.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import os
import re
import shutil
import tempfile
import zipfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson
from django.contrib.auth import get_user_model
from django.db import connection, reset_queries
from django.utils import timezone

from adjudication.consensus import canonical
from adjudication.models import AdjudicationCase, GoldLabel, GoldSource
from adjudication.stats import pattern_agreement as pa
from annotation import units
from annotation.models import (
    Aspect,
    Assignment,
    Chunk,
    Item,
    Label,
    Pool,
    PoolMembership,
    Question,
    Sentence,
    Study,
)
from concord.csv_writer import csv_writer
from scoring.models import Score, ScoreRun

CHUNK = 1000
FORMAT_VERSION = 1
Progress = Callable[[int, int], None]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def csv_safe(cell: str) -> str:
    """Neutralize a cell that a spreadsheet would evaluate (CSV / formula injection)."""
    if cell and cell.startswith(_FORMULA_START) and not _PLAIN_NUMBER.match(cell):
        return "'" + cell
    return cell


def _dumps(obj: Any) -> str:
    return orjson.dumps(obj, default=str).decode()


def _line(obj: Any) -> bytes:
    return orjson.dumps(obj, default=str, option=orjson.OPT_APPEND_NEWLINE)


# --- Filters ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportFilters:
    """What a researcher limited an export to. Empty lists mean "all".

    * ``pools``: only the labels, assignments, gold and cases of these pools (by name), and only the
      items that have an assignment or a gold label in one of them;
    * ``questions``: only the labels, gold and cases of these questions (by key), and only those
      questions in the header;
    * ``gold_only``: only items with current gold (within the pools and questions above), and no
      individual annotator labels or assignments: the adjudicated reference alone.
    """

    pools: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    gold_only: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> ExportFilters:
        data = data or {}
        return cls(pools=tuple(sorted(data.get("pools") or ())), questions=tuple(sorted(data.get("questions") or ())),
                   gold_only=bool(data.get("gold_only")))

    def as_dict(self) -> dict[str, Any]:
        return {"pools": list(self.pools), "questions": list(self.questions), "gold_only": self.gold_only}

    @property
    def active(self) -> bool:
        return bool(self.pools or self.questions or self.gold_only)

    def describe(self) -> str:
        parts = []
        if self.gold_only:
            parts.append("gold only")
        if self.pools:
            parts.append("pools " + ", ".join(self.pools))
        if self.questions:
            parts.append("questions " + ", ".join(self.questions))
        return "; ".join(parts) or "everything"

    def apply(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """The record as limited, or None when the item is left out."""
        if not self.active:
            return record
        pools, questions = set(self.pools), set(self.questions)

        def keep(entry: dict[str, Any]) -> bool:
            return (not pools or entry["pool"] in pools) and (not questions or entry["question"] in questions)

        in_pools = not pools or any(a["pool"] in pools for a in record["assignments"]) or any(
            g["pool"] in pools for g in record["gold"]
        )
        gold = [g for g in record["gold"] if keep(g)]
        if not in_pools or (self.gold_only and not any(g["is_current"] for g in gold)):
            return None
        return {
            **record,
            "labels": [] if self.gold_only else [lab for lab in record["labels"] if keep(lab)],
            "assignments": [] if self.gold_only else [
                a for a in record["assignments"] if not pools or a["pool"] in pools
            ],
            "gold": gold,
            "cases": [c for c in record["cases"] if keep(c)],
        }


# --- Study-level context ------------------------------------------------------------------------


class _Context:
    """Small, study-sized lookups (pools, questions, pseudonyms, runs) loaded once per export."""

    def __init__(self, study: Study, filters: ExportFilters | None = None) -> None:
        self.study = study
        self.filters = filters or ExportFilters()
        self.pools = {
            p.pk: p for p in Pool.objects.filter(study=study).prefetch_related("questions", "consensus_rules")
        }
        self.questions = {q.pk: q for q in Question.objects.filter(study=study).order_by("order", "pk")}
        self.pseudonyms: dict[tuple[int, int], str] = {}
        self.person: dict[int, str] = {}
        for pool_id, user_id, pseudonym in (
            PoolMembership.objects.filter(study=study)
            .order_by("pool__name")
            .values_list("pool_id", "user_id", "pseudonym")
        ):
            self.pseudonyms[(pool_id, user_id)] = pseudonym
            self.person.setdefault(user_id, pseudonym)
        self.runs = {}
        for n, run in enumerate(ScoreRun.objects.filter(study=study).order_by("created_at", "pk"), start=1):
            self.runs[run.pk] = {
                "run": f"run-{n}",
                "metric": run.metric,
                "metric_version": run.metric_version,
                "backend": run.backend,
                "model_identity": run.model_identity,
                "parameters": run.parameters,
                "status": run.status,
                "created_at": run.created_at.isoformat() if run.created_at else None,
            }
        self.run_fields = {
            pk: {k: run[k] for k in ("run", "metric", "metric_version", "backend", "model_identity")}
            for pk, run in self.runs.items()
        }
        self._usernames: dict[int, str] = {}

    def username(self, user_id: int | None) -> str | None:
        if user_id is None:
            return None
        if user_id not in self._usernames:
            self._usernames[user_id] = (
                get_user_model().objects.filter(pk=user_id).values_list("username", flat=True).first()
                or f"user-{user_id}"
            )
        return self._usernames[user_id]

    def header(self) -> dict[str, Any]:
        study = self.study
        return {
            "concord_export": FORMAT_VERSION,
            "exported_at": timezone.now().isoformat(),
            "study": {
                "name": study.name,
                "slug": study.slug,
                "guidelines": study.guidelines,
                "protocol_presets": study.protocol_presets,
                "blind_system": study.blind_system,
                "hidden_metadata_fields": study.hidden_metadata_fields,
                "visible_metadata_fields": study.visible_metadata_fields,
                "independent_pools": study.independent_pools,
                "show_scores_to_adjudicators": study.show_scores_to_adjudicators,
                "licence": study.licence,
            },
            "questions": [
                {
                    "key": q.key,
                    "order": q.order,
                    "scope": q.scope,
                    "kind": q.kind,
                    "prompt": q.prompt,
                    "help_text": q.help_text,
                    "options": q.options,
                    "condition": q.condition,
                    "required": q.required,
                    "min_value": q.min_value,
                    "max_value": q.max_value,
                }
                for q in self.questions.values()
                if not self.filters.questions or q.key in self.filters.questions
            ],
            "pools": [
                {
                    "name": p.name,
                    "overlap": p.overlap,
                    "visibility": p.visibility,
                    "seed": p.seed,
                    "reservation_minutes": p.reservation_minutes,
                    "questions": sorted(q.key for q in p.questions.all()),
                    "majority_rule": sorted(r.question.key for r in p.consensus_rules.all() if r.majority),
                    "members": sorted(ps for (pool_id, _), ps in self.pseudonyms.items() if pool_id == p.pk),
                }
                for p in sorted(self.pools.values(), key=lambda p: p.name)
                if not self.filters.pools or p.name in self.filters.pools
            ],
            "score_runs": list(self.runs.values()),
            **({"filters": self.filters.as_dict()} if self.filters.active else {}),
        }


# --- Records ------------------------------------------------------------------------------------


def _item_chunks(study: Study, chunk: int) -> Iterator[list[tuple]]:
    """The study's items in primary-key order, ``chunk`` rows at a time, from one query read through
    a server-side cursor on PostgreSQL (``iterator``): memory holds one chunk, and no page of the
    scan is read twice however large the study."""
    rows = (
        Item.objects.filter(study=study)
        .order_by("pk")
        .values_list("pk", "external_id", "question", "answer", "source", "scope_class", "system", "metadata")
        .iterator(chunk_size=chunk)
    )
    batch: list[tuple] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= chunk:
            yield batch
            batch = []
    if batch:
        yield batch


def _sql(query: str, params: list[Any]) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(query, params)
        return cursor.fetchall()


def _in(column: str, ids: list[int]) -> tuple[str, list[Any]]:
    """A filter that selects at least the rows of ``ids`` (sorted); callers drop any others.

    On PostgreSQL a chunk's ids are usually one dense run (imports create a study's rows together),
    and a bare range is both the cheapest to send and the easiest for the planner to estimate.
    A sparse chunk (rows of other studies in between) adds the array, so it never reads them.
    """
    lo, hi = ids[0], ids[-1]
    if connection.vendor == "postgresql":
        if hi - lo + 1 <= 2 * len(ids):
            return f"{column} BETWEEN %s AND %s", [lo, hi]
        # The range still helps the planner: an ANY array alone is guessed so large that it scans.
        return f"{column} BETWEEN %s AND %s AND {column} = ANY(%s)", [lo, hi, ids]
    return f"{column} IN ({', '.join(['%s'] * len(ids))})", list(ids)


def _grouped(query: str, column: str, ids: list[int]) -> dict[int, list[tuple]]:
    where, params = _in(column, ids)
    wanted = set(ids)
    out: dict[int, list[tuple]] = defaultdict(list)
    for row in _sql(query.format(where=where), params):
        if row[0] in wanted:
            out[row[0]].append(row)
    return out


def _ts(column: str) -> str:
    """A timestamp column as ISO 8601 text in UTC, formatted by PostgreSQL itself (parsing and
    re-formatting a datetime per row in Python costs more than the rest of the record)."""
    if connection.vendor == "postgresql":
        return f"to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"')"
    return column


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        if "T" in value:  # already formatted by _ts
            return value
        value = datetime.fromisoformat(value)  # SQLite hands back the stored text
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.isoformat()


def _json(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


def iter_records(study: Study, *, chunk: int = CHUNK, ctx: _Context | None = None) -> Iterator[dict[str, Any]]:
    """Yield one export record per item, in primary-key order, reading ``chunk`` items at a time.

    Per chunk, one query per related table (raw SQL: at a hundred thousand items the ORM's per-row
    conversions cost more than the database), and the lists in a record are sorted by stable keys
    (pool, pseudonym, question, unit) so that two exports of equal studies are equal line by line.
    """
    ctx = ctx or _Context(study)
    qkey = {pk: q.key for pk, q in ctx.questions.items()}
    pool_name = {pk: p.name for pk, p in ctx.pools.items()}
    pool_rank = {pk: i for i, pk in enumerate(sorted(ctx.pools, key=lambda pk: ctx.pools[pk].name))}
    member_rank = {
        key: i for i, key in enumerate(sorted(ctx.pseudonyms, key=lambda k: (pool_name[k[0]], ctx.pseudonyms[k])))
    }
    qrank = {
        pk: i
        for i, pk in enumerate(sorted(ctx.questions, key=lambda pk: (ctx.questions[pk].order, ctx.questions[pk].key)))
    }
    t = {
        m.__name__: m._meta.db_table
        for m in (
            Sentence,
            Chunk,
            Aspect,
            Assignment,
            Label,
            GoldLabel,
            AdjudicationCase,
            Score,
            Pool,
            Question,
            PoolMembership,
        )
    }
    for items in _item_chunks(study, chunk):
        # With DEBUG on, Django keeps the last 9,000 queries with their parameters inlined; a chunk's
        # queries carry thousands of ids, so the log alone would grow the export by tens of MB.
        reset_queries()
        ids = [row[0] for row in items]
        sentences = _grouped(
            f'SELECT item_id, part, "index", text, start, "end" FROM {t["Sentence"]} '  # noqa: S608 (table names from model meta)
            'WHERE {where} ORDER BY item_id, part, "index"',
            "item_id",
            ids,
        )
        chunks = _grouped(
            f"SELECT item_id, rank, text, document_id, is_labelled_target FROM {t['Chunk']} "  # noqa: S608 (table names from model meta)
            "WHERE {where} ORDER BY item_id, rank",
            "item_id",
            ids,
        )
        aspects = _grouped(
            f"SELECT item_id, id, text, importance, origin, status, version, retired_in_version, proposed_by_id, "  # noqa: S608 (table names from model meta)
            f"decided_by_id FROM {t['Aspect']} WHERE {{where}} ORDER BY item_id, id",
            "item_id",
            ids,
        )
        assignments = _grouped(
            f"SELECT item_id, id, pool_id, annotator_id, status, active_seconds, {_ts('submitted_at')} "  # noqa: S608 (table names from model meta)
            f"FROM {t['Assignment']} WHERE {{where}} ORDER BY item_id, id",
            "item_id",
            ids,
        )
        who = {row[1]: (row[2], row[3]) for rows in assignments.values() for row in rows}
        item_of = {row[1]: row[0] for rows in assignments.values() for row in rows}
        labels: dict[int, list[tuple]] = defaultdict(list)
        if item_of:
            # By assignment: the first column of the label's unique index, so a range scan of it.
            where, params = _in("assignment_id", sorted(item_of))
            for row in _sql(
                f"SELECT assignment_id, question_id, unit_key, CAST(value AS text), version "  # noqa: S608 (table names from model meta)
                f"FROM {t['Label']} WHERE {where}",
                params,
            ):
                if row[0] in item_of:
                    labels[item_of[row[0]]].append(row)
        gold = _grouped(
            f"SELECT item_id, pool_id, question_id, unit_key, CAST(value AS text), version, is_current, source, "  # noqa: S608 (table names from model meta)
            f"adjudicator_id, adjudicator_name, rationale, confidence, guideline_gap, case_id, {_ts('created_at')} "
            f"FROM {t['GoldLabel']} WHERE {{where}}",
            "item_id",
            ids,
        )
        cases = _grouped(
            f"SELECT item_id, id, pool_id, question_id, unit_key, status, {_ts('opened_at')} "  # noqa: S608 (table names from model meta)
            f"FROM {t['AdjudicationCase']} WHERE {{where}}",
            "item_id",
            ids,
        )
        scores = _grouped(
            f"SELECT item_id, run_id, unit_key, value, state, CAST(details AS text) FROM {t['Score']} WHERE {{where}} "  # noqa: S608 (table names from model meta)
            f"ORDER BY item_id, run_id, unit_key",
            "item_id",
            ids,
        )
        for pk, external_id, question, answer, source, scope, system, metadata in items:
            item_aspects = aspects.get(pk, ())
            position = {a[1]: i for i, a in enumerate(item_aspects)}

            def unit(key: str, position: dict[int, int] = position) -> str:
                try:
                    parsed = units.parse(key)
                except units.InvalidUnitKey:
                    return key
                if parsed.kind == units.ASPECT and parsed.ref in position:
                    return units.aspect(position[parsed.ref])
                return key

            case_status = {c[1]: c[5] for c in cases.get(pk, ())}
            # Lists in a stable order (pool name, pseudonym, question, unit), so two exports of equal
            # studies are equal line by line; length-then-text orders "a:999" before "a:1000".
            item_labels = []
            for a, q, u, value, version in sorted(
                labels.get(pk, ()), key=lambda r: (member_rank.get(who[r[0]], -1), qrank[r[1]], len(r[2]), r[2])
            ):
                pool_id, user_id = who[a]
                item_labels.append(
                    {
                        "pool": pool_name[pool_id],
                        "annotator": ctx.pseudonyms.get((pool_id, user_id), f"unlisted-{user_id}"),
                        "question": qkey[q],
                        "unit": unit(u),
                        "value": _json(value),
                        "version": version,
                    }
                )
            item_gold = [
                {
                    "pool": pool_name[pool_id],
                    "question": qkey[q],
                    "unit": unit(u),
                    "value": _json(value),
                    "version": version,
                    "is_current": bool(current),
                    "source": src,
                    "adjudicator": adj_name or ctx.username(adj_id),
                    "rationale": rationale,
                    "confidence": confidence,
                    "guideline_gap": bool(gap),
                    "case_status": case_status.get(case_id),
                    "created_at": _iso(created),
                }
                for (
                    _,
                    pool_id,
                    q,
                    u,
                    value,
                    version,
                    current,
                    src,
                    adj_id,
                    adj_name,
                    rationale,
                    confidence,
                    gap,
                    case_id,
                    created,
                ) in sorted(gold.get(pk, ()), key=lambda r: (pool_rank[r[1]], qrank[r[2]], len(r[3]), r[3], r[5]))
            ]
            item_cases = [
                {
                    "pool": pool_name[pool_id],
                    "question": qkey[q],
                    "unit": unit(u),
                    "status": status,
                    "opened_at": _iso(opened),
                }
                for _, _, pool_id, q, u, status, opened in sorted(
                    cases.get(pk, ()), key=lambda r: (pool_rank[r[2]], qrank[r[3]], len(r[4]), r[4])
                )
            ]
            yield {
                "id": external_id,
                "question": question,
                "answer": answer,
                "source": source,
                "scope": scope,
                "system": system,
                "metadata": metadata,
                "sentences": [
                    {
                        "unit": units.of_sentence(part, i),
                        "part": part,
                        "index": i,
                        "text": text,
                        "start": start,
                        "end": end,
                    }
                    for _, part, i, text, start, end in sentences.get(pk, ())
                ],
                "contexts": [
                    {"unit": units.chunk(rank), "id": doc, "text": text, "is_target": bool(target)}
                    for _, rank, text, doc, target in chunks.get(pk, ())
                ],
                "aspects": [
                    {
                        "unit": units.aspect(i),
                        "text": text,
                        "importance": importance,
                        "origin": origin,
                        "status": status,
                        "version": version,
                        "retired_in_version": retired,
                        "proposed_by": ctx.person.get(proposer) if proposer else None,
                        "decided_by": ctx.username(decider),
                    }
                    for i, (_, _, text, importance, origin, status, version, retired, proposer, decider) in enumerate(
                        item_aspects
                    )
                ],
                "assignments": sorted(
                    (
                        {
                            "pool": pool_name[pool_id],
                            "annotator": ctx.pseudonyms.get((pool_id, user_id), f"unlisted-{user_id}"),
                            "status": status,
                            "active_seconds": seconds,
                            "submitted_at": _iso(submitted),
                        }
                        for _, _, pool_id, user_id, status, seconds, submitted in assignments.get(pk, ())
                    ),
                    key=lambda a: (a["pool"], a["annotator"]),
                ),
                "labels": item_labels,
                "gold": item_gold,
                "cases": item_cases,
                "scores": [
                    {
                        **ctx.run_fields[run_id],
                        "unit": unit(u),
                        "value": value,
                        "state": state,
                        "details": _json(details),
                    }
                    for _, run_id, u, value, state, details in scores.get(pk, ())
                ],
            }


# --- Agreement table for the card ---------------------------------------------------------------


class _Tally:
    """Counts and agreement patterns gathered while the records stream past, so the card costs no
    second read of the labels. A unit's pattern is its submitted answers (canonical forms, sorted);
    percent agreement, Fleiss' κ and Krippendorff's α do not depend on which rater gave which answer
    within a unit, so the distinct patterns with their unit counts are all the statistics need —
    a handful of entries however many units."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx
        self.kinds = {q.key: q.kind for q in ctx.questions.values()}
        self.counts: Counter[str] = Counter()
        # The provenance of the current gold written, so that a limited export's card describes its own gold.
        self.gold_sources: Counter[str] = Counter()
        self.patterns: dict[tuple[str, str], Counter[tuple]] = defaultdict(Counter)

    def add(self, record: dict[str, Any]) -> None:
        counts = self.counts
        counts["items"] += 1
        counts["labels"] += len(record["labels"])
        counts["gold_versions"] += len(record["gold"])
        counts["gold_current"] += sum(1 for g in record["gold"] if g["is_current"])
        self.gold_sources.update(g["source"] for g in record["gold"] if g["is_current"])
        counts["cases"] += len(record["cases"])
        counts["scores"] += len(record["scores"])
        submitted = {(a["pool"], a["annotator"]) for a in record["assignments"] if a["status"] == "submitted"}
        units: dict[tuple[str, str, str], list] = defaultdict(list)
        for label in record["labels"]:
            kind = self.kinds[label["question"]]
            if label["value"] is None or kind == "text" or (label["pool"], label["annotator"]) not in submitted:
                continue
            units[(label["pool"], label["question"], label["unit"])].append(canonical(kind, label["value"]))
        for (pool, question, _unit), values in units.items():
            self.patterns[(pool, question)][tuple(sorted(values, key=repr))] += 1

    def summary(self) -> dict[str, int]:
        keys = ("items", "labels", "gold_current", "gold_versions", "cases", "scores")
        out = {key: self.counts.get(key, 0) for key in keys}
        pools = self.ctx.filters.pools
        out["annotators"] = len(
            {user_id for pool_id, user_id in self.ctx.pseudonyms if not pools or self.ctx.pools[pool_id].name in pools}
        )
        return out

    def agreement(self) -> list[dict[str, Any]]:
        """Per pool and question: percent agreement, Fleiss' κ and Krippendorff's α over submitted
        labels, before any consensus, from the answer patterns (adjudication.stats.pattern_agreement)."""
        rows: list[dict[str, Any]] = []
        pools, questions = self.ctx.filters.pools, self.ctx.filters.questions
        for pool in sorted(self.ctx.pools.values(), key=lambda p: p.name):
            if pools and pool.name not in pools:
                continue
            for question in sorted(pool.questions.all(), key=lambda q: (q.order, q.pk)):
                if questions and question.key not in questions:
                    continue
                row: dict[str, Any] = {"pool": pool.name, "question": question.key, "kind": question.kind}
                rows.append(row)
                if question.kind == "text":
                    row["note"] = "free text: agreement statistics do not apply"
                    continue
                scale = question.option_values if question.is_categorical else None
                patterns = _pattern_codes(self.patterns.get((pool.name, question.key), Counter()), question, scale)
                if not patterns:
                    row["note"] = "no submitted labels"
                    continue
                agreement = pa.percent_agreement(patterns)
                row["n_units"] = agreement.n_units
                row["percent_agreement"] = agreement.value
                if question.is_categorical:
                    level = "ordinal" if question.kind == "ordinal" else "nominal"
                    row["fleiss_kappa"] = pa.fleiss_kappa(patterns, len(scale)).value
                    row["krippendorff_alpha"] = pa.krippendorff_alpha(patterns, level, len(scale)).value
                    row["alpha_level"] = level
                elif question.kind == "number":
                    row["krippendorff_alpha"] = pa.krippendorff_alpha(patterns, "interval").value
                    row["alpha_level"] = "interval"
                else:
                    row["note"] = "exact set equality; κ and α over sets are not reported"
        return rows


def _pattern_codes(
    patterns: Counter[tuple], question: Question, scale: list[str] | None
) -> list[tuple[list[float], int]]:
    """Answer patterns as codes: scale positions (categorical), numbers, or one id per distinct set."""
    position = {v: i for i, v in enumerate(scale)} if scale is not None else None
    seen_sets: dict[Any, int] = {}
    out = []
    for pattern, count in sorted(patterns.items(), key=lambda kv: repr(kv[0])):
        if position is not None:
            codes = [float(position[v]) for v in pattern if v in position]
        elif question.kind == "number":
            codes = [float(v) for v in pattern]
        else:
            codes = [float(seen_sets.setdefault(v, len(seen_sets))) for v in pattern]
        if codes:
            out.append((codes, count))
    return out


# --- Card ---------------------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def _md(value: Any) -> str:
    """User-written text for the Markdown card: markup shown as text (Markdown renderers pass raw HTML
    through), and no pipe or line break that would split a table row."""
    return html.escape(str(value), quote=False).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def card_markdown(study: Study, *, fmt: str, header: dict[str, Any], tally: _Tally, yaml_header: bool) -> str:
    counts = tally.summary()
    agreement_rows = tally.agreement()
    gold_sources = tally.gold_sources
    out = io.StringIO()
    if yaml_header:
        out.write("---\n")
        # YAML reads \u escapes in a double-quoted string: the name stays exact and no raw tag is written.
        pretty = json.dumps(study.name).replace("<", "\\u003c").replace(">", "\\u003e")
        out.write(f"pretty_name: {pretty}\n")
        out.write("license: other\n")
        out.write("language:\n- en\n")
        out.write("tags:\n- concord\n- annotation\n- rag-evaluation\n")
        out.write("configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/train.jsonl\n")
        out.write("---\n\n")
    out.write(f"# {_md(study.name)} — Concord export\n\n")
    out.write(
        f"Exported {header['exported_at']} from study `{study.slug}` as `{fmt}` (format version {FORMAT_VERSION}).\n\n"
    )
    if header.get("filters"):
        limited = ExportFilters.from_dict(header["filters"]).describe()
        out.write(f"**Limited to {_md(limited)}**: this is not the whole study, and it cannot rebuild it.\n\n")
    if fmt == "csv":
        out.write("The scores are in their own CSV next to this file (`<file>.scores.csv`).\n\n")
    out.write("## Licence and attribution\n\n")
    out.write(
        (
            html.escape(study.licence.strip(), quote=False)
            or "No licence was recorded for the imported data; ask the study owner before reuse."
        )
        + "\n\n"
    )
    out.write("## Counts\n\n| what | n |\n|---|---|\n")
    for key, value in counts.items():
        out.write(f"| {key.replace('_', ' ')} | {value} |\n")
    out.write("\n## Pools\n\n| pool | overlap k | members | questions | majority rule |\n|---|---|---|---|---|\n")
    for pool in header["pools"]:
        out.write(
            f"| {_md(pool['name'])} | {pool['overlap']} | {len(pool['members'])} | "
            f"{_md(', '.join(pool['questions']))} | "
            f"{_md(', '.join(pool['majority_rule'])) or '—'} |\n"
        )
    s = header["study"]
    out.write("\n## Blinding\n\n")
    out.write(f"- System name hidden from annotators: {'yes' if s['blind_system'] else 'no'}\n")
    out.write(f"- Metadata fields hidden from annotators: {_md(', '.join(s['hidden_metadata_fields'])) or 'none'}\n")
    visible = ", ".join(s.get("visible_metadata_fields") or [])
    out.write(f"- Metadata fields shown to annotators (all others hidden): {_md(visible) or 'none'}\n")
    out.write(f"- Independent pools (an annotator in at most one pool): {'yes' if s['independent_pools'] else 'no'}\n")
    out.write(f"- Automated scores shown to adjudicators: {'yes' if s['show_scores_to_adjudicators'] else 'no'}\n")
    for pool in header["pools"]:
        out.write(f"- Pool {_md(pool['name'])}: annotators see {pool['visibility'].replace('_', ' ')}\n")
    out.write("- Annotators appear under stable per-pool pseudonyms; adjudicators under their usernames.\n")
    out.write("\n## Agreement (before consensus; submitted labels)\n\n")
    out.write("| pool | question | kind | n units | percent agreement | Fleiss κ | Krippendorff α | note |\n")
    out.write("|---|---|---|---|---|---|---|---|\n")
    for row in agreement_rows:
        alpha = row.get("krippendorff_alpha")
        alpha_text = f"{_fmt(alpha)} ({row['alpha_level']})" if "alpha_level" in row else "—"
        out.write(
            f"| {_md(row['pool'])} | {_md(row['question'])} | {row['kind']} | {row.get('n_units', '—')} | "
            f"{_fmt(row['percent_agreement']) if 'percent_agreement' in row else '—'} | "
            f"{_fmt(row['fleiss_kappa']) if 'fleiss_kappa' in row else '—'} | {alpha_text} | "
            f"{_md(row.get('note', ''))} |\n"
        )
    out.write("\n## Gold provenance (current versions)\n\n| source | n |\n|---|---|\n")
    for source in GoldSource.values:
        out.write(f"| {source} | {gold_sources.get(source, 0)} |\n")
    out.write(
        "\nUnanimous: every submitted annotator gave the same answer (sets compared exactly; text after whitespace "
        "normalisation). Majority: a strict majority of at least three, where the pool's rule allows it. "
        "Adjudicated / unresolved: an adjudicator's decision, with rationale, confidence (1–5) and guideline-gap flag. "
        "Every earlier version is kept in the `gold` list with `is_current: false`.\n"
    )
    out.write("\n## Score runs\n\n| run | metric | version | backend | model |\n|---|---|---|---|---|\n")
    for run in header["score_runs"]:
        out.write(
            f"| {run['run']} | {_md(run['metric'])} | {_md(run['metric_version'])} | {_md(run['backend'])} | "
            f"{_md(run['model_identity']) or '—'} |\n"
        )
    out.write(
        "\n## Record layout\n\nOne record per item: `id`, `question`, `answer`, `source`, `scope`, `system`, "
        "`metadata`, `sentences`, `contexts`, `aspects` (origin, status, version), `assignments`, `labels` (pool, "
        "annotator pseudonym, question, unit, value, version), `gold` (all versions with provenance), `cases`, "
        "`scores` (run, metric, metric_version, backend, model_identity, unit, value, state, details). "
        "Units: `item`, `s:<i>` answer sentence, `src:<i>` source sentence, `c:<rank>` chunk, "
        "`a:<i>` the i-th entry of `aspects`.\n"
    )
    if fmt == "hf":
        out.write(
            "In this folder the free-form JSON fields (`metadata`, label and gold `value`, score `details`) are "
            "JSON-encoded strings, so that every column has one Arrow type; decode them with `json.loads`.\n"
        )
    if fmt == "csv":
        out.write(
            "The CSV is long format (`record, item_id, unit, pool, question, annotator, value, version, source`); "
            "non-text values are JSON. Cells beginning with = + - @ (or a tab / carriage return) are prefixed with ' "
            "so that spreadsheets do not run them as formulas.\n"
        )
    return out.getvalue()


# --- Writers ------------------------------------------------------------------------------------


def _hf_record(record: dict[str, Any]) -> dict[str, Any]:
    out = dict(record)
    out["metadata"] = _dumps(record["metadata"])
    out["labels"] = [{**lab, "value": _dumps(lab["value"])} for lab in record["labels"]]
    out["gold"] = [{**g, "value": _dumps(g["value"])} for g in record["gold"]]
    out["scores"] = [{**s, "details": _dumps(s["details"])} for s in record["scores"]]
    return out


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return _dumps(value)


CSV_COLUMNS = (
    "record", "item_id", "unit", "pool", "question", "annotator", "value", "version", "source",
    "item_question", "item_answer", "unit_text",
)
SCORE_CSV_COLUMNS = (
    "item_id", "unit", "run", "metric", "metric_version", "backend", "model_identity", "value", "state",
    "item_question", "item_answer", "unit_text",
)


def _unit_texts(record: dict[str, Any]) -> dict[str, str]:
    """The text each unit of a record stands for: its sentence, passage or aspect (the item: none, the
    answer has its own column)."""
    texts = {s["unit"]: s["text"] for s in record["sentences"]}
    texts.update((c["unit"], c["text"]) for c in record["contexts"])
    texts.update((a["unit"], a["text"]) for a in record["aspects"])
    return texts


def _write_csv_rows(record: dict[str, Any], writer: Any) -> None:
    """Long format: one row per label and per gold version, each carrying the item's id, question and
    answer and the text of its unit, so that a spreadsheet needs no join."""
    texts = _unit_texts(record)
    item = (record["question"], record["answer"])
    for lab in record["labels"]:
        writer.writerow(
            [
                csv_safe(c)
                for c in (
                    "label",
                    record["id"],
                    lab["unit"],
                    lab["pool"],
                    lab["question"],
                    lab["annotator"],
                    _cell(lab["value"]),
                    str(lab["version"]),
                    "annotator",
                    *item,
                    texts.get(lab["unit"], ""),
                )
            ]
        )
    for g in record["gold"]:
        writer.writerow(
            [
                csv_safe(c)
                for c in (
                    "gold" if g["is_current"] else "gold_superseded",
                    record["id"],
                    g["unit"],
                    g["pool"],
                    g["question"],
                    g["adjudicator"] or "",
                    _cell(g["value"]),
                    str(g["version"]),
                    g["source"],
                    *item,
                    texts.get(g["unit"], ""),
                )
            ]
        )


def _write_score_rows(record: dict[str, Any], writer: Any) -> None:
    """One row per score: the run's metric, version, backend and model, the value and its state."""
    texts = _unit_texts(record)
    for sc in record["scores"]:
        writer.writerow(
            [
                csv_safe(c)
                for c in (
                    record["id"],
                    sc["unit"],
                    sc["run"],
                    sc["metric"],
                    sc["metric_version"],
                    sc["backend"],
                    sc["model_identity"] or "",
                    "" if sc["value"] is None else repr(float(sc["value"])),
                    sc["state"],
                    record["question"],
                    record["answer"],
                    texts.get(sc["unit"], ""),
                )
            ]
        )


def write_stream(
    study: Study,
    fmt: str,
    stream: BinaryIO,
    *,
    progress: Progress | None = None,
    chunk: int = CHUNK,
    total: int | None = None,
    ctx: _Context | None = None,
    tally: _Tally | None = None,
    scores_stream: BinaryIO | None = None,
) -> int:
    """Write the records of ``study`` to an open binary stream (UTF-8); returns the items written.
    ``tally``, when given, sees every record written (for the card). ``ctx.filters`` limits the
    records; ``scores_stream`` (CSV only) receives the scores as their own CSV."""
    ctx = ctx or _Context(study)
    header = ctx.header()
    if total is None:
        total = Item.objects.filter(study=study).count()
    text = writer = score_text = score_writer = None
    if fmt == "jsonl":
        stream.write(_line(header))
    elif fmt == "csv":
        text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
        writer = csv_writer(text, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        if scores_stream is not None:
            score_text = io.TextIOWrapper(scores_stream, encoding="utf-8", newline="")
            score_writer = csv_writer(score_text, lineterminator="\n")
            score_writer.writerow(SCORE_CSV_COLUMNS)
    n = seen = 0
    for full in iter_records(study, chunk=chunk, ctx=ctx):
        seen += 1
        record = ctx.filters.apply(full)
        if record is not None:
            if tally is not None:
                tally.add(record)
            if fmt == "jsonl":
                stream.write(_line(record))
            elif fmt == "hf":
                stream.write(_line(_hf_record(record)))
            else:
                _write_csv_rows(record, writer)
                if score_writer is not None:
                    _write_score_rows(record, score_writer)
            n += 1
        if progress is not None and seen % chunk == 0:
            progress(seen, total)
    for wrapper in (text, score_text):
        if wrapper is not None:
            wrapper.flush()
            wrapper.detach()
    if progress is not None:
        progress(seen, total)
    return n


@contextlib.contextmanager
def _no_stream() -> Iterator[None]:
    yield None


def scores_path(out: Path | str) -> Path:
    """Where a CSV export's scores go: next to it, ``<out>.scores.csv``."""
    return Path(str(out) + ".scores.csv")


def write_export(
    *, study: Study, fmt: str, out: Path, progress: Progress | None = None, chunk: int = CHUNK,
    filters: ExportFilters | None = None,
) -> Path:
    """Write an export and its card to ``out``; the data lands under a temporary name first.

    ``jsonl`` / ``csv``: ``out`` is the data file, the card goes to ``<out>.card.md``; a CSV export's
    scores go to their own CSV, ``<out>.scores.csv``.
    ``hf``: ``out`` is a folder (``data/train.jsonl`` + ``README.md``), or a ``.zip`` of that folder.
    ``filters`` limit the export (gold only, chosen pools, chosen questions); the header and card say so.
    """
    out = Path(out)
    ctx = _Context(study, filters)
    tally = _Tally(ctx)
    total = Item.objects.filter(study=study).count()
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt in ("jsonl", "csv"):
        tmp = out.with_name(out.name + ".part")
        scores_tmp = scores_path(tmp)
        with open(tmp, "wb") as stream, (open(scores_tmp, "wb") if fmt == "csv" else _no_stream()) as scores:
            write_stream(study, fmt, stream, progress=progress, chunk=chunk, total=total, ctx=ctx, tally=tally,
                         scores_stream=scores)
        card = card_markdown(study, fmt=fmt, header=ctx.header(), tally=tally, yaml_header=False)
        Path(str(out) + ".card.md").write_text(card, encoding="utf-8")
        if fmt == "csv":
            os.replace(scores_tmp, scores_path(out))
        os.replace(tmp, out)
        return out
    if fmt != "hf":
        raise ValueError(f"unknown export format {fmt!r}")
    workdir = Path(tempfile.mkdtemp(prefix="concord-hf-", dir=out.parent))
    try:
        (workdir / "data").mkdir()
        with open(workdir / "data" / "train.jsonl", "wb") as stream:
            write_stream(study, "hf", stream, progress=progress, chunk=chunk, total=total, ctx=ctx, tally=tally)
        header = ctx.header()
        (workdir / "README.md").write_text(
            card_markdown(study, fmt="hf", header=header, tally=tally, yaml_header=True), encoding="utf-8"
        )
        (workdir / "concord_export.json").write_text(_dumps(header), encoding="utf-8")
        if out.suffix == ".zip":
            tmp = out.with_name(out.name + ".part")
            with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(workdir.rglob("*")):
                    if path.is_file():
                        archive.write(path, path.relative_to(workdir).as_posix())
            os.replace(tmp, out)
        else:
            if out.exists():
                shutil.rmtree(out)
            workdir.rename(out)
    finally:
        if workdir.exists():
            shutil.rmtree(workdir)
    return out
