"""K-QA (Manes et al., arXiv:2401.14493; MIT licence) → generic import records.

``questions_w_answers.jsonl``: one item per question, the physician's free-form answer as the
answer, ``Must_have`` / ``Nice_to_have`` statements as aspects (stripped of surrounding spaces; the
three blank statements of the file are not aspects and are counted in ``metadata.blank_statements``).

``NLI_medical_annotator.csv``: one item per distinct (question, system, answer); each row's
statement becomes an aspect of that item (importance from ``category_x``), and the three physicians'
Entailment / Neutral / Contradiction labels become the labels of three pseudonymous annotators
(``physician-1`` … ``physician-3`` for ``label_0`` … ``label_2``) on the question ``aspect_entailment``.
The file does not say whether ``label_k`` is the same physician on every row (MANIFEST caveat); the
pseudonyms follow the columns. When ``questions_w_answers.jsonl`` lies next to the CSV, the
physician's reference answer to the same question is attached as the item's one context chunk
(document id ``kqa-physician-answer``), so that sentence-level grounding can be judged against it.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotation import units

PHYSICIAN_POOL = "K-QA physicians"
NLI_LABELS = {"Entailment": "entailment", "Neutral": "neutral", "Contradiction": "contradiction"}
IMPORTANCE = {"Must_have": "must_have", "Nice_to_have": "nice_to_have"}
ANSWERS_FILE = "questions_w_answers.jsonl"
ATTRIBUTION = (
    "K-QA: A Real-World Medical Q&A Benchmark (Manes et al., 2024, arXiv:2401.14493), "
    "https://github.com/Itaymanes/K-QA at commit ef403d012e199fcfa0d8c02b38a96ff95164f4d0."
)


def licence_text(path: Path) -> str:
    licence = Path(path).parent / "LICENSE.txt"
    text = licence.read_text(encoding="utf-8") if licence.exists() else ""
    if not text:
        raise FileNotFoundError(f"{licence} is missing: the K-QA data must travel with its MIT licence")
    return f"{ATTRIBUTION}\n\n{text}"


def _question_id(index: int) -> str:
    return f"kqa-{index:03d}"


def question_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            statements = [(s, "must_have") for s in row["Must_have"]]
            statements += [(s, "nice_to_have") for s in row["Nice_to_have"]]
            # Three statements in the file are blank ("" or " "); they are counted, not imported.
            aspects = [{"text": s.strip(), "importance": imp} for s, imp in statements if s.strip()]
            blank = {imp: sum(1 for s, i in statements if i == imp and not s.strip()) for imp in IMPORTANCE.values()}
            yield lineno, {
                "id": _question_id(lineno),
                "question": row["Question"].strip(),
                "answer": row["Free_form_answer"],
                "aspects": aspects,
                "system": "physician",
                "metadata": {
                    "dataset": "K-QA", "icd_10_diag": row["ICD_10_diag"], "sources": row["Sources"],
                    "blank_statements": {k: v for k, v in blank.items() if v},
                },
            }


def _physician_answers(path: Path) -> dict[str, str]:
    answers_path = Path(path).parent / ANSWERS_FILE
    if not answers_path.exists():
        return {}
    with open(answers_path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return {row["Question"].strip(): row["Free_form_answer"] for row in rows}


def nli_item_id(question: str, system: str, answer: str) -> str:
    digest = hashlib.sha256(f"{question}\x1f{system}\x1f{answer}".encode()).hexdigest()[:12]
    return f"kqa-nli-{system}-{digest}"


def nli_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """One record per distinct (question, system, answer), numbered by the CSV row of its first statement."""
    references = _physician_answers(path)
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        for row_number, row in enumerate(reader, start=2):
            key = (row["Question"], row["llm_x"], row["answer"])
            group = groups.get(key)
            if group is None:
                group = groups[key] = {"row": row_number, "aspects": [], "labels": [], "row_ids": []}
            index = len(group["aspects"])
            group["aspects"].append({"text": row["claim"], "importance": IMPORTANCE[row["category_x"]]})
            group["row_ids"].append(int(row[""]))
            for k in range(3):
                group["labels"].append({
                    "annotator": f"physician-{k + 1}", "question": "aspect_entailment", "unit": units.aspect(index),
                    "value": NLI_LABELS[row[f"label_{k}"]],
                })
    for (question, system, answer), group in groups.items():
        record: dict[str, Any] = {
            "id": nli_item_id(question, system, answer),
            "question": question.strip(),
            "answer": answer,
            "system": system,
            "aspects": group["aspects"],
            "labels": group["labels"],
            "metadata": {"dataset": "K-QA", "nli_rows": group["row_ids"]},
        }
        reference = references.get(question.strip())
        if reference is not None:
            record["contexts"] = [{"id": "kqa-physician-answer", "text": reference, "is_target": True}]
        yield group["row"], record
