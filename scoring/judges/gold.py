"""Training examples from a study's gold labels.

Gold lives in ``adjudication`` (a layer above ``scoring``), so the reader of current gold values is
registered by adjudication when the apps load (``adjudication.apps``); until it is, training from a
study is refused with a clear message rather than read from somewhere else.

What each unit becomes (``examples_from_gold``):

- a gold value on an answer sentence ``s:<i>``: text = that sentence; evidence = the item's context
  chunks in rank order (pair tasks) or, for task ``kind`` (PlainQAFact's sentence kind: the
  ``sentence_kind`` question of the PlainFact preset), the item's source document;
- a gold value on the item: text = the whole answer; evidence = the context chunks;
- a gold value on a chunk ``c:<rank>`` (task ``relevance``): text = the chunk; evidence = the item's question;
- a gold value on an expected aspect ``a:<id>`` (e.g. K-QA's "is this must-have statement entailed by the
  answer"): text = the aspect; evidence = the whole answer — the direction ICAT's coverage applies a
  supports judge in (the aspect as the claim, the answer's grounded claims as the evidence).

The label is 1 when the gold value is one of ``positive`` (default: a yes-like value — true, yes, 1; for task
``kind``: "simplification", so an elaboration is 0),
else 0; values listed in ``exclude`` are left out. Every example's group is its item, so cross-validation
folds and cross-fitting keep all units of one item together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from annotation import units
from annotation.models import Question, Study
from scoring import selectors
from scoring.judges.training import PAIR_TASKS, Example, TrainingError

# (study, question key) -> [(item id, unit key, gold value)], the current gold of every pool.
GoldReader = Callable[[Study, str], list[tuple[int, str, Any]]]
_READERS: list[GoldReader] = []
_YES = {"yes", "true", "1"}


def register_gold_reader(reader: GoldReader) -> None:
    _READERS[:] = [reader]


def _reader() -> GoldReader:
    if not _READERS:
        raise TrainingError("no gold reader is registered (the adjudication app is not installed)")
    return _READERS[0]


def _positive(value: Any, positive: Iterable[str]) -> bool:
    wanted = {str(p) for p in positive}
    if wanted:
        return str(value) in wanted
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in _YES


def examples_from_gold(study: Study, question_key: str, task: str, *, positive: Iterable[str] = (),
                       exclude: Iterable[str] = ()) -> tuple[list[Example], list[int]]:
    """(examples, item id of each example) from the study's current gold for one question."""
    if not Question.objects.filter(study=study, key=question_key).exists():
        raise TrainingError(f"study {study.slug!r} has no question {question_key!r}")
    rows = _reader()(study, question_key)
    skip = {str(e) for e in exclude}
    positive = list(positive) or (["simplification"] if task == "kind" else [])
    rows = [r for r in rows if r[2] is not None and str(r[2]) not in skip]
    if not rows:
        raise TrainingError(f"study {study.slug!r} has no gold labels for question {question_key!r}")
    inputs = selectors.item_inputs({item_id for item_id, _, _ in rows})
    examples: list[Example] = []
    item_ids: list[int] = []
    for item_id, unit_key, value in sorted(rows, key=lambda r: (r[0], r[1])):
        item = inputs.get(item_id)
        if item is None:
            continue
        unit = units.parse(unit_key)
        context = " ".join(c.text for c in item.contexts)
        if task == "kind":
            if unit.kind != units.ANSWER_SENTENCE or unit.ref is None or unit.ref >= len(item.sentences):
                raise TrainingError(f"gold on unit {unit_key!r} cannot be a 'kind' example (answer sentences only)")
            text = item.sentences[unit.ref]
            evidence = " ".join(item.source_sentences) if item.source_sentences else item.source
        elif unit.kind == units.ANSWER_SENTENCE and unit.ref is not None and unit.ref < len(item.sentences):
            text, evidence = item.sentences[unit.ref], context
        elif unit.kind == units.ITEM:
            text, evidence = item.answer, context
        elif unit.kind == units.CHUNK:
            chunk = next((c for c in item.contexts if c.rank == unit.ref), None)
            if chunk is None:
                continue
            text, evidence = chunk.text, item.question
        elif unit.kind == units.ASPECT and task == "supports":
            aspect = next((a for a in item.aspects if a.ref == unit.ref), None)
            if aspect is None:  # an aspect no longer in the item's current version
                continue
            text, evidence = aspect.text, item.answer
        else:
            raise TrainingError(f"gold on unit {unit_key!r} cannot be a {task!r} training example")
        if not text.strip():
            continue
        if task in PAIR_TASKS and not evidence.strip():
            raise TrainingError(f"item {item.id!r} has no evidence for a {task!r} example (unit {unit_key})")
        examples.append(Example(text=text, label=_positive(value, positive),
                                evidence=evidence if task in PAIR_TASKS else None, group=str(item_id)))
        item_ids.append(item_id)
    return examples, item_ids
