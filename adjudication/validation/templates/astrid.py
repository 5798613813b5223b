"""The ASTRID template (arXiv 2501.08208), and its critics' test: CF and PF came from the same two annotators.

Automated CF (a ``cf`` run, any backend) against pool B's judgement (perceived faithfulness); human CF
from pool A against the same target; CF against RF (an ``rf`` run), paired DeLong.
"""

from __future__ import annotations

from typing import Any

from adjudication.validation.figures import (
    TemplateContext,
    Unit,
    mark_missing,
    measure_values,
    missing_run,
    missing_scope,
    missing_target,
    new_analysis,
    paired_figures,
    run_values,
    validity_figures,
)
from annotation.models import QuestionKind
from concord.errors import NotFound

INFO: dict[str, Any] = {
    "title": "ASTRID: conversational faithfulness against an independent, blinded judgement",
    "metric_run": ("cf",),
    "compare_run": ("rf",),
    "measure": "human_cf",
    "target_hint": "an item-level question of pool B, e.g. perceived_faithfulness",
}


def run_astrid(ctx: TemplateContext) -> list[dict[str, Any]]:
    vs = ctx.vs
    out = []
    scope_missing = missing_scope(ctx.question, ("item",), "CF (one value per answer)")
    target_missing = missing_target(ctx)
    cf_missing = missing_run(vs.metric_run, ("cf",), "metric run (automated CF)")
    rf_missing = missing_run(vs.compare_run, ("rf",), "comparison run (RF)")
    cf = run_values(vs.metric_run)[0] if not cf_missing else {}
    rf = run_values(vs.compare_run)[0] if not rf_missing else {}
    human_cf: dict[Unit, float] = {}
    human_missing: list[str] = []
    if vs.metric_pool is None:
        human_missing = [
            "no pool A: choose the pool whose sentence labels (information_bearing, grounded) give human CF"
        ]
    else:
        try:
            human_cf, undefined = measure_values(vs.metric_pool, "human_cf", vs.metric_rater, vs.study)
        except NotFound as exc:
            human_missing = [f"pool A ({vs.metric_pool.name}): {exc.message}"]
        else:
            if not human_cf:
                human_missing = [
                    f"pool A ({vs.metric_pool.name}) gives no human CF from {vs.metric_rater} yet "
                    f"({len(undefined)} items undefined)"
                ]
    targets = ctx.targets() if not scope_missing else []
    for label, positions, excluded in targets or [(None, {}, {})]:
        y = ctx.binary(positions) if positions else {}
        ordinal = positions if ctx.question.kind == QuestionKind.ORDINAL else None
        a = new_analysis("automated_cf", f"Automated CF against {ctx.question.key}", target=label)
        missing = scope_missing + target_missing + cf_missing
        if missing:
            out.append(mark_missing(a, missing))
        else:
            validity_figures(
                a,
                name=f"CF (run #{vs.metric_run.pk}, {vs.metric_run.backend})",
                scores=cf,
                target=y,
                ctx=ctx,
                ordinal=ordinal,
            )
            out.append(a)
        b = new_analysis("human_cf", f"Human CF from pool A against {ctx.question.key} from pool B", target=label)
        missing = scope_missing + target_missing + human_missing
        if missing:
            out.append(mark_missing(b, missing))
        else:
            validity_figures(
                b,
                name=f"human CF ({vs.metric_pool.name}, {vs.metric_rater})",
                scores=human_cf,
                target=y,
                ctx=ctx,
                ordinal=ordinal,
            )
            out.append(b)
        c = new_analysis("cf_vs_rf", f"CF against RF on {ctx.question.key}, paired (DeLong)", target=label)
        missing = scope_missing + target_missing + cf_missing + rf_missing
        if missing:
            out.append(mark_missing(c, missing))
        else:
            paired_figures(
                c, names=(f"CF (run #{vs.metric_run.pk})", f"RF (run #{vs.compare_run.pk})"), a=cf, b=rf, target=y
            )
            out.append(c)
        for analysis in out[-3:]:
            if excluded and analysis["status"] == "ok":
                analysis["notes"].append(f"Left out of the target: {excluded}.")
    return out
