"""Comparing backends and models: one metric computed by several score runs (backends, LLM endpoints,
models) against one human target.

* Per run: ROC AUC of the score against the binary human target (DeLong interval); accuracy,
  precision, recall and F1 of its binary verdict (score ≥ the stated threshold) with Wilson intervals;
  cost per item from the runs' records (wall seconds of each item's metric call, and requests and
  tokens where the backend counts them — see scoring.services._record_cost).
* Per pair of runs, on the units both scored and the human labelled: the paired DeLong test of the
  AUCs and McNemar's test of the verdicts' correctness (exact and chi-square).

The human target is gold or the pool's majority, and the positive class is an option of the question,
as in the validity report (adjudication.analysis.validity).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from adjudication.analysis import raters
from adjudication.analysis.access import CATEGORICAL, get_pool_for_report, get_question_for_report
from adjudication.analysis.loading import binary_target, default_positive, human_target, ratings_load, unit_scope
from adjudication.analysis.params import id_param
from adjudication.analysis.validity import default_target
from adjudication.stats import rater_stats
from adjudication.stats import validity as va
from annotation.models import Study
from concord.errors import ValidationFailed
from scoring.models import Score, ScoreState

MAX_RUNS = 8
CHART_WIDTH, CHART_ROW, CHART_LEFT = 640, 34, 230


@dataclass
class ComparisonParams:
    runs: list[int]
    pool_id: int
    question: str
    target: str
    positive: str
    threshold: float = 0.5

    def as_dict(self) -> dict[str, Any]:
        return {
            "runs": list(self.runs),
            "pool": self.pool_id,
            "question": self.question,
            "target": self.target,
            "positive": self.positive,
            "threshold": self.threshold,
        }


def comparison_params_parse(*, study: Study, query: Any) -> ComparisonParams:
    raw = query.getlist("runs") if hasattr(query, "getlist") else query.get("runs")
    if isinstance(raw, str):
        raw = [raw]
    parts = [p.strip() for r in (raw or []) for p in str(r).split(",") if p.strip()]
    runs = list(dict.fromkeys(id_param(p, "runs are whole-number ids") for p in parts))
    if not 2 <= len(runs) <= MAX_RUNS:
        raise ValidationFailed(f"choose between 2 and {MAX_RUNS} score runs of one metric")
    metrics = {raters.get_run_for_study(study, r).metric for r in runs}
    if len(metrics) != 1:
        raise ValidationFailed(f"compare runs of one metric; these compute {', '.join(sorted(metrics))}")
    pool_id = id_param(query.get("pool"), "choose a pool (a whole-number id)")
    pool = get_pool_for_report(study, pool_id)
    key = (query.get("question") or "").strip()
    question = get_question_for_report(pool, key)
    if question.kind not in CATEGORICAL:
        raise ValidationFailed("the human target must be a categorical question")
    target = (query.get("target") or "").strip() or default_target(pool=pool, question=question)
    positive = (query.get("positive") or "").strip() or default_positive(question)
    if positive not in question.option_values:
        raise ValidationFailed(f"positive must be one of {', '.join(question.option_values)}")
    threshold = raters.parse_threshold(query.get("threshold"))
    return ComparisonParams(
        runs=runs,
        pool_id=pool.pk,
        question=key,
        target=target,
        positive=positive,
        threshold=0.5 if threshold is None else threshold,
    )


def _run_values(run: Any, scope: str) -> tuple[dict[tuple[int, str], float], int, list[dict[str, Any]]]:
    values: dict[tuple[int, str], float] = {}
    not_ok = 0
    costs: list[dict[str, Any]] = []
    for item_id, key, value, state, details in Score.objects.filter(run=run).values_list(
        "item_id", "unit_key", "value", "state", "details"
    ):
        cost = (details or {}).get("cost")
        if isinstance(cost, dict):
            costs.append(cost)
        if unit_scope(key) != scope:
            continue
        if state == ScoreState.OK and value is not None:
            values[(item_id, key)] = float(value)
        else:
            not_ok += 1
    return values, not_ok, costs


def comparison_report(*, study: Study, params: ComparisonParams) -> dict[str, Any]:
    pool = get_pool_for_report(study, params.pool_id)
    question = get_question_for_report(pool, params.question)
    ratings = ratings_load(pool=pool, question=question)
    human, excluded = human_target(pool=pool, question=question, target=params.target, ratings=ratings)
    rows = []
    loaded = []
    for run_id in params.runs:
        run = raters.get_run_for_study(study, run_id)
        values, not_ok, costs = _run_values(run, question.scope)
        units = sorted(set(values) & set(human))
        y = binary_target(question, np.array([human[u] for u in units], dtype=float), params.positive)
        s = np.array([values[u] for u in units], dtype=float)
        prf = va.precision_recall_f1(s, y, params.threshold)
        correct = int(((s >= params.threshold) == (y == 1)).sum())
        loaded.append((run, values))
        rows.append(
            {
                "run": {
                    "id": run.pk,
                    "metric": run.metric,
                    "backend": run.backend,
                    "model_identity": run.model_identity,
                    "status": run.status,
                },
                "label": f"#{run.pk} {run.backend}" + (f" · {run.model_identity[:40]}" if run.model_identity else ""),
                "n_units_scored": len(values),
                "n_not_ok": not_ok,
                "n_units": len(units),
                "auc": va.roc_auc(s, y).as_dict(),
                "accuracy": {
                    "value": correct / len(units) if units else None,
                    "n_units": len(units),
                    "ci95": list(ci) if (ci := rater_stats.wilson_interval(correct, len(units))) else None,
                    "ci_method": "Wilson",
                }
                if units
                else {"value": None, "reason": "no unit in common with the human target"},
                "at_threshold": prf,
                "cost": rater_stats.cost_summary(costs),
            }
        )
    pairs = []
    for (ra, va_), (rb, vb) in combinations(loaded, 2):
        units = sorted(set(va_) & set(vb) & set(human))
        y = binary_target(question, np.array([human[u] for u in units], dtype=float), params.positive)
        a = np.array([va_[u] for u in units], dtype=float)
        b = np.array([vb[u] for u in units], dtype=float)
        delong = va.delong_paired(a, b, y)
        d = delong.as_dict()
        d.setdefault("p_value", delong.extra.get("p_value"))
        table = rater_stats.mcnemar_table((a >= params.threshold) == (y == 1), (b >= params.threshold) == (y == 1))
        pairs.append(
            {
                "run_a": ra.pk,
                "run_b": rb.pk,
                "n_units": len(units),
                "delong": d,
                "mcnemar": rater_stats.mcnemar_paired(table),
                "mcnemar_reads": "table rows: run a right / wrong; columns: run b right / wrong",
            }
        )
    return {
        "study": study.slug,
        "metric": loaded[0][0].metric if loaded else None,
        "pool": {"id": pool.pk, "name": pool.name},
        "question": {
            "key": question.key,
            "kind": question.kind,
            "scope": question.scope,
            "options": question.option_values,
        },
        "target": params.target,
        "positive": params.positive,
        "threshold": params.threshold,
        "threshold_rule": f"a run's verdict is positive when its score ≥ {params.threshold}",
        "n_units_human": len(human),
        "human_excluded": excluded,
        "runs": rows,
        "pairs": pairs,
    }


def chart(report: dict[str, Any]) -> dict[str, Any]:
    """Geometry of the comparison chart (AUC with its DeLong interval and mean seconds per item, one row
    per run), computed here so that the template only places numbers into SVG attributes."""
    bar_w = (CHART_WIDTH - CHART_LEFT - 20) / 2
    secs = [((r["cost"]["seconds"] or {}).get("mean")) for r in report["runs"]]
    max_s = max([s for s in secs if s] or [1.0])
    rows = []
    for i, (r, s) in enumerate(zip(report["runs"], secs, strict=True)):
        y = 30 + i * CHART_ROW
        auc = r["auc"].get("value")
        ci = r["auc"].get("ci95")
        rows.append(
            {
                "y": y,
                "text_y": y + 14,
                "label": r["label"],
                "auc_w": round(auc * bar_w, 1) if auc is not None else 0,
                "auc_text": f"{auc:.3f}" if auc is not None else "undefined",
                "ci_x1": round(CHART_LEFT + ci[0] * bar_w, 1) if ci else None,
                "ci_x2": round(CHART_LEFT + ci[1] * bar_w, 1) if ci else None,
                "ci_y": y + 10,
                "sec_x": round(CHART_LEFT + bar_w + 10, 1),
                "sec_w": round((s or 0) / max_s * (bar_w - 10), 1),
                "sec_text": f"{s * 1000:.1f} ms" if s is not None else "not recorded",
            }
        )
    return {
        "width": CHART_WIDTH,
        "height": 40 + CHART_ROW * len(rows),
        "left": CHART_LEFT,
        "auc_half": round(CHART_LEFT + 0.5 * bar_w, 1),
        "sec_left": round(CHART_LEFT + bar_w + 10, 1),
        "auc_right": round(CHART_LEFT + bar_w, 1),
        "rows": rows,
    }
