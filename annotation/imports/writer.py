"""The writer: the second pass of an import, all or nothing.

It runs only over a source the scan found clean, inside the caller's transaction, so that a failure
anywhere (a record that changed since the scan, an id another import wrote meanwhile) leaves nothing
behind. Records are written in batches of ``BATCH_SIZE``: items, sentences and chunks as plain rows
(COPY on PostgreSQL), aspects, assignments and labels through the ORM. Imported annotators get an
import-only identity (``ImportIdentity``: an inactive account, an inactive member of the import's pool
under their pseudonym); their assignments arrive submitted. The importer is the actor of every label.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Iterator
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, models
from django.utils import timezone
from django.utils.text import slugify

from annotation import units
from annotation.imports.schema import ExtraWriter, ImportRejected, ImportResult, RecordSource, RowError
from annotation.imports.validation import LabelIn, LongAnswers, Record, Scan, Validator
from annotation.models import (
    Aspect,
    Assignment,
    AssignmentStatus,
    Chunk,
    ImportBatch,
    ImportIdentity,
    Item,
    Label,
    LabelHistory,
    Pool,
    PoolMembership,
    Role,
    Sentence,
    Study,
    StudyRole,
)
from annotation.segmentation_fast import split_sentences
from annotation.services import submitted_handlers

BATCH_SIZE = 500


def _unique_username(base: str) -> str:
    User = get_user_model()
    base = base[:140]
    candidate = base
    while User.objects.filter(username=candidate).exists():
        candidate = f"{base}-{secrets.token_hex(3)}"
    return candidate


def _annotators_ensure(*, study: Study, pool: Pool, pseudonyms: set[str], actor: Any) -> dict[str, Any]:
    """Pseudonym → import-only identity for the imported annotators (``ImportIdentity``).

    An identity already made for this pool's pseudonym by an earlier import is reused. A new one is an
    inactive account that cannot log in, a member of the pool under that pseudonym. Refused (nothing is
    written) when the pseudonym is a live annotator's in this study — in this pool or another — so that
    imported labels are never attributed to, or confused with, a real person's work.
    """
    User = get_user_model()
    identities = {i.pseudonym: i.user for i in ImportIdentity.objects.filter(pool=pool).select_related("user")}
    live = (
        PoolMembership.objects.filter(study=study, pseudonym__in=pseudonyms - set(identities))
        .exclude(user__import_identity__isnull=False)
        .select_related("pool")
        .order_by("pseudonym")
    )
    clashes = [
        RowError("file", None, "labels.annotator",
                 f"pseudonym {m.pseudonym!r} belongs to a live annotator of pool {m.pool.name!r}; imported labels "
                 "need pseudonyms of their own")
        for m in live
    ]  # fmt: skip
    if clashes:
        raise ImportRejected(clashes, total=len(clashes), filename="the import")
    for pseudonym in sorted(pseudonyms - set(identities)):
        user = User(username=_unique_username(f"imported-{study.pk}-{slugify(pool.name)}-{slugify(pseudonym)}"),
                    is_active=False)
        user.set_unusable_password()
        user.save()
        ImportIdentity.objects.create(user=user, pool=pool, pseudonym=pseudonym, created_by=actor)
        StudyRole.objects.get_or_create(study=study, user=user, role=Role.ANNOTATOR)
        PoolMembership.objects.create(pool=pool, study=study, user=user, independent=study.independent_pools,
                                      pseudonym=pseudonym)
        identities[pseudonym] = user
    return identities


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


class Writer:
    def __init__(self, *, study: Study, pool_name: str, pseudonyms: set[str], extra_writer: ExtraWriter | None,
                 actor: Any = None, long_answers: LongAnswers | None = None) -> None:
        self.study = study
        self.long_answers = long_answers
        self.actor = actor
        self.extra_writer = extra_writer
        self.result_counts = {"items": 0, "sentences": 0, "chunks": 0, "aspects": 0, "labels": 0}
        self.pool: Pool | None = None
        self.members: dict[str, Any] = {}
        self.questions_used: set[int] = set()
        if pseudonyms:
            self.pool, _ = Pool.objects.get_or_create(study=study, name=pool_name)
            self.members = _annotators_ensure(study=study, pool=self.pool, pseudonyms=pseudonyms, actor=actor)
        self.now = timezone.now()

    def write(self, batch: list[Record], numbers: list[int]) -> None:
        """Writes a batch of records; ``numbers`` are their lines or rows (for the long-answer flags)."""
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

        long_answers = self.long_answers

        def sentence_rows() -> Iterator[tuple[Any, ...]]:
            nonlocal n_sentences
            for item_id, r, number in zip(item_ids, batch, numbers, strict=True):
                spans = split_sentences(r.answer)
                if long_answers is not None:
                    long_answers.check(number, r.external_id, r.answer, n_sentences=len(spans))
                for part, part_spans in (("answer", spans), ("source", split_sentences(r.source) if r.source else ())):
                    for i, span in enumerate(part_spans):
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
            handlers = submitted_handlers()
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
                parsed = units.parse(unit)
                if parsed.kind == units.ASPECT:
                    # Aspects are addressed by position in the file and by primary key in the database.
                    unit = units.aspect(aspects[a_start + parsed.ref].pk)
                pending.append((by_annotator[label.pseudonym], label, unit))
        if not assignments:
            return []
        Assignment.objects.bulk_create(assignments, batch_size=2000)
        labels = Label.objects.bulk_create(
            (Label(assignment=assignments[a], question=label.question, unit_key=unit, value=label.value, version=1,
                   updated_by=self.actor or assignments[a].annotator, updated_at=self.now)
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


def write(*, study: Study, source: RecordSource, validator: Validator, result: ImportResult, filename: str,
           actor: Any, adapter: str, pool_name: str, scan: Scan, extra_writer: ExtraWriter | None) -> ImportResult:
    """The write pass over a source that ``scan`` found clean; runs inside the caller's transaction.

    Raises ImportRejected when a record has become invalid since the scan (the source changed).
    """
    # The scan of a real import leaves the long answers to this pass, which splits every answer anyway.
    long_answers = LongAnswers(validator.where)
    writer = Writer(study=study, pool_name=pool_name, pseudonyms=scan.pseudonyms, extra_writer=extra_writer,
                    actor=actor, long_answers=long_answers)
    batch: list[Record] = []
    numbers: list[int] = []
    for number, rec in source():
        record, errors = (None, [rec]) if isinstance(rec, RowError) else validator.validate(number, rec)
        if record is None:
            # The source changed between the passes; the transaction undoes what was written.
            raise ImportRejected(errors, total=len(errors), filename=filename)
        batch.append(record)
        numbers.append(number)
        if len(batch) >= BATCH_SIZE:
            writer.write(batch, numbers)
            batch, numbers = [], []
    if batch:
        writer.write(batch, numbers)
    result.long_answers, result.n_long_answers = long_answers.listed, long_answers.count
    counts = writer.result_counts
    batch_row = ImportBatch.objects.create(
        study=study, filename=filename[:300], adapter=adapter, n_items=counts["items"], n_labels=counts["labels"],
        by=actor if getattr(actor, "pk", None) else None,
    )
    result.n_items, result.n_sentences = counts["items"], counts["sentences"]
    result.n_chunks, result.n_aspects, result.n_labels = counts["chunks"], counts["aspects"], counts["labels"]
    result.batch_id = batch_row.pk
    return result
