"""The import service's entry points: a file or a record source → a study's items, all or nothing.

``records_import`` reads its source twice: ``validation.scan`` checks every record and collects every
error; only a clean source gets ``writer.write``, in one transaction. ``items_import`` does the same
for an uploaded or opened JSONL / CSV file (optionally gzip-compressed).
"""

from __future__ import annotations

from collections.abc import Callable
from time import monotonic
from typing import IO, Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Max

from annotation.imports import validation, writer
from annotation.imports.deadline import Deadline
from annotation.imports.preview import records_preview
from annotation.imports.readers import file_source
from annotation.imports.schema import DEFAULT_POOL, ExtraWriter, ImportRejected, ImportResult, RecordSource
from annotation.models import Assignment, Pool, Study
from concord.errors import Conflict


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
    clock: Callable[[], float] | None = None,
) -> ImportResult:
    """Import the records of a re-startable ``source`` (called once to validate, once to write).

    Raises ImportRejected listing every error when any record is bad; nothing is written then. Refused
    (PayloadTooLarge, nothing written) once it has run longer than ``IMPORT_MAX_SECONDS`` by ``clock``
    (a monotonic clock in seconds; ``time.monotonic`` unless a test drives its own).
    """
    pool_name = (pool_name or DEFAULT_POOL).strip() or DEFAULT_POOL
    deadline = Deadline(seconds=settings.IMPORT_MAX_SECONDS, clock=clock or monotonic, filename=filename)
    # A real import flags long answers in the write pass, which splits every answer anyway.
    scan = validation.scan(study, source, where, accept_extra=extra_writer is not None, flag_long=dry_run,
                           pool_name=pool_name, deadline=deadline)
    if scan.n_errors:
        raise ImportRejected(scan.errors, total=scan.n_errors, filename=filename)
    result = ImportResult(filename=filename, dry_run=dry_run, adapter=adapter, n_items=scan.n_records,
                          n_chunks=scan.n_chunks, n_aspects=scan.n_aspects, n_labels=scan.n_labels,
                          n_annotators=len(scan.pseudonyms), pool_name=pool_name if scan.pseudonyms else "",
                          long_answers=scan.long_answers, n_long_answers=scan.n_long_answers,
                          long_limits={"chars": settings.IMPORT_LONG_ANSWER_CHARS,
                                       "sentences": settings.IMPORT_LONG_ANSWER_SENTENCES})
    if dry_run:
        result.preview = records_preview(study, scan.preview)
        return result
    validator = validation.Validator(study, where=where, accept_extra=extra_writer is not None)
    try:
        with transaction.atomic():
            new_pool = bool(scan.pseudonyms) and not Pool.objects.filter(study=study, name=pool_name).exists()
            written = writer.write(
                study=study, source=source, validator=validator, result=result, filename=filename, actor=actor,
                adapter=adapter, pool_name=pool_name, scan=scan, extra_writer=extra_writer, deadline=deadline,
            )
            if new_pool:
                _imported_pool_overlap(study, pool_name)
            return written
    except IntegrityError as exc:
        # The check pass found none of these ids; another import wrote some of them since.
        raise Conflict(
            f"{filename}: another import into study {study.slug!r} added some of these items meanwhile; "
            "nothing was imported (run it again to see which ids exist now)"
        ) from exc


def _imported_pool_overlap(study: Study, pool_name: str) -> None:
    """A pool that an import of labels created gets k = the most annotators any of its items has:
    three physicians who rated every unit make a pool of k = 3, not k = 1 with items "done 3/1".
    A pool that existed before keeps the k its researcher chose."""
    pool = Pool.objects.filter(study=study, name=pool_name).first()
    if pool is None:
        return
    most = (
        Assignment.objects.filter(pool=pool).values("item_id").annotate(n=Count("annotator_id", distinct=True))
        .aggregate(most=Max("n"))["most"]
    )
    if most and most != pool.overlap:
        Pool.objects.filter(pk=pool.pk).update(overlap=most)


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
    clock: Callable[[], float] | None = None,
) -> ImportResult:
    """Import a JSONL or CSV file (optionally gzip-compressed) into ``study``; all or nothing.

    ``file`` is a seekable binary file (an upload, or ``open(path, "rb")``). Raises PayloadTooLarge
    before parsing when it is over ``settings.IMPORT_MAX_BYTES``, while reading it when it has more than
    ``IMPORT_MAX_LINES`` lines or the import runs longer than ``IMPORT_MAX_SECONDS`` (by ``clock``), and
    ImportRejected with the full error list when any record is bad.
    """
    source, fmt = file_source(file, filename=filename, fmt=fmt)
    return records_import(
        study=study, source=source, filename=filename, actor=actor, where="line" if fmt == "jsonl" else "row",
        dry_run=dry_run, pool_name=pool_name, extra_writer=extra_writer, clock=clock,
    )
