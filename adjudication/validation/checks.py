"""The independence and blinding checks of a validation study, and pool B's human ceiling.

A validation study is honest only when the human target (pool B) could not have been shaped by the
metric side. Concord checks, from the access rules and from the audit trail of what each annotator
was shown (annotation.models.Exposure):

* ``pools_disjoint`` (blocking): pool A and pool B share no annotator (memberships past and present).
* ``roles_blind`` (blocking): no member of pool B holds a role that can read scores or other pools'
  labels (researcher or adjudicator of the study; site staff).
* ``exposure_trail`` (blocking): during pool B's whole collection period — from the pool's creation
  to its last submission, or to now while any of its assignments is open — no page or API read
  recorded for a member of pool B showed scores, or showed another pool's labels (pool A's above all).
  Each offending row is counted. Members whose labels were imported have no trail in Concord: that
  is said (a warning), not taken as proof of blinding.
* ``pool_visibility`` (warning): pool B lets its members see each other's labels after submitting
  (calibration). That never shows pool A's labels or scores, but it can inflate the ceiling.
* ``reopened_items`` (blocking): items of pool B that their annotator reopened after submitting are
  counted (a warning: the answers changed after a first submission, each change in the labels' history);
  a reopening after the annotator was shown other annotators' labels on that item fails the check
  (Concord refuses it; a failure means the rule was bypassed).
* ``human_ceiling`` (warning): pool B's overlap (k ≥ 2 is needed) and agreement on the target
  question — Fleiss' κ and Krippendorff's α with intervals — the most a metric can be expected to
  reach against these humans.

Blocking failures refuse the study unless the researcher explicitly runs it anyway, in which case
"not independent" is stamped on every output (adjudication.validation).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Max, Min, Q
from django.utils import timezone

from adjudication.analysis.access import RATEABLE
from adjudication.analysis.agreement import agreement_report
from annotation.models import (
    Assignment,
    AssignmentReopening,
    AssignmentStatus,
    Exposure,
    Pool,
    PoolMembership,
    Question,
    Role,
    StudyRole,
    Visibility,
)

PASS, FAIL, WARN = "pass", "fail", "warn"


@dataclass
class Check:
    key: str
    title: str
    status: str
    blocking: bool
    detail: str
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def blocking_failures(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in checks if c["blocking"] and c["status"] == FAIL]


def collection_period(pool: Pool, *, now: datetime | None = None) -> tuple[datetime, datetime, bool]:
    """(start, end, still open): from the pool's creation to its last submission, or to ``now`` while
    an assignment is still open (labels can still be collected, so the period has not ended)."""
    now = now or timezone.now()
    agg = Assignment.objects.filter(pool=pool).aggregate(
        last=Max("submitted_at"),
        first=Min("created_at"),
        open=Max("pk", filter=Q(status__in=[AssignmentStatus.ASSIGNED, AssignmentStatus.STARTED])),
    )
    start = min(pool.created_at, agg["first"]) if agg["first"] else pool.created_at
    still_open = agg["open"] is not None or agg["last"] is None
    end = now if still_open else agg["last"]
    return start, end, still_open


def _members(pool: Pool) -> dict[int, str]:
    return dict(PoolMembership.objects.filter(pool=pool).values_list("user_id", "pseudonym"))


def check_pools_disjoint(*, metric_pool: Pool | None, target_pool: Pool) -> Check:
    title = "Pools A and B share no annotator"
    if metric_pool is None:
        return Check(
            "pools_disjoint", title, PASS, True, "The metric side is a score run: no human pool on the metric side."
        )
    if metric_pool.pk == target_pool.pk:
        return Check(
            "pools_disjoint",
            title,
            FAIL,
            True,
            f"Pool A and pool B are the same pool ({target_pool.name}): the measure and the target "
            "come from the same annotators.",
            {"shared": len(_members(target_pool))},
        )
    a, b = _members(metric_pool), _members(target_pool)
    shared = sorted(set(a) & set(b))
    if shared:
        names = [f"{a[u]} (A) = {b[u]} (B)" for u in shared]
        return Check(
            "pools_disjoint",
            title,
            FAIL,
            True,
            f"{len(shared)} annotator(s) belong to both pools: {', '.join(names)}.",
            {"shared": len(shared), "pseudonyms": names},
        )
    return Check(
        "pools_disjoint",
        title,
        PASS,
        True,
        f"Pool A ({metric_pool.name}, {len(a)} members) and pool B ({target_pool.name}, {len(b)} members) "
        "have no member in common.",
        {"shared": 0, "n_a": len(a), "n_b": len(b)},
    )


def check_roles_blind(*, target_pool: Pool) -> Check:
    title = "No member of pool B can read scores or other pools' labels"
    members = _members(target_pool)
    privileged = StudyRole.objects.filter(
        study_id=target_pool.study_id, user_id__in=members, role__in=[Role.RESEARCHER, Role.ADJUDICATOR]
    ).values_list("user_id", "role")
    found: dict[int, set[str]] = {}
    for user_id, role in privileged:
        found.setdefault(user_id, set()).add(role)
    for user_id in (
        get_user_model()
        .objects.filter(pk__in=members)
        .filter(Q(is_staff=True) | Q(is_superuser=True))
        .values_list("pk", flat=True)
    ):
        found.setdefault(user_id, set()).add("site staff")
    if found:
        names = [f"{members[u]} ({', '.join(sorted(r))})" for u, r in sorted(found.items())]
        return Check(
            "roles_blind",
            title,
            FAIL,
            True,
            f"{len(found)} member(s) of pool B hold a role that can read scores, reports or every pool's "
            f"labels: {', '.join(names)}.",
            {"privileged": len(found), "members": names},
        )
    return Check(
        "roles_blind",
        title,
        PASS,
        True,
        "Every member of pool B is an annotator only: the access rules never show them scores, gold or "
        "another pool's labels.",
        {"privileged": 0},
    )


def check_exposure_trail(*, metric_pool: Pool | None, target_pool: Pool, now: datetime | None = None) -> Check:
    title = "Pool B was shown no scores and no other pool's labels during its collection period"
    start, end, still_open = collection_period(target_pool, now=now)
    members = _members(target_pool)
    rows = Exposure.objects.filter(user_id__in=members, at__gte=start, at__lte=end)
    scores = rows.filter(showed_scores=True).count()
    other_labels = rows.filter(showed_other_labels=True).exclude(pool=target_pool)
    pool_a = other_labels.filter(pool=metric_pool).count() if metric_pool is not None else 0
    other_pools = other_labels.count() - pool_a
    audited = rows.count()
    with_trail = set(rows.values_list("user_id", flat=True).distinct())
    submitted_by = set(
        Assignment.objects.filter(pool=target_pool, status=AssignmentStatus.SUBMITTED)
        .values_list("annotator_id", flat=True)
        .distinct()
    )
    no_trail = sorted(members[u] for u in submitted_by - with_trail if u in members)
    data = {
        "period_start": start.isoformat(),
        "period_end": end.isoformat(),
        "period_open": still_open,
        "exposures_audited": audited,
        "showed_scores": scores,
        "showed_pool_a_labels": pool_a,
        "showed_other_pool_labels": other_pools,
        "members_without_trail": no_trail,
    }
    period = f"{start:%Y-%m-%d %H:%M} to {'now (still collecting)' if still_open else f'{end:%Y-%m-%d %H:%M}'}"
    offending = scores + pool_a + other_pools
    if offending:
        parts = [
            f"{n} {what}"
            for n, what in (
                (scores, "showed scores"),
                (pool_a, "showed pool A's labels"),
                (other_pools, "showed another pool's labels"),
            )
            if n
        ]
        return Check(
            "exposure_trail",
            title,
            FAIL,
            True,
            f"{offending} of {audited} recorded page/API reads of pool B's members from {period} broke the "
            f"blinding: {', '.join(parts)}.",
            data,
        )
    if no_trail:
        return Check(
            "exposure_trail",
            title,
            WARN,
            True,
            f"No read broke the blinding ({audited} audited, {period}), but {len(no_trail)} member(s) who "
            f"submitted labels have no trail in Concord (imported labels?): {', '.join(no_trail)}. What they "
            "were shown when their labels were collected cannot be verified here.",
            data,
        )
    return Check(
        "exposure_trail",
        title,
        PASS,
        True,
        f"All {audited} recorded page/API reads of pool B's members from {period} showed neither scores nor "
        "another pool's labels.",
        data,
    )


def check_pool_visibility(*, target_pool: Pool) -> Check:
    title = "Pool B's members do not see each other's labels"
    if target_pool.visibility == Visibility.NOTHING:
        return Check(
            "pool_visibility",
            title,
            PASS,
            False,
            "Pool B shows each member their own labels only.",
            {"visibility": target_pool.visibility},
        )
    calibrations = Exposure.objects.filter(pool=target_pool, showed_other_labels=True).count()
    return Check(
        "pool_visibility",
        title,
        WARN,
        False,
        f"Pool B shows its members each other's labels after submitting (calibration; {calibrations} such "
        "reads recorded). That never shows pool A's labels or scores, but it can inflate pool B's agreement "
        "and so the ceiling.",
        {"visibility": target_pool.visibility, "calibration_reads": calibrations},
    )


def check_reopened_items(*, target_pool: Pool) -> Check:
    title = "Pool B's answers were not changed after their annotator saw other labels"
    reopenings = list(
        AssignmentReopening.objects.filter(assignment__pool=target_pool).values_list(
            "assignment_id", "assignment__annotator_id", "assignment__item_id", "at"
        )
    )
    items = len({assignment_id for assignment_id, *_ in reopenings})
    seen_before: set[int] = set()
    if reopenings:
        shown = Exposure.objects.filter(pool=target_pool, showed_other_labels=True).values_list(
            "user_id", "item_id", "at"
        )
        first_seen: dict[tuple[int, int], datetime] = {}
        for user_id, item_id, at in shown:
            key = (user_id, item_id)
            first_seen[key] = min(at, first_seen.get(key, at))
        seen_before = {
            assignment_id
            for assignment_id, user_id, item_id, at in reopenings
            if (user_id, item_id) in first_seen and first_seen[(user_id, item_id)] <= at
        }
    data = {"reopenings": len(reopenings), "items_reopened": items, "reopened_after_seeing_others": len(seen_before)}
    if seen_before:
        return Check(
            "reopened_items", title, FAIL, True,
            f"{len(seen_before)} item(s) of pool B were reopened after their annotator had seen other annotators' "
            "labels on them: those answers are not independent.",
            data,
        )
    if reopenings:
        return Check(
            "reopened_items", title, WARN, True,
            f"{items} item(s) of pool B were reopened after submitting ({len(reopenings)} reopening(s)); none after "
            "their annotator saw other labels. Their answers may differ from the first submission (see the labels' "
            "history).",
            data,
        )
    return Check("reopened_items", title, PASS, True, "No item of pool B was reopened after submitting.", data)


CEILING_KEYS = ("percent_agreement", "fleiss_kappa", "krippendorff_alpha", "cohen_kappa")


def human_ceiling(*, pool: Pool, question: Question, n_boot: int = 0, seed: int = 0) -> dict[str, Any]:
    """Pool B's agreement on the target question: every statistic with its interval and n."""
    if question.kind not in RATEABLE:
        return {
            "defined": False,
            "reason": f"agreement needs a rateable question; {question.key!r} is {question.kind}",
            "overlap": pool.overlap,
        }
    report = agreement_report(pool=pool, question=question, n_boot=n_boot, seed=seed)
    out: dict[str, Any] = {
        "overlap": pool.overlap,
        "question": question.key,
        "n_units": report.get("n_units", 0),
        "n_raters": report.get("n_raters", 0),
        "n_excluded_units": report.get("n_excluded_units", 0),
    }
    if report.get("empty"):
        return {**out, "defined": False, "reason": report["reason"]}
    if report.get("multilabel"):
        return {
            **out,
            "defined": False,
            "reason": "a multi-label question has one agreement per option; see the pool's agreement report",
        }
    for key in CEILING_KEYS:
        out[key] = report.get(key)
    out["mean_pairwise_cohen_kappa"] = report.get("mean_pairwise_cohen_kappa")
    out["bootstrap"] = report.get("bootstrap")
    defined = any((report.get(k) or {}).get("value") is not None for k in ("fleiss_kappa", "krippendorff_alpha"))
    out["defined"] = defined
    if not defined:
        out["reason"] = (report.get("krippendorff_alpha") or {}).get("reason") or "no unit was rated twice"
    return out


def check_human_ceiling(*, target_pool: Pool, target_question: Question, n_boot: int, seed: int) -> Check:
    title = "Pool B's overlap and agreement (the human ceiling)"
    ceiling = human_ceiling(pool=target_pool, question=target_question, n_boot=n_boot, seed=seed)
    if not ceiling.get("defined"):
        if target_pool.overlap < 2:
            return Check(
                "human_ceiling",
                title,
                WARN,
                False,
                f"Pool B's overlap is k={target_pool.overlap}: each item has one annotator, so there is no "
                "human ceiling to set the metric against (k ≥ 2 is needed).",
                ceiling,
            )
        return Check(
            "human_ceiling",
            title,
            WARN,
            False,
            f"Pool B (k={target_pool.overlap}) has no agreement on {target_question.key} yet: {ceiling.get('reason')}.",
            ceiling,
        )
    fk = ceiling.get("fleiss_kappa") or {}
    alpha = ceiling.get("krippendorff_alpha") or {}
    parts = []
    for name, est in (("Fleiss' κ", fk), ("Krippendorff's α", alpha)):
        if est.get("value") is not None:
            ci = est.get("ci95")
            parts.append(f"{name} {est['value']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""))
    # An imported pool can carry several ratings per unit whatever k its pool was given: what counts
    # for the ceiling is that units were rated more than once.
    return Check(
        "human_ceiling",
        title,
        PASS,
        False,
        f"Pool B (k={target_pool.overlap}, {ceiling['n_raters']} annotators, {ceiling['n_units']} units, "
        f"{ceiling['n_excluded_units']} rated only once) on {target_question.key}: {'; '.join(parts)}.",
        ceiling,
    )


def validation_checks_compute(
    *,
    metric_pool: Pool | None,
    target_pool: Pool,
    target_question: Question,
    n_boot: int = 0,
    seed: int = 0,
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """Every check, in the order the wizard and the report show them."""
    checks = [
        check_pools_disjoint(metric_pool=metric_pool, target_pool=target_pool),
        check_roles_blind(target_pool=target_pool),
        check_exposure_trail(metric_pool=metric_pool, target_pool=target_pool, now=now),
        check_pool_visibility(target_pool=target_pool),
        check_reopened_items(target_pool=target_pool),
        check_human_ceiling(target_pool=target_pool, target_question=target_question, n_boot=n_boot, seed=seed),
    ]
    return [c.as_dict() for c in checks]
