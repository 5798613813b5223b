"""Reads of the researcher console: study overview, item list with per-pool status, progress.

Progress numbers come straight from assignments: ``assigned`` counts every assignment, ``done`` the
submitted ones, ``skipped`` the skipped ones; the median active time is taken over submitted
assignments only (time spent on a skipped item says nothing about the pace of labelling).

Agreement is not computed here: annotation never imports adjudication (docs/architecture.md). The progress
page asks the per-pool agreement fragment over htmx of the app that declares one (``console.links``).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.paginator import Page, Paginator
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate
from django.urls import NoReverseMatch

from annotation.console import links
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ImportJob,
    InvitationState,
    Item,
    Pool,
    PoolMembership,
    Question,
    Role,
    Scope,
    Study,
    StudyInvitation,
    StudyRole,
)

# An annotator is flagged as "far faster than the rest" when their median active time per item is
# below this fraction of the median of the other members' medians, once they have this many items.
FAST_RATIO = 1 / 3
FAST_MIN_ITEMS = 5


def researcher_studies(user: AbstractBaseUser) -> QuerySet[Study]:
    return (
        Study.objects.with_role(user, Role.RESEARCHER)
        .annotate(n_items=Count("items", distinct=True), n_pools=Count("pools", distinct=True))
        .order_by("name")
    )


def protocol_by_scope(study: Study) -> list[tuple[str, str, list[Question]]]:
    """The study's questions grouped by scope, in the order an item page shows the scopes."""
    questions = list(study.questions.all())
    return [
        (scope.value, scope.label, [q for q in questions if q.scope == scope.value])
        for scope in (Scope.SENTENCE, Scope.CHUNK, Scope.ASPECT, Scope.ITEM)
    ]


def preview_item(study: Study, external_id: str | None = None) -> Item | None:
    """A sample item for the live preview: the one asked for, else the study's first."""
    items = Item.objects.filter(study=study).prefetch_related("sentences", "chunks", "aspects")
    if external_id:
        chosen = items.filter(external_id=external_id).first()
        if chosen is not None:
            return chosen
    return items.order_by("id").first()


def import_jobs(study: Study, limit: int = 10) -> list[ImportJob]:
    return list(ImportJob.objects.filter(study=study).select_related("requested_by")[:limit])


# --- Items ------------------------------------------------------------------------------------


@dataclass
class PoolStatus:
    pool: Pool
    assigned: int = 0
    done: int = 0
    skipped: int = 0
    in_progress: int = 0

    @property
    def target(self) -> int:
        """How many annotations the item is to get: the pool's k, or more when more were made (an
        imported pool where every item was rated by several people)."""
        return max(self.pool.overlap, self.done)

    @property
    def label(self) -> str:
        if not self.assigned:
            return "not assigned"
        if self.done >= self.target:
            return f"done {self.done}/{self.target}"
        parts = [f"{self.done}/{self.target} done"]
        if self.in_progress:
            parts.append(f"{self.in_progress} in progress")
        if self.skipped:
            parts.append(f"{self.skipped} skipped")
        return ", ".join(parts)


@dataclass
class ItemRow:
    item: Item
    statuses: list[PoolStatus]


ITEMS_PER_PAGE = 50


def item_page(
    study: Study, *, query: str = "", page: int | str = 1, per_page: int = ITEMS_PER_PAGE
) -> tuple[Page, list[ItemRow]]:
    """One page of the study's items, searchable by id, question and answer, each with its status per pool."""
    items = Item.objects.filter(study=study).order_by("id")
    query = query.strip()
    if query:
        items = items.filter(
            Q(external_id__icontains=query) | Q(question__icontains=query) | Q(answer__icontains=query)
        )
    paginator = Paginator(items.only("id", "external_id", "question", "system", "scope_class", "study_id"), per_page)
    current = paginator.get_page(page)
    pools = list(Pool.objects.filter(study=study).order_by("name"))
    counts: dict[tuple[int, int], dict[str, int]] = defaultdict(dict)
    for row in (
        Assignment.objects.filter(item__in=[i.pk for i in current.object_list])
        .exclude(status=AssignmentStatus.WITHDRAWN)  # taken back by a researcher: neither to do nor done
        .values("item_id", "pool_id", "status")
        .annotate(n=Count("id"))
    ):
        counts[(row["item_id"], row["pool_id"])][row["status"]] = row["n"]
    rows = []
    for item in current.object_list:
        statuses = []
        for pool in pools:
            c = counts.get((item.pk, pool.pk), {})
            statuses.append(
                PoolStatus(
                    pool=pool,
                    assigned=sum(c.values()),
                    done=c.get(AssignmentStatus.SUBMITTED, 0),
                    skipped=c.get(AssignmentStatus.SKIPPED, 0),
                    in_progress=c.get(AssignmentStatus.STARTED, 0),
                )
            )
        rows.append(ItemRow(item=item, statuses=statuses))
    return current, rows


# --- Progress ---------------------------------------------------------------------------------


def median_or_none(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def fast_outliers(
    medians: dict[int, tuple[float, int]], *, ratio: float = FAST_RATIO, min_items: int = FAST_MIN_ITEMS
) -> dict[int, str]:
    """Annotators whose median time per item is below ``ratio`` × the median of the others' medians.

    ``medians`` maps an annotator to (their median seconds per item, their number of items). Only
    annotators with ``min_items`` items are judged or used as the reference; with fewer than two
    such annotators there is nobody to compare with and nobody is flagged. Returns the reasons.
    """
    judged = {a: m for a, (m, n) in medians.items() if n >= min_items}
    flags: dict[int, str] = {}
    for annotator, own in judged.items():
        others = [m for a, m in judged.items() if a != annotator]
        if not others:
            continue
        reference = statistics.median(others)
        if reference > 0 and own < ratio * reference:
            flags[annotator] = (
                f"median {own:.0f} s per item is under {ratio:.2g} of the others' median ({reference:.0f} s)"
            )
    return flags


@dataclass
class AnnotatorProgress:
    membership: PoolMembership
    assigned: int = 0
    done: int = 0
    skipped: int = 0
    median_seconds: float | None = None
    flag: str = ""

    @property
    def percent_done(self) -> int:
        return round(100 * self.done / self.assigned) if self.assigned else 0


@dataclass
class PoolProgress:
    pool: Pool
    items: int
    annotators: list[AnnotatorProgress] = field(default_factory=list)
    agreement_url: str = ""
    agreement_links: list[tuple[str, str]] = field(default_factory=list)
    median_seconds: float | None = None

    @property
    def assigned(self) -> int:
        return sum(a.assigned for a in self.annotators)

    @property
    def done(self) -> int:
        return sum(a.done for a in self.annotators)

    @property
    def skipped(self) -> int:
        return sum(a.skipped for a in self.annotators)

    @property
    def percent_done(self) -> int:
        return round(100 * self.done / self.assigned) if self.assigned else 0


def agreement_fragment_url(pool: Pool) -> str:
    """The per-pool agreement fragment of the app that computes agreement (adjudication), "" without one."""
    return links.console_url("pool-agreement-fragment", slug=pool.study.slug, pool_id=pool.pk)


def agreement_reports_url(study: Study) -> str:
    return links.console_url("agreement-reports", slug=study.slug)


def agreement_report_links(pool: Pool) -> list[tuple[str, str]]:
    """The agreement report of each categorical question of the pool, [] without an app that serves one."""
    if not links.url_name("question-agreement-report"):
        return []
    result = []
    for question in pool.questions.all():
        if not question.is_categorical and question.kind != "multilabel":
            continue
        try:
            url = links.console_url(
                "question-agreement-report", slug=pool.study.slug, pool_id=pool.pk, question=question.key
            )
        except NoReverseMatch:
            # A key the report's URL cannot carry (one re-imported from an export need not be a slug): the page
            # lists no per-question links and points to the reports' index instead, as it always has.
            return []
        result.append((question.key, url))
    return result


def study_progress(study: Study) -> list[PoolProgress]:
    """Per pool and per member: assigned, done, skipped, median active time, and pace flags."""
    pools = list(
        Pool.objects.filter(study=study).select_related("study").prefetch_related("questions").order_by("name")
    )
    n_items = Item.objects.filter(study=study).count()
    members: dict[int, list[PoolMembership]] = defaultdict(list)
    for m in PoolMembership.objects.filter(study=study).select_related("user").order_by("pseudonym"):
        members[m.pool_id].append(m)
    counts: dict[tuple[int, int], dict[str, int]] = defaultdict(dict)
    live = Assignment.objects.filter(pool__study=study).exclude(status=AssignmentStatus.WITHDRAWN)
    for row in live.values("pool_id", "annotator_id", "status").annotate(n=Count("id")):
        counts[(row["pool_id"], row["annotator_id"])][row["status"]] = row["n"]
    seconds: dict[tuple[int, int], list[float]] = defaultdict(list)
    for pool_id, annotator_id, active in Assignment.objects.filter(
        pool__study=study, status=AssignmentStatus.SUBMITTED
    ).values_list("pool_id", "annotator_id", "active_seconds").iterator():
        seconds[(pool_id, annotator_id)].append(active)

    result = []
    for pool in pools:
        progress = PoolProgress(
            pool=pool,
            items=n_items,
            agreement_url=agreement_fragment_url(pool),
            agreement_links=agreement_report_links(pool),
        )
        for m in members[pool.pk]:
            c = counts.get((pool.pk, m.user_id), {})
            times = seconds.get((pool.pk, m.user_id), [])
            progress.annotators.append(
                AnnotatorProgress(
                    membership=m,
                    assigned=sum(c.values()),
                    done=c.get(AssignmentStatus.SUBMITTED, 0),
                    skipped=c.get(AssignmentStatus.SKIPPED, 0),
                    median_seconds=median_or_none(times),
                )
            )
        flags = fast_outliers(
            {
                a.membership.user_id: (a.median_seconds, a.done)
                for a in progress.annotators
                if a.median_seconds is not None
            }
        )
        for a in progress.annotators:
            a.flag = flags.get(a.membership.user_id, "")
        progress.median_seconds = median_or_none([t for (p, _), ts in seconds.items() if p == pool.pk for t in ts])
        result.append(progress)
    return result


# --- Completion over time (server-rendered SVG) ------------------------------------------------

CHART_WIDTH, CHART_HEIGHT, CHART_PAD = 640, 220, 36
# Colour-blind-safe line colours (Okabe–Ito), cycled across pools.
CHART_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


@dataclass
class ChartLine:
    name: str
    colour: str
    points: str
    last_percent: int


@dataclass
class Chart:
    lines: list[ChartLine]
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    width: int = CHART_WIDTH
    height: int = CHART_HEIGHT
    pad: int = CHART_PAD

    @property
    def plot_right(self) -> int:
        return self.width - self.pad

    @property
    def plot_bottom(self) -> int:
        return self.height - self.pad


def completion_chart(series: dict[str, list[tuple[date, int]]], totals: dict[str, int], today: date) -> Chart | None:
    """Cumulative percent of each pool's assignments submitted, per day, as SVG coordinates.

    ``series`` maps a pool name to (day, submissions that day); ``totals`` to its assignments. Pure:
    no database, so the geometry is tested on its own. Returns None when nothing was submitted yet.
    """
    days = [d for points in series.values() for d, _ in points]
    if not days:
        return None
    start, end = min(days), max(max(days), today)
    span = max((end - start).days, 1)
    left, right = CHART_PAD, CHART_WIDTH - CHART_PAD
    top, bottom = CHART_PAD / 2, CHART_HEIGHT - CHART_PAD

    def x(d: date) -> float:
        return round(left + (right - left) * (d - start).days / span, 1)

    def y(percent: float) -> float:
        return round(bottom - (bottom - top) * percent / 100, 1)

    lines = []
    for i, (name, points) in enumerate(sorted(series.items())):
        total = totals.get(name) or 0
        if not total:
            continue
        cumulative, coords = 0, [(x(start), y(0))]
        for d, n in sorted(points):
            cumulative += n
            coords.append((x(d), y(100 * cumulative / total)))
        percent = round(100 * cumulative / total)
        coords.append((x(end), y(100 * cumulative / total)))
        lines.append(
            ChartLine(
                name=name, colour=CHART_COLOURS[i % len(CHART_COLOURS)],
                points=" ".join(f"{a},{b}" for a, b in coords), last_percent=percent,
            )
        )
    step = max(1, span // 6)
    x_ticks = [
        (x(start + timedelta(days=k)), (start + timedelta(days=k)).isoformat()) for k in range(0, span + 1, step)
    ]
    y_ticks = [(y(p), f"{p}%") for p in (0, 25, 50, 75, 100)]
    return Chart(lines=lines, x_ticks=x_ticks, y_ticks=y_ticks)


def study_completion_chart(study: Study, today: date) -> Chart | None:
    pools = {p.pk: p.name for p in Pool.objects.filter(study=study)}
    totals = {
        pools[row["pool_id"]]: row["n"]
        for row in Assignment.objects.filter(pool__study=study)
        .exclude(status=AssignmentStatus.WITHDRAWN)
        .values("pool_id")
        .annotate(n=Count("id"))
    }
    series: dict[str, list[tuple[date, int]]] = defaultdict(list)
    for row in (
        Assignment.objects.filter(pool__study=study, status=AssignmentStatus.SUBMITTED, submitted_at__isnull=False)
        .annotate(day=TruncDate("submitted_at"))
        .values("pool_id", "day")
        .annotate(n=Count("id"))
    ):
        series[pools[row["pool_id"]]].append((row["day"], row["n"]))
    return completion_chart(series, totals, today)


# --- People -----------------------------------------------------------------------------------


@dataclass
class Person:
    user: AbstractBaseUser
    roles: list[str]
    memberships: list[PoolMembership]
    must_change_password: bool

    @property
    def annotator_without_pool(self) -> bool:
        """An annotator in no active pool gets no items: the People page says so."""
        return Role.ANNOTATOR in self.roles and not any(m.active for m in self.memberships)


def study_people(study: Study) -> list[Person]:
    roles: dict[int, list[str]] = defaultdict(list)
    users: dict[int, AbstractBaseUser] = {}
    for r in (
        StudyRole.objects.filter(study=study)
        .select_related("user", "user__password_change_required")
        .order_by("user__username")
    ):
        roles[r.user_id].append(r.role)
        users[r.user_id] = r.user
    memberships: dict[int, list[PoolMembership]] = defaultdict(list)
    for m in PoolMembership.objects.filter(study=study).select_related("pool", "user"):
        memberships[m.user_id].append(m)
        users.setdefault(m.user_id, m.user)
    return [
        Person(
            user=users[uid], roles=sorted(roles[uid]), memberships=memberships[uid],
            must_change_password=hasattr(users[uid], "password_change_required"),
        )
        for uid in sorted(users, key=lambda u: users[u].get_username().lower())
    ]


def pool_members(pools: Iterable[Pool]) -> dict[int, list[PoolMembership]]:
    members: dict[int, list[PoolMembership]] = defaultdict(list)
    for m in PoolMembership.objects.filter(pool__in=list(pools)).select_related("user").order_by("pseudonym"):
        members[m.pool_id].append(m)
    return members


# --- Invitations ------------------------------------------------------------------------------


@dataclass
class InvitationRow:
    invitation: StudyInvitation
    status: str  # pending, expired, accepted, declined, withdrawn

    @property
    def open(self) -> bool:
        return self.status == InvitationState.PENDING


def study_invitations_queryset(study: Study, *, pool: Pool | None = None) -> QuerySet[StudyInvitation]:
    """The study's invitations (of one pool, when given), newest first, for the researcher. What is shown of
    them is the name as typed, never the account each was bound to: whether there was one is not the
    researcher's to learn."""
    invitations = StudyInvitation.objects.filter(study=study).select_related("pool", "invited_by")
    if pool is not None:
        invitations = invitations.filter(pool=pool)
    return invitations.order_by("-created_at", "-id")


def study_invitations(study: Study, now: datetime, *, pool: Pool | None = None) -> list[InvitationRow]:
    return [InvitationRow(invitation=i, status=i.status(now)) for i in study_invitations_queryset(study, pool=pool)]


def open_invitations(user: AbstractBaseUser, now: datetime) -> list[StudyInvitation]:
    """The invitations ``user`` may still answer (pending, not expired), oldest first, for their home page."""
    if not user.is_authenticated:
        return []
    return list(
        StudyInvitation.objects.filter(user=user, state=InvitationState.PENDING, expires_at__gt=now)
        .select_related("study", "pool", "invited_by")
        .order_by("created_at", "id")
    )
