"""Cross-validated prediction of a clinician outcome from features, over plain arrays. No ORM.

Method (stated in every result):

* Models: logistic regression (features standardised inside each training fold, multinomial,
  ``class_weight="balanced"``) and a random forest (100 trees, ``class_weight="balanced"``). Both from
  scikit-learn, fitted inside each training fold only.
* Splits: ``RepeatedStratifiedKFold(n_splits, n_repeats, random_state=seed)`` — every item is predicted
  once per repeat by a model that never saw it; no split is chosen by hand.
* Figures: per-class F1 (and macro F1) of each repeat's pooled out-of-fold predictions; the reported
  value is the mean over repeats. Two intervals: ``ci95`` is a percentile bootstrap over *items*
  (resample items, recompute each repeat's F1 on them, average over repeats) — the uncertainty from
  having these items; ``repeat_range`` is the min–max over repeats — the instability of the splits.
  The confusion matrix is summed over repeats and divided by the number of repeats (each item counts
  once per repeat).
* Chance: a classifier that guesses each class at its prevalence has expected per-class F1 equal to the
  prevalence; the result lists it beside each class.
* Subgroups: the same figures over the out-of-fold predictions of one subgroup's items (models are
  trained on all items); the number of items of each subgroup is stated.
* Refusal: a class with at least one but fewer members than folds cannot be stratified — the fit is
  refused with that reason rather than run on a hand-adjusted split. Fewer than two classes present:
  refused.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from adjudication.stats.agreement import percentile_ci

Progress = Callable[[int, int], None]
MODELS = ("logistic", "forest")
BOOT_BATCH = 100


class OutcomeRefused(ValueError):
    """The data cannot support the requested cross-validation; the message says why."""


def _model(name: str, seed: int) -> Any:
    if name == "logistic":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, class_weight="balanced"))
    if name == "forest":
        return RandomForestClassifier(
            n_estimators=100, class_weight="balanced", random_state=seed, n_jobs=1, min_samples_leaf=2
        )
    raise ValueError(f"unknown model {name!r}; choose {', '.join(MODELS)}")


def check_classes(y: np.ndarray, classes: Sequence[str], n_splits: int) -> dict[str, int]:
    counts = {c: int((y == i).sum()) for i, c in enumerate(classes)}
    present = {c: n for c, n in counts.items() if n > 0}
    if len(present) < 2:
        raise OutcomeRefused(f"the outcome has fewer than two classes among these items ({counts})")
    small = {c: n for c, n in present.items() if n < n_splits}
    if small:
        listed = ", ".join(f"{c} has {n}" for c, n in small.items())
        raise OutcomeRefused(
            f"stratified {n_splits}-fold cross-validation needs at least {n_splits} items of every class present; "
            f"{listed}. Use fewer folds, merge classes, or label more items."
        )
    return counts


def _f1_per_class(y: np.ndarray, pred: np.ndarray, k: int) -> np.ndarray:
    """F1 per class for stacked rows (…, n); NaN where the class is absent from both."""
    out = np.empty((*y.shape[:-1], k))
    for c in range(k):
        tp = ((pred == c) & (y == c)).sum(axis=-1)
        fp = ((pred == c) & (y != c)).sum(axis=-1)
        fn = ((pred != c) & (y == c)).sum(axis=-1)
        denom = 2 * tp + fp + fn
        with np.errstate(invalid="ignore", divide="ignore"):
            out[..., c] = np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), np.nan)
    return out


def _figures(y: np.ndarray, preds: np.ndarray, classes: Sequence[str], n_boot: int, seed: int) -> dict[str, Any]:
    """Figures of (repeats × n) out-of-fold predictions against y (n,)."""
    k = len(classes)
    n = int(y.size)
    if n == 0:
        return {"n_items": 0, "reason": "no items"}
    present = [c for c in range(k) if (y == c).any()]
    per_repeat = _f1_per_class(np.broadcast_to(y, preds.shape), preds, k)  # repeats × k
    with np.errstate(invalid="ignore"):
        macro_repeat = np.nanmean(per_repeat[:, present], axis=1) if present else np.full(preds.shape[0], np.nan)
    boot = None
    if n_boot > 0:
        rng = np.random.default_rng(seed)
        boot = np.empty((n_boot, k))
        for start in range(0, n_boot, BOOT_BATCH):
            idx = rng.integers(0, n, (min(BOOT_BATCH, n_boot - start), n))
            pb = preds[:, idx]  # repeats × batch × n
            f = _f1_per_class(np.broadcast_to(y[idx], pb.shape), pb, k)  # repeats × batch × k
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices stay NaN: counted below
                boot[start : start + idx.shape[0]] = np.nanmean(f, axis=0)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            boot_macro = np.nanmean(boot[:, present], axis=1) if present else np.full(n_boot, np.nan)
    rows = []
    for c, name in enumerate(classes):
        col = per_repeat[:, c]
        support = int((y == c).sum())
        row: dict[str, Any] = {"class": name, "support": support, "chance_f1": support / n}
        if not np.isfinite(col).any():
            row["f1"] = {
                "value": None,
                "reason": f"{name} is absent from these items and never predicted",
                "n_units": n,
            }
        else:
            with np.errstate(invalid="ignore"):
                f1: dict[str, Any] = {
                    "value": float(np.nanmean(col)),
                    "n_units": n,
                    "repeat_range": [float(np.nanmin(col)), float(np.nanmax(col))],
                }
            if boot is not None:
                ci, undefined = percentile_ci(boot[:, c])
                f1["ci95"] = list(ci) if ci else None
                f1["ci_method"] = f"percentile bootstrap over items, {n_boot} resamples, seed {seed}"
                f1["n_boot_undefined"] = undefined
            row["f1"] = f1
        rows.append(row)
    macro: dict[str, Any] = {
        "value": float(np.nanmean(macro_repeat)) if np.isfinite(macro_repeat).any() else None,
        "n_units": n,
        "over_classes": [classes[c] for c in present],
    }
    if macro["value"] is not None:
        macro["repeat_range"] = [float(np.nanmin(macro_repeat)), float(np.nanmax(macro_repeat))]
    if boot is not None:
        ci, _ = percentile_ci(boot_macro)
        macro["ci95"] = list(ci) if ci else None
    confusion = np.zeros((k, k))
    for r in range(preds.shape[0]):
        confusion += np.bincount(y * k + preds[r], minlength=k * k).reshape(k, k)
    confusion /= preds.shape[0]
    chance_macro = float(np.mean([(y == c).mean() for c in present])) if present else None
    return {
        "n_items": n,
        "per_class": rows,
        "macro_f1": macro,
        "chance_macro_f1": chance_macro,
        "accuracy": float((preds == y).mean()),
        "confusion": [[round(float(x), 3) for x in row] for row in confusion],
        "confusion_axes": "rows: clinicians' outcome, columns: predicted; mean counts per repeat",
    }


def cross_validate(
    x: np.ndarray,
    y: np.ndarray,
    classes: Sequence[str],
    *,
    feature_names: Sequence[str],
    models: Sequence[str] = MODELS,
    n_splits: int = 5,
    n_repeats: int = 10,
    seed: int = 0,
    n_boot: int = 1000,
    subgroups: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Repeated stratified k-fold cross-validation of each model; see the module docstring."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=np.int64)
    if x.ndim != 2 or x.shape[0] != y.size:
        raise ValueError("x must be items × features and y one class index per item")
    if not np.isfinite(x).all():
        raise OutcomeRefused("features must be finite numbers for every item (missing values are excluded upstream)")
    if n_splits < 2 or n_repeats < 1:
        raise OutcomeRefused("use at least 2 folds and 1 repeat")
    counts = check_classes(y, classes, n_splits)
    splitter = RepeatedStratifiedKFold(n_splits=n_splits, n_repeats=n_repeats, random_state=seed)
    splits = list(splitter.split(x, y))
    total = len(models) * len(splits)
    done = 0
    results = []
    for name in models:
        preds = np.full((n_repeats, y.size), -1, dtype=np.int64)
        importances = []
        for s, (train, test) in enumerate(splits):
            model = _model(name, seed + s)
            model.fit(x[train], y[train])
            preds[s // n_splits, test] = model.predict(x[test])
            importances.append(_importance(model, name, x.shape[1]))
            done += 1
            if progress is not None:
                progress(done, total)
        overall = _figures(y, preds, classes, n_boot, seed)
        by_group = []
        if subgroups is not None:
            groups = np.asarray(subgroups, dtype=object)
            for g in sorted({str(v) for v in groups}):
                mask = groups == g
                by_group.append({"subgroup": g, **_figures(y[mask], preds[:, mask], classes, n_boot, seed)})
        imp = np.mean(importances, axis=0)
        results.append(
            {
                "model": name,
                **overall,
                "subgroups": by_group,
                "feature_importance": [
                    {"feature": f, "value": float(v)} for f, v in zip(feature_names, imp, strict=True)
                ],
                "importance_kind": "mean |standardised coefficient| over classes and folds"
                if name == "logistic"
                else "mean impurity decrease over folds",
            }
        )
    return {
        "n_items": int(y.size),
        "class_counts": counts,
        "classes": list(classes),
        "features": list(feature_names),
        "cv": {
            "method": "RepeatedStratifiedKFold",
            "n_splits": n_splits,
            "n_repeats": n_repeats,
            "seed": seed,
            "n_fits_per_model": len(splits),
        },
        "bootstrap": {"n": n_boot, "seed": seed, "over": "items"} if n_boot > 0 else None,
        "models": results,
    }


def _importance(model: Any, name: str, n_features: int) -> np.ndarray:
    if name == "logistic":
        coef = model[-1].coef_
        return np.asarray(np.abs(coef).mean(axis=0), dtype=float)
    imp = getattr(model, "feature_importances_", None)
    return np.asarray(imp, dtype=float) if imp is not None else np.zeros(n_features)
