"""Reports as files and pictures: the CSV downloads of every report (agreement, validity, models as
raters, backend comparison, outcome prediction) and the ROC curve as SVG points.

Each function takes the plain dictionary a report computation returned and reads nothing else.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from concord.csv_writer import csv_writer

AGREEMENT_CSV_HEADER = [
    "statistic",
    "rater_a",
    "rater_b",
    "label",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "n_units",
    "n_excluded_units",
    "reason",
]


def _csv_row(stat: str, d: dict[str, Any], *, rater_a: str = "", rater_b: str = "", label: str = "") -> list[Any]:
    ci = d.get("ci95") or [None, None]
    return [
        stat,
        rater_a,
        rater_b,
        label,
        d.get("value"),
        ci[0],
        ci[1],
        d.get("ci_method") or "",
        d.get("n_units"),
        d.get("n_excluded_units"),
        d.get("reason") or "",
    ]


def agreement_csv(report: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(AGREEMENT_CSV_HEADER)
    if report.get("empty"):
        return buf.getvalue()
    if report.get("multilabel"):
        for summary in report["per_option"]:
            option = summary["option"]
            for stat in ("percent_agreement", "fleiss_kappa", "krippendorff_alpha"):
                w.writerow(_csv_row(stat, summary[stat], label=option))
            for p in summary["cohen_kappa_pairs"]:
                w.writerow(_csv_row("cohen_kappa_pair", p, rater_a=p["rater_a"], rater_b=p["rater_b"], label=option))
        return buf.getvalue()
    for stat in ("percent_agreement", "fleiss_kappa", "krippendorff_alpha", "cohen_kappa"):
        w.writerow(_csv_row(stat, report[stat]))
    for p in report["cohen_kappa_pairs"]:
        w.writerow(_csv_row("cohen_kappa_pair", p, rater_a=p["rater_a"], rater_b=p["rater_b"]))
    for r in report["each_against_rest"]:
        w.writerow(_csv_row("cohen_kappa_vs_rest", r, rater_a=r["rater"], rater_b="rest (majority)"))
    for d in report["per_label"]:
        w.writerow(_csv_row("fleiss_kappa_one_vs_rest", d, label=d["label"]))
    return buf.getvalue()


VALIDITY_CSV_HEADER = ["statistic", "value", "ci_low", "ci_high", "ci_method", "n_units", "n_excluded_units", "reason"]


def validity_csv(report: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(VALIDITY_CSV_HEADER)

    def row(name: str, d: dict[str, Any] | None, ci_key: str = "ci95", method: str | None = None) -> None:
        if d is None:
            return
        ci = d.get(ci_key) or [None, None]
        w.writerow(
            [
                name,
                d.get("value"),
                ci[0],
                ci[1],
                method or d.get("ci_method") or "",
                d.get("n_units"),
                d.get("n_excluded_units"),
                d.get("reason") or "",
            ]
        )

    row("auc", report["auc"])
    if report["auc"].get("ci95_bootstrap"):
        row("auc_bootstrap", report["auc"], "ci95_bootstrap", "percentile bootstrap (stratified)")
    for stat in ("pearson", "spearman", "kendall"):
        row(stat, report[stat])
    at = report.get("at_youden_threshold")
    if at:
        for stat in ("precision", "recall", "f1"):
            row(f"{stat}_at_youden", at[stat])
    if report.get("comparison"):
        row("delong_paired_diff", report["comparison"]["delong_paired"])
    for stat, d in (report.get("human_ceiling") or {}).items():
        if isinstance(d, dict):
            row(f"human_{stat}", d)
    return buf.getvalue()


ROC_SVG_MAX_POINTS = 400


def roc_svg_points(roc: dict[str, list[float]] | None, size: int = 300) -> str:
    """The ROC curve as an SVG polyline ``points`` attribute in a size × size box (y up)."""
    if not roc:
        return ""
    fpr, tpr = np.asarray(roc["fpr"]), np.asarray(roc["tpr"])
    if fpr.size > ROC_SVG_MAX_POINTS:
        keep = np.unique(np.linspace(0, fpr.size - 1, ROC_SVG_MAX_POINTS).astype(int))
        fpr, tpr = fpr[keep], tpr[keep]
    return " ".join(f"{x * size:.1f},{(1 - y) * size:.1f}" for x, y in zip(fpr, tpr, strict=True))


OUTCOME_CSV_HEADER = [
    "model",
    "subgroup",
    "n_items",
    "class",
    "support",
    "f1",
    "ci_low",
    "ci_high",
    "repeat_min",
    "repeat_max",
    "chance_f1",
]


def outcome_csv(report: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(OUTCOME_CSV_HEADER)
    if report.get("refused"):
        return buf.getvalue()
    for m in report["models"]:
        blocks = [("all", m)] + [(g["subgroup"], g) for g in m["subgroups"]]
        for name, block in blocks:
            for row in block.get("per_class", []):
                f1 = row["f1"]
                ci = f1.get("ci95") or [None, None]
                rng = f1.get("repeat_range") or [None, None]
                w.writerow(
                    [
                        m["model"],
                        name,
                        block["n_items"],
                        row["class"],
                        row["support"],
                        f1.get("value"),
                        ci[0],
                        ci[1],
                        rng[0],
                        rng[1],
                        row["chance_f1"],
                    ]
                )
            macro = block.get("macro_f1") or {}
            ci = macro.get("ci95") or [None, None]
            rng = macro.get("repeat_range") or [None, None]
            w.writerow(
                [
                    m["model"],
                    name,
                    block["n_items"],
                    "macro",
                    "",
                    macro.get("value"),
                    ci[0],
                    ci[1],
                    rng[0],
                    rng[1],
                    block.get("chance_macro_f1"),
                ]
            )
    return buf.getvalue()


RATER_CSV_HEADER = [
    "section",
    "rater_a",
    "rater_b",
    "class",
    "statistic",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "n_units",
    "n_excluded_units",
    "reason",
]


def rater_csv(report: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(RATER_CSV_HEADER)
    model = f"model run {report['run']['id']}"

    def row(section: str, a: str, b: str, cls: str, stat: str, d: dict[str, Any] | None) -> None:
        if d is None:
            return
        ci = d.get("ci95") or [None, None]
        w.writerow(
            [
                section,
                a,
                b,
                cls,
                stat,
                d.get("value"),
                ci[0],
                ci[1],
                d.get("ci_method") or "",
                d.get("n_units"),
                d.get("n_excluded_units"),
                d.get("reason") or "",
            ]
        )

    for d in report["model_vs_humans"]:
        row("model_vs_human", model, d["rater"], "", "cohen_kappa", d)
        row("model_vs_human", model, d["rater"], "", "krippendorff_alpha", d["alpha"])
    for d in report["human_pairs"]:
        row("human_vs_human", d["rater_a"], d["rater_b"], "", "cohen_kappa", d)
        row("human_vs_human", d["rater_a"], d["rater_b"], "", "krippendorff_alpha", d["alpha"])
    for name, ref in report["references"].items():
        if not ref.get("available"):
            continue
        row(f"vs_{name}", model, name, "", "cohen_kappa", ref["model_kappa"])
        for d in ref["humans_kappa"]:
            row(f"vs_{name}", d["rater"], name, "", "cohen_kappa", d)
    row("alpha", "humans", "", "", "krippendorff_alpha", report["alpha_humans"])
    row("alpha", "humans+model", "", "", "krippendorff_alpha", report["alpha_with_model"])
    pc = report.get("per_class")
    if pc:
        for c in pc["per_class"]:
            for stat in ("precision", "recall", "f1"):
                row(f"per_class_vs_{report['target']}", model, report["target"], c["class"], stat, c[stat])
        row(f"per_class_vs_{report['target']}", model, report["target"], "", "macro_f1", pc["macro_f1"])
    return buf.getvalue()


COMPARISON_CSV_HEADER = [
    "run",
    "backend",
    "model",
    "n_units",
    "auc",
    "auc_ci_low",
    "auc_ci_high",
    "accuracy",
    "f1_at_threshold",
    "mean_seconds_per_item",
    "mean_tokens_per_item",
]


def comparison_csv(report: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv_writer(buf)
    w.writerow(COMPARISON_CSV_HEADER)
    for r in report["runs"]:
        ci = r["auc"].get("ci95") or [None, None]
        cost = r["cost"]
        tokens = None
        if cost["prompt_tokens"] and cost["completion_tokens"]:
            tokens = cost["prompt_tokens"]["mean"] + cost["completion_tokens"]["mean"]
        w.writerow(
            [
                r["run"]["id"],
                r["run"]["backend"],
                r["run"]["model_identity"],
                r["n_units"],
                r["auc"].get("value"),
                ci[0],
                ci[1],
                r["accuracy"].get("value"),
                r["at_threshold"]["f1"].get("value"),
                (cost["seconds"] or {}).get("mean"),
                tokens,
            ]
        )
    w.writerow([])
    w.writerow(
        ["run_a", "run_b", "n_units", "delong_diff", "delong_p", "mcnemar_chi2", "mcnemar_p_chi2", "mcnemar_p_exact"]
    )
    for p in report["pairs"]:
        m = p["mcnemar"]
        w.writerow(
            [
                p["run_a"],
                p["run_b"],
                p["n_units"],
                p["delong"].get("value"),
                p["delong"].get("p_value"),
                m.get("chi2"),
                m.get("p_chi2"),
                m.get("p_exact"),
            ]
        )
    return buf.getvalue()
