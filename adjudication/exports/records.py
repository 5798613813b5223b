"""The records of an export: the study-level context (pools, questions, pseudonyms, score runs and the
header line) and one record per item.

Memory stays flat as studies grow: items are read in keyset-paginated chunks (``CHUNK`` items by primary
key), every related table is fetched once per chunk (raw SQL, no model instances), and each
record is yielded as soon as it is built. The record layout is described in :mod:`adjudication.exports`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC
from typing import Any

import orjson
from django.contrib.auth import get_user_model
from django.db import connection, reset_queries
from django.utils import timezone

from adjudication.exports.filters import ExportFilters
from adjudication.models import AdjudicationCase, GoldLabel
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
from scoring.models import Score, ScoreRun

CHUNK = 1000
FORMAT_VERSION = 1


class ExportContext:
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
    if isinstance(value, str):  # PostgreSQL: already ISO 8601 UTC text, formatted by _ts
        return value
    if value.tzinfo is None:  # SQLite: a naive datetime (Django's converter parses the stored text), in UTC
        value = value.replace(tzinfo=UTC)
    return value.isoformat()


def _json(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


def iter_records(study: Study, *, chunk: int = CHUNK, ctx: ExportContext | None = None) -> Iterator[dict[str, Any]]:
    """Yield one export record per item, in primary-key order, reading ``chunk`` items at a time.

    Per chunk, one query per related table (raw SQL: at a hundred thousand items the ORM's per-row
    conversions cost more than the database), and the lists in a record are sorted by stable keys
    (pool, pseudonym, question, unit) so that two exports of equal studies are equal line by line.
    """
    ctx = ctx or ExportContext(study)
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

            def order(key: str, unit: Any = unit) -> tuple[int, str]:
                """The unit as exported, length then text ("a:999" before "a:1000"): the order does not depend
                on the database's ids (an aspect of the item is exported as its position)."""
                exported = unit(key)
                return len(exported), exported

            case_status = {c[1]: c[5] for c in cases.get(pk, ())}
            # Lists in a stable order (pool name, pseudonym, question, unit), so two exports of equal
            # studies are equal line by line, whichever ids their databases gave the aspects.
            item_labels = []
            for a, q, u, value, version in sorted(
                labels.get(pk, ()), key=lambda r: (member_rank.get(who[r[0]], -1), qrank[r[1]], order(r[2]))
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
                ) in sorted(gold.get(pk, ()), key=lambda r: (pool_rank[r[1]], qrank[r[2]], order(r[3]), r[5]))
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
                    cases.get(pk, ()), key=lambda r: (pool_rank[r[2]], qrank[r[3]], order(r[4]))
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

