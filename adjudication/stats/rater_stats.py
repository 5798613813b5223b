"""Statistics for models as raters and for comparing models, over plain arrays. No ORM, no Django.

* :func:`per_class_prf` — precision, recall and F1 of one rater against a reference, class by class
  (one vs rest). Precision and recall carry Wilson intervals; F1 a percentile bootstrap over units.
* :func:`mcnemar_paired` — McNemar's test of two binary raters (or two models' verdicts judged right
  or wrong against one reference) on the same units, exact (binomial) and chi-square variants, through
  ``statsmodels.stats.contingency_tables.mcnemar``. Worked example in the tests: Agresti (2007),
  *An Introduction to Categorical Data Analysis*, 2nd ed., §8.1, presidential approval ratings
  (794 / 150 / 86 / 570 → z² = 17.36).
* :func:`cost_summary` — per-item seconds and tokens of a run, as mean / median / total.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from statsmodels.stats.contingency_tables import mcnemar

from adjudication.stats.agreement import Estimate, percentile_ci, wilson_interval


def _codes(x: np.ndarray) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise ValueError("codes must be a 1-D array")
    return arr


def _f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    denom = 2 * tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), np.nan)


def per_class_prf(
    predicted: np.ndarray, reference: np.ndarray, classes: Sequence[str], *, n_boot: int = 0, seed: int = 0
) -> dict[str, Any]:
    """Per-class precision / recall / F1 of ``predicted`` against ``reference`` (both scale positions,
    NaN = missing; units missing in either are excluded and counted).

    F1 of a class is undefined when the class occurs in neither array (2TP + FP + FN = 0). Macro F1 is
    the mean over classes whose F1 is defined, with the classes left out named. The F1 intervals are
    percentile bootstraps over units (``n_boot`` resamples); replicates in which a class's F1 is
    undefined are left out of that class's interval and counted.
    """
    p = _codes(predicted)
    r = _codes(reference)
    if p.shape != r.shape:
        raise ValueError("predicted and reference must have the same length")
    ok = ~np.isnan(p) & ~np.isnan(r)
    n_excluded = int((~ok & (~np.isnan(p) | ~np.isnan(r))).sum())
    p, r = p[ok].astype(np.int64), r[ok].astype(np.int64)
    n = int(p.size)
    k = len(classes)
    confusion = np.bincount(r * k + p, minlength=k * k).reshape(k, k) if n else np.zeros((k, k), dtype=np.int64)
    boot_f1 = None
    if n_boot > 0 and n > 0:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, n, size=(n_boot, n))
        pb, rb = p[idx], r[idx]
        boot_f1 = np.empty((n_boot, k))
        for c in range(k):
            tp = ((pb == c) & (rb == c)).sum(axis=1)
            fp = ((pb == c) & (rb != c)).sum(axis=1)
            fn = ((pb != c) & (rb == c)).sum(axis=1)
            boot_f1[:, c] = _f1(tp, fp, fn)
    rows: list[dict[str, Any]] = []
    for c, name in enumerate(classes):
        tp = int(confusion[c, c])
        fp = int(confusion[:, c].sum() - tp)
        fn = int(confusion[c, :].sum() - tp)
        precision = (
            Estimate(
                tp / (tp + fp),
                n_units=tp + fp,
                n_excluded=n_excluded,
                ci95=wilson_interval(tp, tp + fp),
                ci_method="Wilson",
            )
            if tp + fp
            else Estimate.undefined(f"the rater never said {name}", n_excluded=n_excluded)
        )
        recall = (
            Estimate(
                tp / (tp + fn),
                n_units=tp + fn,
                n_excluded=n_excluded,
                ci95=wilson_interval(tp, tp + fn),
                ci_method="Wilson",
            )
            if tp + fn
            else Estimate.undefined(f"the reference never says {name}", n_excluded=n_excluded)
        )
        if 2 * tp + fp + fn:
            f1 = Estimate(2 * tp / (2 * tp + fp + fn), n_units=n, n_excluded=n_excluded)
            if boot_f1 is not None:
                f1.ci95, undefined = percentile_ci(boot_f1[:, c])
                f1.ci_method = f"percentile bootstrap over units, {n_boot} resamples, seed {seed}"
                f1.extra["n_boot_undefined"] = undefined
        else:
            f1 = Estimate.undefined(
                f"{name} occurs in neither the rater's nor the reference's labels", n_units=n, n_excluded=n_excluded
            )
        rows.append(
            {
                "class": name,
                "tp": tp,
                "fp": fp,
                "fn": fn,
                "support": tp + fn,
                "precision": precision.as_dict(),
                "recall": recall.as_dict(),
                "f1": f1.as_dict(),
            }
        )
    defined = [row["f1"]["value"] for row in rows if row["f1"]["value"] is not None]
    macro: dict[str, Any] = {
        "value": float(np.mean(defined)) if defined else None,
        "n_units": n,
        "classes_left_out": [row["class"] for row in rows if row["f1"]["value"] is None],
    }
    if not defined:
        macro["reason"] = "no class has a defined F1"
    if boot_f1 is not None and defined:
        with np.errstate(invalid="ignore"):
            keep = [c for c, row in enumerate(rows) if row["f1"]["value"] is not None]
            macro_boot = np.nanmean(boot_f1[:, keep], axis=1) if keep else np.full(n_boot, np.nan)
        ci, _ = percentile_ci(macro_boot)
        macro["ci95"] = list(ci) if ci else None
    accuracy = (
        Estimate(
            float(np.trace(confusion)) / n,
            n_units=n,
            n_excluded=n_excluded,
            ci95=wilson_interval(int(np.trace(confusion)), n),
            ci_method="Wilson",
        )
        if n
        else Estimate.undefined("no unit has both labels", n_excluded=n_excluded)
    )
    return {
        "classes": list(classes),
        "n_units": n,
        "n_excluded_units": n_excluded,
        "confusion": confusion.tolist(),
        "confusion_axes": "rows: reference, columns: rater",
        "per_class": rows,
        "macro_f1": macro,
        "accuracy": accuracy.as_dict(),
        "bootstrap": {"n": n_boot, "seed": seed} if n_boot > 0 else None,
    }


def mcnemar_table(a_right: np.ndarray, b_right: np.ndarray) -> np.ndarray:
    """The 2 × 2 table of paired binary outcomes: rows a yes/no, columns b yes/no (missing excluded)."""
    a = np.asarray(a_right, dtype=float)
    b = np.asarray(b_right, dtype=float)
    ok = ~np.isnan(a) & ~np.isnan(b)
    a, b = a[ok].astype(bool), b[ok].astype(bool)
    return np.array([[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]])


def mcnemar_paired(table: np.ndarray) -> dict[str, Any]:
    """McNemar's test on a 2 × 2 paired table [[both, a only], [b only, neither]].

    Reports the exact test (binomial on the discordant pairs, two-sided) and the chi-square statistic
    without and with Edwards' continuity correction. With no discordant pair the test is undefined:
    the two never differ, so there is nothing to test.
    """
    t = np.asarray(table, dtype=np.int64)
    if t.shape != (2, 2) or (t < 0).any():
        raise ValueError("McNemar needs a 2 × 2 table of counts")
    n10, n01 = int(t[0, 1]), int(t[1, 0])
    out: dict[str, Any] = {
        "table": t.tolist(),
        "n_units": int(t.sum()),
        "discordant_a_only": n10,
        "discordant_b_only": n01,
    }
    if n10 + n01 == 0:
        out.update({"value": None, "reason": "no discordant pair: the two never differ on these units"})
        return out
    exact = mcnemar(t, exact=True)
    chi2 = mcnemar(t, exact=False, correction=False)
    chi2_cc = mcnemar(t, exact=False, correction=True)
    out.update(
        {
            "value": float(chi2.statistic),
            "chi2": float(chi2.statistic),
            "p_chi2": float(chi2.pvalue),
            "chi2_corrected": float(chi2_cc.statistic),
            "p_chi2_corrected": float(chi2_cc.pvalue),
            "p_exact": float(exact.pvalue),
            "difference": (n10 - n01) / int(t.sum()) if t.sum() else None,
            "note": "exact: two-sided binomial test on the discordant pairs; chi2: (b − c)² / (b + c); "
            "corrected: (|b − c| − 1)² / (b + c)",
        }
    )
    return out


def _spread(values: list[float]) -> dict[str, Any] | None:
    if not values:
        return None
    arr = np.asarray(values, dtype=float)
    return {
        "mean": float(arr.mean()),
        "median": float(np.median(arr)),
        "total": float(arr.sum()),
        "n_items": int(arr.size),
    }


def cost_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-item cost records (``{"seconds": s, "requests": r, "prompt_tokens": p, ...}``) summarised.

    Tokens are summarised only over items whose answers reported usage; when none did, they are
    undefined (an endpoint that reports no usage has unknown, not zero, cost).
    """
    seconds = [float(r["seconds"]) for r in records if isinstance(r.get("seconds"), int | float)]
    requests = [float(r["requests"]) for r in records if isinstance(r.get("requests"), int | float)]
    with_usage = [r for r in records if r.get("answers_with_usage")]
    return {
        "n_items_recorded": len(records),
        "seconds": _spread(seconds),
        "requests": _spread(requests),
        "prompt_tokens": _spread([float(r.get("prompt_tokens", 0)) for r in with_usage]),
        "completion_tokens": _spread([float(r.get("completion_tokens", 0)) for r in with_usage]),
        "tokens_note": None if with_usage else "no token usage recorded (not an llm run, or the endpoint reports none)",
    }
