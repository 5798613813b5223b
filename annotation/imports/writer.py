"""The writer: the second pass of an import, all or nothing.

It runs only over a source the scan found clean, inside the caller's transaction, so that a failure
anywhere (a record that changed since the scan, an id another import wrote meanwhile) leaves nothing
behind. Records are written in batches of ``BATCH_SIZE``: items, sentences and chunks as plain rows,
aspects, assignments and labels through the ORM. On PostgreSQL the plain rows go by COPY from a second
thread on the same connection and transaction (``_CopyPipeline``): while the database stores one batch,
this thread reads, checks and splits the next, so the two processors of a small machine both work. The
item foreign keys of those rows are checked as each row arrives (``SET CONSTRAINTS … IMMEDIATE``), not
all at commit, so that the database checks them while the next batch is prepared. Imported annotators get an
import-only identity (``ImportIdentity``: an inactive account, an inactive member of the import's pool
under their pseudonym); their assignments arrive submitted. The importer is the actor of every label.
"""

from __future__ import annotations

import queue
import secrets
import threading
from collections.abc import Iterable
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, models
from django.utils import timezone
from django.utils.text import slugify

from annotation import units
from annotation.imports.deadline import Deadline
from annotation.imports.schema import ExtraWriter, ImportRejected, ImportResult, RecordSource, RowError
from annotation.imports.validation import LabelIn, LongAnswers, Pseudonyms, Record, Scan, Validator, pseudonym_clashes
from annotation.models import (
    Aspect,
    Assignment,
    AssignmentStatus,
    Chunk,
    ControlItem,
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
from annotation.signals import assignment_submitted

BATCH_SIZE = 500


def _unique_username(base: str) -> str:
    User = get_user_model()
    base = base[:140]
    candidate = base
    while User.objects.filter(username=candidate).exists():
        candidate = f"{base}-{secrets.token_hex(3)}"
    return candidate


def _annotators_ensure(*, study: Study, pool: Pool, pseudonyms: Pseudonyms, actor: Any, where: str,
                       filename: str) -> dict[str, Any]:
    """Pseudonym → import-only identity for the imported annotators (``ImportIdentity``).

    An identity already made for this pool's pseudonym by an earlier import is reused (the same spelling).
    A new one is an inactive account that cannot log in, a member of the pool under that pseudonym. Refused
    (nothing is written) when a pseudonym looks like a live annotator's in this study — in this pool or
    another — or like another spelling of this pool's imported annotators (``validation.pseudonym_clashes``,
    which the check pass ran too: this is for what changed since), so that imported labels are never
    attributed to, or confused with, a real person's work.
    """
    User = get_user_model()
    clashes = pseudonym_clashes(study, pool.name, pseudonyms, where)
    if clashes:
        raise ImportRejected(clashes, total=len(clashes), filename=filename)
    identities = {i.pseudonym: i.user for i in ImportIdentity.objects.filter(pool=pool).select_related("user")}
    for pseudonym in sorted(p for p in pseudonyms if p not in identities):
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
    """Insert plain rows without building model instances (SQLite; PostgreSQL takes ``_CopyPipeline``)."""
    rows = list(rows)
    if not rows:
        return
    qn = connection.ops.quote_name
    columns = ", ".join(qn(model._meta.get_field(name).column) for name in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {qn(model._meta.db_table)} ({columns}) VALUES ({placeholders})", rows  # noqa: S608
        )


def _copy_statement(model: type[models.Model], fields: tuple[str, ...]) -> str:
    qn = connection.ops.quote_name
    columns = ", ".join(qn(model._meta.get_field(name).column) for name in fields)
    return f"COPY {qn(model._meta.db_table)} ({columns}) FROM STDIN"


_ITEM_FIELDS = ("id", "study", "external_id", "question", "answer", "source", "scope_class", "system", "metadata",
                "created_at")
_SENTENCE_FIELDS = ("item", "part", "index", "text", "start", "end")
_CHUNK_FIELDS = ("item", "rank", "text", "document_id", "is_labelled_target")


def _copy_text(value: str) -> str:
    """A value as a field of COPY's text format: backslash, tab, new line and carriage return escaped."""
    if "\\" in value:
        value = value.replace("\\", "\\\\")
    if "\t" in value:
        value = value.replace("\t", "\\t")
    if "\n" in value:
        value = value.replace("\n", "\\n")
    if "\r" in value:
        value = value.replace("\r", "\\r")
    return value


def _copy_block(rows: list[str]) -> bytes:
    return ("\n".join(rows) + "\n").encode() if rows else b""


def _ids_draw(n: int) -> list[int]:
    """``n`` item ids from the table's own sequence, so that COPY can write the rows with them."""
    if not n:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [Item._meta.db_table, n]
        )
        return [row[0] for row in cursor.fetchall()]


# The foreign keys that COPY'd rows point along: checked as each row arrives during the write (they are
# deferred to commit otherwise, where nothing else would run beside them).
_IMMEDIATE_TABLES = (Item, Sentence, Chunk)


def _constraints_set(names: list[str], mode: str) -> None:
    if names:
        with connection.cursor() as cursor:
            cursor.execute(f"SET CONSTRAINTS {', '.join(names)} {mode}")


def _deferred_foreign_keys() -> list[str]:
    tables = [model._meta.db_table for model in _IMMEDIATE_TABLES]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.conname) FROM pg_constraint c "
            "JOIN pg_namespace n ON n.oid = c.connamespace "
            "WHERE c.contype = 'f' AND c.condeferred AND c.conrelid = ANY(%s::regclass[]) ORDER BY 1",
            [tables],
        )
        return [row[0] for row in cursor.fetchall()]


class _CopyJob:
    __slots__ = ("chunks", "items", "next_size", "sentences")

    def __init__(self, items: bytes, sentences: bytes, chunks: bytes, next_size: int) -> None:
        self.items, self.sentences, self.chunks, self.next_size = items, sentences, chunks, next_size


class _CopyPipeline:
    """A thread that COPYs each batch's item, sentence and chunk rows on the caller's connection, inside
    its transaction, while the caller prepares the next batch; PostgreSQL only.

    One job is stored at a time and at most one more waits, so memory stays at a few batches. Before it
    stores a batch the thread draws the ids of the next one, which the caller needs to write that one's
    rows. The caller uses the connection for the ORM only after ``drain``; should anything else (a record
    source, say) query meanwhile, psycopg's connection lock makes it wait for the COPY in progress. The
    first error in the thread stops it; the caller gets it at its next call, and the transaction is
    undone around it.
    """

    def __init__(self, first_ids: list[int]) -> None:
        connection.ensure_connection()
        self.raw = connection.connection
        self.statements = (_copy_statement(Item, _ITEM_FIELDS), _copy_statement(Sentence, _SENTENCE_FIELDS),
                           _copy_statement(Chunk, _CHUNK_FIELDS))
        self.jobs: queue.Queue[_CopyJob | None] = queue.Queue(maxsize=1)
        self.ids: queue.Queue[list[int]] = queue.Queue()
        self.ids.put(first_ids)
        self.idle = threading.Condition()
        self.pending = 0
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="import-copy", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            try:
                if self.error is None:
                    self._store(job)
            except BaseException as exc:  # handed to the caller, who re-raises it
                self.error = exc
                self.ids.put([])  # wake a caller waiting for ids
            finally:
                with self.idle:
                    self.pending -= 1
                    self.idle.notify_all()

    def _store(self, job: _CopyJob) -> None:
        with self.raw.cursor() as cursor:
            if job.next_size:
                cursor.execute(
                    "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
                    [Item._meta.db_table, job.next_size],
                )
                self.ids.put([row[0] for row in cursor.fetchall()])
            for statement, data in zip(self.statements, (job.items, job.sentences, job.chunks), strict=True):
                if data:
                    with cursor.copy(statement) as copy:
                        copy.write(data)

    def _check(self) -> None:
        if self.error is not None:
            with connection.wrap_database_errors:  # the same exceptions as the ORM's (IntegrityError)
                raise self.error

    def next_ids(self) -> list[int]:
        ids = self.ids.get()
        self._check()
        return ids

    def submit(self, job: _CopyJob) -> None:
        self._check()
        with self.idle:
            self.pending += 1
        self.jobs.put(job)

    def drain(self) -> None:
        """Waits until every submitted batch is stored; then the caller may use the connection."""
        with self.idle:
            while self.pending:
                self.idle.wait()
        self._check()

    def close(self) -> None:
        """Stops the thread after what it is doing (the caller's error, if any, propagates afterwards)."""
        if self.thread.is_alive():
            self.jobs.put(None)
            self.thread.join()


class Writer:
    def __init__(self, *, study: Study, pool_name: str, pseudonyms: Pseudonyms, extra_writer: ExtraWriter | None,
                 where: str, filename: str, actor: Any = None, long_answers: LongAnswers | None = None) -> None:
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
            self.members = _annotators_ensure(study=study, pool=self.pool, pseudonyms=pseudonyms, actor=actor,
                                              where=where, filename=filename)
        self.now = timezone.now()
        self.pipeline: _CopyPipeline | None = None

    def _spans(self, r: Record, number: int) -> tuple[list[Any], list[Any]]:
        """The answer's and the source's sentences; flags the answer when it is long."""
        spans = split_sentences(r.answer)
        if self.long_answers is not None:
            self.long_answers.check(number, r.external_id, r.answer, n_sentences=len(spans))
        return spans, (split_sentences(r.source) if r.source else [])

    def write(self, batch: list[Record], numbers: list[int], next_size: int = 0) -> None:
        """Writes a batch of records; ``numbers`` are their lines or rows (for the long-answer flags).
        On PostgreSQL ``next_size`` is the size of the batch that follows (its ids are drawn meanwhile)."""
        if self.pipeline is not None:
            item_ids = self._rows_copy(batch, numbers, next_size)
        else:
            item_ids = self._rows_insert(batch, numbers)
        self.result_counts["items"] += len(item_ids)
        self.result_counts["chunks"] += sum(len(r.contexts) for r in batch)
        controls = [
            ControlItem(item_id=item_id, created_by=self.actor, **r.control)
            for item_id, r in zip(item_ids, batch, strict=True)
            if r.control is not None
        ]
        if controls:
            if self.pipeline is not None:
                self.pipeline.drain()  # the items must be stored before rows that point at them
            ControlItem.objects.bulk_create(controls)
        if not (self.pool is not None or self.extra_writer is not None or any(r.aspects for r in batch)):
            return
        if self.pipeline is not None:
            self.pipeline.drain()  # the ORM below needs the connection, and these items stored
        aspects: list[Aspect] = []
        aspect_slices: list[tuple[int, int]] = []
        for item_id, r in zip(item_ids, batch, strict=True):
            aspect_slices.append((len(aspects), len(aspects) + len(r.aspects)))
            aspects.extend(Aspect(item_id=item_id, text=text, importance=importance) for text, importance in r.aspects)
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
            for item_id in labelled:
                assignment_submitted.send(sender=Assignment, pool_id=self.pool.pk, item_id=item_id)
        self.result_counts["aspects"] += len(aspects)

    def _rows_insert(self, batch: list[Record], numbers: list[int]) -> list[int]:
        """SQLite: items through the ORM (for their keys), sentences and chunks as plain rows."""
        items = Item.objects.bulk_create(
            Item(study=self.study, external_id=r.external_id, question=r.question, answer=r.answer, source=r.source,
                 scope_class=r.scope, system=r.system, metadata=r.metadata)
            for r in batch
        )
        item_ids = [item.pk for item in items]
        sentence_rows: list[tuple[Any, ...]] = []
        chunk_rows: list[tuple[Any, ...]] = []
        for item_id, r, number in zip(item_ids, batch, numbers, strict=True):
            answer_spans, source_spans = self._spans(r, number)
            for part, spans in (("answer", answer_spans), ("source", source_spans)):
                sentence_rows.extend((item_id, part, i, s.text, s.start, s.end) for i, s in enumerate(spans))
            chunk_rows.extend(
                (item_id, rank, text, doc_id, target) for rank, (doc_id, text, target) in enumerate(r.contexts, start=1)
            )
        _rows_insert(Sentence, _SENTENCE_FIELDS, sentence_rows)
        _rows_insert(Chunk, _CHUNK_FIELDS, chunk_rows)
        self.result_counts["sentences"] += len(sentence_rows)
        return item_ids

    def _rows_copy(self, batch: list[Record], numbers: list[int], next_size: int) -> list[int]:
        """PostgreSQL: the batch's rows in COPY's text format, handed to the pipeline; returns the item ids."""
        assert self.pipeline is not None
        item_ids = self.pipeline.next_ids()
        if len(item_ids) != len(batch):
            raise RuntimeError(f"{len(item_ids)} ids drawn for a batch of {len(batch)} records")
        study = str(self.study.pk)
        now = self.now.isoformat()
        items: list[str] = []
        sentences: list[str] = []
        chunks: list[str] = []
        n_sentences = 0
        for item_id, r, number in zip(item_ids, batch, numbers, strict=True):
            items.append("\t".join((
                str(item_id), study, _copy_text(r.external_id), _copy_text(r.question), _copy_text(r.answer),
                _copy_text(r.source), r.scope, _copy_text(r.system), _copy_text(r.metadata_json), now,
            )))
            answer_spans, source_spans = self._spans(r, number)
            for part, spans in (("answer", answer_spans), ("source", source_spans)):
                for i, span in enumerate(spans):
                    sentences.append(f"{item_id}\t{part}\t{i}\t{_copy_text(span.text)}\t{span.start}\t{span.end}")
                n_sentences += len(spans)
            for rank, (doc_id, text, target) in enumerate(r.contexts, start=1):
                chunks.append(f"{item_id}\t{rank}\t{_copy_text(text)}\t{_copy_text(doc_id)}\t{'t' if target else 'f'}")
        self.pipeline.submit(_CopyJob(*(_copy_block(rows) for rows in (items, sentences, chunks)), next_size=next_size))
        self.result_counts["sentences"] += n_sentences
        return item_ids

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
          actor: Any, adapter: str, pool_name: str, scan: Scan, extra_writer: ExtraWriter | None,
          deadline: Deadline) -> ImportResult:
    """The write pass over a source that ``scan`` found clean; runs inside the caller's transaction.

    Raises ImportRejected when a record has become invalid since the scan (the source changed), and
    PayloadTooLarge when ``deadline`` passes (asked before each record); the caller's transaction undoes
    what was written then.
    """
    # The scan of a real import leaves the long answers to this pass, which splits every answer anyway.
    long_answers = LongAnswers(validator.where)
    writer = Writer(study=study, pool_name=pool_name, pseudonyms=scan.pseudonyms, extra_writer=extra_writer,
                    actor=actor, long_answers=long_answers, where=validator.where, filename=filename)
    n_records = scan.n_records

    def changed(errors: list[RowError]) -> ImportRejected:
        # The source changed between the passes; the transaction undoes what was written.
        return ImportRejected(errors, total=len(errors), filename=filename)

    def size_after(n_done: int) -> int:
        return min(BATCH_SIZE, max(n_records - n_done, 0))

    immediate: list[str] = []
    if connection.vendor == "postgresql":
        immediate = _deferred_foreign_keys()
        _constraints_set(immediate, "IMMEDIATE")
        writer.pipeline = _CopyPipeline(_ids_draw(size_after(0)))
    try:
        batch: list[Record] = []
        numbers: list[int] = []
        n_read = 0
        for number, rec in source():
            deadline.check(validator.where, number)
            record, errors = (None, [rec]) if isinstance(rec, RowError) else validator.validate(number, rec)
            if record is None:
                raise changed(errors)
            n_read += 1
            if n_read > n_records:
                raise changed([RowError(validator.where, number, "", "not in the file when it was checked")])
            batch.append(record)
            numbers.append(number)
            if len(batch) >= BATCH_SIZE:
                writer.write(batch, numbers, next_size=size_after(n_read))
                batch, numbers = [], []
        if n_read < n_records:
            raise changed([RowError("file", None, "file", f"{n_records - n_read} records fewer than when checked")])
        if batch:
            writer.write(batch, numbers)
        if writer.pipeline is not None:
            writer.pipeline.drain()
    finally:
        if writer.pipeline is not None:
            writer.pipeline.close()
    _constraints_set(immediate, "DEFERRED")
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
