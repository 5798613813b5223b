"""Planning and monitoring a validation from its design, and the pools' fixed-precision stopping rule.

* :func:`pool_plan` — from a pool's design (k annotators per item, its categorical questions, the median
  time its annotators spend on an item): the items a κ of the wanted precision needs, and the
  clinician-hours that makes.
* :func:`validation_plan` — for a validation study: the items its headline figures need (the metric's
  AUC against pool B's target; pool B's own agreement), from the estimates so far where there are any
  and from stated assumptions otherwise.
* :func:`validation_monitoring` — the 95% half-width of each headline figure as pool B's items were
  completed, and at the current pace the items and days still needed.
* :func:`pool_precision_status` — whether a pool's fixed-precision rule is met (the receiver of
  ``annotation.signals.assignment_submitted`` in adjudication/apps.py closes the pool when it is): it has
  ``stop_at_half_width`` and every headline figure of the validation studies it is the target of has
  reached it (after at least half the planned items). Closing the pool, setting the rule and reopening are
  writes, in :mod:`adjudication.validation.services`.

Statistics come from :mod:`adjudication.stats.planning`; nothing here computes a formula itself, and
nothing here writes: the planning jobs (:mod:`adjudication.report_jobs`) run these computations.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import math
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.db.models import Count, Max, Q, Sum
from django.utils import timezone

from adjudication.analysis.access import CATEGORICAL
from adjudication.analysis.loading import binary_target, data_version, ratings_load
from adjudication.models import ValidationStudy
from adjudication.stats import agreement as ag
from adjudication.stats import planning as sp
from adjudication.stats import targets
from adjudication.stats import validity as va
from annotation import units
from annotation.models import Assignment, AssignmentStatus, Pool, Question
from concord.errors import ValidationFailed
from concord.params import parse_int
from scoring.models import RunStatus, Score, ScoreState

DEFAULT_HALF_WIDTH = 0.05
ASSUMED_AUC = 0.8
ASSUMED_PREVALENCE = 0.3
ASSUMED_KAPPA = 0.6
KAPPA_N_BOOT = 200
CHECKPOINTS = 12
N_SIM = 1000

Unit = tuple[int, str]


MAX_HALF_WIDTH = 0.5
# A decimal number in ASCII: float() alone also reads "nan", "inf", "1_000" and Unicode digits ("٠.٥").
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,3})?", re.ASCII)
MAX_NUMBER_CHARS = 32


def parse_number(value: Any, name: str) -> float | None:
    """A finite decimal number written in ASCII (``0.05``, ``5e-2``), None when absent or empty; anything else
    (NaN, infinity, Unicode digits, underscores, a list, a very long string) is refused naming ``name``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = repr(value)
    text = value.strip() if isinstance(value, str) else ""
    if len(text) > MAX_NUMBER_CHARS or not _DECIMAL.fullmatch(text):
        raise ValidationFailed(f"{name} must be a number such as 0.05")
    x = float(text)
    if not math.isfinite(x):
        raise ValidationFailed(f"{name} must be a finite number")
    return x


def parse_half_width(value: Any, default: float = DEFAULT_HALF_WIDTH) -> float:
    """The wanted half-width of a 95% interval: from ``MIN_HALF_WIDTH`` (0.001) to below 0.5."""
    h = parse_number(value, "half_width")
    if h is None:
        return default
    if not sp.MIN_HALF_WIDTH <= h < MAX_HALF_WIDTH:
        raise ValidationFailed(f"half_width must be at least {sp.MIN_HALF_WIDTH:g} and less than {MAX_HALF_WIDTH:g}")
    return h


@contextlib.contextmanager
def planning_errors() -> Iterator[None]:
    """A planning error is a domain error: an input the formulas cannot take becomes a 400 with its reason."""
    try:
        yield
    except sp.PlanningError as exc:
        raise ValidationFailed(str(exc)) from None


# --- design facts ----------------------------------------------------------------------------------


def median_minutes_per_item(pool: Pool) -> float | None:
    """The median active time of the pool's submitted assignments, in minutes (None when none was timed:
    imported labels carry no time)."""
    seconds = list(
        Assignment.objects.filter(pool=pool, status=AssignmentStatus.SUBMITTED, active_seconds__gt=0).values_list(
            "active_seconds", flat=True
        )
    )
    return statistics.median(seconds) / 60 if seconds else None


def _hours(n_items: int, k: int, minutes: float | None) -> float | None:
    return None if minutes is None else n_items * k * minutes / 60


def _kappa_plan(*, kappa: float, raters: int, categories: int, half_width: float) -> sp.Plan:
    """Fleiss' κ plan for an expected κ rounded to 0.01 (a plan needs no more), cached: the stopping rule
    asks for it after every submission."""
    if raters < 2:
        raise ValidationFailed("agreement needs k of at least 2 annotators per item")
    with planning_errors():
        return _kappa_plan_cached(round(kappa, 2), raters, categories, half_width)


@functools.lru_cache(maxsize=256)
def _kappa_plan_cached(kappa: float, raters: int, categories: int, half_width: float) -> sp.Plan:
    return sp.agreement_plan("fleiss", kappa, raters, categories, half_width, n_sim=N_SIM, seed=0)


def pool_design(pool: Pool) -> dict[str, Any]:
    """What a pool's plan depends on: its k, its categorical questions' numbers of options, the timed
    submissions (for the clinician-hours). A planning job keeps it in its parameters, so a plan computed
    before the design changed is never shown as the current one."""
    questions = [q for q in pool.questions.all() if q.kind in CATEGORICAL and len(q.option_values) >= 2]
    timed = Assignment.objects.filter(pool=pool, status=AssignmentStatus.SUBMITTED, active_seconds__gt=0)
    return {
        "k": pool.overlap,
        "questions": sorted((q.key, len(q.option_values)) for q in questions),
        "timed": list(timed.aggregate(n=Count("pk"), seconds=Sum("active_seconds")).values()),
    }


def pool_plan(
    *,
    pool: Pool,
    half_width: float = DEFAULT_HALF_WIDTH,
    kappa: float = ASSUMED_KAPPA,
    progress: sp.Progress | None = None,
) -> dict[str, Any]:
    """Items and clinician-hours for the pool's agreement at ``±half_width`` (the pool's k, each categorical
    question's number of options, equal category shares, expected κ ``kappa``)."""
    minutes = median_minutes_per_item(pool)
    questions = [q for q in pool.questions.all() if q.kind in CATEGORICAL and len(q.option_values) >= 2]
    rows = []
    if pool.overlap >= 2:
        sizes = sorted({len(q.option_values) for q in questions})
        for i, categories in enumerate(sizes):
            plan = _kappa_plan(kappa=kappa, raters=pool.overlap, categories=categories, half_width=half_width)
            rows.append(
                {
                    "questions": [q.key for q in questions if len(q.option_values) == categories],
                    "plan": plan.as_dict(),
                }
            )
            if progress is not None:
                progress(i + 1, len(sizes))
    n = max((r["plan"]["n_items"] for r in rows), default=None)
    return {
        "pool": {"id": pool.pk, "name": pool.name, "k": pool.overlap},
        "half_width": half_width,
        "expected_kappa": kappa,
        "median_minutes_per_item": minutes,
        "n_items": n,
        "clinician_hours": _hours(n, pool.overlap, minutes) if n is not None else None,
        "plans": rows,
        "note": None
        if rows
        else "agreement needs k ≥ 2 annotators per item and a categorical question; nothing to plan",
    }


def pool_plan_line(plan: dict[str, Any]) -> str:
    """One sentence for the console: "at k = 3 and ±0.05 you need about N items, T clinician-hours"."""
    if plan["n_items"] is None:
        return plan["note"]
    hours = plan["clinician_hours"]
    time = (
        f"{hours:,.0f} clinician-hours at the pool's median {plan['median_minutes_per_item']:.1f} min per item"
        if hours is not None
        else "clinician-hours unknown until annotators have submitted timed items"
    )
    return (
        f"At k = {plan['pool']['k']} and ±{plan['half_width']:g} you need about {plan['n_items']:,} items "
        f"(κ ≈ {plan['expected_kappa']:g}), {time}."
    )


# --- a validation's headline figures over time --------------------------------------------------------


@dataclass
class _Completion:
    item_order: list[int]
    completed_at: dict[int, datetime]


def _completions(pool: Pool) -> _Completion:
    """Items whose every assignment in the pool is submitted (skipped and withdrawn ones aside), in order of
    completion."""
    not_waited_for = (AssignmentStatus.SKIPPED, AssignmentStatus.WITHDRAWN)
    rows = Assignment.objects.filter(pool=pool).exclude(status__in=not_waited_for)
    latest: dict[int, datetime] = {}
    open_items: set[int] = set()
    for item_id, status, at in rows.values_list("item_id", "status", "submitted_at"):
        if status != AssignmentStatus.SUBMITTED or at is None:
            open_items.add(item_id)
        elif item_id not in latest or at > latest[item_id]:
            latest[item_id] = at
    done = {i: t for i, t in latest.items() if i not in open_items}
    order = sorted(done, key=lambda i: (done[i], i))
    return _Completion(order, done)


def _metric_scores(vs: ValidationStudy, question: Question) -> tuple[dict[Unit, float], str | None]:
    run = vs.metric_run
    if run is None:
        return {}, "no metric run"
    if run.status != RunStatus.DONE:
        return {}, f"the metric run #{run.pk} is {run.status}, not done"
    kind = units.KIND_OF_SCOPE.get(question.scope, units.ITEM)
    rows = Score.objects.filter(run=run, state=ScoreState.OK)
    rows = rows.filter(unit_key=units.ITEM) if kind == units.ITEM else rows.filter(unit_key__startswith=f"{kind}:")
    out = {}
    for item_id, key, value in rows.values_list("item_id", "unit_key", "value"):
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            out[(item_id, key)] = float(value)
    return out, None


@dataclass
class _Data:
    question: Question
    units: list[Unit]
    codes: np.ndarray
    n_categories: int
    target: dict[Unit, float]
    scores: dict[Unit, float]
    scores_missing: str | None
    completion: _Completion


def _load(vs: ValidationStudy) -> _Data:
    question = vs.target_question
    ratings = ratings_load(pool=vs.target_pool, question=question)
    n_cat = len(ratings.scale or [])
    target: dict[Unit, float] = {}
    if ratings.units and n_cat:
        kept, winners, _ = targets.majority(ratings.codes, n_cat)
        positions = np.array([float(w) for w in winners], dtype=float)
        if positions.size:
            binary = binary_target(question, positions, vs.positive)
            target = {ratings.units[i]: float(b) for i, b in zip(kept, binary, strict=True)}
    scores, missing = _metric_scores(vs, question)
    return _Data(question, ratings.units, ratings.codes, n_cat, target, scores, missing, _completions(vs.target_pool))


def _figures_at(data: _Data, items: set[int], *, n_boot: int, seed: int) -> dict[str, dict[str, Any]]:
    """The headline figures on the units of ``items``: the metric's AUC (DeLong) and pool B's κ."""
    out: dict[str, dict[str, Any]] = {}
    paired = [u for u in sorted(set(data.scores) & set(data.target)) if u[0] in items]
    if paired:
        s = np.array([data.scores[u] for u in paired])
        y = np.array([data.target[u] for u in paired])
        est = va.roc_auc(s, y)
        n_pos = int(y.sum())
        out["auc"] = {
            "title": "AUC, metric vs pool B",
            "value": est.value,
            "ci95": list(est.ci95) if est.ci95 else None,
            "half_width": sp.half_width_of(est.ci95),
            "stopping_half_width": sp.auc_stopping_half_width(est.ci95, n_pos, len(paired) - n_pos)
            if est.ci95
            else None,
            "n_units": len(paired),
            "n_positive": n_pos,
            "reason": est.reason,
        }
    rows = [i for i, u in enumerate(data.units) if u[0] in items]
    if rows and data.n_categories and data.codes.shape[1] >= 2:
        est = ag.fleiss_kappa(data.codes[rows], data.n_categories, n_boot=n_boot, seed=seed)
        out["kappa"] = {
            "title": f"Fleiss' κ of pool B ({data.question.key})",
            "value": est.value,
            "ci95": list(est.ci95) if est.ci95 else None,
            "half_width": sp.half_width_of(est.ci95),
            "stopping_half_width": sp.half_width_of(est.ci95),
            "n_units": est.n_units,
            "reason": est.reason,
        }
    return out


def _units_per_item(data: _Data) -> float:
    if data.question.scope == "item" or not data.units:
        return 1.0
    return len(data.units) / max(1, len({u[0] for u in data.units}))


def _raters_per_item(data: _Data, pool: Pool) -> int:
    """The pool's k, or the median number of ratings per unit when the labels show more (imported pools)."""
    if data.codes.size == 0:
        return pool.overlap
    return max(pool.overlap, int(np.median((~np.isnan(data.codes)).sum(axis=1))))


def validation_plan(
    *, vs: ValidationStudy, half_width: float = DEFAULT_HALF_WIDTH, data: _Data | None = None
) -> dict[str, Any]:
    """The items the study's headline figures need at ``±half_width``: the metric's AUC (Hanley & McNeil
    and Obuchowski) and pool B's κ (Fleiss, simulated), each from the estimate so far or a stated
    assumption; units are converted to items by the units per item seen so far."""
    data = data or _load(vs)
    pool = vs.target_pool
    done = set(data.completion.item_order)
    now = _figures_at(data, done, n_boot=0, seed=0)
    assumptions: list[str] = []
    auc_now = now.get("auc", {})
    auc = auc_now.get("value")
    if auc is None or not 0.5 < auc < 0.995:
        assumptions.append(f"expected AUC {ASSUMED_AUC} (no usable estimate yet)")
        auc = ASSUMED_AUC
    prevalence = auc_now["n_positive"] / auc_now["n_units"] if auc_now.get("n_units") else None
    if prevalence is None or not 0.02 <= prevalence <= 0.98:
        assumptions.append(f"prevalence {ASSUMED_PREVALENCE} of {vs.positive!r} (no usable estimate yet)")
        prevalence = ASSUMED_PREVALENCE
    kappa_now = now.get("kappa", {}).get("value")
    kappa = kappa_now if kappa_now is not None and 0.05 <= kappa_now <= 0.95 else None
    if kappa is None:
        assumptions.append(f"expected κ {ASSUMED_KAPPA} (no usable estimate yet)")
        kappa = ASSUMED_KAPPA
    per_item = _units_per_item(data)
    k = _raters_per_item(data, pool)
    figures = []
    with planning_errors():
        auc_plans = (
            sp.auc_plan_hanley_mcneil(auc, prevalence, half_width),
            sp.auc_plan_obuchowski(auc, prevalence, half_width),
        )
    for plan in auc_plans:
        figures.append({"plan": plan.as_dict(), "n_items": math.ceil(plan.n_items / per_item)})
    if k >= 2 and data.n_categories >= 2:
        plan = _kappa_plan(kappa=kappa, raters=k, categories=data.n_categories, half_width=half_width)
        figures.append({"plan": plan.as_dict(), "n_items": math.ceil(plan.n_items / per_item)})
    n_items = max(f["n_items"] for f in figures)
    minutes = median_minutes_per_item(pool)
    return {
        "half_width": half_width,
        "pool": {"id": pool.pk, "name": pool.name, "k": k},
        "scope": data.question.scope,
        "units_per_item": per_item,
        "assumptions": assumptions,
        "expected": {"auc": auc, "prevalence": prevalence, "kappa": kappa},
        "figures": figures,
        "n_items": n_items,
        "median_minutes_per_item": minutes,
        "clinician_hours": _hours(n_items, k, minutes),
    }


def validation_data_version(vs: ValidationStudy) -> str:
    """A fingerprint of what a validation study's plan and monitoring read: pool B's labels and gold on the
    target question, the metric's scores, which items were completed when, the pool's closing, and the
    study's own settings. A planning job keeps it in its parameters."""
    source = f"run:{vs.metric_run_id}" if vs.metric_run_id else None
    labels = data_version(pool=vs.target_pool, question=vs.target_question, source=source)
    rows = Assignment.objects.filter(pool=vs.target_pool)
    done = rows.aggregate(
        n=Count("pk", filter=Q(status=AssignmentStatus.SUBMITTED)),
        skipped=Count("pk", filter=Q(status=AssignmentStatus.SKIPPED)),
        at=Max("submitted_at"),
        seconds=Sum("active_seconds"),
    )
    run = vs.metric_run.status if vs.metric_run_id else None
    parts = [labels, done, run, vs.target_pool.overlap, vs.target_pool.closed_at, vs.positive, vs.parameters]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def validation_monitoring(
    *,
    vs: ValidationStudy,
    half_width: float = DEFAULT_HALF_WIDTH,
    now: datetime | None = None,
    progress: sp.Progress | None = None,
) -> dict[str, Any]:
    """The half-width of each headline figure at checkpoints as pool B's items were completed, the plan,
    and at the current pace (items completed per day) the items and days still needed. ``progress`` counts
    the plan and each checkpoint."""
    now = now or timezone.now()
    data = _load(vs)
    plan = validation_plan(vs=vs, half_width=half_width, data=data)
    order = data.completion.item_order
    p = {"n_boot": KAPPA_N_BOOT, "seed": 0, **(vs.parameters or {})}
    n_boot = min(int(p.get("n_boot") or 0), KAPPA_N_BOOT) or KAPPA_N_BOOT
    checkpoints = sorted({max(1, round(len(order) * (i + 1) / CHECKPOINTS)) for i in range(CHECKPOINTS)})
    steps = 1 + (len(checkpoints) if order else 0)
    if progress is not None:
        progress(1, steps)
    series: dict[str, dict[str, Any]] = {}
    for step, j in enumerate(checkpoints if order else [], start=2):
        figs = _figures_at(data, set(order[:j]), n_boot=n_boot, seed=int(p.get("seed") or 0))
        for key, fig in figs.items():
            entry = series.setdefault(key, {"key": key, "title": fig["title"], "points": []})
            entry["points"].append(
                {
                    "items": j,
                    "at": data.completion.completed_at[order[j - 1]].isoformat(),
                    "value": fig["value"],
                    "half_width": fig["half_width"],
                    "n_units": fig["n_units"],
                }
            )
        if progress is not None:
            progress(step, steps)
    done = len(order)
    current = {k: v["points"][-1] for k, v in series.items() if v["points"]}
    needed_total = plan["n_items"]
    for point in current.values():
        if point["half_width"]:
            needed_total = max(needed_total, sp.items_for_half_width(done, point["half_width"], half_width))
    still = max(0, needed_total - done)
    pace = _pace(data.completion, now)
    days = still / pace["items_per_day"] if pace["items_per_day"] else None
    if vs.target_pool.closed_at:
        still_note = f"pool B closed {vs.target_pool.closed_at:%Y-%m-%d %H:%M}: {vs.target_pool.closed_reason}"
    else:
        still_note = None
    return {
        "half_width": half_width,
        "items_done": done,
        "items_needed_total": needed_total,
        "items_still_needed": still,
        "pace": pace,
        "days_still_needed": days,
        "series": list(series.values()),
        "plan": plan,
        "metric_missing": data.scores_missing,
        "closed": still_note,
    }


def _pace(completion: _Completion, now: datetime) -> dict[str, Any]:
    """Items completed per day over the span in which they were completed (at least one day)."""
    times = sorted(completion.completed_at.values())
    if not times:
        return {"items_per_day": None, "note": "pace unknown: no item is complete yet"}
    if len(times) < 2 or (times[-1] - times[0]).total_seconds() < 60:
        return {
            "items_per_day": None,
            "note": "pace unknown: fewer than two completions at distinct times (imported labels arrive at once)",
        }
    days = max((times[-1] - times[0]).total_seconds() / 86400, 1.0)
    return {"items_per_day": len(times) / days, "since": times[0].isoformat(), "note": None}


# --- the stopping rule ---------------------------------------------------------------------------------


def pool_precision_status(*, pool: Pool) -> dict[str, Any]:
    """Whether every headline figure of every validation study targeting ``pool`` has reached the pool's
    ``stop_at_half_width`` (guarded half-width for the AUC) with at least half the planned items done."""
    target = pool.stop_at_half_width
    studies = list(
        ValidationStudy.objects.filter(target_pool=pool).select_related("target_question", "metric_run", "target_pool")
    )
    if target is None or not studies:
        return {"reached": False, "reasons": ["no target precision" if target is None else "no validation study"]}
    reasons: list[str] = []
    summary: list[str] = []
    for vs in studies:
        data = _load(vs)
        done = data.completion.item_order
        plan = validation_plan(vs=vs, half_width=target, data=data)
        minimum = math.ceil(plan["n_items"] / 2)
        if len(done) < minimum:
            reasons.append(f"{vs.name}: {len(done)} of at least {minimum} items (half the plan) completed")
            continue
        figs = _figures_at(data, set(done), n_boot=KAPPA_N_BOOT, seed=0)
        if not figs:
            reasons.append(f"{vs.name}: no headline figure is defined yet")
        for key, fig in figs.items():
            if key == "auc":
                ok = sp.fixed_precision_reached(
                    ci95=fig["ci95"],
                    n_positive=fig["n_positive"],
                    n_negative=fig["n_units"] - fig["n_positive"],
                    n_done=len(done),
                    planned_items=plan["n_items"],
                    target=target,
                )
            else:
                ok = fig["stopping_half_width"] is not None and fig["stopping_half_width"] <= target
            if ok:
                summary.append(f"{fig['title']} {fig['value']:.3f} ±{fig['half_width']:.3f} on {len(done)} items")
            else:
                width = fig["stopping_half_width"]
                reasons.append(f"{vs.name}: {fig['title']} ±{'—' if width is None else round(width, 4)}")
    return {"reached": not reasons, "reasons": reasons, "summary": summary}


# --- a plan from figures alone (the command and the API) -----------------------------------------------


def _whole(data: dict[str, Any], key: str, low: int, high: int) -> int | None:
    raw = data.get(key)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    return parse_int(raw, name=key, minimum=low, maximum=high)


def plan_inputs(data: dict[str, Any]) -> dict[str, Any]:
    """The inputs of a plan from figures, parsed and checked (ValidationFailed naming the field): ``auc``
    (with ``prevalence``), ``kappa`` (with ``raters``, ``categories``; and ``prevalence`` for two raters on
    two categories) or ``alpha`` (with ``raters``, ``categories``), at ``half_width`` and ``confidence``.
    What the formulas refuse is refused here too, before anything is computed or queued."""
    half_width = parse_half_width(data.get("half_width"))
    confidence = parse_number(data.get("confidence"), "confidence")
    if confidence is None:
        confidence = sp.DEFAULT_CONFIDENCE
    if not 0.5 <= confidence <= sp.MAX_CONFIDENCE:
        raise ValidationFailed(f"confidence must lie in [0.5, {sp.MAX_CONFIDENCE:g}]")
    auc, kappa, alpha = (parse_number(data.get(k), k) for k in ("auc", "kappa", "alpha"))
    if sum(x is not None for x in (auc, kappa, alpha)) != 1:
        raise ValidationFailed("give exactly one of auc, kappa or alpha")
    prevalence = parse_number(data.get("prevalence"), "prevalence")
    raters = _whole(data, "raters", 2, 50)
    categories = _whole(data, "categories", 2, 50)
    seed = _whole(data, "seed", 0, 2**31 - 1) or 0
    if auc is not None and prevalence is None:
        raise ValidationFailed("an AUC plan needs prevalence (the share of positive items)")
    value = kappa if kappa is not None else alpha
    if auc is None:
        if raters is None or categories is None:
            raise ValidationFailed("an agreement plan needs raters and categories")
        if value is None or not 0 <= value < 1:
            raise ValidationFailed("the expected agreement must lie in [0, 1) for the simulated plan")
    inputs = {
        "auc": auc,
        "kappa": kappa,
        "alpha": alpha,
        "prevalence": prevalence,
        "raters": raters,
        "categories": categories,
        "half_width": half_width,
        "confidence": confidence,
        "seed": seed,
    }
    _closed_form_plans(inputs)  # the formulas' own checks (instant), so a bad input never reaches a job
    return inputs


def _closed_form_plans(inputs: dict[str, Any]) -> list[sp.Plan]:
    auc, kappa, prevalence = inputs["auc"], inputs["kappa"], inputs["prevalence"]
    half_width, confidence = inputs["half_width"], inputs["confidence"]
    with planning_errors():
        if auc is not None:
            return [
                sp.auc_plan_hanley_mcneil(auc, prevalence, half_width, confidence),
                sp.auc_plan_obuchowski(auc, prevalence, half_width, confidence),
            ]
        if kappa is not None and inputs["raters"] == 2 and inputs["categories"] == 2 and prevalence is not None:
            return [sp.cohen_kappa_plan(kappa, prevalence, half_width, confidence)]
    return []


def plan_compute(inputs: dict[str, Any], progress: sp.Progress | None = None) -> dict[str, Any]:
    """The plan for inputs from :func:`plan_inputs`; the simulated agreement plan reports its progress."""
    plans = _closed_form_plans(inputs)
    if inputs["auc"] is None:
        kappa = inputs["kappa"]
        with planning_errors():
            plans.append(
                sp.agreement_plan(
                    "fleiss" if kappa is not None else "alpha",
                    kappa if kappa is not None else inputs["alpha"],
                    inputs["raters"],
                    inputs["categories"],
                    inputs["half_width"],
                    inputs["confidence"],
                    n_sim=N_SIM * 2,
                    seed=inputs["seed"],
                    progress=progress,
                )
            )
    return {"inputs": inputs, "plans": [p.as_dict() for p in plans], "n_items": max(p.n_items for p in plans)}


def plan_request(data: dict[str, Any]) -> dict[str, Any]:
    """The plan for raw inputs (the command): :func:`plan_inputs`, then :func:`plan_compute`."""
    return plan_compute(plan_inputs(data))


def plan_text(plan: dict[str, Any]) -> str:
    """The plan as the command prints it."""
    lines = []
    for p in plan["plans"]:
        split = f" ({p['n_positive']} positive, {p['n_negative']} negative)" if p.get("n_positive") else ""
        who = f", {p['raters']} raters, {p['categories']} categories" if p.get("raters") else ""
        lines.append(
            f"{p['method']}: expected {p['expected']:g}{who}, ±{p['half_width']:g} at {p['confidence']:.0%}: "
            f"{p['n_items']} items{split}"
        )
        for note in p.get("notes") or []:
            lines.append(f"    {note}")
        lines.append(f"    {p['reference']}")
    lines.append(f"Plan: about {plan['n_items']} items (the largest of the above).")
    return "\n".join(lines)


def monitoring_text(out: dict[str, Any]) -> str:
    plan = out["plan"]
    vs = out.get("validation_study") or {}
    lines = [f"{vs.get('name', 'Validation study')} — plan at ±{plan['half_width']:g} (95%)"]
    for a in plan["assumptions"]:
        lines.append(f"  assumed: {a}")
    for f in plan["figures"]:
        p = f["plan"]
        lines.append(f"  {p['method']}: {p['n_items']} {plan['scope']} units → {f['n_items']} items")
    hours = plan["clinician_hours"]
    lines.append(
        f"  plan: about {plan['n_items']} items with k = {plan['pool']['k']} in {plan['pool']['name']}"
        + (f", {hours:,.0f} clinician-hours" if hours is not None else ", clinician-hours unknown (no timed items)")
    )
    lines.append(f"Now: {out['items_done']} items complete.")
    for s in out["series"]:
        last = s["points"][-1]
        hw = "—" if last["half_width"] is None else f"±{last['half_width']:.3f}"
        val = "undefined" if last["value"] is None else f"{last['value']:.3f}"
        lines.append(f"  {s['title']}: {val} {hw} on {last['n_units']} units")
    pace = out["pace"]
    days = out["days_still_needed"]
    lines.append(
        f"Still needed: {out['items_still_needed']} items"
        + (
            f", about {days:.1f} days at {pace['items_per_day']:.1f} items/day"
            if days is not None
            else f" ({pace['note']})"
        )
    )
    if out["closed"]:
        lines.append(out["closed"])
    return "\n".join(lines)


# --- the precision chart -------------------------------------------------------------------------------

CHART_W, CHART_H, CHART_LEFT, CHART_TOP = 520, 240, 44, 12
SERIES_COLOURS = ("#1f5fbf", "#c0392b", "#2e8b57", "#8e44ad")


def precision_chart(monitoring: dict[str, Any]) -> dict[str, Any] | None:
    """SVG geometry of the half-width of each headline figure against items completed, with the target as
    a dashed line (y up, 0 at the bottom); None when there is nothing to draw."""
    series = [s for s in monitoring["series"] if any(p["half_width"] is not None for p in s["points"])]
    if not series:
        return None
    target = monitoring["half_width"]
    x_max = max(monitoring["items_needed_total"], monitoring["items_done"], 1)
    y_max = max([target * 2] + [p["half_width"] for s in series for p in s["points"] if p["half_width"] is not None])
    w, h = CHART_W - CHART_LEFT - 10, CHART_H - CHART_TOP - 30

    def x(n: float) -> float:
        return round(CHART_LEFT + w * n / x_max, 1)

    def y(v: float) -> float:
        return round(CHART_TOP + h * (1 - v / y_max), 1)

    lines = []
    for i, s in enumerate(series):
        pts = [(p["items"], p["half_width"]) for p in s["points"] if p["half_width"] is not None]
        when = {p["items"]: p["at"][:16].replace("T", " ") for p in s["points"]}
        last = s["points"][-1]
        lines.append(
            {
                "title": s["title"],
                "colour": SERIES_COLOURS[i % len(SERIES_COLOURS)],
                "points": " ".join(f"{x(n)},{y(v)}" for n, v in pts),
                "dots": [{"cx": x(n), "cy": y(v), "label": f"{n} items by {when[n]}: ±{v:.3f}"} for n, v in pts],
                "last": None if last["half_width"] is None else round(last["half_width"], 3),
                "legend_y": CHART_H + 12 + 16 * i,
            }
        )
    return {
        "width": CHART_W,
        "height": CHART_H + 16 * len(lines) + 4,
        "axis_label_y": CHART_H - 6,
        "left": CHART_LEFT,
        "top": CHART_TOP,
        "right": CHART_LEFT + w,
        "bottom": CHART_TOP + h,
        "plot_w": w,
        "plot_h": h,
        "target_y": y(target),
        "target": target,
        "y_max": round(y_max, 3),
        "x_max": x_max,
        "planned_x": x(monitoring["items_needed_total"]),
        "done_x": x(monitoring["items_done"]),
        "lines": lines,
        "legend_x": CHART_LEFT,
    }
