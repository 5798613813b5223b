"""Adapters turn the files of the bundled datasets into records of the generic import schema
(annotation.imports), numbered by their row in the source file, so that they go through the one
import service like any uploaded file.

Each adapter names the protocol presets its labels need (``presets``) and the licence text to keep
with the study (``licence``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotation.adapters import begin, kqa

NumberedRecords = Iterator[tuple[int, dict[str, Any]]]


@dataclass(frozen=True)
class Adapter:
    name: str
    description: str
    records: Callable[[Path], NumberedRecords]
    presets: tuple[str, ...]
    licence: Callable[[Path], str]
    pool_name: str | None = None


ADAPTERS: dict[str, Adapter] = {
    "kqa-questions": Adapter(
        name="kqa-questions",
        description=(
            "K-QA questions_w_answers.jsonl: 201 questions, physician answers, must-have / nice-to-have aspects"
        ),
        records=kqa.question_records,
        presets=(),
        licence=kqa.licence_text,
    ),
    "kqa-nli": Adapter(
        name="kqa-nli",
        description=(
            "K-QA NLI_medical_annotator.csv: LLM answers, labelled statements as aspects, three physicians' labels"
        ),
        records=kqa.nli_records,
        presets=("kqa",),
        licence=kqa.licence_text,
        pool_name=kqa.PHYSICIAN_POOL,
    ),
    "begin": Adapter(
        name="begin",
        description="BEGIN CMU-DoG begin_dev_cmu.tsv: responses with their knowledge, one attribution label each",
        records=begin.records,
        presets=("begin",),
        licence=begin.licence_text,
        pool_name=begin.ANNOTATOR_POOL,
    ),
}
