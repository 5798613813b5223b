"""The save of one answer: its two paths and the checks they share.

The entry points (:func:`label_save` for the API and every other caller, :func:`label_save_in_unit` for the
item page, which also wants the unit's labels to redraw it) turn their keywords into one :class:`SaveRequest`,
which every step below receives.

1. The question must be one the pool asks (``questions.pool_questions``, kept between requests).
2. **The one-statement save** (:func:`_label_save_at_once`, PostgreSQL, not for the item page): a valid value
   of a question no condition involves, not an alignment, by the assigned annotator, is written by
   ``statements.save_label_at_once`` outside any transaction: lock, checks that the item is open and the unit
   exists, the first answer or the next version with its history row, and a reservation about to lapse
   extended. Whatever it does not write, it leaves untouched, and
3. **the locked save** (:func:`_label_save_locked`) answers it, in a transaction: the assignment locked and
   found open (:func:`_lock_open_assignment`, one statement that also reads the unit's labels), the unit
   checked, the value normalised, conditions checked when one involves the question, the label written
   (:func:`_write_label`), dependent answers whose condition stops holding cleared, the reservation extended.
   A concurrent first answer (the unique constraint) rolls it back and it runs once more.

Locking. On PostgreSQL a label write locks its assignment row (``SELECT … FOR UPDATE``), reading the unit's
labels in the same query, and changes a label only by a conditional ``UPDATE … WHERE version = base`` or an
insert under the unique constraint, so a read made stale by waiting for the lock is caught and the label read
again. On SQLite ``FOR UPDATE`` is a no-op, but the project opens every transaction with ``BEGIN IMMEDIATE``
(settings: ``transaction_mode``), so write transactions are serialized by the database lock and the same
version checks give the same guarantees.

A stale base version is refused with ``Conflict`` (409) carrying the newer value (``conflicts``); an identical
retry returns the stored label without a new version. Each change appends a ``LabelHistory`` row.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation import answers, conditions
from annotation.item_units import assignment_units
from annotation.labels import statements
from annotation.labels.access import WITHDRAWN_REFUSAL, ensure_annotator
from annotation.labels.conflicts import label_conflict_details
from annotation.labels.questions import pool_questions
from annotation.models import Assignment, AssignmentStatus, Label, Question
from concord.errors import Conflict, NotFound, ValidationFailed
from concord.ops.metrics import LABEL_SAVES


@dataclass(frozen=True)
class SaveRequest:
    """One answer to save: what every step of the save receives, instead of eight parameters each.

    ``value`` is the answer as sent until the save normalises it (the label written holds the normalised
    one); ``base_version`` the version the client last saw, 0 when there was no label; ``now`` the time the
    label and its history row record."""

    assignment: Assignment
    question: Question
    unit_key: str
    value: Any
    base_version: int
    actor: AbstractBaseUser
    now: datetime

    @classmethod
    def of(
        cls, *, assignment: Assignment, question: Question, unit_key: str, value: Any, base_version: int | None,
        actor: AbstractBaseUser, now: datetime | None = None,
    ) -> SaveRequest:
        """The request of a service's keywords: no base version is 0, no time is now."""
        return cls(assignment, question, unit_key, value, base_version or 0, actor, now or timezone.now())


@dataclass
class LabelSaved:
    """A saved answer, and the annotator's labels of its unit and of the item after the save (by question id
    and unit key): what a redraw of the unit needs, read in the save's own locking query."""

    label: Label
    unit_labels: dict[tuple[int, str], Label]


def label_save(
    *,
    assignment: Assignment,
    question: Question,
    unit_key: str,
    value: Any,
    base_version: int | None,
    actor: AbstractBaseUser,
    now: datetime | None = None,
) -> Label:
    """Save one answer, refusing lost updates.

    ``base_version`` is the version the client last saw (0 or None: "there was no label"). A save
    based on an older version raises Conflict carrying the newer value, who set it and when; a retry
    that sends the value already stored is answered with the stored label instead (idempotent).
    Each change bumps the version and appends a LabelHistory row in the same transaction. Answers of
    dependent questions whose condition stops holding are cleared the same way (with history), so
    stored labels always match what the pool asks.
    """
    request = SaveRequest.of(
        assignment=assignment, question=question, unit_key=unit_key, value=value, base_version=base_version,
        actor=actor, now=now,
    )
    saved = _label_save(request, unit_labels=False)
    LABEL_SAVES.inc()
    return saved.label


def label_save_in_unit(
    *,
    assignment: Assignment,
    question: Question,
    unit_key: str,
    value: Any,
    base_version: int | None,
    actor: AbstractBaseUser,
    now: datetime | None = None,
) -> LabelSaved:
    """:func:`label_save`, also returning the labels of the unit and of the item after the save.

    The pool's questions are those of ``questions.pool_questions`` (loaded once per pool object). In the
    common case (no condition involves the question) the write runs one locking query, which checks
    that the assignment is open and the unit exists and reads the unit's labels, then the insert or
    update and the history row.
    """
    request = SaveRequest.of(
        assignment=assignment, question=question, unit_key=unit_key, value=value, base_version=base_version,
        actor=actor, now=now,
    )
    saved = _label_save(request, unit_labels=True)
    LABEL_SAVES.inc()
    return saved


def _label_save(request: SaveRequest, *, unit_labels: bool) -> LabelSaved:
    """The save; with ``unit_labels`` False the lock reads only the label being saved (``LabelSaved.unit_labels``
    then holds that label alone)."""
    asked = pool_questions(request.assignment.pool)
    by_key = {q.key: q for q in asked}
    if request.question.pk not in {q.pk for q in asked}:
        raise ValidationFailed(f"Question {request.question.key!r} is not asked in this pool.")
    if not unit_labels:
        saved = _label_save_at_once(request, by_key)
        if saved is not None:
            return saved
    try:
        with transaction.atomic():
            return _label_save_locked(request, by_key, unit_labels)
    except IntegrityError:
        # Another request created this label between our read and our insert (two tabs, first answer),
        # and nothing of this save was kept: save again, now reading that label (idempotent or 409).
        with transaction.atomic():
            return _label_save_locked(request, by_key, unit_labels)


def _involved(question: Question, by_key: dict[str, Question]) -> bool:
    """Whether a condition involves the question (its own, or another question's on it)."""
    return bool(question.condition) or any(
        q.condition.get("question") == question.key for q in by_key.values() if q.condition
    )


def _plain_json(value: Any) -> bool:
    """Values that Python and PostgreSQL's jsonb call equal alike (no booleans, which Python equates with
    1 and 0): text, numbers, and lists of text, as the option, number and text questions store."""
    if type(value) in (str, int, float):
        return True
    return type(value) is list and all(type(v) is str for v in value)


def _label_save_at_once(request: SaveRequest, by_key: dict[str, Question]) -> LabelSaved | None:
    """The common save of one answer through the API, on PostgreSQL, in one statement
    (``statements.save_label_at_once``): a valid value of a question that no condition involves and that is
    not an alignment, by the assigned annotator. None when that statement wrote nothing, or the save is not
    such a save: the caller then runs the locked save, which answers every other case (a refusal, a 409,
    the stored label for a repeat) exactly as before."""
    if connection.vendor != "postgresql":
        return None
    assignment, question, actor, now = request.assignment, request.question, request.actor, request.now
    if assignment.annotator_id != actor.pk or question.kind == "alignment" or _involved(question, by_key):
        return None
    try:
        clean = answers.normalise(question, request.value, alignment_targets=())
    except answers.InvalidValue:
        return None  # the locked save refuses it, after its own checks of the item and the unit
    if not _plain_json(clean):
        return None
    saved = statements.save_label_at_once(
        assignment_id=assignment.pk, question_id=question.pk, scope=question.scope, unit_key=request.unit_key,
        value=clean, base_version=request.base_version, actor_id=actor.pk, now=now,
        reserve_until=now + timedelta(minutes=assignment.pool.reservation_minutes),
        reserve_if_before=now + timedelta(minutes=5),
    )
    if saved is None:
        return None
    label_id, version = saved
    label = Label(
        pk=label_id, assignment=assignment, question=question, unit_key=request.unit_key, value=clean,
        version=version, updated_by=actor, updated_at=now,
    )
    label._state.adding, label._state.db = False, connection.alias
    return LabelSaved(label=label, unit_labels={(question.pk, request.unit_key): label})


def _label_save_locked(request: SaveRequest, by_key: dict[str, Question], with_unit_labels: bool = True) -> LabelSaved:
    assignment, question, unit_key, now = request.assignment, request.question, request.unit_key, request.now
    reserved_until, unit_exists, unit_labels = _lock_open_assignment(
        request, only_question=None if with_unit_labels else question.pk
    )
    if not unit_exists:
        raise ValidationFailed(f"There is no {question.scope} {unit_key!r} in this item.")
    targets: Iterable[int] = ()
    if question.kind == "alignment":
        targets = assignment_units(item_id=assignment.item_id).alignment_targets(question.scope)
    try:
        clean = answers.normalise(question, request.value, alignment_targets=targets)
    except answers.InvalidValue as exc:
        details = {"question": question.key, "unit_key": unit_key}
        raise ValidationFailed(f"{question.prompt}: {exc}", details=details) from exc
    # Other answers matter only when a condition involves this question (the common case needs none).
    involved = _involved(question, by_key)
    given = {(q.key, u): v for q, u, v in assignment_answers(assignment, by_key)} if involved else {}
    if involved and clean is not None and not conditions.is_applicable(question, unit_key, given, by_key):
        raise ValidationFailed(f"{question.prompt}: not asked here given the other answers.")
    current = unit_labels.get((question.pk, unit_key))
    label = _write_label(replace(request, value=clean), current=current)
    unit_labels[(question.pk, unit_key)] = label
    if involved:
        given[(question.key, unit_key)] = clean
        for dep_key, dep_unit in conditions.dependents_to_clear(question.key, unit_key, given, by_key):
            dep_question = by_key[dep_key]
            dep = Label.objects.select_for_update().get(assignment=assignment, question=dep_question, unit_key=dep_unit)
            clearing = replace(request, question=dep_question, unit_key=dep_unit, value=None, base_version=dep.version)
            cleared = _write_label(clearing, current=dep)
            if (dep_question.pk, dep_unit) in unit_labels:
                unit_labels[(dep_question.pk, dep_unit)] = cleared
    if reserved_until is not None and reserved_until < now + timedelta(minutes=5):
        # Working on an item keeps it reserved.
        until = now + timedelta(minutes=assignment.pool.reservation_minutes)
        Assignment.objects.filter(pk=assignment.pk).update(reserved_until=until)
    return LabelSaved(label=label, unit_labels=unit_labels)


def assignment_answers(assignment: Assignment, by_key: dict[str, Question]) -> Iterable[tuple[Question, str, Any]]:
    """The assignment's stored answers to the questions of ``by_key``: (question, unit key, value). What the
    conditions of a save and the missing answers of a submit (``services.assignment_missing_answers``) read."""
    by_id = {q.pk: q for q in by_key.values()}
    rows = Label.objects.filter(assignment=assignment).values_list("question_id", "unit_key", "value")
    for question_id, unit_key, value in rows:
        if question_id in by_id:
            yield by_id[question_id], unit_key, value


_UNREAD = object()


def _write_label(request: SaveRequest, *, current: Any = _UNREAD) -> Label:
    """Write one label (``request.value``, already normalised) under the assignment's lock. ``current`` is the
    label as the lock's query read it (None: there was none), a first guess that is checked again (see
    ``_lock_open_assignment``); without it the label is read here, locked."""
    assignment, question, unit_key, value = request.assignment, request.question, request.unit_key, request.value
    base_version, actor, now = request.base_version, request.actor, request.now
    fresh = current is _UNREAD
    if fresh:
        try:
            current = Label.objects.select_for_update().get(assignment=assignment, question=question, unit_key=unit_key)
        except Label.DoesNotExist:
            current = None
    if not fresh and current is not None and (current.value == value or base_version != current.version):
        # Answering from the first guess (no change, or a 409): read the label as it is now.
        return _write_label(request)
    if current is None:
        if base_version:
            # The client saw a label that no longer exists; labels are never deleted, so this is a
            # forged or corrupted version number.
            details = label_conflict_details(None, value, question, unit_key, viewer=actor)
            raise Conflict("This answer does not exist at the version you saw.", details=details)
        # A concurrent first answer raises IntegrityError here, which label_save answers after the rollback.
        label = Label(
            assignment=assignment, question=question, unit_key=unit_key, value=value,
            version=1, updated_by=actor, updated_at=now,
        )
        label.pk = statements.insert_label_and_history(label)
        label._state.adding, label._state.db = False, connection.alias
        return label
    if current.value == value and base_version <= current.version:
        # A retry of a save that already happened, or a save that changes nothing: no new version.
        return current
    if base_version != current.version:
        raise Conflict(
            "This answer was changed since you loaded it.",
            details=label_conflict_details(current, value, question, unit_key, viewer=actor),
        )
    # The update and its history row, written only if the label is still at the version read.
    updated = statements.update_label_and_history(current, value, actor.pk, now)
    if not updated and not fresh:  # the first guess was out of date: decide on the label as it is now
        return _write_label(request)
    if not updated:  # cannot happen while the row lock is held; refuse rather than guess
        details = label_conflict_details(current, value, question, unit_key, viewer=actor)
        raise Conflict("This answer was changed while saving.", details=details)
    current.value, current.version, current.updated_by, current.updated_at = value, current.version + 1, actor, now
    return current


def _lock_open_assignment(
    request: SaveRequest, *, only_question: int | None = None
) -> tuple[datetime | None, bool, dict[tuple[int, str], Label]]:
    """Lock the assignment row (a concurrent submit waits, and vice versa) and check that it is still
    open, in one query that also tells whether the unit exists and reads the annotator's labels of that
    unit and of the item (with ``only_question``, only that question's label of the unit). Returns the
    current reservation end, whether the unit exists and those labels.

    The status is read from the locked row, so it is current. The labels are read in the same
    statement; on PostgreSQL a query that waited for the lock sees them as they were when it started,
    so they are a first guess: ``_write_label`` only acts on them through statements that check them
    again (the insert's unique constraint, the update's version condition) and reads the label afresh
    before answering anything else."""
    assignment = request.assignment
    ensure_annotator(assignment, request.actor)
    rows = statements.lock_open_assignment(
        assignment.pk, request.question.scope, request.unit_key, only_question=only_question
    )
    if not rows:  # deleted meanwhile (a researcher took the unanswered item out of the annotator's queue)
        raise NotFound("No such assignment.")
    status, reserved_until, unit_ok = rows[0][:3]
    if status == AssignmentStatus.SUBMITTED:
        raise ValidationFailed("This item is submitted; its answers can no longer change.")
    if status == AssignmentStatus.SKIPPED:
        raise ValidationFailed("This item was skipped; its answers can no longer change.")
    if status == AssignmentStatus.WITHDRAWN:
        raise ValidationFailed(WITHDRAWN_REFUSAL)
    labels = {
        (question_id, key): Label(
            pk=pk, assignment=assignment, question_id=question_id, unit_key=key, value=value, version=version,
            updated_by_id=updated_by_id, updated_at=updated_at,
        )
        for *_, pk, question_id, key, value, version, updated_by_id, updated_at in rows
        if pk is not None
    }
    return reserved_until, bool(unit_ok), labels
