"""Streaming exports of a study: JSONL, CSV (long format) and a Hugging Face ``datasets`` folder.

Memory stays flat as studies grow: items are read in keyset-paginated chunks (``CHUNK`` items by
primary key), every related table is fetched once per chunk with ``values_list`` (no model
instances), and each record is written as soon as it is built.

JSONL layout (the round trip reads it back: :mod:`.roundtrip`):

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

Modules:

* :mod:`.filters` — ``ExportFilters``: what a researcher limited an export to (gold only, pools, questions).
* :mod:`.records` — the study-level context and header, and the records, one per item, read in chunks.
* :mod:`.card` — the dataset card: counts, pools, blinding, the agreement table (tallied as records stream
  past), gold provenance, score runs, licence.
* :mod:`.writers` — JSONL, CSV (through ``concord.csv_writer``, the one CSV writer) with its scores CSV,
  and the Hugging Face folder; ``write_export`` writes a file and its card under a temporary name first.
* :mod:`.services` — export jobs: requesting one, running it in a worker (``concord.jobs.run_job``),
  recording each download.
* :mod:`.roundtrip` — importing a JSONL export into a new study, and a study's canonical form to compare
  two studies after a round trip.
"""
