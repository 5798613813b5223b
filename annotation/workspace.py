"""The item page as an annotator may see it (the blinded page model), built on the server.

Everything an annotator sees of an item is built here (``assignment_workspace``), from an
allow-list: the item's question, answer, source document, sentences, chunks (text, rank, and the
document id only when the study is not blind to systems), the metadata keys the researcher marked
visible (none by default), the accepted aspects and the annotator's own proposals, the pool's questions, and the
annotator's own labels. Never: scores (annotation cannot read them), other people's labels (except
the same pool's, after the annotator submitted the item, when the pool is a calibration pool), the
items' scope class or labelled-target chunks (both are reference answers), the system name when
the study is blind to systems (nor document or external ids, which often name it), or any metadata
key not marked visible. ``preview_workspace`` builds the same page for a researcher's preview, and
``unit_redraw`` one unit of it after a label save.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q

from annotation import answers, conditions, units
from annotation.labels.questions import pool_questions
from annotation.models import (
    Aspect,
    AspectStatus,
    Assignment,
    AssignmentStatus,
    Chunk,
    Item,
    Label,
    Pool,
    PoolMembership,
    Question,
    Sentence,
    Study,
    Visibility,
)
from annotation.selectors import PoolProgress, UnitRow, chunk_extra, pool_progress


@dataclass
class OptionState:
    value: str
    label: str
    key: str
    checked: bool


@dataclass
class QuestionState:
    question: Question
    unit_key: str
    value: Any
    version: int
    applicable: bool
    options: list[OptionState]
    targets: list[tuple[int, str]]  # alignment: (sentence index, sentence text)
    updated_at: Any = None
    conflict: dict[str, Any] | None = None
    error: str | None = None
    saved: bool = False

    @property
    def display(self) -> str:
        return answers.display(self.question, self.value)

    @property
    def list_values(self) -> list[str]:
        return [str(v) for v in self.value] if isinstance(self.value, list) else []

    @property
    def answered(self) -> bool:
        return answers.is_answered(self.value)

    @property
    def dom_id(self) -> str:
        return f"q-{self.question.key}-{units.slug(self.unit_key)}"


@dataclass
class UnitView:
    key: str
    kind: str  # item / sentence / chunk / aspect
    number: int
    text: str
    questions: list[QuestionState]
    extra: dict[str, Any] = field(default_factory=dict)
    saved_at: Any = None

    @property
    def dom_id(self) -> str:
        return "unit-" + units.slug(self.key)

    @property
    def complete(self) -> bool:
        return all(q.answered or not q.applicable or not q.question.required for q in self.questions)


@dataclass
class OtherLabel:
    pseudonym: str
    question_key: str
    unit_key: str
    value: Any


@dataclass
class Workspace:
    assignment: Assignment
    pool: Pool
    study: Study
    item_question: str
    answer: str
    source: str
    system: str | None
    metadata: dict[str, Any]
    sentences: list[UnitView]
    source_sentences: list[tuple[int, str]]
    chunks: list[UnitView]
    aspects: list[UnitView]
    own_proposals: list[Aspect]
    item_unit: UnitView | None
    progress: PoolProgress
    others: list[OtherLabel]
    preview: bool = False

    @property
    def metadata_keys(self) -> list[str]:
        """The metadata keys the page shows (recorded in the Exposure row)."""
        return list(self.metadata)

    @property
    def units(self) -> list[UnitView]:
        return [*self.sentences, *self.chunks, *self.aspects, *([self.item_unit] if self.item_unit else [])]

    def unit(self, key: str) -> UnitView | None:
        return next((u for u in self.units if u.key == key), None)

    @property
    def showed_other_labels(self) -> bool:
        return bool(self.others)

    @property
    def showed_system(self) -> bool:
        return self.system is not None

    @property
    def is_open(self) -> bool:
        return not self.preview and self.assignment.status in (AssignmentStatus.ASSIGNED, AssignmentStatus.STARTED)


def blinded_metadata(study: Study, metadata: dict[str, Any]) -> dict[str, Any]:
    """The item metadata an annotator sees: only the keys the researcher marked visible (an allow-list,
    in the order they were listed), never one also listed as hidden. A study lists none by default, so
    annotators see no metadata until the researcher chooses what to show."""
    hidden = set(study.hidden_metadata_fields or [])
    metadata = metadata or {}
    return {k: metadata[k] for k in study.visible_metadata_fields or [] if k in metadata and k not in hidden}


def _question_states(
    questions: list[Question],
    scope: str,
    unit_key: str,
    labels: dict[tuple[int, str], Label],
    *,
    targets: list[tuple[int, str]],
) -> list[QuestionState]:
    """The pool's questions of ``scope`` at one unit, with this annotator's answers (``labels`` by
    question id and unit key; those of the item unit decide conditions on item questions)."""
    by_key = {q.key: q for q in questions}
    by_id = {q.pk: q for q in questions}
    given = {(by_id[qid].key, u): lb.value for (qid, u), lb in labels.items() if qid in by_id}
    out = []
    for q in questions:
        if q.scope != scope:
            continue
        label = labels.get((q.pk, unit_key))
        value = label.value if label else None
        chosen = {str(c) for c in (value if isinstance(value, list) else [value]) if c is not None}
        out.append(
            QuestionState(
                question=q, unit_key=unit_key, value=value, version=label.version if label else 0,
                applicable=conditions.is_applicable(q, unit_key, given, by_key),
                options=[
                    OptionState(
                        value=str(o["value"]), label=str(o.get("label", o["value"])), key=str(o.get("key", "")),
                        checked=str(o["value"]) in chosen,
                    )
                    for o in q.options
                ],
                targets=targets if q.kind == "alignment" else [],
                updated_at=label.updated_at if label else None,
            )
        )
    return out


def assignment_workspace(*, assignment: Assignment, user: AbstractBaseUser) -> Workspace:
    """Everything the item page (and the API's item view) may show this annotator.

    Precondition: ``assignment`` came from ``selectors.get_assignment_for_annotator(user, …)``.
    A fixed number of queries, whatever the size of the item. Pages and the API show it through
    ``services.assignment_workspace_shown``, which records what was shown and, when other annotators'
    labels may be among it, serialises this read with a reopening of the item.
    """
    # Loaded here unless the access helper joined it: a label save never needs the item's texts.
    pool = assignment.pool
    item = assignment.item if Assignment.item.is_cached(assignment) else Item.objects.get(pk=assignment.item_id)
    labels = {(lb.question_id, lb.unit_key): lb for lb in Label.objects.filter(assignment=assignment)}
    others: list[OtherLabel] = []
    if pool.visibility == Visibility.AFTER_SUBMIT and assignment.status == AssignmentStatus.SUBMITTED:
        others = _calibration_labels(assignment)
    return _workspace_build(
        assignment=assignment, pool=pool, item=item, questions=pool_questions(pool), labels=labels, user=user,
        progress=pool_progress(pool=pool, user=user), others=others,
    )


def preview_workspace(*, study: Study, item: Item, user: AbstractBaseUser, pool: Pool | None = None) -> Workspace:
    """The item page exactly as an annotator of ``pool`` (or of a pool asking every question of the study)
    would first see ``item``: the same blinding, built by the same code, with no answers and nothing saved.
    The researcher's own proposals are not shown (annotators see only theirs)."""
    if pool is None:
        pool = Pool(pk=0, study=study, name="every question of the study")
        questions = sorted(study.questions.all(), key=lambda q: (q.order, q.pk))
    else:
        questions = pool_questions(pool)
    # An unsaved, closed assignment: the page's forms are drawn disabled and nothing can be posted.
    assignment = Assignment(pk=0, pool=pool, item=item, annotator_id=user.pk, status=AssignmentStatus.SUBMITTED)
    workspace = _workspace_build(
        assignment=assignment, pool=pool, item=item, questions=questions, labels={}, user=None,
        progress=PoolProgress(pool=pool, assigned=0, submitted=0, skipped=0), others=[],
    )
    workspace.preview = True
    return workspace


def _workspace_build(
    *, assignment: Assignment, pool: Pool, item: Item, questions: list[Question],
    labels: dict[tuple[int, str], Label], user: AbstractBaseUser | None, progress: PoolProgress,
    others: list[OtherLabel],
) -> Workspace:
    study = pool.study
    sentences = list(Sentence.objects.filter(item=item).order_by("part", "index"))
    answer_sents = [s for s in sentences if s.part == "answer"]
    source_sents = [(s.index, s.text) for s in sentences if s.part == "source"]
    answer_targets = [(s.index, s.text) for s in answer_sents]

    def states(scope: str, unit_key: str) -> list[QuestionState]:
        targets = source_sents if scope == "sentence" else answer_targets
        return _question_states(questions, scope, unit_key, labels, targets=targets)

    has = {q.scope for q in questions}
    sentence_units = [
        UnitView(
            key=units.sentence(s.index), kind="sentence", number=s.index + 1, text=s.text,
            questions=states("sentence", units.sentence(s.index)) if "sentence" in has else [],
        )
        for s in answer_sents
    ]
    chunk_units = [
        UnitView(
            key=units.chunk(c.rank), kind="chunk", number=c.rank, text=c.text,
            questions=states("chunk", units.chunk(c.rank)), extra=chunk_extra(study, c.document_id),
        )
        for c in Chunk.objects.filter(item=item).order_by("rank").only("rank", "text", "document_id", "item_id")
    ]
    shown = Q(status=AspectStatus.ACCEPTED, retired_in_version__isnull=True)
    if user is not None:
        shown |= Q(proposed_by=user, status=AspectStatus.PROPOSED)
    aspects = list(Aspect.objects.filter(item=item).filter(shown).order_by("id"))
    accepted = [a for a in aspects if a.status == AspectStatus.ACCEPTED]
    aspect_units = [
        UnitView(
            key=units.aspect(a.pk), kind="aspect", number=n, text=a.text,
            questions=states("aspect", units.aspect(a.pk)), extra={"importance": a.get_importance_display()},
        )
        for n, a in enumerate(accepted, start=1)
    ]
    item_states = states("item", units.ITEM)
    item_unit = UnitView(key=units.ITEM, kind="item", number=0, text="", questions=item_states) if item_states else None

    return Workspace(
        assignment=assignment, pool=pool, study=study,
        item_question=item.question, answer=item.answer, source=item.source,
        system=None if study.blind_system else item.system,
        metadata=blinded_metadata(study, item.metadata),
        sentences=sentence_units, source_sentences=source_sents, chunks=chunk_units,
        aspects=aspect_units, own_proposals=[a for a in aspects if a.status == AspectStatus.PROPOSED],
        item_unit=item_unit, progress=progress, others=others,
    )


@dataclass
class UnitPage:
    """What the fragment of one unit needs of its page: the assignment and whether it is open."""

    assignment: Assignment

    @property
    def is_open(self) -> bool:
        return self.assignment.status in (AssignmentStatus.ASSIGNED, AssignmentStatus.STARTED)


def unit_redraw(
    *, assignment: Assignment, row: UnitRow, labels: dict[tuple[int, str], Label]
) -> tuple[UnitPage, UnitView]:
    """One unit of the workspace, as :func:`assignment_workspace` shows it, from what a label save already
    read: the unit's row (:func:`get_assignment_and_unit`), the pool's questions and ``labels``, the
    annotator's labels of this unit and of the item (by question id and unit key). Only an alignment
    question costs a query more (its target sentences)."""
    questions = pool_questions(assignment.pool)
    scope = units.SCOPE_OF_KIND[units.parse(row.key).kind]
    targets: list[tuple[int, str]] = []
    if any(q.kind == "alignment" and q.scope == scope for q in questions):
        part = "source" if scope == "sentence" else "answer"
        sentences = Sentence.objects.filter(item_id=assignment.item_id, part=part).order_by("index")
        targets = list(sentences.values_list("index", "text"))
    states = _question_states(questions, scope, row.key, labels, targets=targets)
    if row.kind == "sentence" and not any(q.scope == "sentence" for q in questions):
        states = []
    unit = UnitView(
        key=row.key, kind=row.kind, number=row.number, text=row.text, questions=states, extra=dict(row.extra)
    )
    return UnitPage(assignment=assignment), unit


def _calibration_labels(assignment: Assignment) -> list[OtherLabel]:
    """Other members' labels on the same item in the same pool, by pseudonym (calibration pools,
    after this annotator submitted). Other pools' labels are never included, nor withdrawn work (a
    researcher took the item from its annotator, perhaps to give it to this one)."""
    pseudonyms = dict(PoolMembership.objects.filter(pool_id=assignment.pool_id).values_list("user_id", "pseudonym"))
    rows = (
        Label.objects.filter(assignment__pool_id=assignment.pool_id, assignment__item_id=assignment.item_id)
        .exclude(assignment__annotator_id=assignment.annotator_id)
        .exclude(assignment__status=AssignmentStatus.WITHDRAWN)
        .filter(value__isnull=False)
        .values_list("assignment__annotator_id", "question__key", "unit_key", "value")
        .order_by("question__order", "unit_key", "assignment__annotator_id")
    )
    grouped: dict[tuple[str, str], list[OtherLabel]] = defaultdict(list)
    for annotator_id, key, unit, value in rows:
        pseudonym = pseudonyms.get(annotator_id)
        if pseudonym is None:
            # Every label shown here comes from a member of this pool (memberships are deactivated, never
            # deleted): a label without one would be another pool's, and must never be shown.
            raise RuntimeError(
                f"a calibration label of user {annotator_id} has no membership in pool {assignment.pool_id}"
            )
        grouped[(key, unit)].append(OtherLabel(pseudonym=pseudonym, question_key=key, unit_key=unit, value=value))
    return [o for group in grouped.values() for o in group]
