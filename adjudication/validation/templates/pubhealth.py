"""The PubHealthBench template (arXiv 2607.06641), and its critics' test: one target chunk per question.

P@1, Recall@k, MRR and nDCG@k under the dataset's single target and under pool B's multi-label relevance
(the chunks it marked as supporting the answer); rubric faithfulness (a ``rubric`` run) against "the
answer is supported" under each relevance.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

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
    validity_figures,
)
from annotation import units
from annotation.models import Chunk, Study
from scoring.metrics.retrieval import MEASURES as RETRIEVAL_MEASURES
from scoring.metrics.retrieval import retrieval_measures

INFO: dict[str, Any] = {
    "title": "PubHealthBench: single-target against multi-label relevance",
    "metric_run": ("rubric",),
    "compare_run": (),
    "measure": None,
    "target_hint": "a chunk-level question of pool B, e.g. supports_answer",
}


def _chunks(study: Study) -> dict[int, list[tuple[int, bool]]]:
    out: dict[int, list[tuple[int, bool]]] = defaultdict(list)
    for item_id, rank, target in (
        Chunk.objects.filter(item__study=study)
        .order_by("item_id", "rank")
        .values_list("item_id", "rank", "is_labelled_target")
    ):
        out[item_id].append((rank, target))
    return out


def relevance_sets(chunks: dict[int, list[tuple[int, bool]]], judged: dict[Unit, float]) -> dict[str, Any]:
    """Per item: the single target set, and pool B's multi-label set (only where every chunk was judged)."""
    single: dict[int, set[int]] = {}
    multi: dict[int, set[int]] = {}
    not_judged = 0
    for item_id, rows in chunks.items():
        single[item_id] = {rank for rank, target in rows if target}
        votes = [judged.get((item_id, units.chunk(rank))) for rank, _ in rows]
        if any(v is None for v in votes):
            not_judged += any(v is not None for v in votes)
            continue
        multi[item_id] = {rank for (rank, _), v in zip(rows, votes, strict=True) if v == 1.0}
    return {"single": single, "multi": multi, "not_all_judged": not_judged}


def run_pubhealth(ctx: TemplateContext) -> list[dict[str, Any]]:
    vs = ctx.vs
    out = []
    scope_missing = missing_scope(ctx.question, ("chunk",), "multi-label relevance")
    target_missing = missing_target(ctx) if not scope_missing else []
    chunks = _chunks(vs.study)
    no_chunks = [] if chunks else ["the study's items have no retrieved chunks"]
    no_targets = (
        []
        if any(t for rows in chunks.values() for _, t in rows)
        else [
            "no chunk of the study is labelled as the target (is_labelled_target): there is no single-target relevance"
        ]
    )
    run_missing = missing_run(vs.metric_run, ("rubric",), "metric run (judge rubric)")
    faithfulness = (
        run_values(vs.metric_run, extract=lambda d: (d.get("ratings") or {}).get("faithfulness"))[0]
        if not run_missing
        else {}
    )
    for label, positions, excluded in (ctx.targets() if not scope_missing else []) or [(None, {}, {})]:
        y = ctx.binary(positions) if positions else {}
        sets = relevance_sets(chunks, y)
        a = new_analysis(
            "retrieval", f"Retrieval quality (k = {ctx.k}) under single-target and multi-label relevance", target=label
        )
        missing = scope_missing + no_chunks + no_targets + target_missing
        if missing:
            out.append(mark_missing(a, missing))
        else:
            _retrieval_figures(a, chunks, sets, ctx.k)
            if excluded:
                a["notes"].append(f"Left out of the target: {excluded}.")
            out.append(a)
        b = new_analysis(
            "rubric_faithfulness", "Rubric faithfulness against support under each relevance", target=label
        )
        missing = scope_missing + no_chunks + target_missing + run_missing
        if missing:
            out.append(mark_missing(b, missing))
        else:
            supported_single = {
                (i, units.ITEM): float(any(y[(i, units.chunk(r))] == 1.0 for r in s))
                for i, s in sets["single"].items()
                if s and all((i, units.chunk(r)) in y for r in s)
            }
            supported_multi = {(i, units.ITEM): float(bool(s)) for i, s in sets["multi"].items()}
            b["notes"].append(
                "Single-target: the answer counts as supported when pool B marked its labelled target "
                "chunk as supporting it. Multi-label: when pool B marked any retrieved chunk."
            )
            if no_targets:
                b["notes"].append("Single-target figures undefined: " + no_targets[0] + ".")
            validity_figures(
                b,
                name="rubric faithfulness vs single-target support",
                scores=faithfulness,
                target=supported_single,
                ctx=ctx,
            )
            validity_figures(
                b,
                name="rubric faithfulness vs multi-label support",
                scores=faithfulness,
                target=supported_multi,
                ctx=ctx,
            )
            out.append(b)
    return out


def _retrieval_figures(
    analysis: dict[str, Any], chunks: dict[int, list[tuple[int, bool]]], sets: dict[str, Any], k: int
) -> None:
    per: dict[str, dict[int, dict[str, float]]] = {"single": {}, "multi": {}}
    empty = {"single": 0, "multi": 0}
    for name in ("single", "multi"):
        for item_id, relevant in sets[name].items():
            if not relevant:
                empty[name] += 1
                continue
            ranking = [rank for rank, _ in chunks[item_id]]
            per[name][item_id] = retrieval_measures(ranking, relevant, k)
    both = sorted(set(per["single"]) & set(per["multi"]))
    for measure in RETRIEVAL_MEASURES:
        analysis["figures"].append(
            figure(
                f"{measure}, single target: mean",
                mean_ci([m[measure] for m in per["single"].values()], n_excluded=empty["single"], what="item"),
            )
        )
        analysis["figures"].append(
            figure(
                f"{measure}, multi-label (pool B): mean",
                mean_ci([m[measure] for m in per["multi"].values()], n_excluded=empty["multi"], what="item"),
            )
        )
        analysis["figures"].append(
            figure(
                f"{measure}: multi-label − single target, paired",
                paired_difference([per["multi"][i][measure] for i in both], [per["single"][i][measure] for i in both]),
            )
        )
    analysis["notes"].append(
        f"Items left out: {empty['single']} with no labelled target chunk, {empty['multi']} where pool B marked no "
        f"chunk as supporting, {sets['not_all_judged']} where pool B judged only some chunks. Relevant chunks are "
        "those among the retrieved ones, so Recall@k with k ≥ the number of chunks is 1."
    )
