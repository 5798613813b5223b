"""Domain writes of the annotator workspace: assignment, reservation, labels, submission.

Every function is keyword-only and takes the acting user explicitly. Callers (views, API classes,
the console, the demo loader) have already fetched the objects through an access helper; these
functions still refuse an actor who is not the assignment's annotator, so no path can write into
someone else's work.

Locking. On PostgreSQL the queue uses ``SELECT … FOR UPDATE SKIP LOCKED``; a label write locks its
assignment row (``SELECT … FOR UPDATE``), reading the unit's labels in the same query, and changes a
label only by a conditional ``UPDATE … WHERE version = base`` or an insert under the unique constraint,
so a read made stale by waiting for the lock is caught and the label read again. On SQLite
``FOR UPDATE`` is a no-op, but the project opens every transaction with ``BEGIN IMMEDIATE``
(settings: ``transaction_mode``), so write transactions are serialized by the database lock and the
same version checks give the same guarantees.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation import answers, conditions, selectors, signals, sql, units
from annotation.models import (
    Aspect,
    AspectOrigin,
    AspectStatus,
    Assignment,
    AssignmentReopening,
    AssignmentStatus,
    Exposure,
    ExposureKind,
    Importance,
    Item,
    Label,
    LabelHistory,
    Pool,
    PoolItemExclusion,
    PoolMembership,
    Question,
    Visibility,
)
from annotation.selectors import assignment_units, label_conflict_details
from concord.errors import Conflict, Forbidden, NotFound, ValidationFailed

# A heartbeat reports the active seconds since the previous one; the page sends one at most every
# 30 s while the annotator is active, so anything above this is a clock jump or a forged request.
MAX_ACTIVE_SECONDS_PER_BEAT = 120.0
MAX_SKIP_REASON = 2000
MAX_ASPECT_TEXT = 1000
OPEN_STATUSES = (AssignmentStatus.ASSIGNED, AssignmentStatus.STARTED)
WITHDRAWN_REFUSAL = (
    "A researcher took this item out of your queue; your answers on it are kept as they are and can no longer change."
)


# --- Assignment --------------------------------------------------------------------------------


def order_key_for(*, seed: int, pool_id: int, annotator_id: int, item_id: int) -> int:
    """A reproducible pseudo-random position of an item in one annotator's queue.

    Hashing (seed, pool, annotator, item) gives each annotator an independent random order that
    does not change when items are added later: new items interleave, old ones keep their place.
    """
    digest = hashlib.blake2b(f"{seed}:{pool_id}:{annotator_id}:{item_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1  # fits a signed 64-bit column


def pool_assign_items(*, pool: Pool, items: Iterable[Item] | None = None, seed: int | None = None) -> int:
    """Give each item to ``pool.overlap`` distinct active members, balanced across members.

    Idempotent: existing assignments count towards k, so re-running (or running after members or
    items were added) creates only what is missing. A member who left keeps the items they already
    submitted, which still count; their open ones do not. A withdrawn assignment (a researcher took the
    item from that member) never counts, nor adds to its member's load, but that member is never given
    the item again (one assignment per member and item). Ties between equally loaded members are
    broken by the seeded hash, so the same inputs give the same assignment. Returns how many
    assignments were created. Raises ValidationFailed when k exceeds the active members or an item
    belongs to another study.
    """
    seed = pool.seed if seed is None else seed
    with transaction.atomic():
        # One assigner per pool at a time, so two concurrent runs cannot both fill the same gap.
        pool = Pool.objects.select_for_update().get(pk=pool.pk)
        k = pool.overlap
        members = list(
            PoolMembership.objects.filter(pool=pool, active=True).order_by("id").values_list("user_id", flat=True)
        )
        if k < 1:
            raise ValidationFailed("The pool's overlap k must be at least 1.")
        if k > len(members):
            raise ValidationFailed(
                f"Overlap k={k} needs at least {k} active members; the pool has {len(members)}."
            )
        item_list = list(Item.objects.filter(study=pool.study_id)) if items is None else list(items)
        foreign = [i.pk for i in item_list if i.study_id != pool.study_id]
        if foreign:
            raise ValidationFailed("Items of another study cannot be assigned to this pool.", details=foreign)
        # Items a researcher removed from the pool (data manager) are never assigned again.
        excluded = set(PoolItemExclusion.objects.filter(pool=pool).values_list("item_id", flat=True))
        if excluded:
            item_list = [i for i in item_list if i.pk not in excluded]
        item_list.sort(key=lambda i: i.pk)

        active = set(members)
        existing: dict[int, set[int]] = defaultdict(set)
        counting: dict[int, int] = defaultdict(int)
        load: dict[int, int] = dict.fromkeys(members, 0)
        current = Assignment.objects.filter(pool=pool).values_list("item_id", "annotator_id", "status")
        for item_id, user_id, status in current:
            existing[item_id].add(user_id)
            if status == AssignmentStatus.WITHDRAWN:
                continue
            if user_id in active:
                load[user_id] += 1
            if user_id in active or status == AssignmentStatus.SUBMITTED:
                counting[item_id] += 1

        new: list[Assignment] = []
        for item in item_list:
            need = k - counting[item.pk]
            if need <= 0:
                continue
            candidates = [u for u in members if u not in existing[item.pk]]
            candidates.sort(
                key=lambda u: (load[u], order_key_for(seed=seed, pool_id=pool.pk, annotator_id=u, item_id=item.pk))
            )
            for user_id in candidates[:need]:
                load[user_id] += 1
                new.append(
                    Assignment(
                        pool=pool, item=item, annotator_id=user_id,
                        order_key=order_key_for(seed=seed, pool_id=pool.pk, annotator_id=user_id, item_id=item.pk),
                    )
                )
        Assignment.objects.bulk_create(new, batch_size=1000)
        return len(new)


def assignment_reserve_next(
    *, pool: Pool, annotator: AbstractBaseUser, now: datetime | None = None
) -> Assignment | None:
    """The annotator's next item in this pool, reserved for ``pool.reservation_minutes``.

    A live reservation is returned again (and extended), so "continue" from two tabs opens the same
    item. Otherwise the first open assignment in the annotator's seeded order whose reservation is
    absent or lapsed is taken with ``FOR UPDATE SKIP LOCKED``: concurrent callers (API scripts with
    several workers on one account) each get a different item instead of waiting on one another.
    A lapsed reservation — a closed tab — simply releases the item back into the queue.
    Returns None when nothing is left.
    """
    now = now or timezone.now()
    until = now + timedelta(minutes=pool.reservation_minutes)
    with transaction.atomic():
        mine = Assignment.objects.for_annotator(annotator).filter(pool=pool)
        live = (
            mine.filter(status=AssignmentStatus.STARTED, reserved_until__gt=now)
            .select_for_update(skip_locked=True)
            .order_by("order_key")
            .first()
        )
        if live is not None:
            live.reserved_until = until
            live.save(update_fields=["reserved_until"])
            return live
        if pool.closed_at is not None:  # closed (e.g. by its fixed-precision rule): no further items
            return None
        candidate = (
            mine.filter(status__in=OPEN_STATUSES)
            .filter(Q(reserved_until__isnull=True) | Q(reserved_until__lte=now))
            .select_for_update(skip_locked=True)
            .order_by("order_key", "id")
            .first()
        )
        if candidate is None:
            return None
        candidate.status = AssignmentStatus.STARTED
        candidate.reserved_until = until
        candidate.started_at = candidate.started_at or now
        candidate.save(update_fields=["status", "reserved_until", "started_at"])
        return candidate


def assignment_open(*, assignment: Assignment, actor: AbstractBaseUser, now: datetime | None = None) -> Assignment:
    """Mark an assignment the annotator opened directly (by link) as started and reserve it."""
    _ensure_annotator(assignment, actor)
    if assignment.status not in OPEN_STATUSES:
        return assignment
    now = now or timezone.now()
    until = now + timedelta(minutes=assignment.pool.reservation_minutes)
    started_at = assignment.started_at or now
    updated = Assignment.objects.filter(pk=assignment.pk, status__in=OPEN_STATUSES).update(
        status=AssignmentStatus.STARTED, reserved_until=until, started_at=started_at
    )
    if updated:
        assignment.status, assignment.reserved_until = AssignmentStatus.STARTED, until
        assignment.started_at = started_at
    else:  # submitted or skipped meanwhile
        assignment.refresh_from_db(fields=["status", "reserved_until", "started_at"])
    return assignment


# --- Labels ------------------------------------------------------------------------------------


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
    return _label_save(assignment, question, unit_key, value, base_version, actor, now, unit_labels=False).label


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

    The pool's questions are those of ``selectors.pool_questions`` (loaded once per pool object). In the
    common case (no condition involves the question) the write runs one locking query, which checks
    that the assignment is open and the unit exists and reads the unit's labels, then the insert or
    update and the history row.
    """
    return _label_save(assignment, question, unit_key, value, base_version, actor, now, unit_labels=True)


def _label_save(
    assignment: Assignment,
    question: Question,
    unit_key: str,
    value: Any,
    base_version: int | None,
    actor: AbstractBaseUser,
    now: datetime | None,
    *,
    unit_labels: bool,
) -> LabelSaved:
    """The save; with ``unit_labels`` False the lock reads only the label being saved (``LabelSaved.unit_labels``
    then holds that label alone)."""
    now = now or timezone.now()
    pool_questions = selectors.pool_questions(assignment.pool)
    by_key = {q.key: q for q in pool_questions}
    if question.pk not in {q.pk for q in pool_questions}:
        raise ValidationFailed(f"Question {question.key!r} is not asked in this pool.")
    if not unit_labels:
        saved = _label_save_at_once(assignment, question, unit_key, value, base_version, actor, now, by_key)
        if saved is not None:
            return saved
    args = (assignment, question, unit_key, value, base_version, actor, now, by_key, unit_labels)
    try:
        with transaction.atomic():
            return _label_save_locked(*args)
    except IntegrityError:
        # Another request created this label between our read and our insert (two tabs, first answer),
        # and nothing of this save was kept: save again, now reading that label (idempotent or 409).
        with transaction.atomic():
            return _label_save_locked(*args)


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


def _label_save_at_once(
    assignment: Assignment,
    question: Question,
    unit_key: str,
    value: Any,
    base_version: int | None,
    actor: AbstractBaseUser,
    now: datetime,
    by_key: dict[str, Question],
) -> LabelSaved | None:
    """The common save of one answer through the API, on PostgreSQL, in one statement
    (``sql.save_label_at_once``): a valid value of a question that no condition involves and that is not
    an alignment, by the assigned annotator. None when that statement wrote nothing, or the save is not
    such a save: the caller then runs the locked save, which answers every other case (a refusal, a 409,
    the stored label for a repeat) exactly as before."""
    if connection.vendor != "postgresql":
        return None
    if assignment.annotator_id != actor.pk or question.kind == "alignment" or _involved(question, by_key):
        return None
    try:
        clean = answers.normalise(question, value, alignment_targets=())
    except answers.InvalidValue:
        return None  # the locked save refuses it, after its own checks of the item and the unit
    if not _plain_json(clean):
        return None
    saved = sql.save_label_at_once(
        assignment_id=assignment.pk, question_id=question.pk, scope=question.scope, unit_key=unit_key,
        value=clean, base_version=base_version or 0, actor_id=actor.pk, now=now,
        reserve_until=now + timedelta(minutes=assignment.pool.reservation_minutes),
        reserve_if_before=now + timedelta(minutes=5),
    )
    if saved is None:
        return None
    label_id, version = saved
    label = Label(
        pk=label_id, assignment=assignment, question=question, unit_key=unit_key, value=clean, version=version,
        updated_by=actor, updated_at=now,
    )
    label._state.adding, label._state.db = False, connection.alias
    return LabelSaved(label=label, unit_labels={(question.pk, unit_key): label})


def _label_save_locked(
    assignment: Assignment,
    question: Question,
    unit_key: str,
    value: Any,
    base_version: int | None,
    actor: AbstractBaseUser,
    now: datetime,
    by_key: dict[str, Question],
    with_unit_labels: bool = True,
) -> LabelSaved:
    reserved_until, unit_exists, unit_labels = _lock_open_assignment(
        assignment, actor, question.scope, unit_key, only_question=None if with_unit_labels else question.pk
    )
    if not unit_exists:
        raise ValidationFailed(f"There is no {question.scope} {unit_key!r} in this item.")
    targets: Iterable[int] = ()
    if question.kind == "alignment":
        targets = assignment_units(item_id=assignment.item_id).alignment_targets(question.scope)
    try:
        clean = answers.normalise(question, value, alignment_targets=targets)
    except answers.InvalidValue as exc:
        details = {"question": question.key, "unit_key": unit_key}
        raise ValidationFailed(f"{question.prompt}: {exc}", details=details) from exc
    # Other answers matter only when a condition involves this question (the common case needs none).
    involved = _involved(question, by_key)
    given = {(q.key, u): v for q, u, v in _answers(assignment, by_key)} if involved else {}
    if involved and clean is not None and not conditions.is_applicable(question, unit_key, given, by_key):
        raise ValidationFailed(f"{question.prompt}: not asked here given the other answers.")
    current = unit_labels.get((question.pk, unit_key))
    label = _write_label(assignment, question, unit_key, clean, base_version, actor, now, current=current)
    unit_labels[(question.pk, unit_key)] = label
    if involved:
        given[(question.key, unit_key)] = clean
        for dep_key, dep_unit in conditions.dependents_to_clear(question.key, unit_key, given, by_key):
            dep_question = by_key[dep_key]
            dep = Label.objects.select_for_update().get(assignment=assignment, question=dep_question, unit_key=dep_unit)
            cleared = _write_label(assignment, dep_question, dep_unit, None, dep.version, actor, now, current=dep)
            if (dep_question.pk, dep_unit) in unit_labels:
                unit_labels[(dep_question.pk, dep_unit)] = cleared
    if reserved_until is not None and reserved_until < now + timedelta(minutes=5):
        # Working on an item keeps it reserved.
        until = now + timedelta(minutes=assignment.pool.reservation_minutes)
        Assignment.objects.filter(pk=assignment.pk).update(reserved_until=until)
    return LabelSaved(label=label, unit_labels=unit_labels)


def _answers(assignment: Assignment, by_key: dict[str, Question]) -> Iterable[tuple[Question, str, Any]]:
    by_id = {q.pk: q for q in by_key.values()}
    rows = Label.objects.filter(assignment=assignment).values_list("question_id", "unit_key", "value")
    for question_id, unit_key, value in rows:
        if question_id in by_id:
            yield by_id[question_id], unit_key, value


_UNREAD = object()


def _write_label(
    assignment: Assignment,
    question: Question,
    unit_key: str,
    value: Any,
    base_version: int | None,
    actor: AbstractBaseUser,
    now: datetime,
    *,
    current: Any = _UNREAD,
) -> Label:
    """Write one label under the assignment's lock. ``current`` is the label as the lock's query read it
    (None: there was none), a first guess that is checked again (see ``_lock_open_assignment``); without it
    the label is read here, locked."""
    fresh = current is _UNREAD
    if fresh:
        try:
            current = Label.objects.select_for_update().get(assignment=assignment, question=question, unit_key=unit_key)
        except Label.DoesNotExist:
            current = None
    if not fresh and current is not None and (current.value == value or (base_version or 0) != current.version):
        # Answering from the first guess (no change, or a 409): read the label as it is now.
        return _write_label(assignment, question, unit_key, value, base_version, actor, now)
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
        label.pk = sql.insert_label_and_history(label)
        label._state.adding, label._state.db = False, connection.alias
        return label
    if current.value == value and (base_version or 0) <= current.version:
        # A retry of a save that already happened, or a save that changes nothing: no new version.
        return current
    if (base_version or 0) != current.version:
        raise Conflict(
            "This answer was changed since you loaded it.",
            details=label_conflict_details(current, value, question, unit_key, viewer=actor),
        )
    # The update and its history row, written only if the label is still at the version read.
    updated = sql.update_label_and_history(current, value, actor.pk, now)
    if not updated and not fresh:  # the first guess was out of date: decide on the label as it is now
        return _write_label(assignment, question, unit_key, value, base_version, actor, now)
    if not updated:  # cannot happen while the row lock is held; refuse rather than guess
        details = label_conflict_details(current, value, question, unit_key, viewer=actor)
        raise Conflict("This answer was changed while saving.", details=details)
    current.value, current.version, current.updated_by, current.updated_at = value, current.version + 1, actor, now
    return current


# --- Undo and reopening ----------------------------------------------------------------------


@dataclass
class Undone:
    """What an undo reverted: (question, unit key, value restored) per label, in the order written."""

    restored: list[tuple[Question, str, Any]]


def label_undo(*, assignment: Assignment, actor: AbstractBaseUser, now: datetime | None = None) -> Undone:
    """Undo the annotator's last change on an open item: the labels that one save changed (the answer
    and any dependent answers it cleared) get their previous values back, each as a new version with
    its own history row marked ``undoes`` — nothing is erased. Undo again to revert the change before
    that one. Refused (ValidationFailed) when there is nothing left to undo or the item is not open."""
    now = now or timezone.now()
    _ensure_annotator(assignment, actor)
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().select_related("pool").get(pk=assignment.pk)
        if locked.status not in OPEN_STATUSES:
            raise ValidationFailed("This item is not open; its answers can no longer change.")
        rows = list(
            LabelHistory.objects.filter(label__assignment=locked, actor=actor)
            .select_related("label__question")
            .order_by("-id")[:2000]
        )
        undone = {r.undoes_id for r in rows if r.undoes_id}
        undone_at = {r.at for r in rows if r.pk in undone}
        candidates = [r for r in rows if r.undoes_id is None and r.pk not in undone and r.at not in undone_at]
        if not candidates:
            raise ValidationFailed("Nothing to undo on this item.")
        last_at = candidates[0].at
        group = sorted((r for r in candidates if r.at == last_at), key=lambda r: r.pk)
        restored: list[tuple[Question, str, Any]] = []
        for row in group:  # the answer first, then the dependents it cleared
            label = Label.objects.select_for_update().get(pk=row.label_id)
            question = row.label.question
            saved = label_save(
                assignment=locked, question=question, unit_key=label.unit_key, value=row.old_value,
                base_version=label.version, actor=actor, now=now,
            )
            restored.append((question, label.unit_key, saved.value))
        # Every history row this undo wrote (dependents it cleared included) is marked as an undo.
        LabelHistory.objects.filter(label__assignment=locked, actor=actor, at=now, undoes__isnull=True).update(
            undoes=group[0]
        )
    return Undone(restored=restored)


def reopen_refusal(*, assignment: Assignment) -> str | None:
    """Why a submitted item cannot be reopened, or None when it can: only submitted items, only in pools
    that allow it, and never once the annotator saw other annotators' labels on it (a calibration pool
    after submitting): changing answers then would break their independence without anyone knowing.
    It decides only under the assignment's row lock (:func:`assignment_reopen`), which the page that shows
    others' labels takes too (:func:`assignment_workspace_shown`); elsewhere it is what a page tells."""
    if assignment.status != AssignmentStatus.SUBMITTED:
        return "Only a submitted item can be reopened."
    if not assignment.pool.reopen_allowed:
        return selectors.REOPEN_NOT_ALLOWED
    seen = Exposure.objects.filter(
        user_id=assignment.annotator_id, pool_id=assignment.pool_id, item_id=assignment.item_id,
        showed_other_labels=True,
    )
    if seen.exists():
        return selectors.REOPEN_AFTER_SEEING_OTHERS
    return None


def assignment_reopen(*, assignment: Assignment, actor: AbstractBaseUser, now: datetime | None = None) -> Assignment:
    """Reopen an item the annotator submitted, when :func:`reopen_refusal` allows it. The reopening is
    recorded (an AssignmentReopening row and ``reopened_count``); the item is started and reserved again,
    and every change made afterwards goes to the labels' history as usual. Submitting it again runs the
    submission handlers again (disagreement detection)."""
    now = now or timezone.now()
    _ensure_annotator(assignment, actor)
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().select_related("pool").get(pk=assignment.pk)
        refusal = reopen_refusal(assignment=locked)
        if refusal:
            raise ValidationFailed(refusal)
        AssignmentReopening.objects.create(assignment=locked, actor=actor, submitted_at=locked.submitted_at, at=now)
        locked.status = AssignmentStatus.STARTED
        locked.reserved_until = now + timedelta(minutes=locked.pool.reservation_minutes)
        locked.reopened_count = F("reopened_count") + 1
        locked.save(update_fields=["status", "reserved_until", "reopened_count"])
        locked.refresh_from_db(fields=["reopened_count"])
    return locked


# --- Submission, skipping, time --------------------------------------------------------------


def assignment_submit(*, assignment: Assignment, actor: AbstractBaseUser, now: datetime | None = None) -> Assignment:
    """Submit an assignment; idempotent (a second submit returns the submitted assignment).

    Refused with ValidationFailed (details: the list of missing answers) while a required question
    that applies is unanswered. On success, ``annotation.signals.assignment_submitted`` is sent in the same
    transaction (keyword arguments pool_id=, item_id=; adjudication's receivers detect disagreements), so a
    failing receiver rolls the submission back instead of leaving a submitted item without its follow-up.
    """
    now = now or timezone.now()
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().select_related("pool").get(pk=assignment.pk)
        _ensure_annotator(locked, actor)
        if locked.status == AssignmentStatus.SUBMITTED:
            return locked
        if locked.status == AssignmentStatus.SKIPPED:
            raise ValidationFailed("This item was skipped and cannot be submitted.")
        if locked.status == AssignmentStatus.WITHDRAWN:
            raise ValidationFailed(WITHDRAWN_REFUSAL)
        missing = assignment_missing_answers(assignment=locked)
        if missing:
            raise ValidationFailed(
                f"{len(missing)} required answer{'s' if len(missing) != 1 else ''} missing.",
                details=missing,
            )
        locked.status = AssignmentStatus.SUBMITTED
        locked.submitted_at = now
        locked.reserved_until = None
        locked.save(update_fields=["status", "submitted_at", "reserved_until"])
        signals.assignment_submitted.send(sender=Assignment, pool_id=locked.pool_id, item_id=locked.item_id)
        return locked


def assignment_missing_answers(*, assignment: Assignment) -> list[dict[str, str]]:
    """Required, applicable answers still missing, as dicts (question, unit_key, prompt, unit)."""
    questions = list(assignment.pool.questions.all())
    by_key = {q.key: q for q in questions}
    item_units = assignment_units(item_id=assignment.item_id)
    given = {(q.key, u): v for q, u, v in _answers(assignment, by_key)}
    missing = conditions.missing_answers(
        questions,
        {scope: item_units.keys_for(scope) for scope in units.SCOPES},
        given,
        alignment_targets_by_scope={scope: item_units.alignment_targets(scope) for scope in units.SCOPES},
    )
    return [
        {
            "question": m.question_key, "unit_key": m.unit_key, "prompt": by_key[m.question_key].prompt,
            "unit": item_units.describe(m.unit_key),
        }
        for m in missing
    ]


def assignment_skip(
    *, assignment: Assignment, actor: AbstractBaseUser, reason: str, now: datetime | None = None
) -> Assignment:
    """Skip an item with a reason (required). Idempotent; a submitted item cannot be skipped."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationFailed("Say why you skip this item.")
    if len(reason) > MAX_SKIP_REASON:
        raise ValidationFailed(f"The reason is longer than {MAX_SKIP_REASON} characters.")
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        _ensure_annotator(locked, actor)
        if locked.status == AssignmentStatus.SKIPPED:
            return locked
        if locked.status == AssignmentStatus.SUBMITTED:
            raise ValidationFailed("This item is already submitted.")
        if locked.status == AssignmentStatus.WITHDRAWN:
            raise ValidationFailed(WITHDRAWN_REFUSAL)
        locked.status = AssignmentStatus.SKIPPED
        locked.skip_reason = reason
        locked.reserved_until = None
        locked.save(update_fields=["status", "skip_reason", "reserved_until"])
        return locked


def assignment_time_record(*, assignment: Assignment, actor: AbstractBaseUser, seconds: float) -> float:
    """Add active seconds on task reported by the page, clamped to [0, MAX_ACTIVE_SECONDS_PER_BEAT].

    Time is only counted while the assignment is open; returns the seconds actually added.
    """
    _ensure_annotator(assignment, actor)
    try:
        seconds = float(seconds)
    except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: an integer past a float (400 digits)
        raise ValidationFailed("seconds must be a number") from exc
    if seconds != seconds:  # NaN
        raise ValidationFailed("seconds must be a number")
    seconds = min(max(seconds, 0.0), MAX_ACTIVE_SECONDS_PER_BEAT)
    updated = Assignment.objects.filter(pk=assignment.pk, status__in=OPEN_STATUSES).update(
        active_seconds=F("active_seconds") + seconds
    )
    return seconds if updated else 0.0


# --- Aspects and exposure ----------------------------------------------------------------------


def aspect_propose(*, assignment: Assignment, actor: AbstractBaseUser, text: str, importance: str) -> Aspect:
    """An annotator proposes a missing aspect of the item. It stays ``proposed`` until a second
    person accepts it in adjudication; only then does it join the aspect set (and get labelled)."""
    _ensure_annotator(assignment, actor)
    text = (text or "").strip()
    if not text:
        raise ValidationFailed("Describe the missing aspect.")
    if len(text) > MAX_ASPECT_TEXT:
        raise ValidationFailed(f"The aspect is longer than {MAX_ASPECT_TEXT} characters.")
    if importance not in Importance.values:
        raise ValidationFailed(f"Importance must be one of {', '.join(Importance.values)}.")
    if assignment.status not in OPEN_STATUSES:
        raise ValidationFailed("This item is closed; aspects can be proposed while it is open.")
    duplicate = Aspect.objects.filter(item_id=assignment.item_id, proposed_by=actor, text__iexact=text).first()
    if duplicate is not None:
        return duplicate
    return Aspect.objects.create(
        item_id=assignment.item_id, text=text, importance=importance,
        origin=AspectOrigin.PROPOSED, status=AspectStatus.PROPOSED, proposed_by=actor,
    )


def assignment_workspace_shown(
    *, assignment: Assignment, user: AbstractBaseUser, kind: str | None = None
) -> selectors.Workspace:
    """The workspace an item page (or the API's item view) shows, with what it shows recorded (an Exposure).

    Seeing other annotators' labels (a calibration pool, after submitting) forbids reopening the item
    (:func:`reopen_refusal`), so showing them and reopening are one serialised step on the assignment row,
    which :func:`assignment_reopen` locks too: here the row is locked, its status read afresh (an item
    reopened meanwhile is open again, and its page shows no other labels), the labels read and the exposure
    recorded in one transaction, and nothing leaves the server before it commits. A reopening that waited
    for this lock then finds the exposure and is refused; a page that waited for a reopening finds the item
    open. Other pages take no lock: an item read here as open is drawn without others' labels even if it is
    submitted meanwhile. ``kind``: the API's (``ExposureKind.API``), or None for the item page
    (``CALIBRATION`` when it shows others' labels, else ``ITEM_PAGE``). ``assignment`` is updated in place."""
    if assignment.pool.visibility != Visibility.AFTER_SUBMIT or assignment.status != AssignmentStatus.SUBMITTED:
        return _workspace_recorded(assignment, user, kind)
    with transaction.atomic():
        fields = ("status", "reserved_until", "started_at", "submitted_at", "reopened_count")
        current = Assignment.objects.select_for_update().filter(pk=assignment.pk).values(*fields).get()
        for name in fields:
            setattr(assignment, name, current[name])
        return _workspace_recorded(assignment, user, kind)


def _workspace_recorded(assignment: Assignment, user: AbstractBaseUser, kind: str | None) -> selectors.Workspace:
    workspace = selectors.assignment_workspace(assignment=assignment, user=user)
    if kind is None:
        kind = ExposureKind.CALIBRATION if workspace.showed_other_labels else ExposureKind.ITEM_PAGE
    exposure_record(
        user=user, assignment=assignment, kind=kind, showed_other_labels=workspace.showed_other_labels,
        showed_system=workspace.showed_system, metadata_keys=workspace.metadata_keys,
    )
    return workspace


def exposure_record(
    *, user: AbstractBaseUser, assignment: Assignment, kind: str, showed_other_labels: bool, showed_system: bool,
    metadata_keys: Iterable[str] = (),
) -> Exposure:
    """Record what an annotator was shown, with exactly the item metadata keys the page showed.
    Annotator pages never show scores (annotation cannot even read them), so ``showed_scores`` is always
    False here."""
    return Exposure.objects.create(
        user=user, pool_id=assignment.pool_id, item_id=assignment.item_id, kind=kind,
        showed_scores=False, showed_other_labels=showed_other_labels, showed_system=showed_system,
        metadata_keys=sorted(metadata_keys),
    )


# --- Guards ------------------------------------------------------------------------------------


def _ensure_annotator(assignment: Assignment, actor: AbstractBaseUser) -> None:
    if assignment.annotator_id != actor.pk:
        raise Forbidden("Only the assigned annotator may change this assignment.")


def _lock_open_assignment(
    assignment: Assignment, actor: AbstractBaseUser, scope: str, unit_key: str, *, only_question: int | None = None
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
    _ensure_annotator(assignment, actor)
    rows = sql.lock_open_assignment(assignment.pk, scope, unit_key, only_question=only_question)
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
