"""Reads of the annotator workspace: the access helpers (404 for anything that is not the caller's), the queue
and its progress, and my history.

The access helpers apply the annotator access rule of ``annotation.labels.access`` (an annotator reaches
their own assignments in the pools they are an active member of). The item page itself, and the blinding
that governs it, is ``annotation.workspace``; the units of an item, ``annotation.item_units``; the pool's
questions, ``annotation.labels.questions``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from annotation import quality, units
from annotation.labels import access, statements
from annotation.models import (
    Aspect,
    AspectStatus,
    Assignment,
    AssignmentStatus,
    Chunk,
    Exposure,
    Importance,
    Label,
    Pool,
    Question,
    Sentence,
    Study,
)
from concord.errors import NotFound

# --- Access helpers ----------------------------------------------------------------------------


def get_assignment_for_annotator(user: AbstractBaseUser, pk: int, *, with_item: bool = False) -> Assignment:
    """The user's own assignment in a pool they are an active member of; 404 for anything else,
    so that ids of other people's work reveal nothing (not even that they exist).

    One statement (``annotation.labels.statements``, as every save runs it): the assignment with its pool and
    study (and its item when ``with_item``). The access rule's SQL form (``annotation.labels.access``)."""
    assignment = statements.assignment_for_annotator(pk, getattr(user, "pk", None), with_item=with_item)
    if assignment is None:
        raise NotFound("No such assignment.")
    quality.ensure_qualified(assignment)
    return assignment


def get_assignment_and_unit(user: AbstractBaseUser, pk: int, unit_key: str) -> tuple[Assignment, UnitRow | None]:
    """:func:`get_assignment_for_annotator`, and in the same query what the page shows of one unit of
    its item (None when the item has no such unit), to redraw that unit alone. The access rule's ORM form
    (``annotation.labels.access``), which gives the same assignments as the SQL form."""
    unit = units.parse(unit_key) if units.is_valid(unit_key) else None
    queryset = access.own_assignments(user).filter(pk=pk).select_related("pool__study")
    if unit is not None and unit.kind != units.ITEM:
        queryset = queryset.annotate(**_unit_annotations(unit))
    try:
        assignment = queryset.get()
    except Assignment.DoesNotExist:
        raise NotFound("No such assignment.") from None
    quality.ensure_qualified(assignment)
    return assignment, _unit_row(assignment, unit)


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


def chunk_extra(study: Study, document_id: str | None) -> dict[str, Any]:
    """What a passage shows besides its text: its document id, unless the study is blind to systems
    (researchers' document ids often name the system or its index, e.g. ``gpt4o-kb/…``)."""
    if study.blind_system or not document_id:
        return {}
    return {"document_id": document_id}


def get_pool_for_annotator(user: AbstractBaseUser, pk: int) -> Pool:
    try:
        pools = Pool.objects.filter(pk=pk, memberships__user=user, memberships__active=True)
        return pools.select_related("study").get()
    except Pool.DoesNotExist:
        raise NotFound("No such pool.") from None


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
    """My studies → my pools → progress; one query whatever the number of pools."""
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
    # Counted by the database over the queue's index (an annotator may hold tens of thousands of items).
    mine = Assignment.objects.filter(pool=pool, annotator=user).exclude(status=AssignmentStatus.WITHDRAWN)
    counts = dict(mine.order_by().values("status").annotate(n=Count("*")).values_list("status", "n"))
    return PoolProgress(
        pool=pool, assigned=sum(counts.values()), submitted=counts.get(AssignmentStatus.SUBMITTED, 0),
        skipped=counts.get(AssignmentStatus.SKIPPED, 0),
    )


def annotator_assignments(*, user: AbstractBaseUser):
    """The user's assignments in pools they are an active member of (for the API list)."""
    return access.own_assignments(user).select_related("pool").order_by("pool_id", "order_key", "id")


def assignment_labels(*, assignment: Assignment):
    labels = Label.objects.filter(assignment=assignment).select_related("question", "updated_by")
    return labels.order_by("question__order", "question_id", "unit_key")


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
    """The items I submitted (of those the access rule lets me reach), most recent first, each saying whether I
    may reopen it (the same rule as ``services.reopen_refusal``, read here for the whole list in two queries)."""
    assignments = list(
        access.own_assignments(user)
        .filter(status=AssignmentStatus.SUBMITTED)
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
