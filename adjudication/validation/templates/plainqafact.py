"""The PlainQAFact template: explanation-only AUC, kind-aware against source-only.

The kind-aware metric (a ``plainqafact`` run's explanation score, or its verdicts on elaboration
sentences) against a source-only metric (the comparison run), paired DeLong.
"""

from __future__ import annotations

from typing import Any

from adjudication.validation.figures import (
    TemplateContext,
    Unit,
    mark_missing,
    missing_run,
    missing_scope,
    missing_target,
    new_analysis,
    paired_figures,
    run_values,
)
from annotation import units
from scoring.models import Score

INFO: dict[str, Any] = {
    "title": "PlainQAFact: explanation-only AUC, kind-aware against source-only",
    "metric_run": ("plainqafact",),
    "compare_run": None,
    "measure": None,
    "target_hint": "an item- or sentence-level question of pool B judging factuality",
}


def _explanation_score(details: dict[str, Any]) -> Any:
    return details.get("explanation_score")


def run_plainqafact(ctx: TemplateContext) -> list[dict[str, Any]]:
    vs = ctx.vs
    out = []
    scope_missing = missing_scope(ctx.question, ("item", "sentence"), "explanation-only AUC")
    target_missing = missing_target(ctx) if not scope_missing else []
    run_missing = missing_run(vs.metric_run, ("plainqafact",), "metric run (kind-aware PlainQAFact)")
    compare_missing = missing_run(vs.compare_run, None, "comparison run (a source-only metric)")
    notes = []
    a_vals: dict[Unit, float] = {}
    b_vals: dict[Unit, float] = {}
    sentence = ctx.question.scope == "sentence"
    if not run_missing:
        if (vs.metric_run.parameters or {}).get("knowledge") == "none":
            notes.append(
                f"Run #{vs.metric_run.pk} verifies explanations against the source only (knowledge=none): "
                "it is not kind-aware beyond the source."
            )
        if sentence:
            elaborations = {
                (i, k)
                for i, k, d in Score.objects.filter(
                    run=vs.metric_run, unit_key__startswith=f"{units.ANSWER_SENTENCE}:"
                ).values_list("item_id", "unit_key", "details")
                if (d or {}).get("kind") == "elaboration"
            }
            a_vals = {
                u: v for u, v in run_values(vs.metric_run, unit=units.ANSWER_SENTENCE)[0].items() if u in elaborations
            }
        else:
            a_vals = run_values(vs.metric_run, extract=_explanation_score)[0]
        if not a_vals:
            run_missing = [f"run #{vs.metric_run.pk} has no explanation (elaboration) score on any item"]
    if not compare_missing:
        if vs.compare_run.metric == "plainqafact" and (vs.compare_run.parameters or {}).get("knowledge") != "none":
            notes.append(f"The comparison run #{vs.compare_run.pk} uses a knowledge base: it is not source-only.")
        if sentence:
            b_vals = run_values(vs.compare_run, unit=units.ANSWER_SENTENCE)[0]
        elif vs.compare_run.metric == "plainqafact":
            b_vals = run_values(vs.compare_run, extract=_explanation_score)[0]
        else:
            b_vals = run_values(vs.compare_run)[0]
    for label, positions, excluded in (ctx.targets() if not scope_missing else []) or [(None, {}, {})]:
        y = ctx.binary(positions) if positions else {}
        a = new_analysis("explanation_only_auc", "Explanation-only AUC: kind-aware against source-only", target=label)
        a["notes"] += notes
        missing = scope_missing + target_missing + run_missing + compare_missing
        if missing:
            out.append(mark_missing(a, missing))
            continue
        what = (
            "elaboration sentences (as the kind-aware run classified them)"
            if sentence
            else "items, by the explanation score (supported elaborations / elaborations)"
        )
        a["notes"].append(f"Units: {what}.")
        paired_figures(
            a,
            names=(f"kind-aware (run #{vs.metric_run.pk})", f"source-only (run #{vs.compare_run.pk})"),
            a=a_vals,
            b={u: v for u, v in b_vals.items() if u in a_vals},
            target=y,
        )
        if excluded:
            a["notes"].append(f"Left out of the target: {excluded}.")
        out.append(a)
    return out
