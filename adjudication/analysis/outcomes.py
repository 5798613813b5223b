"""Outcome prediction: do metric scores and item attributes predict the clinicians' outcome ratings?

The outcome is a categorical question of one pool (harmful, helpful, inappropriate: none / slight /
severe), as gold labels or the pool's strict majority. Its units (usually the items) are the rows.

Feature names (``--features a,b,c``):

* ``<metric>`` or ``<metric>:<backend>`` — the value of the most recent finished score run of that
  metric (and backend) in the study; ``run:<id>`` names one run. The value is the run's score of the
  outcome's own unit when the run scores such units, else the item-level score. A unit whose score is
  missing, undetermined or failed is excluded and counted (never imputed).
* ``scope_class``, ``system`` — one-hot columns, one per value present (``scope_class=emergency`` …).
* ``metadata.<key>`` — numeric when every present value is a number (booleans as 0/1; a unit without
  it is excluded and counted), else one-hot by value (absent → its own ``(none)`` column).

With ``positive`` the outcome becomes binary: that option against the rest (for an ordinal question,
that option *or a later one*: ``positive=slight`` is "at least slight harm"), as in the validity report;
useful when a class (``severe``) is too rare for stratified folds.

Subgroups (``subgroup``) take the same attribute names: ``scope_class``, ``system``, ``metadata.<key>``.
The statistics are in :mod:`adjudication.stats.outcome_cv`; this module reads the database and runs jobs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from adjudication.analysis import raters
from adjudication.analysis.access import CATEGORICAL, get_pool_for_report, get_question_for_report
from adjudication.analysis.loading import binary_target, human_target, ratings_load
from adjudication.analysis.params import MAX_BOOTSTRAP, id_param
from adjudication.analysis.validity import default_target
from adjudication.stats import agreement as ag
from adjudication.stats import outcome_cv
from annotation.models import Item, QuestionKind, Study
from concord.errors import ValidationFailed
from concord.params import parse_int
from scoring.models import RunStatus, Score, ScoreRun, ScoreState

MAX_REPEATS = 50
MAX_SPLITS = 20
MAX_FEATURES = 30
ATTRIBUTES = ("scope_class", "system")


@dataclass
class OutcomeParams:
    pool_id: int
    question: str
    features: list[str]
    target: str = "majority"
    models: list[str] = field(default_factory=lambda: list(outcome_cv.MODELS))
    n_splits: int = 5
    n_repeats: int = 10
    seed: int = 0
    n_boot: int = 1000
    subgroup: str | None = None
    positive: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "pool": self.pool_id,
            "question": self.question,
            "features": list(self.features),
            "target": self.target,
            "models": list(self.models),
            "n_splits": self.n_splits,
            "n_repeats": self.n_repeats,
            "seed": self.seed,
            "n_boot": self.n_boot,
            "subgroup": self.subgroup,
            "positive": self.positive,
        }


def _int_in(raw: Any, name: str, default: int, low: int, high: int) -> int:
    return parse_int(raw, name=name, minimum=low, maximum=high, default=default)


def _is_attribute(name: str) -> bool:
    return name in ATTRIBUTES or (name.startswith("metadata.") and len(name) > len("metadata."))


def outcome_params_parse(*, study: Study, query: Any) -> OutcomeParams:
    pool_id = id_param(query.get("pool"), "choose a pool (a whole-number id)")
    key = (query.get("question") or query.get("outcome") or "").strip()
    pool = get_pool_for_report(study, pool_id)
    question = get_question_for_report(pool, key)
    if question.kind not in CATEGORICAL:
        raise ValidationFailed("the outcome must be a categorical question (binary, nominal or ordinal)")
    raw_features = query.get("features") or ""
    if isinstance(raw_features, list | tuple):
        raw_features = ",".join(raw_features)
    features = [f.strip() for f in str(raw_features).split(",") if f.strip()]
    if not features:
        raise ValidationFailed("name at least one feature (e.g. cf,ra:lexical,scope_class,metadata.source)")
    if len(features) > MAX_FEATURES or len(set(features)) != len(features):
        raise ValidationFailed(f"at most {MAX_FEATURES} distinct features")
    for f in features:
        if not _is_attribute(f):
            _run_for_feature(study, f)  # unknown metric → clear error now, not in the worker
    target = (query.get("target") or "").strip() or default_target(pool=pool, question=question)
    if target not in ("gold", "majority"):
        raise ValidationFailed("target must be gold or majority")
    models_raw = (query.get("models") or "").strip()
    models = [m.strip() for m in models_raw.split(",") if m.strip()] if models_raw else list(outcome_cv.MODELS)
    unknown = [m for m in models if m not in outcome_cv.MODELS]
    if unknown or not models:
        raise ValidationFailed(f"models are {', '.join(outcome_cv.MODELS)}")
    subgroup = (query.get("subgroup") or "").strip() or None
    if subgroup is not None and not _is_attribute(subgroup):
        raise ValidationFailed("subgroup must be scope_class, system or metadata.<key>")
    positive = (query.get("positive") or "").strip() or None
    if positive is not None and positive not in question.option_values:
        raise ValidationFailed(f"positive must be one of {', '.join(question.option_values)}")
    return OutcomeParams(
        pool_id=pool.pk,
        positive=positive,
        question=key,
        features=features,
        target=target,
        models=models,
        n_splits=_int_in(query.get("n_splits"), "n_splits", 5, 2, MAX_SPLITS),
        n_repeats=_int_in(query.get("n_repeats"), "n_repeats", 10, 1, MAX_REPEATS),
        seed=_int_in(query.get("seed"), "seed", 0, 0, 2**31 - 1),
        n_boot=_int_in(query.get("n_boot"), "n_boot", 1000, 0, MAX_BOOTSTRAP),
        subgroup=subgroup,
    )


# --- features ----------------------------------------------------------------------------------------


def _run_for_feature(study: Study, name: str) -> Any:
    if name.startswith("run:"):
        run_id = id_param(name.split(":", 1)[1], f"feature {name!r}: run ids are whole numbers")
        return raters.get_run_for_study(study, run_id)
    metric, _, backend = name.partition(":")
    runs = ScoreRun.objects.filter(study=study, metric=metric, status=RunStatus.DONE)
    if backend:
        runs = runs.filter(backend=backend)
    run = runs.order_by("-created_at", "-id").first()
    if run is None:
        raise ValidationFailed(
            f"feature {name!r}: no finished score run of {metric}"
            + (f" with the {backend} backend" if backend else "")
            + " in this study (attributes are scope_class, system, metadata.<key>)"
        )
    return run


def _attribute_values(name: str, items: dict[int, Item], units: list[tuple[int, str]]) -> list[Any]:
    if name in ATTRIBUTES:
        return [getattr(items[i], name) or None for i, _ in units]
    key = name.split(".", 1)[1]
    return [(items[i].metadata or {}).get(key) for i, _ in units]


def _numeric(v: Any) -> bool:
    return isinstance(v, int | float) and (isinstance(v, bool) or np.isfinite(float(v)))


def feature_matrix(
    *, study: Study, features: list[str], units: list[tuple[int, str]]
) -> tuple[np.ndarray, list[str], np.ndarray, dict[str, int], dict[str, Any]]:
    """Columns for the named features on the units, a mask of usable rows, exclusion counts by feature,
    and what each feature resolved to (the run behind a metric name)."""
    items = Item.objects.in_bulk([i for i, _ in units])
    columns: list[np.ndarray] = []
    names: list[str] = []
    usable = np.ones(len(units), dtype=bool)
    excluded: dict[str, int] = {}
    resolved: dict[str, Any] = {}
    for name in features:
        if _is_attribute(name):
            values = _attribute_values(name, items, units)
            present = [v for v in values if v is not None]
            if present and name.startswith("metadata.") and all(_numeric(v) for v in present):
                col = np.array([float(v) if v is not None else np.nan for v in values])
                miss = np.isnan(col)
                excluded[name] = int((miss & usable).sum())
                usable &= ~miss
                columns.append(np.where(miss, 0.0, col))
                names.append(name)
                resolved[name] = "number"
            else:
                labels = [str(v) if v is not None else "(none)" for v in values]
                levels = sorted(set(labels))
                for level in levels:
                    columns.append(np.array([1.0 if lab == level else 0.0 for lab in labels]))
                    names.append(f"{name}={level}")
                resolved[name] = f"one-hot, {len(levels)} values"
            continue
        run = _run_for_feature(study, name)
        resolved[name] = {"run": run.pk, "metric": run.metric, "backend": run.backend, "model": run.model_identity}
        wanted_keys = {k for _, k in units} | {"item"}
        rows = Score.objects.filter(run=run, item_id__in=items.keys(), unit_key__in=wanted_keys).values_list(
            "item_id", "unit_key", "value", "state"
        )
        own = {(i, k): (v if s == ScoreState.OK else None) for i, k, v, s in rows}
        col = np.array([np.nan if (val := own.get(u, own.get((u[0], "item")))) is None else float(val) for u in units])
        miss = np.isnan(col)
        excluded[name] = int((miss & usable).sum())
        usable &= ~miss
        columns.append(np.where(miss, 0.0, col))
        names.append(name)
    x = np.column_stack(columns) if columns else np.empty((len(units), 0))
    return x, names, usable, excluded, resolved


# --- the report --------------------------------------------------------------------------------------


def outcome_report(*, study: Study, params: OutcomeParams, progress: ag.Progress | None = None) -> dict[str, Any]:
    pool = get_pool_for_report(study, params.pool_id)
    question = get_question_for_report(pool, params.question)
    ratings = ratings_load(pool=pool, question=question)
    target, target_excluded = human_target(pool=pool, question=question, target=params.target, ratings=ratings)
    units = sorted(target)
    classes = question.option_values
    positions = np.array([target[u] for u in units], dtype=float)
    if params.positive:
        # One class against the rest (ordinal: at least that option), as in the validity report.
        hit = binary_target(question, positions, params.positive)
        ordinal = question.kind == QuestionKind.ORDINAL
        classes = (
            [f"below {params.positive}", f"at least {params.positive}"]
            if ordinal
            else [f"not {params.positive}", params.positive]
        )
        positions = hit
    head: dict[str, Any] = {
        "study": study.slug,
        "pool": {"id": pool.pk, "name": pool.name},
        "outcome": {"key": question.key, "kind": question.kind, "scope": question.scope, "options": classes},
        "target": params.target,
        "target_excluded": target_excluded,
        "params": params.as_dict(),
        "classes_as_fitted": classes,
        "n_units_with_outcome": len(units),
    }
    x, names, usable, excluded, resolved = feature_matrix(study=study, features=params.features, units=units)
    head.update(
        {
            "feature_columns": names,
            "features_resolved": resolved,
            "excluded_by_feature": excluded,
            "n_units_excluded": int((~usable).sum()),
        }
    )
    y = positions.astype(np.int64)
    x, y = x[usable], y[usable]
    kept = [u for u, ok in zip(units, usable, strict=True) if ok]
    groups = None
    if params.subgroup:
        items = Item.objects.in_bulk([i for i, _ in kept])
        groups = [str(v) if v is not None else "(none)" for v in _attribute_values(params.subgroup, items, kept)]
        head["subgroup"] = params.subgroup
    try:
        result = outcome_cv.cross_validate(
            x,
            y,
            classes,
            feature_names=names,
            models=params.models,
            n_splits=params.n_splits,
            n_repeats=params.n_repeats,
            seed=params.seed,
            n_boot=params.n_boot,
            subgroups=groups,
            progress=progress,
        )
    except outcome_cv.OutcomeRefused as exc:
        return {
            **head,
            "refused": True,
            "reason": str(exc),
            "n_items": int(y.size),
            "class_counts": {c: int((y == i).sum()) for i, c in enumerate(classes)},
        }
    return {
        **head,
        "refused": False,
        **result,
        "method": outcome_cv.__doc__.split("Method (stated in every result):")[1].strip(),
    }


# --- jobs --------------------------------------------------------------------------------------------
