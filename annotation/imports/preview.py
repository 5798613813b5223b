"""The dry run's preview: the first records of a file as an annotator of the study will see them.

The records are not in the database yet, so the preview is plain data (kept in the import job's
summary) built with the workspace's own rules: the answer split into numbered sentences exactly as the
import will split it, the retrieved passages by rank, the expected aspects with their importance, the
system only when the study does not blind it, document ids never under ``blind_system``, and only the
metadata ``annotation.workspace.blinded_metadata`` lets through.
"""

from __future__ import annotations

from typing import Any

from annotation.imports.validation import Record
from annotation.models import Importance, Study
from annotation.segmentation_fast import split_sentences
from annotation.workspace import blinded_metadata

_IMPORTANCE = dict(Importance.choices)


def record_preview(study: Study, record: Record) -> dict[str, Any]:
    return {
        "id": record.external_id,
        "question": record.question,
        "sentences": [span.text for span in split_sentences(record.answer)],
        "source_sentences": [span.text for span in split_sentences(record.source)] if record.source else [],
        "system": "" if study.blind_system else record.system,
        "system_hidden": bool(study.blind_system and record.system),
        "metadata": blinded_metadata(study, record.metadata),
        "contexts": [
            {"rank": rank, "text": text, "document_id": "" if study.blind_system else doc_id}
            for rank, (doc_id, text, _target) in enumerate(record.contexts, start=1)
        ],
        "aspects": [{"text": text, "importance": _IMPORTANCE.get(imp, imp)} for text, imp in record.aspects],
        "n_labels": len(record.labels),
    }


def records_preview(study: Study, records: list[Record]) -> list[dict[str, Any]]:
    return [record_preview(study, r) for r in records]
