"""The import service's entry points: a file or a record source → a study's items, all or nothing.

``records_import`` reads its source twice: ``validation.scan`` checks every record and collects every
error; only a clean source gets ``writer.write``, in one transaction. ``items_import`` does the same
for an uploaded or opened JSONL / CSV file (optionally gzip-compressed).
"""

from __future__ import annotations

from typing import IO, Any

from django.db import IntegrityError, transaction

from annotation.imports import validation, writer
from annotation.imports.readers import file_source
from annotation.imports.schema import DEFAULT_POOL, ExtraWriter, ImportRejected, ImportResult, RecordSource
from annotation.models import Study
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
) -> ImportResult:
    """Import the records of a re-startable ``source`` (called once to validate, once to write).

    Raises ImportRejected listing every error when any record is bad; nothing is written then.
    """
    pool_name = (pool_name or DEFAULT_POOL).strip() or DEFAULT_POOL
    scan = validation.scan(study, source, where, accept_extra=extra_writer is not None)
    if scan.n_errors:
        raise ImportRejected(scan.errors, total=scan.n_errors, filename=filename)
    result = ImportResult(filename=filename, dry_run=dry_run, adapter=adapter, n_items=scan.n_records,
                          n_chunks=scan.n_chunks, n_aspects=scan.n_aspects, n_labels=scan.n_labels,
                          n_annotators=len(scan.pseudonyms), pool_name=pool_name if scan.pseudonyms else "")
    if dry_run:
        return result
    validator = validation.Validator(study, where=where, accept_extra=extra_writer is not None)
    try:
        with transaction.atomic():
            return writer.write(
                study=study, source=source, validator=validator, result=result, filename=filename, actor=actor,
                adapter=adapter, pool_name=pool_name, scan=scan, extra_writer=extra_writer,
            )
    except IntegrityError as exc:
        # The check pass found none of these ids; another import wrote some of them since.
        raise Conflict(
            f"{filename}: another import into study {study.slug!r} added some of these items meanwhile; "
            "nothing was imported (run it again to see which ids exist now)"
        ) from exc


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
