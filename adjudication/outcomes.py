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
The statistics are in :mod:`adjudication.outcome_cv`; this module reads the database and runs jobs.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.db import OperationalError, transaction
from django.utils import timezone

from adjudication import agreement as ag
from adjudication import outcome_cv, raters, reports
from adjudication.models import ReportJob, ReportJobKind, ReportJobStatus
from annotation.models import Item, QuestionKind, Study
from concord.errors import NotFound, ValidationFailed

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
        return {"pool": self.pool_id, "question": self.question, "features": list(self.features),
                "target": self.target, "models": list(self.models), "n_splits": self.n_splits,
                "n_repeats": self.n_repeats, "seed": self.seed, "n_boot": self.n_boot, "subgroup": self.subgroup,
                "positive": self.positive}


def _int_in(raw: Any, name: str, default: int, low: int, high: int) -> int:
    if raw in (None, ""):
        return default
    try:
        v = int(raw)
    except (TypeError, ValueError):
        raise ValidationFailed(f"{name} must be a whole number") from None
    if not low <= v <= high:
        raise ValidationFailed(f"{name} must be between {low} and {high}")
    return v


def _is_attribute(name: str) -> bool:
    return name in ATTRIBUTES or (name.startswith("metadata.") and len(name) > len("metadata."))


def outcome_params_parse(*, study: Study, query: Any) -> OutcomeParams:
    try:
        pool_id = int(query.get("pool") or "")
    except ValueError:
        raise ValidationFailed("choose a pool (a whole-number id)") from None
    key = (query.get("question") or query.get("outcome") or "").strip()
    pool = reports.pool_get_for_report(study=study, pool_id=pool_id)
    question = reports.question_get_for_report(pool=pool, key=key)
    if question.kind not in reports.CATEGORICAL:
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
    target = (query.get("target") or "").strip() or reports.default_target(pool=pool, question=question)
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
        pool_id=pool.pk, positive=positive, question=key, features=features, target=target, models=models,
        n_splits=_int_in(query.get("n_splits"), "n_splits", 5, 2, MAX_SPLITS),
        n_repeats=_int_in(query.get("n_repeats"), "n_repeats", 10, 1, MAX_REPEATS),
        seed=_int_in(query.get("seed"), "seed", 0, 0, 2**31 - 1),
        n_boot=_int_in(query.get("n_boot"), "n_boot", 1000, 0, reports.MAX_BOOTSTRAP),
        subgroup=subgroup,
    )


# --- features ----------------------------------------------------------------------------------------


def _run_for_feature(study: Study, name: str) -> Any:
    from scoring.models import RunStatus, ScoreRun

    if name.startswith("run:"):
        try:
            return raters.run_get_for_study(study=study, run_id=int(name.split(":", 1)[1]))
        except ValueError:
            raise ValidationFailed(f"feature {name!r}: run ids are whole numbers") from None
    metric, _, backend = name.partition(":")
    runs = ScoreRun.objects.filter(study=study, metric=metric, status=RunStatus.DONE)
    if backend:
        runs = runs.filter(backend=backend)
    run = runs.order_by("-created_at", "-id").first()
    if run is None:
        raise ValidationFailed(
            f"feature {name!r}: no finished score run of {metric}" + (f" with the {backend} backend" if backend else "")
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
    from scoring.models import Score, ScoreState

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
            "item_id", "unit_key", "value", "state")
        own = {(i, k): (v if s == ScoreState.OK else None) for i, k, v, s in rows}
        col = np.array([
            np.nan if (val := own.get(u, own.get((u[0], "item")))) is None else float(val) for u in units
        ])
        miss = np.isnan(col)
        excluded[name] = int((miss & usable).sum())
        usable &= ~miss
        columns.append(np.where(miss, 0.0, col))
        names.append(name)
    x = np.column_stack(columns) if columns else np.empty((len(units), 0))
    return x, names, usable, excluded, resolved


# --- the report --------------------------------------------------------------------------------------


def outcome_report(*, study: Study, params: OutcomeParams, progress: ag.Progress | None = None) -> dict[str, Any]:
    pool = reports.pool_get_for_report(study=study, pool_id=params.pool_id)
    question = reports.question_get_for_report(pool=pool, key=params.question)
    ratings = reports.ratings_load(pool=pool, question=question)
    target, target_excluded = reports.human_target(pool=pool, question=question, target=params.target, ratings=ratings)
    units = sorted(target)
    classes = question.option_values
    positions = np.array([target[u] for u in units], dtype=float)
    if params.positive:
        # One class against the rest (ordinal: at least that option), as in the validity report.
        hit = reports.binary_target(question, positions, params.positive)
        ordinal = question.kind == QuestionKind.ORDINAL
        classes = [f"below {params.positive}", f"at least {params.positive}"] if ordinal else \
            [f"not {params.positive}", params.positive]
        positions = hit
    head: dict[str, Any] = {
        "study": study.slug, "pool": {"id": pool.pk, "name": pool.name},
        "outcome": {"key": question.key, "kind": question.kind, "scope": question.scope, "options": classes},
        "target": params.target, "target_excluded": target_excluded, "params": params.as_dict(), "classes_as_fitted": classes,
        "n_units_with_outcome": len(units),
    }
    x, names, usable, excluded, resolved = feature_matrix(study=study, features=params.features, units=units)
    head.update({"feature_columns": names, "features_resolved": resolved, "excluded_by_feature": excluded,
                 "n_units_excluded": int((~usable).sum())})
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
            x, y, classes, feature_names=names, models=params.models, n_splits=params.n_splits,
            n_repeats=params.n_repeats, seed=params.seed, n_boot=params.n_boot, subgroups=groups, progress=progress,
        )
    except outcome_cv.OutcomeRefused as exc:
        return {**head, "refused": True, "reason": str(exc), "n_items": int(y.size),
                "class_counts": {c: int((y == i).sum()) for i, c in enumerate(classes)}}
    return {**head, "refused": False, **result, "method": outcome_cv.__doc__.split("Method (stated in every result):")[1].strip()}


CSV_HEADER = ["model", "subgroup", "n_items", "class", "support", "f1", "ci_low", "ci_high", "repeat_min", "repeat_max",
              "chance_f1"]


def outcome_csv(report: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_HEADER)
    if report.get("refused"):
        return buf.getvalue()
    for m in report["models"]:
        blocks = [("all", m)] + [(g["subgroup"], g) for g in m["subgroups"]]
        for name, block in blocks:
            for row in block.get("per_class", []):
                f1 = row["f1"]
                ci = f1.get("ci95") or [None, None]
                rng = f1.get("repeat_range") or [None, None]
                w.writerow([m["model"], name, block["n_items"], row["class"], row["support"], f1.get("value"),
                            ci[0], ci[1], rng[0], rng[1], row["chance_f1"]])
            macro = block.get("macro_f1") or {}
            ci = macro.get("ci95") or [None, None]
            rng = macro.get("repeat_range") or [None, None]
            w.writerow([m["model"], name, block["n_items"], "macro", "", macro.get("value"), ci[0], ci[1], rng[0],
                        rng[1], block.get("chance_macro_f1")])
    return buf.getvalue()


def format_outcome_text(report: dict[str, Any]) -> str:
    lines = [f"outcome {report['outcome']['key']} ({report['target']}) of pool {report['pool']['name']}: "
             f"{report['n_units_with_outcome']} units with an outcome, {report['n_units_excluded']} excluded for "
             f"missing features {report['excluded_by_feature']}"]
    if report.get("refused"):
        lines.append(f"refused: {report['reason']}")
        return "\n".join(lines)
    cv = report["cv"]
    lines.append(f"{cv['n_splits']}-fold stratified CV × {cv['n_repeats']} repeats (seed {cv['seed']}) on "
                 f"{report['n_items']} items; classes {report['class_counts']}")
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
                lines.append(f"  {row['class']:<14} F1 {f1['value']:.3f}{ci_text}  support {row['support']}  "
                             f"chance {row['chance_f1']:.3f}")
            macro = block.get("macro_f1") or {}
            if macro.get("value") is not None:
                lines.append(f"  {'macro':<14} F1 {macro['value']:.3f}  chance {block.get('chance_macro_f1'):.3f}")
    return "\n".join(lines)


# --- jobs --------------------------------------------------------------------------------------------


def _hash(kind: str, params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps({"kind": kind, **params}, sort_keys=True).encode()).hexdigest()[:40]


def _data_version(*, study: Study, pool_id: int, question: str, extra: str = "") -> str:
    pool = reports.pool_get_for_report(study=study, pool_id=pool_id)
    q = reports.question_get_for_report(pool=pool, key=question)
    return reports._data_version(pool=pool, question=q, source=extra or None)


def job_params(*, study: Study, kind: str, params: dict[str, Any]) -> dict[str, Any]:
    """Parameters keyed with a fingerprint of the data, so a result computed on older labels or scores is
    never shown as current."""
    extra = f"run:{params['run']}" if kind == ReportJobKind.RATERS else ""
    version = _data_version(study=study, pool_id=int(params["pool"]), question=params["question"], extra=extra)
    if kind == ReportJobKind.OUTCOME:
        from scoring.models import ScoreRun

        latest = ScoreRun.objects.filter(study=study).order_by("-id").values_list("pk", "finished_at").first()
        items = Item.objects.filter(study=study).count()
        version = hashlib.sha256(f"{version}|{latest}|{items}".encode()).hexdigest()[:16]
    return {**params, "data_version": version}


def analysis_job_start(*, study: Study, kind: str, params: dict[str, Any], user: AbstractBaseUser) -> ReportJob:
    """Queue a model-as-rater bootstrap or an outcome cross-validation, or return the job that already
    has (or is computing) this result. Keyed on (study, parameters, data version)."""
    if kind not in (ReportJobKind.RATERS, ReportJobKind.OUTCOME):
        raise ValidationFailed("kind must be raters or outcome")
    keyed = job_params(study=study, kind=kind, params=params)
    key = _hash(kind, keyed)
    from adjudication.outcome_tasks import analysis_job_run_task

    with transaction.atomic():
        job, created = ReportJob.objects.select_for_update().get_or_create(
            study=study, params_hash=key, defaults={"kind": kind, "params": keyed, "requested_by": user})
        if not created and job.status != ReportJobStatus.FAILED:
            return job
        if not created:
            job.status, job.error, job.n_done, job.result, job.requested_by = ReportJobStatus.QUEUED, "", 0, None, user
            job.save(update_fields=["status", "error", "n_done", "result", "requested_by"])
        analysis_job_run_task.delay_on_commit(job.pk)
    return job


def analysis_job_latest(*, study: Study, kind: str, params: dict[str, Any]) -> ReportJob | None:
    return ReportJob.objects.filter(study=study, params_hash=_hash(kind, job_params(study=study, kind=kind, params=params))).first()


def analysis_job_get(*, study: Study, job_id: int) -> ReportJob:
    job = ReportJob.objects.filter(study=study, pk=job_id, kind__in=[ReportJobKind.RATERS, ReportJobKind.OUTCOME]).first()
    if job is None:
        raise NotFound("no such analysis job")
    return job


def rater_params_from_job(params: dict[str, Any]) -> raters.RaterParams:
    return raters.RaterParams(run_id=int(params["run"]), pool_id=int(params["pool"]), question=params["question"],
                              field=params["field"], threshold=params.get("threshold"),
                              mapping=dict(params.get("mapping") or {}), target=params["target"])


def outcome_params_from_job(params: dict[str, Any]) -> OutcomeParams:
    return OutcomeParams(pool_id=int(params["pool"]), question=params["question"], features=list(params["features"]),
                         target=params["target"], models=list(params["models"]), n_splits=int(params["n_splits"]),
                         n_repeats=int(params["n_repeats"]), seed=int(params["seed"]), n_boot=int(params["n_boot"]),
                         subgroup=params.get("subgroup"), positive=params.get("positive"))


def analysis_job_run(*, job_id: int) -> None:
    """Compute a queued job with progress; the result replaces, never appends."""
    claimed = ReportJob.objects.filter(
        pk=job_id, status__in=[ReportJobStatus.QUEUED, ReportJobStatus.RUNNING],
        kind__in=[ReportJobKind.RATERS, ReportJobKind.OUTCOME],
    ).update(status=ReportJobStatus.RUNNING, started_at=timezone.now(), n_done=0)
    if not claimed:
        return
    job = ReportJob.objects.select_related("study").get(pk=job_id)
    last = [0]

    def progress(done: int, total: int) -> None:
        if done - last[0] >= max(total // 20, 1) or done == total:
            last[0] = done
            ReportJob.objects.filter(pk=job_id).update(n_done=done, n_total=total)

    try:
        if job.kind == ReportJobKind.RATERS:
            result = raters.rater_report(study=job.study, params=rater_params_from_job(job.params),
                                         n_boot=int(job.params["n_boot"]), seed=int(job.params["seed"]),
                                         progress=progress)
        else:
            result = outcome_report(study=job.study, params=outcome_params_from_job(job.params), progress=progress)
    except (ValidationFailed, NotFound) as exc:
        ReportJob.objects.filter(pk=job_id).update(status=ReportJobStatus.FAILED, error=exc.message,
                                                   finished_at=timezone.now())
        return
    except OperationalError:
        raise
    except Exception as exc:
        ReportJob.objects.filter(pk=job_id).update(status=ReportJobStatus.FAILED, error=str(exc)[:2000],
                                                   finished_at=timezone.now())
        raise
    ReportJob.objects.filter(pk=job_id).update(status=ReportJobStatus.DONE, result=result, finished_at=timezone.now())
