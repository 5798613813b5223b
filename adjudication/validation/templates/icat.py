"""The ICAT template (arXiv 2501.03545), and its critics' test: a fixed checklist.

Coverage against the original aspect set (aspect-set version 1) and against the set expanded by accepted
proposals (the current set), for ICAT (an ``icat`` run's per-aspect verdicts) and for pool B (and pool A
when given); ICAT coverage against human coverage under both sets.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from adjudication import selectors
from adjudication.analysis.loading import binary_target, human_target, ratings_load
from adjudication.stats import validity as va
from adjudication.stats.validation_stats import mean_ci, paired_difference
from adjudication.validation.figures import (
    TemplateContext,
    Unit,
    figure,
    mark_missing,
    missing_run,
    missing_scope,
    missing_target,
    new_analysis,
    run_values,
)
from annotation import units
from annotation.models import Aspect, AspectOrigin, AspectStatus, Study
from concord.errors import NotFound, ValidationFailed

INFO: dict[str, Any] = {
    "title": "ICAT: coverage under the original and the expanded aspect set",
    "metric_run": ("icat",),
    "compare_run": (),
    "measure": "human_aspect_coverage",
    "target_hint": "an aspect-level question of pool B, e.g. aspect_covered or aspect_entailment",
}


def aspect_sets(study: Study) -> tuple[dict[int, list[str]], dict[int, list[str]], dict[str, int]]:
    """(original set per item, expanded set per item, counts). The original set is the aspect set as
    it stood at version 1; the expanded set is the current accepted set, proposals included."""
    original: dict[int, list[str]] = defaultdict(list)
    expanded: dict[int, list[str]] = defaultdict(list)
    for item_id, pk in Aspect.objects.filter(item__study=study).in_version(1).values_list("item_id", "pk"):
        original[item_id].append(units.aspect(pk))
    current = Aspect.objects.filter(item__study=study, status=AspectStatus.ACCEPTED, retired_in_version__isnull=True)
    for item_id, pk in current.values_list("item_id", "pk"):
        expanded[item_id].append(units.aspect(pk))
    counts = {
        "original_aspects": sum(len(v) for v in original.values()),
        "expanded_aspects": sum(len(v) for v in expanded.values()),
        "accepted_proposals": current.filter(origin=AspectOrigin.PROPOSED).count(),
        "items_changed": sum(
            1 for i in set(original) | set(expanded) if set(original.get(i, ())) != set(expanded.get(i, ()))
        ),
    }
    return original, expanded, counts


def coverage_per_item(sets: dict[int, list[str]], judged: dict[Unit, float]) -> tuple[dict[Unit, float], int]:
    """Share of an item's aspects judged covered (1.0 in ``judged``); an item with an aspect that has
    no judgement is left out (a partial count would be biased) and counted."""
    out: dict[Unit, float] = {}
    partial = 0
    for item_id, keys in sets.items():
        if not keys:
            continue
        got = [judged.get((item_id, key)) for key in keys]
        if any(v is None for v in got):
            if any(v is not None for v in got):
                partial += 1
            continue
        out[(item_id, units.ITEM)] = sum(got) / len(got)
    return out, partial


def _pool_a_aspect_judgements(ctx: TemplateContext) -> tuple[dict[Unit, float], list[str]]:
    vs = ctx.vs
    if vs.metric_pool is None:
        return {}, ["no pool A: choose the pool whose aspect labels give a second human coverage"]
    keys = set(vs.metric_pool.questions.values_list("key", flat=True))
    key = next((k for k in selectors.ASPECT_QUESTIONS if k in keys), None)
    if key is None:
        return {}, [f"pool A ({vs.metric_pool.name}) answers none of {', '.join(selectors.ASPECT_QUESTIONS)}"]
    question = vs.metric_pool.questions.get(key=key)
    ratings = ratings_load(pool=vs.metric_pool, question=question)
    mode = vs.metric_rater if vs.metric_rater in ("gold", "majority") else f"rater:{vs.metric_rater}"
    try:
        positions, _ = human_target(pool=vs.metric_pool, question=question, target=mode, ratings=ratings)
    except (NotFound, ValidationFailed) as exc:
        return {}, [f"pool A ({vs.metric_pool.name}): {exc.message}"]
    if not positions:
        return {}, [f"pool A ({vs.metric_pool.name}) has no {vs.metric_rater} labels on {key} yet"]
    units = list(positions)
    covered = binary_target(
        question, np.array([positions[u] for u in units], dtype=float), selectors.ASPECT_QUESTIONS[key][0]
    )
    return {u: float(c) for u, c in zip(units, covered, strict=True)}, []


def run_icat(ctx: TemplateContext) -> list[dict[str, Any]]:
    vs = ctx.vs
    out = []
    scope_missing = missing_scope(ctx.question, ("aspect",), "aspect coverage")
    target_missing = missing_target(ctx) if not scope_missing else []
    run_missing = missing_run(vs.metric_run, ("icat",), "metric run (ICAT)")
    original, expanded, counts = aspect_sets(vs.study)
    set_note = (
        f"Original set: {counts['original_aspects']} aspects (version 1); expanded set: "
        f"{counts['expanded_aspects']} aspects, {counts['accepted_proposals']} of them accepted proposals "
        f"({counts['items_changed']} items changed)."
    )
    if not counts["accepted_proposals"] and not counts["items_changed"]:
        set_note += " No proposal has been accepted yet, so the two sets are the same."
    icat_aspects = run_values(vs.metric_run, unit=units.ASPECT)[0] if not run_missing else {}
    icat_cov = {
        name: coverage_per_item(sets, icat_aspects) for name, sets in (("original", original), ("expanded", expanded))
    }
    pool_a, pool_a_missing = _pool_a_aspect_judgements(ctx) if not scope_missing else ({}, [])
    for label, positions, excluded in (ctx.targets() if not scope_missing else []) or [(None, {}, {})]:
        y = ctx.binary(positions) if positions else {}
        human_cov = {
            name: coverage_per_item(sets, y) for name, sets in (("original", original), ("expanded", expanded))
        }
        a = new_analysis(
            "coverage_by_aspect_set", "Coverage under the original and the expanded aspect set", target=label
        )
        a["notes"].append(set_note)
        if scope_missing or target_missing:
            out.append(mark_missing(a, scope_missing + target_missing))
        else:
            _coverage_figures(
                a,
                "human coverage (pool B)",
                human_cov,
                unjudged="an aspect pool B did not judge (accepted after it labelled the item?)",
            )
            if run_missing:
                a["notes"].append("ICAT coverage not computed: " + "; ".join(run_missing) + ".")
            else:
                _coverage_figures(
                    a,
                    f"ICAT coverage (run #{vs.metric_run.pk})",
                    icat_cov,
                    unjudged="an aspect the run did not score (accepted after the run, or aspects=must_have)",
                )
            out.append(a)
        b = new_analysis("icat_vs_human", "ICAT coverage against human coverage, under both aspect sets", target=label)
        missing = scope_missing + target_missing + run_missing
        if missing:
            out.append(mark_missing(b, missing))
        else:
            for name, sets in (("original", original), ("expanded", expanded)):
                _agreement_figures(
                    b, f"ICAT vs pool B, {name} set", icat_cov[name][0], human_cov[name][0], icat_aspects, y, sets, ctx
                )
            out.append(b)
        c = new_analysis("pool_a_vs_pool_b", "Pool A's coverage against pool B's, under both aspect sets", target=label)
        missing = scope_missing + target_missing + pool_a_missing
        if missing:
            out.append(mark_missing(c, missing))
        else:
            for name, sets in (("original", original), ("expanded", expanded)):
                a_cov = coverage_per_item(sets, pool_a)[0]
                _agreement_figures(c, f"pool A vs pool B, {name} set", a_cov, human_cov[name][0], pool_a, y, sets, ctx)
            out.append(c)
        if excluded:
            for analysis in out[-3:]:
                if analysis["status"] == "ok":
                    analysis["notes"].append(f"Left out of the target: {excluded}.")
    return out


def _coverage_figures(
    analysis: dict[str, Any],
    name: str,
    cov: dict[str, tuple[dict[Unit, float], int]],
    *,
    unjudged: str = "an aspect nobody judged",
) -> None:
    (orig, orig_partial), (exp, exp_partial) = cov["original"], cov["expanded"]
    analysis["figures"].append(
        figure(
            f"{name}, original set: mean per item", mean_ci(list(orig.values()), n_excluded=orig_partial, what="item")
        )
    )
    analysis["figures"].append(
        figure(f"{name}, expanded set: mean per item", mean_ci(list(exp.values()), n_excluded=exp_partial, what="item"))
    )
    both = sorted(set(orig) & set(exp))
    analysis["figures"].append(
        figure(
            f"{name}: expanded − original, paired per item",
            paired_difference([exp[u] for u in both], [orig[u] for u in both]),
        )
    )
    if orig_partial or exp_partial:
        analysis["notes"].append(
            f"{name}: items with {unjudged} are left out (original set {orig_partial}, expanded set {exp_partial})."
        )


def _agreement_figures(
    analysis: dict[str, Any],
    name: str,
    metric_cov: dict[Unit, float],
    human_cov: dict[Unit, float],
    metric_aspects: dict[Unit, float],
    human_aspects: dict[Unit, float],
    sets: dict[int, list[str]],
    ctx: TemplateContext,
) -> None:
    items = sorted(set(metric_cov) & set(human_cov))
    x = np.array([metric_cov[u] for u in items], dtype=float)
    h = np.array([human_cov[u] for u in items], dtype=float)
    analysis["figures"].append(figure(f"{name}: Spearman ρ of item coverage", va.spearman(x, h)))
    analysis["figures"].append(figure(f"{name}: Pearson r of item coverage", va.pearson(x, h)))
    in_set = {(item_id, key) for item_id, keys in sets.items() for key in keys}
    units = sorted(in_set & set(metric_aspects) & set(human_aspects))
    analysis["figures"].append(
        figure(
            f"{name}: ROC AUC of the per-aspect verdicts",
            va.roc_auc(
                np.array([metric_aspects[u] for u in units], dtype=float),
                np.array([human_aspects[u] for u in units], dtype=float),
            ),
        )
    )
