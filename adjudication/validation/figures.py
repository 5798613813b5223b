"""The pieces every validation template computes its figures with.

* :class:`TemplateContext` — what every template reads: the study, pool B's targets (loaded once as scale
  positions, turned into 0/1 by the study's positive option), the bootstrap size and seed, k.
* :func:`new_analysis` / :func:`mark_missing` / :func:`figure` — the shape of one analysis of a study's results:
  its figures and notes, or exactly which inputs are missing (never a crash, never a zero).
* :func:`missing_run`, :func:`missing_scope`, :func:`missing_target` — the reasons an analysis cannot run.
* :func:`run_values`, :func:`measure_values` — a score run's values per unit; a human measure of pool A.
* :func:`validity_figures`, :func:`paired_figures` — AUC (DeLong and bootstrap), Spearman and Pearson of values
  against a 0/1 target; two metrics' AUCs and their paired DeLong difference.

The statistics are :mod:`adjudication.stats`'; nothing here computes a formula itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from adjudication import selectors
from adjudication.analysis.loading import binary_target, human_target, ratings_load
from adjudication.models import ValidationStudy, ValidationTargetMode
from adjudication.stats import validity as va
from adjudication.stats.agreement import Estimate
from annotation import units
from annotation.models import Item, Pool, Question, Study
from scoring.models import RunStatus, Score, ScoreRun, ScoreState

Unit = tuple[int, str]


class TemplateContext:
    """What every template reads: the study, pool B's targets (loaded once), the bootstrap settings."""

    def __init__(self, *, vs: ValidationStudy, n_boot: int, seed: int, k: int) -> None:
        self.vs = vs
        self.n_boot, self.seed, self.k = n_boot, seed, k
        self.question = vs.target_question
        self._targets: list[tuple[str, dict[Unit, float], dict[str, int]]] | None = None

    def targets(self) -> list[tuple[str, dict[Unit, float], dict[str, int]]]:
        """(label, scale position per unit, what was excluded) for each target pool B gives."""
        if self._targets is None:
            vs = self.vs
            ratings = ratings_load(pool=vs.target_pool, question=self.question)
            if vs.target_mode == ValidationTargetMode.PER_ANNOTATOR:
                modes = [(f"rater:{name}", f"pool B annotator {name}") for name in ratings.rater_names]
            elif vs.target_mode == ValidationTargetMode.GOLD:
                modes = [("gold", "pool B gold")]
            else:
                modes = [("majority", "pool B majority")]
            self._targets = []
            for mode, label in modes:
                values, excluded = human_target(
                    pool=vs.target_pool, question=self.question, target=mode, ratings=ratings
                )
                self._targets.append((label, values, {k: n for k, n in excluded.items() if n}))
        return self._targets

    def binary(self, positions: dict[Unit, float]) -> dict[Unit, float]:
        units = list(positions)
        arr = binary_target(self.question, np.array([positions[u] for u in units], dtype=float), self.vs.positive)
        return {u: float(v) for u, v in zip(units, arr, strict=True)}


def new_analysis(key: str, title: str, *, target: str | None = None) -> dict[str, Any]:
    return {"key": key, "title": title, "target": target, "status": "ok", "missing": [], "figures": [], "notes": []}


def mark_missing(analysis: dict[str, Any], reasons: list[str]) -> dict[str, Any]:
    analysis["status"] = "missing"
    analysis["missing"] = reasons
    return analysis


def figure(name: str, est: Estimate | dict[str, Any]) -> dict[str, Any]:
    return {"name": name, **(est.as_dict() if isinstance(est, Estimate) else est)}


def _a(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def missing_run(run: ScoreRun | None, allowed: tuple[str, ...] | None, role: str) -> list[str]:
    wanted = " or ".join(allowed) if allowed else ""
    if run is None:
        return [f"no {role}: choose a completed {wanted + ' ' if wanted else ''}score run of this study"]
    problems = []
    if allowed and run.metric not in allowed:
        problems.append(
            f"the {role} is run #{run.pk}, {_a(run.metric)} {run.metric} run; this analysis needs "
            f"{_a(wanted)} {wanted} run"
        )
    if run.status != RunStatus.DONE:
        problems.append(f"the {role} (run #{run.pk}, {run.metric}) is {run.status}, not done")
    return problems


def missing_scope(question: Question, scopes: tuple[str, ...], what: str) -> list[str]:
    if question.scope in scopes:
        return []
    return [
        f"the target question {question.key!r} is about {question.scope} units; {what} needs "
        f"{' or '.join(scopes)} units"
    ]


def missing_target(ctx: TemplateContext) -> list[str]:
    if any(values for _, values, _ in ctx.targets()):
        return []
    return [
        f"pool B ({ctx.vs.target_pool.name}) has no {ctx.vs.target_mode} target on {ctx.question.key} yet "
        "(no submitted labels, or no gold)"
    ]


def run_values(
    run: ScoreRun, *, unit: str = units.ITEM, extract: Callable[[dict[str, Any]], Any] | None = None
) -> tuple[dict[Unit, float], int]:
    """A run's ok values per unit (``unit``: a kind of :mod:`annotation.units` — ``units.ITEM``, or every
    unit of that kind, e.g. ``units.ASPECT``), or a number taken from each score's details by ``extract``;
    and how many scores were not ok or had no such number."""
    rows = Score.objects.filter(run=run)
    rows = rows.filter(unit_key=units.ITEM) if unit == units.ITEM else rows.filter(unit_key__startswith=f"{unit}:")
    fields = ["item_id", "unit_key", "value", "state"] + (["details"] if extract else [])
    values: dict[Unit, float] = {}
    not_ok = 0
    for row in rows.values_list(*fields):
        item_id, key, value, state = row[:4]
        if extract is not None:
            value = extract(row[4] or {})
        if (
            state == ScoreState.OK
            and isinstance(value, int | float)
            and not isinstance(value, bool)
            and np.isfinite(value)
        ):
            values[(item_id, key)] = float(value)
        else:
            not_ok += 1
    return values, not_ok


def validity_figures(
    analysis: dict[str, Any],
    *,
    name: str,
    scores: dict[Unit, float],
    target: dict[Unit, float],
    ctx: TemplateContext,
    ordinal: dict[Unit, float] | None = None,
) -> None:
    """AUC (DeLong and bootstrap), Spearman and Pearson of ``scores`` against a 0/1 ``target``."""
    units = sorted(set(scores) & set(target))
    s = np.array([scores[u] for u in units], dtype=float)
    y = np.array([target[u] for u in units], dtype=float)
    rank_target = np.array([ordinal[u] for u in units], dtype=float) if ordinal is not None else y
    summary = va.validity_summary(s, y, ordinal_target=rank_target, n_boot=ctx.n_boot, seed=ctx.seed)
    auc = summary["auc"]
    analysis["figures"].append(figure(f"{name}: ROC AUC", auc))
    if auc.get("ci95_bootstrap"):
        analysis["figures"].append(
            figure(
                f"{name}: ROC AUC, bootstrap interval",
                {
                    "value": auc["value"],
                    "ci95": auc["ci95_bootstrap"],
                    "n_units": auc["n_units"],
                    "n_excluded_units": auc["n_excluded_units"],
                    "ci_method": f"percentile bootstrap, stratified, {ctx.n_boot} resamples, seed {ctx.seed}",
                },
            )
        )
    analysis["figures"].append(figure(f"{name}: Spearman ρ", summary["spearman"]))
    analysis["figures"].append(figure(f"{name}: Pearson r", summary["pearson"]))
    analysis["notes"].append(
        f"{name}: {summary['n']} units with both a value and a target "
        f"({summary['n_pos']} positive, {summary['n_neg']} negative; {len(scores)} with a value, "
        f"{len(target)} with a target)."
    )


def paired_figures(
    analysis: dict[str, Any],
    *,
    names: tuple[str, str],
    a: dict[Unit, float],
    b: dict[Unit, float],
    target: dict[Unit, float],
) -> None:
    """Both AUCs and the paired DeLong difference on the units both metrics scored and pool B judged."""
    units = sorted(set(a) & set(b) & set(target))
    sa = np.array([a[u] for u in units], dtype=float)
    sb = np.array([b[u] for u in units], dtype=float)
    y = np.array([target[u] for u in units], dtype=float)
    analysis["figures"].append(figure(f"{names[0]}: ROC AUC (paired units)", va.roc_auc(sa, y)))
    analysis["figures"].append(figure(f"{names[1]}: ROC AUC (paired units)", va.roc_auc(sb, y)))
    paired = va.delong_paired(sa, sb, y)
    analysis["figures"].append(figure(f"{names[0]} − {names[1]}: AUC difference (paired DeLong)", paired))
    if paired.defined:
        analysis["notes"].append(
            f"Paired DeLong test: z = {paired.extra['z']:.3f}, two-sided p = "
            f"{paired.extra['p_value']:.4g}, on {len(units)} units."
        )
    else:
        analysis["notes"].append(f"Paired DeLong test on {len(units)} units: {paired.reason}.")


def measure_values(pool: Pool, measure: str, rater: str, study: Study) -> tuple[dict[Unit, float], dict[str, str]]:
    per_item = selectors.human_measure_values(pool_id=pool.pk, measure=measure, rater=rater)
    ids = dict(Item.objects.filter(study=study, external_id__in=per_item.values).values_list("external_id", "pk"))
    return {(ids[e], units.ITEM): v for e, v in per_item.values.items() if e in ids}, per_item.undefined
