"""Importing items into a study: JSONL / CSV files (optionally gzip-compressed) and dataset adapters.

One import service for the upload page, the REST endpoint, the console's checked uploads, the
``import_items`` command and the study round trip. All or nothing: a source is read twice, first to
validate every record (collecting every error with its line or row and field), then, only when clean,
to write everything in one transaction.

Modules:

* ``schema``: the record schema (documented there), ``RowError``, ``ImportRejected``, ``ImportResult``.
* ``readers``: a reader per format (JSONL, CSV), gzip decompression under the size limit, lines cut in
  blocks with blank ones passed over in C and counted against the line limit, ``file_source``.
* ``deadline``: the wall-clock budget of one import, asked before each record of either pass.
* ``validation``: one record checked against the schema and the study's questions; the scan pass; the
  labels' pseudonyms compared with each other and with the study's people (``annotation.pseudonyms``).
* ``writer``: the write pass, in batches, inside one transaction.
* ``service``: ``records_import`` and ``items_import``, the entry points re-exported here.
* ``jobs``: the console's import jobs (upload, dry run, confirm, import) run by a worker.
* ``views`` / ``urls``, ``api`` / ``api_urls``: the plain upload page and the REST endpoint.
"""

from annotation.imports.readers import file_source, records_from
from annotation.imports.schema import (
    DEFAULT_POOL,
    FIELDS,
    MAX_ERRORS,
    REQUIRED,
    ExtraWriter,
    ImportRejected,
    ImportResult,
    Located,
    RecordSource,
    RowError,
)
from annotation.imports.service import items_import, records_import
from annotation.imports.writer import BATCH_SIZE

__all__ = [
    "BATCH_SIZE",
    "DEFAULT_POOL",
    "FIELDS",
    "MAX_ERRORS",
    "REQUIRED",
    "ExtraWriter",
    "ImportRejected",
    "ImportResult",
    "Located",
    "RecordSource",
    "RowError",
    "file_source",
    "items_import",
    "records_from",
    "records_import",
]
