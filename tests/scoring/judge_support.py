"""Small labelled data for the trained-judge tests: claims that copy their evidence (supported) and claims
about something else (unsupported), and a study whose gold says which is which."""

from __future__ import annotations

import json
from typing import Any

from adjudication.services import gold_set
from annotation.models import Study
from tests.factories import make_chunk, make_item, make_pool, make_question

FACTS = [
    ("Metformin lowers blood glucose in type 2 diabetes.", "Metformin is a first line drug for diabetes"),
    ("Statins reduce LDL cholesterol and cardiovascular risk.", "Statins are taken once daily"),
    ("Amoxicillin treats bacterial ear infections in children.", "Amoxicillin is a penicillin antibiotic"),
    ("Ibuprofen can irritate the stomach lining.", "Ibuprofen is sold over the counter"),
    ("Insulin is injected under the skin of the abdomen.", "Insulin needs refrigeration before opening"),
    ("Warfarin requires regular INR blood tests.", "Warfarin interacts with vitamin K foods"),
    ("Salbutamol inhalers relieve asthma symptoms quickly.", "Salbutamol is a short acting bronchodilator"),
    ("Paracetamol overdose can damage the liver severely.", "Paracetamol is also called acetaminophen"),
    ("Levothyroxine replaces thyroid hormone in hypothyroidism.", "Levothyroxine is taken before breakfast"),
    ("Omeprazole reduces stomach acid production.", "Omeprazole is a proton pump inhibitor"),
    ("Lisinopril lowers blood pressure by relaxing vessels.", "Lisinopril can cause a dry cough"),
    ("Sertraline treats depression and anxiety disorders.", "Sertraline takes weeks to work fully"),
    ("Prednisolone suppresses inflammation in flares.", "Prednisolone should be tapered slowly"),
    ("Furosemide removes excess fluid through the kidneys.", "Furosemide is a loop diuretic"),
]
UNRELATED = [
    "The hospital car park closes at midnight.", "Penguins live mostly in the southern hemisphere.",
    "The museum opens a new exhibition in spring.", "Football matches last ninety minutes.",
    "Volcanoes erupt molten rock called lava.", "The library lends books for three weeks.",
    "Trains to the coast leave every hour.", "Chess was played in India centuries ago.",
    "Bread rises because yeast produces gas.", "The river floods after heavy rain.",
    "Bees communicate with a waggle dance.", "Mount Everest is the highest mountain.",
    "Jazz music began in New Orleans.", "Snow leopards live in the mountains of Asia.",
]


def labelled_records() -> list[dict[str, Any]]:
    """28 records, 14 of each class, in the labelled-file schema (task supports)."""
    out = []
    for (fact, other), unrelated in zip(FACTS, UNRELATED, strict=True):
        evidence = f"{fact} {other}."
        out.append({"text": fact, "evidence": evidence, "label": 1})
        out.append({"text": unrelated, "evidence": evidence, "label": 0})
    return out


def labelled_jsonl(records: list[dict[str, Any]] | None = None) -> bytes:
    return "\n".join(json.dumps(r) for r in (records or labelled_records())).encode()


def study_with_gold(study: Study, *, flip: set[int] = frozenset(), n: int | None = None) -> list[int]:
    """One item per record (answer = the text, one chunk = the evidence) with item-level gold on the
    question ``grounded`` (yes/no); indices in ``flip`` get the wrong gold. Returns the item ids."""
    question = make_question(study, "grounded")
    pool = make_pool(study, questions=[question])
    ids = []
    for i, rec in enumerate(labelled_records()[:n]):
        item = make_item(study, f"it-{i:02d}", answer=rec["text"])
        make_chunk(item, 1, rec["evidence"])
        label = bool(rec["label"]) != (i in flip)
        gold_set(pool_id=pool.pk, item_id=item.pk, unit_key="item", question_id=question.pk,
                 value="yes" if label else "no", source="imported")
        ids.append(item.pk)
    return ids
