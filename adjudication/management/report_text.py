"""The reports as plain text for the command line (``manage.py agreement``, ``validity``,
``predict_outcome``)."""

from __future__ import annotations

from typing import Any


def _fmt(x: Any) -> str:
    return "—" if x is None else f"{x:.4f}" if isinstance(x, float) else str(x)


def _stat_line(name: str, d: dict[str, Any]) -> str:
    if d.get("value") is None:
        return f"  {name:<28} undefined: {d.get('reason')}"
    ci = d.get("ci95")
    ci_text = f"  95% CI [{_fmt(ci[0])}, {_fmt(ci[1])}] ({d.get('ci_method')})" if ci else "  (no interval)"
    return f"  {name:<28} {_fmt(d['value'])}{ci_text}  n units {d.get('n_units')}, excluded {d.get('n_excluded_units')}"


def format_agreement_text(s: dict[str, Any]) -> str:
    lines = [
        f"units {s['n_units']}  raters {s['n_raters']}  "
        f"excluded units (rated fewer than twice) {s['n_excluded_units']}",
        f"level {s['level']}"
        + (f"  scale {', '.join(s['scale'])}" if s.get("scale") else "")
        + f"  weights {s['weights']}",
    ]
    lines += [f"note: {n}" for n in s.get("notes", [])]
    lines.append("overall")
    for key, name in (
        ("percent_agreement", "percent agreement"),
        ("fleiss_kappa", "Fleiss kappa"),
        ("krippendorff_alpha", f"Krippendorff alpha ({s['level']})"),
        ("cohen_kappa", "Cohen kappa"),
    ):
        lines.append(_stat_line(name, s[key]))
    if s.get("cohen_kappa_pairs"):
        lines.append("Cohen kappa per pair of raters")
        lines += [_stat_line(f"{p['rater_a']} ~ {p['rater_b']}", p) for p in s["cohen_kappa_pairs"]]
    if s.get("each_against_rest"):
        lines.append("each rater against the majority of the others")
        lines += [_stat_line(r["rater"] + (" OUTLIER" if r.get("outlier") else ""), r) for r in s["each_against_rest"]]
    if s.get("per_label"):
        lines.append("Fleiss kappa per label (one vs rest)")
        lines += [_stat_line(d["label"], d) for d in s["per_label"]]
    return "\n".join(lines)


def format_validity_text(s: dict[str, Any]) -> str:
    lines = [f"units {s['n']}  positive {s['n_pos']}  negative {s['n_neg']}  excluded {s['n_excluded_units']}"]
    auc = s["auc"]
    lines.append(_stat_line("AUC (DeLong)", auc))
    if auc.get("ci95_bootstrap"):
        lo, hi = auc["ci95_bootstrap"]
        lines.append(
            f"  {'AUC bootstrap 95% CI':<28} [{_fmt(lo)}, {_fmt(hi)}] "
            f"({auc['bootstrap']['n']} stratified resamples, seed {auc['bootstrap']['seed']})"
        )
    for key in ("pearson", "spearman", "kendall"):
        lines.append(_stat_line(key.capitalize(), s[key]))
    if s.get("youden"):
        y = s["youden"]
        lines.append(
            f"  Youden threshold {y['threshold']:.4g}: "
            f"sensitivity {y['sensitivity']:.4f}, specificity {y['specificity']:.4f}"
        )
        lines.append(f"  warning: {y['warning']}")
        at = s["at_youden_threshold"]
        for key in ("precision", "recall", "f1"):
            lines.append(_stat_line(f"{key} at threshold", at[key]))
    if "delong_paired" in s:
        lines.append("paired comparison (same units)")
        lines.append(_stat_line("AUC a", s["auc_a"]))
        lines.append(_stat_line("AUC b", s["auc_b"]))
        d = s["delong_paired"]
        if d.get("value") is None:
            lines.append(f"  DeLong paired test undefined: {d.get('reason')}")
        else:
            lines.append(
                f"  DeLong paired: diff {_fmt(d['diff'])}  z {_fmt(d['z'])}  p {d['p_value']:.4g}  "
                f"95% CI [{_fmt(d['ci95'][0])}, {_fmt(d['ci95'][1])}]"
            )
    return "\n".join(lines)


def format_outcome_text(report: dict[str, Any]) -> str:
    lines = [
        f"outcome {report['outcome']['key']} ({report['target']}) of pool {report['pool']['name']}: "
        f"{report['n_units_with_outcome']} units with an outcome, {report['n_units_excluded']} excluded for "
        f"missing features {report['excluded_by_feature']}"
    ]
    if report.get("refused"):
        lines.append(f"refused: {report['reason']}")
        return "\n".join(lines)
    cv = report["cv"]
    lines.append(
        f"{cv['n_splits']}-fold stratified CV × {cv['n_repeats']} repeats (seed {cv['seed']}) on "
        f"{report['n_items']} items; classes {report['class_counts']}"
    )
    for m in report["models"]:
        blocks = [("all items", m)] + [(f"{report.get('subgroup')}={g['subgroup']}", g) for g in m["subgroups"]]
        for name, block in blocks:
            lines.append(f"{m['model']} · {name} · n = {block['n_items']}")
            for row in block.get("per_class", []):
                f1 = row["f1"]
                if f1.get("value") is None:
                    lines.append(f"  {row['class']:<14} F1 undefined: {f1.get('reason')}")
                    continue
                ci = f1.get("ci95")
                ci_text = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
                lines.append(
                    f"  {row['class']:<14} F1 {f1['value']:.3f}{ci_text}  support {row['support']}  "
                    f"chance {row['chance_f1']:.3f}"
                )
            macro = block.get("macro_f1") or {}
            if macro.get("value") is not None:
                lines.append(f"  {'macro':<14} F1 {macro['value']:.3f}  chance {block.get('chance_macro_f1'):.3f}")
    return "\n".join(lines)
