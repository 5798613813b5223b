"""Reads of the annotator workspace, and the blinding that governs them.

Everything an annotator sees of an item is built here (``assignment_workspace``), from an
allow-list: the item's question, answer, source document, sentences, chunks (text, rank, and the
document id only when the study is not blind to systems), the metadata keys the researcher marked
visible (none by default), the accepted aspects and the annotator's own proposals, the pool's questions, and the
annotator's own labels. Never: scores (annotation cannot read them), other people's labels (except
the same pool's, after the annotator submitted the item, when the pool is a calibration pool), the
items' scope class or labelled-target chunks (both are reference answers), the system name when
the study is blind to systems (nor document or external ids, which often name it), or any metadata
key not marked visible. ``preview_workspace`` builds the same page for a researcher's preview.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from annotation import answers, conditions, sql, units
from annotation.models import (
    Aspect,
    AspectStatus,
    Assignment,
    AssignmentStatus,
    Chunk,
    Exposure,
    Importance,
    Item,
    Label,
    Pool,
    PoolMembership,
    Question,
    Sentence,
    Study,
    Visibility,
)
from concord.errors import NotFound
from concord.params import parse_id

# --- Access helpers ----------------------------------------------------------------------------


def get_assignment_for_annotator(user: AbstractBaseUser, pk: int, *, with_item: bool = False) -> Assignment:
    """The user's own assignment in a pool they are an active member of; 404 for anything else,
    so that ids of other people's work reveal nothing (not even that they exist).

    One statement (``annotation.sql``, as every save runs it): the assignment with its pool and study
    (and its item when ``with_item``). The same rule as ``_annotator_assignments``."""
    assignment = sql.assignment_for_annotator(pk, getattr(user, "pk", None), with_item=with_item)
    if assignment is None:
        raise NotFound("No such assignment.")
    return assignment


def get_assignment_and_unit(user: AbstractBaseUser, pk: int, unit_key: str) -> tuple[Assignment, UnitRow | None]:
    """:func:`get_assignment_for_annotator`, and in the same query what the page shows of one unit of
    its item (None when the item has no such unit), to redraw that unit alone."""
    unit = units.parse(unit_key) if units.is_valid(unit_key) else None
    queryset = _annotator_assignments(user, pk).select_related("pool__study")
    if unit is not None and unit.kind != units.ITEM:
        queryset = queryset.annotate(**_unit_annotations(unit))
    try:
        assignment = queryset.get()
    except Assignment.DoesNotExist:
        raise NotFound("No such assignment.") from None
    return assignment, _unit_row(assignment, unit)


def unit_exists(scope: str, unit_key: str) -> Exists | Value:
    """An expression over an assignment row: whether its item has the unit ``unit_key`` of ``scope`` (the
    same units as :meth:`ItemUnits.keys_for`)."""
    if not units.is_valid(unit_key):
        return Value(False)
    unit = units.parse(unit_key)
    if unit.scope != scope:
        return Value(False)
    item = OuterRef("item_id")
    if unit.kind == units.ITEM:
        return Value(True)
    if unit.kind == units.ANSWER_SENTENCE:
        return Exists(Sentence.objects.filter(item_id=item, part="answer", index=unit.ref))
    if unit.kind == units.CHUNK:
        return Exists(Chunk.objects.filter(item_id=item, rank=unit.ref))
    return Exists(
        Aspect.objects.filter(item_id=item, pk=unit.ref, status=AspectStatus.ACCEPTED, retired_in_version__isnull=True)
    )


def _annotator_assignments(user: AbstractBaseUser, pk: int):
    # At most one row: (pool, user) memberships are unique. get() also drops the default ordering,
    # whose cascade through Pool and Study would add joins to a hot query.
    return Assignment.objects.for_annotator(user).filter(
        pk=pk, pool__memberships__user=user, pool__memberships__active=True
    )


@dataclass(frozen=True)
class UnitRow:
    """What the page shows of one unit: its text, its number as people count, and its extras."""

    key: str
    kind: str  # item / sentence / chunk / aspect
    number: int
    text: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _unit_annotations(unit: units.Unit) -> dict[str, Any]:
    item = OuterRef("item_id")
    if unit.kind == units.ANSWER_SENTENCE:
        rows = Sentence.objects.filter(item_id=item, part="answer", index=unit.ref)
        return {"unit_text": Subquery(rows.values("text")[:1])}
    if unit.kind == units.CHUNK:
        rows = Chunk.objects.filter(item_id=item, rank=unit.ref)
        return {"unit_text": Subquery(rows.values("text")[:1]), "unit_extra": Subquery(rows.values("document_id")[:1])}
    if unit.kind == units.ASPECT:
        accepted = Aspect.objects.filter(item_id=item, status=AspectStatus.ACCEPTED, retired_in_version__isnull=True)
        rows = accepted.filter(pk=unit.ref)
        before = accepted.filter(pk__lte=unit.ref).order_by().values("item_id").annotate(n=Count("id")).values("n")
        return {
            "unit_text": Subquery(rows.values("text")[:1]),
            "unit_extra": Subquery(rows.values("importance")[:1]),
            "unit_position": Coalesce(Subquery(before), 0),
        }
    return {}  # source sentences are alignment targets, never labelled units


def _unit_row(assignment: Assignment, unit: units.Unit | None) -> UnitRow | None:
    if unit is None:
        return None
    if unit.kind == units.ITEM:
        return UnitRow(key=unit.key, kind="item", number=0)
    text = getattr(assignment, "unit_text", None)
    if text is None:
        return None
    if unit.kind == units.ANSWER_SENTENCE:
        return UnitRow(key=unit.key, kind="sentence", number=unit.ref + 1, text=text)  # type: ignore[operator]
    if unit.kind == units.CHUNK:
        return UnitRow(
            key=unit.key, kind="chunk", number=unit.ref, text=text,  # type: ignore[arg-type]
            extra=chunk_extra(assignment.pool.study, assignment.unit_extra),  # type: ignore[attr-defined]
        )
    importance = Importance(assignment.unit_extra).label  # type: ignore[attr-defined]
    return UnitRow(
        key=unit.key, kind="aspect", number=assignment.unit_position, text=text,  # type: ignore[attr-defined]
        extra={"importance": importance},
    )


def get_pool_for_annotator(user: AbstractBaseUser, pk: int) -> Pool:
    try:
        pools = Pool.objects.filter(pk=pk, memberships__user=user, memberships__active=True)
        return pools.select_related("study").get()
    except Pool.DoesNotExist:
        raise NotFound("No such pool.") from None


def pool_questions(pool: Pool) -> list[Question]:
    """The pool's questions in protocol order, loaded once per pool object (one statement) and reused by
    every later call: the access check, the save and the redraw of one request share them. They are
    kept where ``prefetch_related("questions")`` keeps them, so ``pool.questions.all()`` reuses them too,
    and a change of the pool's questions through its manager (which drops that cache) is seen."""
    cache = getattr(pool, "_prefetched_objects_cache", None)
    if cache is None:
        pool._prefetched_objects_cache = cache = {}  # type: ignore[attr-defined]
    queryset = cache.get("questions")
    ordered = pool.__dict__.get("_questions_in_order")
    if queryset is not None and ordered is not None and ordered[0] is queryset:
        return list(ordered[1])
    if queryset is None:
        queryset = _pool_questions_queryset(pool.pk)._chain()  # type: ignore[attr-defined]
        queryset._result_cache = _pool_questions_current(pool)
        queryset._prefetch_done = True
        cache["questions"] = queryset
    questions = sorted(queryset, key=lambda q: (q.order, q.pk))
    pool.__dict__["_questions_in_order"] = (queryset, questions)
    return list(questions)


# Per process: pool id → (the questions' revision when they were read, the questions). Used only for a pool
# that carries the revision read in its request's own statement (a save through the API), so a change of the
# questions committed before that statement is always seen (annotation/sql.py, QUESTIONS_REVISION).
_questions_kept: dict[tuple[str, int], tuple[int, list[Question]]] = {}
_QUESTIONS_KEPT_MAX = 4096


def _pool_questions_current(pool: Pool) -> list[Question]:
    revision = pool.__dict__.get(sql.QUESTIONS_REVISION)
    if revision is None:
        return sql.pool_questions(pool.pk)
    key = (connection.settings_dict["NAME"], pool.pk)
    kept = _questions_kept.get(key)
    if kept is not None and kept[0] == revision:
        return list(kept[1])
    questions = sql.pool_questions(pool.pk)
    if len(_questions_kept) >= _QUESTIONS_KEPT_MAX:
        _questions_kept.clear()
    _questions_kept[key] = (revision, questions)
    return list(questions)


@lru_cache(maxsize=4096)
def _pool_questions_queryset(pool_id: int) -> QuerySet[Question]:
    # The queryset a prefetch would store (never evaluated here: each use is a copy that receives the
    # questions read), built once per pool and process because building a filter costs more than the read.
    return Question.objects.filter(pools=pool_id)


def get_pool_question(pool: Pool, key_or_id: str | int) -> Question:
    """The pool's question named by its key or its id (404 otherwise)."""
    question_id = parse_id(key_or_id)
    for question in pool_questions(pool):
        if (question.pk == question_id) if question_id is not None else (question.key == key_or_id):
            return question
    raise NotFound("No such question in this pool.")


# --- Units -------------------------------------------------------------------------------------


@dataclass
class ItemUnits:
    """The units of one item, loaded lazily per scope (a label save needs only one scope)."""

    item_id: int

    @cached_property
    def _sentences(self) -> list[tuple[str, int]]:
        rows = Sentence.objects.filter(item_id=self.item_id).order_by("part", "index").values_list("part", "index")
        return list(rows)

    @cached_property
    def answer_sentences(self) -> list[int]:
        return [index for part, index in self._sentences if part == "answer"]

    @cached_property
    def source_sentences(self) -> list[int]:
        return [index for part, index in self._sentences if part == "source"]

    @cached_property
    def chunk_ranks(self) -> list[int]:
        return list(Chunk.objects.filter(item_id=self.item_id).order_by("rank").values_list("rank", flat=True))

    @cached_property
    def aspect_ids(self) -> list[int]:
        return list(current_aspects(self.item_id).values_list("id", flat=True))

    def keys_for(self, scope: str) -> list[str]:
        if scope == "item":
            return [units.ITEM]
        if scope == "sentence":
            return [units.sentence(i) for i in self.answer_sentences]
        if scope == "chunk":
            return [units.chunk(r) for r in self.chunk_ranks]
        if scope == "aspect":
            return [units.aspect(a) for a in self.aspect_ids]
        return []

    def alignment_targets(self, scope: str) -> list[int]:
        """Sentence alignments point into the source document; aspect evidence (and item-level
        alignments) point into the answer's own sentences."""
        return self.source_sentences if scope == "sentence" else self.answer_sentences

    def describe(self, unit_key: str) -> str:
        if not units.is_valid(unit_key):
            return unit_key
        unit = units.parse(unit_key)
        position = None
        if unit.kind == units.ASPECT and unit.ref in self.aspect_ids:
            position = self.aspect_ids.index(unit.ref) + 1  # type: ignore[arg-type]
        return units.describe(unit_key, aspect_position=position)


def assignment_units(*, item_id: int) -> ItemUnits:
    return ItemUnits(item_id=item_id)


def current_aspects(item_id: int):
    accepted = Aspect.objects.filter(item_id=item_id, status=AspectStatus.ACCEPTED, retired_in_version__isnull=True)
    return accepted.order_by("id")


CONFLICT_BY_YOU = "you"


def label_conflict_details(
    current: Label | None, attempted: Any, question: Question, unit_key: str, *, viewer: AbstractBaseUser
) -> dict[str, Any]:
    """What a 409 carries: the newer value, its version, whether ``viewer`` (the annotator who tried to
    save) set it, when, and the value the client tried to save (so the page can offer it again — nothing
    typed is lost). Who set it is ``"you"`` for the viewer's own earlier save (another tab, window or
    script), and None for anyone else: an annotator never learns another person's identity, not even
    a pseudonym (the answer is simply newer than theirs)."""
    return {
        "question": question.key,
        "unit_key": unit_key,
        "value": current.value if current else None,
        "version": current.version if current else 0,
        "updated_by": CONFLICT_BY_YOU if current is not None and current.updated_by_id == viewer.pk else None,
        "updated_at": current.updated_at.isoformat() if current else None,
        "your_value": attempted,
    }


def conflict_view(question: Question, details: dict[str, Any]) -> dict[str, Any]:
    """A 409's details prepared for the page: the newer answer and the one that was not saved."""
    mine = details.get("your_value")
    return {
        **details,
        "value_display": answers.display(question, details.get("value")),
        "your_display": answers.display(question, mine),
        "your_list": [str(v) for v in mine] if isinstance(mine, list) else None,
        "your_scalar": None if isinstance(mine, list) or mine is None else str(mine),
    }


def has_dependents_in_other_scopes(pool: Pool, question: Question) -> bool:
    return any(
        q.condition.get("question") == question.key and q.scope != question.scope
        for q in pool.questions.all()
        if q.condition
    )


# --- Queue -------------------------------------------------------------------------------------


@dataclass
class PoolProgress:
    pool: Pool
    assigned: int
    submitted: int
    skipped: int

    @property
    def done(self) -> int:
        return self.submitted

    @property
    def remaining(self) -> int:
        return self.assigned - self.submitted - self.skipped

    @property
    def percent(self) -> int:
        return round(100 * (self.submitted + self.skipped) / self.assigned) if self.assigned else 0


@dataclass
class StudyQueue:
    study: Study
    pools: list[PoolProgress] = field(default_factory=list)


def annotator_queue(*, user: AbstractBaseUser) -> list[StudyQueue]:
    """My studies → my pools → progress; two queries whatever the number of pools."""
    mine = Q(assignments__annotator=user) & ~Q(assignments__status=AssignmentStatus.WITHDRAWN)
    pools = list(
        Pool.objects.filter(memberships__user=user, memberships__active=True)
        .select_related("study")
        .annotate(
            n_assigned=Count("assignments", filter=mine),
            n_submitted=Count(
                "assignments", filter=Q(assignments__annotator=user, assignments__status=AssignmentStatus.SUBMITTED)
            ),
            n_skipped=Count(
                "assignments", filter=Q(assignments__annotator=user, assignments__status=AssignmentStatus.SKIPPED)
            ),
        )
        .order_by("study__name", "name")
    )
    studies: dict[int, StudyQueue] = {}
    for pool in pools:
        queue = studies.setdefault(pool.study_id, StudyQueue(study=pool.study))
        queue.pools.append(
            PoolProgress(pool=pool, assigned=pool.n_assigned, submitted=pool.n_submitted, skipped=pool.n_skipped)
        )
    return list(studies.values())


def pool_progress(*, pool: Pool, user: AbstractBaseUser) -> PoolProgress:
    # A withdrawn item left the queue: it is neither to do nor done.
    mine = Assignment.objects.filter(pool=pool, annotator=user).exclude(status=AssignmentStatus.WITHDRAWN)
    counts = Counter(mine.values_list("status", flat=True))
    return PoolProgress(
        pool=pool, assigned=sum(counts.values()), submitted=counts[AssignmentStatus.SUBMITTED],
        skipped=counts[AssignmentStatus.SKIPPED],
    )


def annotator_assignments(*, user: AbstractBaseUser):
    """The user's assignments in pools they are an active member of (for the API list)."""
    return (
        Assignment.objects.for_annotator(user)
        .filter(pool__memberships__user=user, pool__memberships__active=True)
        .select_related("pool")
        .order_by("pool_id", "order_key", "id")
    )


def assignment_labels(*, assignment: Assignment):
    labels = Label.objects.filter(assignment=assignment).select_related("question", "updated_by")
    return labels.order_by("question__order", "question_id", "unit_key")


# --- The workspace (blinded) -------------------------------------------------------------------


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

    Precondition: ``assignment`` came from get_assignment_for_annotator(user, …).
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


def chunk_extra(study: Study, document_id: str | None) -> dict[str, Any]:
    """What a passage shows besides its text: its document id, unless the study is blind to systems
    (researchers' document ids often name the system or its index, e.g. ``gpt4o-kb/…``)."""
    if study.blind_system or not document_id:
        return {}
    return {"document_id": document_id}


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


# --- My history --------------------------------------------------------------------------------


REOPEN_NOT_ALLOWED = "This pool does not allow reopening submitted items."
REOPEN_AFTER_SEEING_OTHERS = (
    "You have seen other annotators' answers on this item, so your own can no longer change."
)


@dataclass
class HistoryRow:
    assignment: Assignment
    reopen_refusal: str | None  # None: the item can be reopened

    @property
    def can_reopen(self) -> bool:
        return self.reopen_refusal is None


def annotator_history(*, user: AbstractBaseUser, limit: int = 500) -> list[HistoryRow]:
    """The items I submitted, most recent first, each saying whether I may reopen it (the same rule as
    ``services.reopen_refusal``, read here for the whole list in two queries)."""
    assignments = list(
        Assignment.objects.for_annotator(user)
        .filter(pool__memberships__user=user, pool__memberships__active=True, status=AssignmentStatus.SUBMITTED)
        .select_related("pool__study", "item")
        .order_by("-submitted_at", "-id")[:limit]
    )
    seen = set(
        Exposure.objects.filter(user=user, showed_other_labels=True, pool_id__in={a.pool_id for a in assignments})
        .values_list("pool_id", "item_id")
        .distinct()
    )
    rows = []
    for a in assignments:
        refusal = None
        if not a.pool.reopen_allowed:
            refusal = REOPEN_NOT_ALLOWED
        elif (a.pool_id, a.item_id) in seen:
            refusal = REOPEN_AFTER_SEEING_OTHERS
        rows.append(HistoryRow(assignment=a, reopen_refusal=refusal))
    return rows
