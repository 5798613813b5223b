"""Domain writes of the annotator workspace: assignment, reservation, submission, skipping, time, aspects,
reopening and what a page showed. The label save and its undo are ``annotation.labels``.

Every function is keyword-only and takes the acting user explicitly. Callers (views, API classes,
the console, the demo loader) have already fetched the objects through an access helper; these
functions still refuse an actor who is not the assignment's annotator, so no path can write into
someone else's work.

Locking. On PostgreSQL the queue uses ``SELECT … FOR UPDATE SKIP LOCKED``; submitting, skipping and
reopening lock the assignment row (``SELECT … FOR UPDATE``), as a label write does, so they wait for
each other. On SQLite ``FOR UPDATE`` is a no-op, but the project opens every transaction with
``BEGIN IMMEDIATE`` (settings: ``transaction_mode``), so write transactions are serialized by the
database lock.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation import conditions, quality, selectors, signals, units
from annotation.item_units import assignment_units
from annotation.labels.access import OPEN_STATUSES, WITHDRAWN_REFUSAL, ensure_annotator
from annotation.labels.save import assignment_answers
from annotation.models import (
    Aspect,
    AspectOrigin,
    AspectStatus,
    Assignment,
    AssignmentReopening,
    AssignmentStatus,
    ControlItem,
    Exposure,
    ExposureKind,
    Importance,
    Item,
    Pool,
    PoolItemExclusion,
    PoolMembership,
    Visibility,
)
from annotation.workspace import Workspace, assignment_workspace
from concord.errors import ValidationFailed

# A heartbeat reports the active seconds since the previous one; the page sends one at most every
# 30 s while the annotator is active, so anything above this is a clock jump or a forged request.
MAX_ACTIVE_SECONDS_PER_BEAT = 120.0
MAX_SKIP_REASON = 2000
MAX_ASPECT_TEXT = 1000


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
        # Items of known answer never count towards k (annotation.quality): the pool's queue kinds go to
        # every active member, the others (qualification items, kinds the pool does not serve) to nobody.
        known = dict(
            ControlItem.objects.filter(item__study_id=pool.study_id).values_list("item_id", "kind")
        )
        served = quality.queue_kinds(pool)
        control_list = [i for i in item_list if known.get(i.pk) in served]
        item_list = [i for i in item_list if i.pk not in known]
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
        for item in sorted(control_list, key=lambda i: i.pk):
            for user_id in members:
                if user_id not in existing[item.pk]:
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
        if pool.qualification_required and not quality.is_qualified(pool=pool, user_id=annotator.pk):
            raise quality.QualificationRequired(pool)
        takeable = (
            mine.filter(status__in=OPEN_STATUSES)
            .filter(Q(reserved_until__isnull=True) | Q(reserved_until__lte=now))
            .select_for_update(skip_locked=True)
            .order_by("order_key", "id")
        )
        candidate = _next_candidate(pool=pool, annotator=annotator, mine=mine, takeable=takeable)
        if candidate is None:
            return None
        candidate.status = AssignmentStatus.STARTED
        candidate.reserved_until = until
        candidate.started_at = candidate.started_at or now
        candidate.save(update_fields=["status", "reserved_until", "started_at"])
        return candidate


def _next_candidate(*, pool: Pool, annotator: AbstractBaseUser, mine, takeable) -> Assignment | None:
    """The next item of the queue. In a pool that serves items of known answer (``annotation.quality``) the
    slot drawn for this queue position says which kind comes next; when none of that kind is left, a real
    item comes, and when no real item is left, whatever known-answer item is."""
    kinds = quality.queue_kinds(pool)
    if not kinds:
        return takeable.first()
    # Lock the assignment row only: the item's mark is joined (an outer join for "no mark"), and PostgreSQL
    # refuses FOR UPDATE on the nullable side of an outer join.
    takeable = takeable.select_for_update(skip_locked=True, of=("self",))
    position = mine.exclude(status__in=[*OPEN_STATUSES, AssignmentStatus.WITHDRAWN]).count()
    slot = quality.slot_kind(pool=pool, annotator_id=annotator.pk, position=position)
    if slot is not None:
        chosen = takeable.filter(item__control__kind=slot).first()
        if chosen is not None:
            return chosen
    real = takeable.filter(item__control__isnull=True).first()
    return real if real is not None else takeable.first()


def assignment_open(*, assignment: Assignment, actor: AbstractBaseUser, now: datetime | None = None) -> Assignment:
    """Mark an assignment the annotator opened directly (by link) as started and reserve it."""
    ensure_annotator(assignment, actor)
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


# --- Reopening --------------------------------------------------------------------------------


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
    submission's receivers again (disagreement detection, the fixed-precision rule)."""
    now = now or timezone.now()
    ensure_annotator(assignment, actor)
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
        ensure_annotator(locked, actor)
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
    given = {(q.key, u): v for q, u, v in assignment_answers(assignment, by_key)}
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
        ensure_annotator(locked, actor)
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
    ensure_annotator(assignment, actor)
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
    ensure_annotator(assignment, actor)
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
) -> Workspace:
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


def _workspace_recorded(assignment: Assignment, user: AbstractBaseUser, kind: str | None) -> Workspace:
    workspace = assignment_workspace(assignment=assignment, user=user)
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
