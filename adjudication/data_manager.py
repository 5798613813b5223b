"""The researcher's data manager: a study's items searched and filtered, and bulk actions on them.

Filters (all combined with AND): text (id, question or answer), status in a pool (not assigned, open,
done, skipped), disagreement (an open case, any case, none), gold (current gold or none), the item's
score in a run between two values, and one metadata key = value. Each is one indexed subquery
(``EXISTS``) on the item, so a page costs a count and one slice however many items the study has
(``bench/data_manager.py`` measures it on 100,000 items).

Bulk actions change assignments of one pool for the chosen items (or every item the filters match),
after a confirmation that says exactly what will change, and write one ``BulkAction`` audit row in
the same transaction:

* **reassign**: the open (assigned or started) assignments of one member move to another active
  member who does not have the item yet;
* **remove**: the open assignments are deleted and the items excluded from the pool, so that its
  top-up never assigns them again; submitted and skipped work is kept;
* **re-queue**: skipped assignments go back to the annotator's queue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.paginator import Page, Paginator
from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet

from adjudication.models import AdjudicationCase, BulkAction, BulkActionKind, CaseStatus, GoldLabel
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Item,
    Pool,
    PoolItemExclusion,
    PoolMembership,
    Study,
)
from concord.errors import NotFound, ValidationFailed
from scoring.models import Score, ScoreRun

PER_PAGE = 50
MAX_BULK = 100_000
POOL_STATES = ("not_assigned", "open", "done", "skipped")
_META_KEY = re.compile(r"^[A-Za-z0-9_.\-]{1,60}$")
OPEN = (AssignmentStatus.ASSIGNED, AssignmentStatus.STARTED)


def _number(raw: str, name: str) -> float | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        raise ValidationFailed(f"{name} must be a number") from None


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
        pool_id = (data.get("pool") or "").strip()
        if pool_id:
            f.pool = Pool.objects.filter(study=study, pk=int(pool_id) if pool_id.isdigit() else -1).first()
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
        run_id = (data.get("run") or "").strip()
        if run_id:
            f.run = ScoreRun.objects.filter(study=study, pk=int(run_id) if run_id.isdigit() else -1).first()
            if f.run is None:
                raise NotFound("score run not found")
        f.score_min = _number(data.get("score_min", ""), "the lowest score")
        f.score_max = _number(data.get("score_max", ""), "the highest score")
        if (f.score_min is not None or f.score_max is not None) and f.run is None:
            raise ValidationFailed("choose the score run whose values to filter on")
        f.meta_key = (data.get("meta_key") or "").strip()
        f.meta_value = (data.get("meta_value") or "").strip()[:300]
        if f.meta_key and not _META_KEY.match(f.meta_key):
            raise ValidationFailed("a metadata key has letters, digits, '_', '-' or '.' only")
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


def filtered_items(study: Study, f: Filters) -> QuerySet[Item]:
    items = Item.objects.filter(study=study)
    if f.q:
        items = items.filter(Q(external_id__icontains=f.q) | Q(question__icontains=f.q) | Q(answer__icontains=f.q))
    if f.pool is not None and f.pool_state:
        in_pool = Assignment.objects.filter(pool=f.pool, item=OuterRef("pk"))
        if f.pool_state == "not_assigned":
            items = items.filter(~Exists(in_pool))
        elif f.pool_state == "open":
            items = items.filter(Exists(in_pool.filter(status__in=OPEN)))
        elif f.pool_state == "done":
            # Every assignment of the item in the pool submitted: one grouped pass over the pool's
            # assignments (an anti-join per item costs seconds at 100,000 items).
            done = (
                Assignment.objects.filter(pool=f.pool).values("item_id")
                .annotate(n=Count("id"), n_done=Count("id", filter=Q(status=AssignmentStatus.SUBMITTED)))
                .filter(n=F("n_done")).values("item_id")
            )
            items = items.filter(pk__in=done)
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
        items = items.filter(**{f"metadata__{f.meta_key}": f.meta_value})
    return items.order_by("pk")


@dataclass
class Row:
    item: Item
    statuses: list[tuple[Pool, str]] = field(default_factory=list)
    open_cases: int = 0
    gold: bool = False
    score: float | None = None


def _status_label(counts: dict[str, int], k: int) -> str:
    if not counts:
        return "not assigned"
    done = counts.get(AssignmentStatus.SUBMITTED, 0)
    target = max(k, done)
    parts = [f"{done}/{target} done"]
    if counts.get(AssignmentStatus.STARTED, 0) + counts.get(AssignmentStatus.ASSIGNED, 0):
        parts.append(f"{counts.get(AssignmentStatus.STARTED, 0) + counts.get(AssignmentStatus.ASSIGNED, 0)} open")
    if counts.get(AssignmentStatus.SKIPPED):
        parts.append(f"{counts[AssignmentStatus.SKIPPED]} skipped")
    return ", ".join(parts)


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
    """What a bulk action will change, shown for confirmation and then applied as is."""

    action: str
    pool: Pool
    item_ids: list[int]
    assignments: list[int]
    from_user: Any = None
    to_user: Any = None

    @property
    def label(self) -> str:
        return str(BulkActionKind(self.action).label)


def _member(pool: Pool, user_id: str, what: str) -> Any:
    m = PoolMembership.objects.filter(pool=pool, user_id=int(user_id) if str(user_id).isdigit() else -1)
    membership = m.select_related("user").first()
    if membership is None:
        raise ValidationFailed(f"choose {what} among the pool's members")
    return membership


def bulk_plan(*, study: Study, data: Any, chosen: list[str], all_matching: bool, filters: Filters) -> Plan:
    action = (data.get("action") or "").strip()
    if action not in BulkActionKind.values:
        raise ValidationFailed("choose an action: reassign, remove from the pool or re-queue")
    pool_id = (data.get("target_pool") or "").strip()
    pool = Pool.objects.filter(study=study, pk=int(pool_id) if pool_id.isdigit() else -1).first()
    if pool is None:
        raise ValidationFailed("choose the pool the action applies to")
    if all_matching:
        item_ids = list(filtered_items(study, filters).values_list("pk", flat=True)[: MAX_BULK + 1])
    else:
        wanted = [int(x) for x in chosen if str(x).isdigit()]
        item_ids = list(Item.objects.filter(study=study, pk__in=wanted).order_by("pk").values_list("pk", flat=True))
    if not item_ids:
        raise ValidationFailed("no item is selected")
    if len(item_ids) > MAX_BULK:
        raise ValidationFailed(f"at most {MAX_BULK:,} items at once; narrow the filters")
    in_pool = Assignment.objects.filter(pool=pool, item_id__in=item_ids)
    from_user = to_user = None
    if action == BulkActionKind.REASSIGN:
        from_user = _member(pool, data.get("from_user", ""), "whose assignments to move").user
        to = _member(pool, data.get("to_user", ""), "who receives them")
        if not to.active:
            raise ValidationFailed(f"{to.pseudonym} has left the pool")
        to_user = to.user
        if to_user.pk == from_user.pk:
            raise ValidationFailed("choose two different members")
        has_already = Assignment.objects.filter(pool=pool, annotator=to_user, item_id__in=item_ids).values("item_id")
        targets = in_pool.filter(annotator=from_user, status__in=OPEN).exclude(item_id__in=has_already)
    elif action == BulkActionKind.REMOVE:
        targets = in_pool.filter(status__in=OPEN)
    else:
        targets = in_pool.filter(status=AssignmentStatus.SKIPPED)
    return Plan(action, pool, item_ids, list(targets.values_list("pk", flat=True)), from_user, to_user)


def bulk_apply(*, study: Study, plan: Plan, actor: AbstractBaseUser, filters: Filters) -> BulkAction:
    """Apply a confirmed plan and write its audit row, in one transaction."""
    with transaction.atomic():
        open_now = Assignment.objects.filter(pk__in=plan.assignments)
        if plan.action == BulkActionKind.REASSIGN:
            changed = open_now.filter(status__in=OPEN).update(annotator=plan.to_user, reserved_until=None)
        elif plan.action == BulkActionKind.REMOVE:
            changed, _ = open_now.filter(status__in=OPEN).delete()
            PoolItemExclusion.objects.bulk_create(
                [PoolItemExclusion(pool=plan.pool, item_id=i, created_by=actor) for i in plan.item_ids],
                ignore_conflicts=True, batch_size=2000,
            )
        else:
            changed = open_now.filter(status=AssignmentStatus.SKIPPED).update(
                status=AssignmentStatus.ASSIGNED, skip_reason="", reserved_until=None, started_at=None
            )
        external = list(Item.objects.filter(pk__in=plan.item_ids).order_by("pk").values_list("external_id", flat=True))
        details: dict[str, Any] = {"filters": filters.as_query()}
        if plan.from_user is not None:
            details["from"] = plan.from_user.get_username()
            details["to"] = plan.to_user.get_username()
        return BulkAction.objects.create(
            study=study, actor=actor, action=plan.action, pool=plan.pool, details=details, item_ids=external,
            n_items=len(plan.item_ids), n_assignments=changed,
        )
