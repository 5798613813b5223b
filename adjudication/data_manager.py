"""The researcher's data manager: a study's items searched and filtered, and bulk actions on them.

Filters (all combined with AND): text (id, question or answer), status in a pool (not assigned, open,
done, skipped, withdrawn), disagreement (an open case, any case, none), gold (current gold or none), the
item's score in a run between two values, and one metadata key = value. Each is one indexed subquery
(``EXISTS``) on the item, so a page costs a count and one slice however many items the study has
(``bench/data_manager.py`` measures it on 100,000 items). The metadata key is one literal key of the
item's metadata, compared as text (``KeyTextTransform``): it is never turned into an ORM lookup, so
``isnull`` or ``topic__regex`` are key names like any other.

Bulk actions change assignments of one pool for the chosen items (or every item the filters match),
after a confirmation that says exactly what will change, and write one ``BulkAction`` audit row in
the same transaction. An assignment's annotator never changes (it says who is credited with its
labels); the labels of an open assignment are never moved, never deleted, never shown to anyone else:

* **reassign**: each open (assigned or started) assignment of one member is closed, and another active
  member who does not have the item yet gets a new, empty assignment of it. The closed one is deleted
  when it holds no saved answers and was never submitted (nothing of its annotator's is lost);
  otherwise it becomes ``withdrawn``: read-only, its answers still its annotator's (exports, under their
  pseudonym), never counted as submitted work (agreement, gold, progress, the top-up's overlap);
* **remove**: the items are excluded from the pool, so that its top-up never assigns them again; their
  open assignments are closed as above (deleted when empty, withdrawn when they hold answers);
  submitted and skipped work is kept;
* **re-queue**: skipped assignments go back to the annotator's queue.

What changed between the confirmation and the action (an item submitted or answered meanwhile, a
receiver who got the item or left the pool) is decided under the locks the annotators' own writes take,
and the outcome says what was left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.paginator import Page, Paginator
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, TextField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.db.models.lookups import Exact

from adjudication.models import AdjudicationCase, BulkAction, BulkActionKind, CaseStatus, GoldLabel
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Item,
    Label,
    Pool,
    PoolItemCounts,
    PoolItemExclusion,
    PoolMembership,
    Study,
)
from annotation.services import order_key_for
from concord.errors import Conflict, NotFound, ValidationFailed
from concord.params import parse_id, parse_ids
from scoring.models import Score, ScoreRun

PER_PAGE = 50
MAX_BULK = 100_000
POOL_STATES = ("not_assigned", "open", "done", "skipped", "withdrawn")
# The filter's choices as the page shows them.
POOL_STATE_CHOICES = [(state, state.replace("_", " ").capitalize()) for state in POOL_STATES]
# A plain key: what the console accepts for the visible and hidden metadata fields.
_META_KEY = re.compile(r"^[A-Za-z0-9_.\-]{1,80}$")
OPEN = (AssignmentStatus.ASSIGNED, AssignmentStatus.STARTED)
# Work handed out and not (yet) submitted: what keeps an item from being done in a pool. The statuses of the
# partial index asg_item_pool_unfinished_idx (annotation migration 0017), which the "open" and "skipped" filters use.
UNFINISHED = (*OPEN, AssignmentStatus.SKIPPED)
WITHDRAWN = AssignmentStatus.WITHDRAWN


def _number(raw: str, name: str) -> float | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValidationFailed(f"{name} must be a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValidationFailed(f"{name} must be a finite number")
    return value


def _study_object(model: Any, study: Study, raw: Any) -> Any:
    """The study's ``model`` row named by ``raw`` (an id from the request), or None: a malformed id, an id
    of another study and an id that exists nowhere are alike."""
    pk = parse_id(raw)
    return model.objects.filter(study=study, pk=pk).first() if pk is not None else None


def meta_key_valid(key: str) -> bool:
    """A plain metadata key: letters, digits, ``_ - .``, and not a whole number (which JSON paths read as a
    list index, so it would name no key of the metadata object)."""
    if not _META_KEY.match(key):
        return False
    try:
        int(key)
    except ValueError:
        return True
    return False


@dataclass
class Filters:
    q: str = ""
    pool: Pool | None = None
    pool_state: str = ""
    disagreement: str = ""  # "open" | "any" | "none"
    gold: str = ""  # "yes" | "no"
    run: ScoreRun | None = None
    score_min: float | None = None
    score_max: float | None = None
    meta_key: str = ""
    meta_value: str = ""

    @classmethod
    def parse(cls, study: Study, data: Any) -> Filters:
        f = cls(q=(data.get("q") or "").strip()[:300])
        if (data.get("pool") or "").strip():
            f.pool = _study_object(Pool, study, data.get("pool"))
            if f.pool is None:
                raise NotFound("pool not found")
        f.pool_state = (data.get("pool_state") or "").strip()
        if f.pool_state and f.pool_state not in POOL_STATES:
            raise ValidationFailed(f"status in a pool is one of {', '.join(POOL_STATES)}")
        if f.pool_state and f.pool is None:
            raise ValidationFailed("choose the pool whose status to filter on")
        f.disagreement = (data.get("disagreement") or "").strip()
        if f.disagreement not in ("", "open", "any", "none"):
            raise ValidationFailed("disagreement is open, any or none")
        f.gold = (data.get("gold") or "").strip()
        if f.gold not in ("", "yes", "no"):
            raise ValidationFailed("gold is yes or no")
        if (data.get("run") or "").strip():
            f.run = _study_object(ScoreRun, study, data.get("run"))
            if f.run is None:
                raise NotFound("score run not found")
        f.score_min = _number(data.get("score_min", ""), "the lowest score")
        f.score_max = _number(data.get("score_max", ""), "the highest score")
        if (f.score_min is not None or f.score_max is not None) and f.run is None:
            raise ValidationFailed("choose the score run whose values to filter on")
        f.meta_key = (data.get("meta_key") or "").strip()
        f.meta_value = (data.get("meta_value") or "").strip()[:300]
        if f.meta_key and not meta_key_valid(f.meta_key):
            raise ValidationFailed(
                "a metadata key has letters, digits, '_', '-' or '.' only (at most 80), and is not a number"
            )
        return f

    def as_query(self) -> dict[str, str]:
        """The filters as GET parameters (to carry them through a confirmation)."""
        out = {
            "q": self.q, "pool": str(self.pool.pk) if self.pool else "", "pool_state": self.pool_state,
            "disagreement": self.disagreement, "gold": self.gold, "run": str(self.run.pk) if self.run else "",
            "score_min": "" if self.score_min is None else repr(self.score_min),
            "score_max": "" if self.score_max is None else repr(self.score_max),
            "meta_key": self.meta_key, "meta_value": self.meta_value,
        }
        return {k: v for k, v in out.items() if v}


def metadata_equals(key: str, value: str) -> Exact:
    """The condition "the item's metadata has ``key`` with the value ``value`` (compared as text)". The key
    is one literal key (a parameter of the JSON path, never part of a lookup), so ``isnull``, ``regex`` or
    ``a__b`` name keys; the caller has checked it with :func:`meta_key_valid`."""
    return Exact(Cast(KeyTextTransform(key, "metadata"), TextField()), value)


def filtered_items(study: Study, f: Filters) -> QuerySet[Item]:
    items = Item.objects.filter(study=study)
    if f.q:
        items = items.filter(Q(external_id__icontains=f.q) | Q(question__icontains=f.q) | Q(answer__icontains=f.q))
    if f.pool is not None and f.pool_state:
        in_pool = Assignment.objects.filter(pool=f.pool, item=OuterRef("pk"))
        # "Not assigned" and "done" read the item's assignment counts in the pool (PoolItemCounts, kept by
        # triggers: annotation/pool_counts.py), one partial-index entry per item, not its k assignments.
        counts = PoolItemCounts.objects.filter(pool=f.pool, item=OuterRef("pk"))
        if f.pool_state == "not_assigned":
            # Withdrawn work does not count: nobody has the item to do or done.
            assigned = Q(n_open__gt=0) | Q(n_submitted__gt=0) | Q(n_skipped__gt=0)
            items = items.filter(~Exists(counts.filter(assigned)))
        elif f.pool_state == "open":
            items = items.filter(Exists(in_pool.filter(status__in=OPEN)))  # the partial index serves it too
        elif f.pool_state == "done":
            # Every assignment of the item in the pool submitted (withdrawn ones aside), and at least one.
            items = items.filter(Exists(counts.filter(n_submitted__gt=0, n_open=0, n_skipped=0)))
        elif f.pool_state == "withdrawn":
            items = items.filter(Exists(in_pool.filter(status=WITHDRAWN)))
        else:
            items = items.filter(Exists(in_pool.filter(status=AssignmentStatus.SKIPPED)))
    cases = AdjudicationCase.objects.filter(item=OuterRef("pk"))
    if f.pool is not None:
        cases = cases.filter(pool=f.pool)
    if f.disagreement == "open":
        items = items.filter(Exists(cases.filter(status=CaseStatus.OPEN)))
    elif f.disagreement == "any":
        items = items.filter(Exists(cases))
    elif f.disagreement == "none":
        items = items.filter(~Exists(cases))
    gold = GoldLabel.objects.filter(item=OuterRef("pk"), is_current=True)
    if f.pool is not None:
        gold = gold.filter(pool=f.pool)
    if f.gold == "yes":
        items = items.filter(Exists(gold))
    elif f.gold == "no":
        items = items.filter(~Exists(gold))
    if f.run is not None and (f.score_min is not None or f.score_max is not None):
        scores = Score.objects.filter(run=f.run, item=OuterRef("pk"), unit_key="item", value__isnull=False)
        if f.score_min is not None:
            scores = scores.filter(value__gte=f.score_min)
        if f.score_max is not None:
            scores = scores.filter(value__lte=f.score_max)
        items = items.filter(Exists(scores))
    if f.meta_key:
        items = items.filter(metadata_equals(f.meta_key, f.meta_value))
    return items.order_by("pk")


@dataclass
class Row:
    item: Item
    statuses: list[tuple[Pool, str]] = field(default_factory=list)
    open_cases: int = 0
    gold: bool = False
    score: float | None = None


def _status_label(counts: dict[str, int], k: int) -> str:
    withdrawn = counts.get(WITHDRAWN, 0)
    tail = [f"{withdrawn} withdrawn"] if withdrawn else []
    if not any(n for status, n in counts.items() if status != WITHDRAWN):
        return ", ".join(["not assigned", *tail])
    done = counts.get(AssignmentStatus.SUBMITTED, 0)
    target = max(k, done)
    parts = [f"{done}/{target} done"]
    open_now = counts.get(AssignmentStatus.STARTED, 0) + counts.get(AssignmentStatus.ASSIGNED, 0)
    if open_now:
        parts.append(f"{open_now} open")
    if counts.get(AssignmentStatus.SKIPPED):
        parts.append(f"{counts[AssignmentStatus.SKIPPED]} skipped")
    return ", ".join(parts + tail)


def page_rows(study: Study, f: Filters, page: Any) -> tuple[Page, list[Row]]:
    """One page of matching items with their status per pool, open cases, gold and the chosen run's score."""
    current = Paginator(filtered_items(study, f).only("pk", "external_id", "question", "system"), PER_PAGE)
    page_obj = current.get_page(page)
    items = list(page_obj.object_list)
    ids = [i.pk for i in items]
    pools = list(Pool.objects.filter(study=study).order_by("name"))
    counts: dict[tuple[int, int], dict[str, int]] = {}
    for r in Assignment.objects.filter(item_id__in=ids).values("item_id", "pool_id", "status").annotate(n=Count("id")):
        counts.setdefault((r["item_id"], r["pool_id"]), {})[r["status"]] = r["n"]
    open_cases = dict(
        AdjudicationCase.objects.filter(item_id__in=ids, status=CaseStatus.OPEN)
        .values("item_id").annotate(n=Count("id")).values_list("item_id", "n")
    )
    with_gold = set(GoldLabel.objects.filter(item_id__in=ids, is_current=True).values_list("item_id", flat=True))
    scores = {}
    if f.run is not None:
        scores = dict(Score.objects.filter(run=f.run, item_id__in=ids, unit_key="item").values_list("item_id", "value"))
    rows = [
        Row(item, [(p, _status_label(counts.get((item.pk, p.pk), {}), p.overlap)) for p in pools],
            open_cases.get(item.pk, 0), item.pk in with_gold, scores.get(item.pk))
        for item in items
    ]
    return page_obj, rows


# --- Bulk actions -----------------------------------------------------------------------------------


@dataclass
class Plan:
    """What a bulk action will change, shown for confirmation; :func:`bulk_apply` then applies it to what
    still qualifies."""

    action: str
    pool: Pool
    item_ids: list[int]
    assignments: list[int]  # the assignments the action closes (reassign, remove) or re-queues
    kept: int = 0  # of those, how many hold work (answers, or an earlier submission): withdrawn, not deleted
    receiver_has: int = 0  # reassign: open assignments left alone because the receiver already has the item
    from_member: PoolMembership | None = None
    to_member: PoolMembership | None = None

    @property
    def label(self) -> str:
        return str(BulkActionKind(self.action).label)

    @property
    def from_user(self) -> Any:
        return self.from_member.user if self.from_member else None

    @property
    def to_user(self) -> Any:
        return self.to_member.user if self.to_member else None

    @property
    def emptied(self) -> int:
        """Closed assignments with nothing of their annotator's in them: deleted."""
        return len(self.assignments) - self.kept


def _member(pool: Pool, raw: Any, what: str) -> PoolMembership:
    pk = parse_id(raw)
    membership = (
        PoolMembership.objects.filter(pool=pool, user_id=pk).select_related("user").first() if pk is not None else None
    )
    if membership is None:
        raise ValidationFailed(f"choose {what} among the pool's members")
    return membership


def _chosen_items(study: Study, chosen: list[str]) -> list[int]:
    """The ticked items: every one must be an item of this study. A malformed id, an item of another study
    and an id that exists nowhere get the same refusal, so nothing is learnt about other studies."""
    raw = list(chosen)
    wanted = set(parse_ids(raw))
    found = list(Item.objects.filter(study=study, pk__in=wanted).order_by("pk").values_list("pk", flat=True))
    if len(parse_ids(raw)) != len(raw) or len(found) != len(wanted):
        raise ValidationFailed(
            "an item you ticked is not an item of this study (reload the page and choose again); nothing was changed"
        )
    return found


def _with_work(assignments: QuerySet[Assignment]) -> QuerySet[Assignment]:
    """The assignments that hold something of their annotator's: saved answers (even cleared ones: their
    history is kept), or an earlier submission (a reopened item). Closing one keeps it, withdrawn."""
    answered = Label.objects.filter(assignment=OuterRef("pk"))
    return assignments.filter(Q(Exists(answered)) | Q(reopened_count__gt=0))


def bulk_plan(*, study: Study, data: Any, chosen: list[str], all_matching: bool, filters: Filters) -> Plan:
    action = (data.get("action") or "").strip()
    if action not in BulkActionKind.values:
        raise ValidationFailed("choose an action: reassign, remove from the pool or re-queue")
    pool = _study_object(Pool, study, data.get("target_pool"))
    if pool is None:
        raise ValidationFailed("choose the pool the action applies to")
    if all_matching:
        item_ids = list(filtered_items(study, filters).values_list("pk", flat=True)[: MAX_BULK + 1])
    else:
        item_ids = _chosen_items(study, chosen)
    if not item_ids:
        raise ValidationFailed("no item is selected")
    if len(item_ids) > MAX_BULK:
        raise ValidationFailed(f"at most {MAX_BULK:,} items at once; narrow the filters")
    in_pool = Assignment.objects.filter(pool=pool, item_id__in=item_ids)
    plan = Plan(action, pool, item_ids, [])
    if action == BulkActionKind.REASSIGN:
        plan.from_member = _member(pool, data.get("from_user"), "whose assignments to move")
        plan.to_member = _member(pool, data.get("to_user"), "who receives them")
        if not plan.to_member.active:
            raise ValidationFailed(f"{plan.to_member.pseudonym} has left the pool")
        if plan.to_member.user_id == plan.from_member.user_id:
            raise ValidationFailed("choose two different members")
        has_already = in_pool.filter(annotator_id=plan.to_member.user_id).values("item_id")
        theirs = in_pool.filter(annotator_id=plan.from_member.user_id, status__in=OPEN)
        plan.receiver_has = theirs.filter(item_id__in=has_already).count()
        targets = theirs.exclude(item_id__in=has_already)
    elif action == BulkActionKind.REMOVE:
        targets = in_pool.filter(status__in=OPEN)
    else:
        targets = in_pool.filter(status=AssignmentStatus.SKIPPED)
    plan.assignments = list(targets.order_by("pk").values_list("pk", flat=True))
    if action != BulkActionKind.REQUEUE:
        plan.kept = _with_work(targets).count()
    _refuse_a_plan_that_changes_nothing(plan)
    return plan


def _refuse_a_plan_that_changes_nothing(plan: Plan) -> None:
    """A bulk action that would change nothing is refused with the reason, before the confirmation."""
    if plan.assignments:
        return
    n = len(plan.item_ids)
    items = f"{n} item{'s' if n != 1 else ''}"
    if plan.action == BulkActionKind.REASSIGN:
        assert plan.from_member is not None and plan.to_member is not None
        reason = f"{plan.from_member.pseudonym} has no open assignment of pool {plan.pool.name} among these {items}"
        if plan.receiver_has:
            reason += f" that {plan.to_member.pseudonym} does not already have ({plan.receiver_has} they have)"
        raise ValidationFailed(f"nothing to reassign: {reason}; nothing was changed")
    if plan.action == BulkActionKind.REQUEUE:
        raise ValidationFailed(
            f"nothing to re-queue: none of these {items} has a skipped assignment in pool {plan.pool.name}; "
            "nothing was changed"
        )
    excluded = PoolItemExclusion.objects.filter(pool=plan.pool, item_id__in=plan.item_ids).count()
    if excluded == n:
        raise ValidationFailed(
            f"nothing to remove: {'this item was' if n == 1 else f'these {items} were'} already removed from pool "
            f"{plan.pool.name}; nothing was changed"
        )


@dataclass
class _Outcome:
    changed: int = 0
    withdrawn: int = 0
    deleted: int = 0
    unchanged: int = 0  # planned, but changed meanwhile (submitted, skipped, answered by the receiver…)


def _close(assignments: list[Assignment]) -> tuple[int, int]:
    """Close open assignments a researcher takes away: withdrawn when they hold work (kept, read-only,
    still their annotator's), deleted otherwise. Called under their row locks, so no answer can be saved
    into one meanwhile (a label save locks its assignment first). Returns (withdrawn, deleted)."""
    ids = [a.pk for a in assignments]
    keep = set(_with_work(Assignment.objects.filter(pk__in=ids)).values_list("pk", flat=True))
    withdrawn = Assignment.objects.filter(pk__in=keep).update(status=WITHDRAWN, reserved_until=None)
    Assignment.objects.filter(pk__in=[pk for pk in ids if pk not in keep]).delete()
    return withdrawn, len(ids) - len(keep)


def bulk_apply(*, study: Study, plan: Plan, actor: AbstractBaseUser, filters: Filters) -> BulkAction:
    """Apply a confirmed plan and write its audit row, in one transaction.

    Locks, in the order the annotators' and the console's writes take them (an assignment, then its pool):
    the planned assignments, the receiver's membership, the pool (the top-up holds it while it assigns).
    Only what still qualifies under those locks is changed: an item submitted or skipped meanwhile, or one
    the receiver got meanwhile, is left as it is and counted as unchanged."""
    out = _Outcome()
    with transaction.atomic():
        locked = list(Assignment.objects.select_for_update().filter(pk__in=plan.assignments).order_by("pk"))
        if plan.action == BulkActionKind.REQUEUE:
            still = [a for a in locked if a.status == AssignmentStatus.SKIPPED]
        else:
            still = [a for a in locked if a.status in OPEN]
        to_user_id = plan.to_member.user_id if plan.to_member is not None else None
        if plan.action == BulkActionKind.REASSIGN:
            receiver = PoolMembership.objects.select_for_update().filter(pk=plan.to_member.pk, active=True).first()
            if receiver is None:
                raise Conflict(f"{plan.to_member.pseudonym} left the pool meanwhile; nothing was changed")
        pool = Pool.objects.select_for_update().get(pk=plan.pool.pk)
        if plan.action == BulkActionKind.REASSIGN:
            has = set(
                Assignment.objects.filter(pool=pool, annotator_id=to_user_id, item_id__in=[a.item_id for a in still])
                .values_list("item_id", flat=True)
            )
            still = [a for a in still if a.item_id not in has]
            out.withdrawn, out.deleted = _close(still)
            # The receiver's own, empty assignment: nothing of the previous annotator's comes with it.
            Assignment.objects.bulk_create(
                Assignment(
                    pool=pool, item_id=a.item_id, annotator_id=to_user_id,
                    order_key=order_key_for(
                        seed=pool.seed, pool_id=pool.pk, annotator_id=to_user_id, item_id=a.item_id
                    ),
                )
                for a in still
            )
            out.changed = len(still)
        elif plan.action == BulkActionKind.REMOVE:
            # Open assignments of these items created since the plan (a top-up) leave with the others.
            seen = {a.pk for a in locked}
            still += list(
                Assignment.objects.select_for_update()
                .filter(pool=pool, item_id__in=plan.item_ids, status__in=OPEN).exclude(pk__in=seen)
            )
            out.withdrawn, out.deleted = _close(still)
            out.changed = len(still)
            PoolItemExclusion.objects.bulk_create(
                [PoolItemExclusion(pool=pool, item_id=i, created_by=actor) for i in plan.item_ids],
                ignore_conflicts=True, batch_size=2000,
            )
        else:
            out.changed = Assignment.objects.filter(pk__in=[a.pk for a in still]).update(
                status=AssignmentStatus.ASSIGNED, skip_reason="", reserved_until=None, started_at=None
            )
        out.unchanged = len(set(plan.assignments) - {a.pk for a in still})
        external = list(Item.objects.filter(pk__in=plan.item_ids).order_by("pk").values_list("external_id", flat=True))
        details: dict[str, Any] = {"filters": filters.as_query()}
        if plan.from_member is not None and plan.to_member is not None:
            details["from"] = plan.from_member.user.get_username()
            details["to"] = plan.to_member.user.get_username()
            details["from_pseudonym"] = plan.from_member.pseudonym
            details["to_pseudonym"] = plan.to_member.pseudonym
        if plan.action != BulkActionKind.REQUEUE:
            details["withdrawn"], details["deleted"] = out.withdrawn, out.deleted
        details["unchanged"] = out.unchanged
        return BulkAction.objects.create(
            study=study, actor=actor, action=plan.action, pool=pool, details=details, item_ids=external,
            n_items=len(plan.item_ids), n_assignments=out.changed,
        )


def outcome_message(action: BulkAction) -> str:
    """What a bulk action did, in a sentence for the researcher who confirmed it."""
    d, n = action.details, action.n_assignments
    pool = action.pool.name if action.pool else "?"
    s = "s" if n != 1 else ""
    if action.action == BulkActionKind.REASSIGN:
        text = (
            f"Reassigned {n} item{s} of pool {pool} from {d.get('from')} ({d.get('from_pseudonym')}) to "
            f"{d.get('to')} ({d.get('to_pseudonym')}), each as a new, empty assignment."
        )
    elif action.action == BulkActionKind.REMOVE:
        items = f"{action.n_items} item{'s' if action.n_items != 1 else ''}"
        text = f"Removed {items} from pool {pool}; {n} open assignment{s} closed."
    else:
        text = f"Re-queued {n} skipped assignment{s} of pool {pool}."
    if d.get("withdrawn"):
        text += (
            f" {d['withdrawn']} held saved answers: withdrawn, the answers kept as their annotator's, "
            "never counted as submitted work."
        )
    if d.get("unchanged"):
        text += (
            f" {d['unchanged']} changed meanwhile (submitted, skipped or given to the receiver) and "
            f"{'were' if d['unchanged'] != 1 else 'was'} left as {'they are' if d['unchanged'] != 1 else 'it is'}."
        )
    return text
