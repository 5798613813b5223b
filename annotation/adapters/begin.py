"""BEGIN, CMU-DoG dev split (annotations CC BY 4.0; CMU-DoG text © Carnegie Mellon University, see
NOTICE.txt) → generic import records.

One item per TSV row: the dialogue ``message`` as the question, the ``response`` as the answer, the
``knowledge`` passage as the one context chunk and ``model_name`` as the system. ``begin_label``
(with the trailing ``\\r`` of the file's CRLF lines stripped) becomes the label of one pseudonymous
annotator on the item question ``attribution``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ANNOTATOR_POOL = "BEGIN annotators"
ANNOTATOR = "begin-annotator"
# Two responses open their conversation (the message is empty); items need a question, so they get
# this marked stand-in and ``metadata.empty_message``.
NO_MESSAGE = "(no message: the response opens the conversation)"
LABELS = {"Fully attributable": "fully", "Not fully attributable": "not_fully", "Generic": "generic"}
ATTRIBUTION = (
    "BEGIN benchmark (Dziri et al., 2022), CMU-DoG dev portion, https://github.com/google/BEGIN-dataset at commit "
    "6e65f0d5a1ed1b9574643a7640ff1678d4e979b5. Annotations under CC BY 4.0. Modified: rows converted into "
    "Concord items (message → question, response → answer, knowledge → context, label → attribution)."
)


def licence_text(path: Path) -> str:
    folder = Path(path).parent
    parts = [ATTRIBUTION]
    for name in ("NOTICE.txt", "LICENSE.txt"):
        file = folder / name
        if not file.exists():
            raise FileNotFoundError(f"{file} is missing: the BEGIN data must travel with its licence and notice")
        parts.append(file.read_text(encoding="utf-8"))
    return "\n\n".join(parts)


def records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        for row_number, row in enumerate(reader, start=2):
            label = row["begin_label"].strip()
            message = row["message"].strip()
            yield (
                row_number,
                {
                    "id": f"begin-cmu-{row_number - 1:03d}",
                    "question": message or NO_MESSAGE,
                    "answer": row["response"].strip(),
                    "contexts": [{"id": "knowledge", "text": row["knowledge"].strip(), "is_target": True}],
                    "system": row["model_name"].strip(),
                    "metadata": {
                        "dataset": "BEGIN",
                        "data_source": row["data_source"].strip(),
                        "empty_message": not message,
                    },
                    "labels": [
                        {"annotator": ANNOTATOR, "question": "attribution", "unit": "item", "value": LABELS[label]}
                    ],
                },
            )
