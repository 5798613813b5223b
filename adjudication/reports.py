"""Agreement and validity reports: read labels and scores from the database as plain arrays, call the
pure statistics (adjudication.agreement, adjudication.validity), and shape the results for pages,
downloads, the REST API and the CLI.

Conventions the reports rest on:

* A unit is (item, unit key) — ``item``, ``s:<i>``, ``c:<rank>``, ``a:<aspect id>`` — never text.
  Exports name it ``<external id>/<unit key>``.
* Only labels of *submitted* assignments count: a draft may still change.
* Categorical questions (binary, nominal, ordinal) are coded as positions on the question's declared
  options; a stored value that is not among the options is not silently dropped into a category: the
  rating is excluded and counted (``n_off_scale_ratings``). ``number`` questions are rated at the
  interval level.
* Metric vs human needs a binary target. The **positive class** is a declared option of the human
  question, the one the researcher picks on the report (``positive``); by default the first option of
  a binary or nominal question (the presets put the "yes" answer first: ``yes``, ``supported``,
  ``entailment``) and the middle option of an ordinal one (see :func:`default_positive`).
  For ordinal questions "positive" means the chosen option *or any later one* in the declared
  order (choose ``slight`` on none / slight / severe for "at least slight"). Correlations use the ordinal
  position (ordinal questions) or the 0/1 target (binary, nominal).
* Human targets: ``gold`` (current gold labels of the pool, except ``unresolved``), ``majority``
  (the strict plurality of the pool's submitted labels; ties excluded and counted) or one annotator
  (``rater:<pseudonym>``). Gold is the default only where it covers every labelled unit (see
  :func:`default_target`).
* Metric sources are pluggable: :data:`METRIC_SOURCE_PROVIDERS` lists functions that return the
  study's :class:`MetricSource` objects; score runs and the human measures of adjudication.measures
  (through adjudication.selectors.human_measure_values) are the two providers.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from django.contrib.auth.models import AbstractBaseUser
from django.db import OperationalError, connection, transaction
from django.db.models import Count, Max
from django.utils import timezone

from adjudication import agreement as ag
from adjudication import validity as va
from adjudication.models import GoldLabel, GoldSource, ReportJob, ReportJobKind, ReportJobStatus
from annotation.models import (
    AssignmentStatus,
    Item,
    Label,
    Pool,
    PoolMembership,
    Question,
    QuestionKind,
    Study,
)
from concord.errors import NotFound, ValidationFailed

CATEGORICAL = {QuestionKind.BINARY, QuestionKind.NOMINAL, QuestionKind.ORDINAL}
RATEABLE = CATEGORICAL | {QuestionKind.NUMBER, QuestionKind.MULTILABEL}
# A multi-label answer is rated per option: did the annotator select it or not.
OPTION_SCALE = ["not selected", "selected"]
DEFAULT_BOOTSTRAP = 2000
MAX_BOOTSTRAP = 20000
ROC_SVG_MAX_POINTS = 400


def unit_scope(unit_key: str) -> str:
    """The question scope a unit key belongs to."""
    if unit_key == "item":
        return "item"
    prefix = unit_key.split(":", 1)[0]
    return {"s": "sentence", "c": "chunk", "a": "aspect"}.get(prefix, "other")


# --- access --------------------------------------------------------------------------------------


def pool_get_for_report(*, study: Study, pool_id: int) -> Pool:
    pool = Pool.objects.filter(study=study, pk=pool_id).first()
    if pool is None:
        raise NotFound("no such pool")
    return pool


def question_get_for_report(*, pool: Pool, key: str) -> Question:
    question = pool.questions.filter(key=key).first()
    if question is None:
        raise NotFound("this pool answers no such question")
    if question.kind not in RATEABLE:
        raise ValidationFailed(f"agreement needs a categorical, multi-label or number question; {key!r} is {question.kind}")
    return question


# --- ratings from the database -----------------------------------------------------------------------


@dataclass
class Ratings:
    """One pool's submitted labels on one question as a units × raters matrix."""

    question: Question
    units: list[tuple[int, str]]
    rater_ids: list[int]
    rater_names: list[str]
    codes: np.ndarray
    scale: list[str] | None
    level: ag.Level
    n_off_scale_ratings: int = 0
    per_option: dict[str, np.ndarray] | None = None


def level_for(question: Question) -> ag.Level:
    if question.kind == QuestionKind.ORDINAL:
        return "ordinal"
    if question.kind == QuestionKind.NUMBER:
        return "interval"
    return "nominal"


LabelRows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[Any]]


def _no_rows() -> LabelRows:
    return np.empty(0, np.int64), np.empty(0, object), np.empty(0, np.int64), np.empty(0, np.int64), []


def _label_rows(pool_id: int, question_id: int) -> LabelRows:
    """The pool's submitted, non-empty labels: item ids, unit keys, annotator ids, and the values as
    codes into a list of the distinct decoded values (a handful, so each is decoded once)."""
    if connection.vendor == "postgresql":
        return _label_rows_pg(pool_id, question_id)
    rows = [
        row
        for row in Label.objects.filter(
            assignment__pool_id=pool_id, question_id=question_id, assignment__status=AssignmentStatus.SUBMITTED
        ).values_list("assignment__item_id", "unit_key", "assignment__annotator_id", "value")
        if row[3] is not None  # a cleared answer is no rating
    ]
    if not rows:
        return _no_rows()
    items, keys, raters, values = zip(*rows, strict=True)
    original = {}
    keyed = []
    for v in values:
        h = _hashable(v)
        original.setdefault(h, v)
        keyed.append(h)
    value_codes, uniques = pd.factorize(pd.Series(keyed, dtype=object))
    decoded = [original[u] for u in uniques]
    return (np.fromiter(items, np.int64, len(items)), np.array(keys, dtype=object),
            np.fromiter(raters, np.int64, len(raters)), value_codes, decoded)


_LABELS_AS_TEXT = """
SELECT string_agg(
    a.item_id::text || E'\\t' || l.unit_key || E'\\t' || a.annotator_id::text || E'\\t' || l.value::text, E'\\n'
)
FROM annotation_label l JOIN annotation_assignment a ON a.id = l.assignment_id
WHERE a.pool_id = %s AND l.question_id = %s AND a.status = 'submitted'
  AND l.value IS NOT NULL AND l.value <> 'null'::jsonb
"""


def _label_rows_pg(pool_id: int, question_id: int) -> LabelRows:
    """The same rows as one tab-separated text built by PostgreSQL and parsed by pandas' C parser.

    Row by row, even through COPY, a 500,000-label pool costs several seconds of Python per read;
    as one string it is one round trip. The value comes last and is jsonb text, in which a tab or a
    newline is always escaped, and unit keys are generated keys without either, so the split is exact.
    """
    with connection.cursor() as cursor:
        cursor.execute(_LABELS_AS_TEXT, [pool_id, question_id])
        text = cursor.fetchone()[0]
    if not text:
        return _no_rows()
    frame = pd.read_csv(io.StringIO(text), sep="\t", header=None, names=["item", "unit", "rater", "value"],
                        dtype={"item": np.int64, "unit": object, "rater": np.int64, "value": object},
                        keep_default_na=False, quoting=csv.QUOTE_NONE, engine="c")
    value_codes, uniques = pd.factorize(frame["value"].to_numpy(dtype=object))
    decoded = [json.loads(u) for u in uniques]  # a handful of distinct values, each decoded once
    return (frame["item"].to_numpy(), frame["unit"].to_numpy(dtype=object), frame["rater"].to_numpy(),
            value_codes, decoded)


def _hashable(value: Any) -> Any:
    # Lists (multi-label answers) cannot be dictionary keys; a tagged tuple cannot collide with a string.
    return ("json", json.dumps(value, sort_keys=True)) if isinstance(value, list | dict) else value


def ratings_load(*, pool: Pool, question: Question) -> Ratings:
    """The pool's submitted labels on the question, coded on the declared scale."""
    items, keys, raters, value_codes, value_uniques = _label_rows(pool.pk, question.pk)
    level = level_for(question)
    scale = question.option_values if question.kind in CATEGORICAL else None
    if items.size == 0:
        return Ratings(question, [], [], [], np.empty((0, 0)), scale, level)
    key_codes, key_uniques = pd.factorize(keys)
    combined = items * max(len(key_uniques), 1) + key_codes
    unit_codes, unit_uniques = pd.factorize(combined, sort=True)
    rater_codes, rater_uniques = pd.factorize(raters, sort=True)
    shape = (len(unit_uniques), len(rater_uniques))
    per_option = None
    if question.kind == QuestionKind.MULTILABEL:
        options = question.option_values
        lists = [v if isinstance(v, list) else None for v in value_uniques]
        rated = np.array([lst is not None and all(str(x) in options for x in lst) for lst in lists], dtype=bool)
        per_option = {}
        for option in options:
            mapped = np.array([float(option in [str(x) for x in lst]) if ok else np.nan
                               for lst, ok in zip(lists, rated, strict=True)], dtype=float)
            per_option[option] = np.full(shape, np.nan)
            per_option[option][unit_codes, rater_codes] = mapped[value_codes]
        coded = np.where(rated[value_codes], 0.0, np.nan)
    elif scale is not None:
        position = {v: float(i) for i, v in enumerate(scale)}
        mapped = np.array([position.get(str(v), np.nan) if not isinstance(v, list | dict) else np.nan
                           for v in value_uniques], dtype=float)
        coded = mapped[value_codes]
    else:
        mapped = np.array([_number_or_nan(v) for v in value_uniques], dtype=float)
        coded = mapped[value_codes]
    n_off = int(np.isnan(coded).sum())
    matrix = np.full(shape, np.nan)
    matrix[unit_codes, rater_codes] = coded
    n_keys = max(len(key_uniques), 1)
    units = [(int(c // n_keys), str(key_uniques[int(c % n_keys)])) for c in unit_uniques]
    rater_ids = [int(r) for r in rater_uniques]
    pseudonyms = dict(
        PoolMembership.objects.filter(pool=pool, user_id__in=rater_ids).values_list("user_id", "pseudonym")
    )
    names = [pseudonyms.get(r, f"annotator #{r}") for r in rater_ids]
    return Ratings(question, units, rater_ids, names, matrix, scale, level, n_off, per_option)


def _number_or_nan(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return np.nan
    try:
        x = float(value)
    except ValueError:
        return np.nan
    return x if np.isfinite(x) else np.nan


# --- agreement report -----------------------------------------------------------------------------


def agreement_report(
    *,
    pool: Pool,
    question: Question,
    weights: ag.Weights | None = None,
    n_boot: int = 0,
    seed: int = 0,
    progress: ag.Progress | None = None,
    ratings: Ratings | None = None,
) -> dict[str, Any]:
    """Every agreement statistic of one pool on one question (point estimates unless ``n_boot``)."""
    ratings = ratings or ratings_load(pool=pool, question=question)
    if weights is None:
        weights = "linear" if ratings.level == "ordinal" else "none"
    head = {
        "study": pool.study.slug, "pool": {"id": pool.pk, "name": pool.name},
        "question": {"key": question.key, "kind": question.kind, "scope": question.scope, "prompt": question.prompt},
        "n_off_scale_ratings": ratings.n_off_scale_ratings,
    }
    if not ratings.units:
        return {**head, "n_units": 0, "n_raters": 0, "n_excluded_units": 0, "empty": True,
                "reason": "no submitted labels for this question in this pool"}
    if ratings.per_option is not None:
        summary = _multilabel_summary(ratings, ratings.per_option, n_boot=n_boot, seed=seed, progress=progress)
        return {**head, **summary, "empty": False}
    summary = ag.agreement_summary(
        ratings.codes, level=ratings.level, scale=ratings.scale, rater_names=ratings.rater_names,
        weights=weights, n_boot=n_boot, seed=seed, progress=progress,
    )
    return {**head, **summary, "multilabel": False, "empty": False}


def _multilabel_summary(
    ratings: Ratings, matrices: dict[str, np.ndarray], *, n_boot: int, seed: int, progress: ag.Progress | None
) -> dict[str, Any]:
    """Agreement on each option of a multi-label question, as a selected / not selected rating."""
    n_ratings = (~np.isnan(ratings.codes)).sum(axis=1)
    options = list(matrices)
    per_option = []
    for i, option in enumerate(options):

        def step(done: int, total: int, i: int = i) -> None:
            if progress is not None:
                progress(i * total + done, len(options) * total)

        per_option.append({"option": option, **ag.agreement_summary(
            matrices[option], level="nominal", scale=OPTION_SCALE, rater_names=ratings.rater_names,
            n_boot=n_boot, seed=seed, progress=step,
        )})
    return {
        "multilabel": True, "level": "nominal", "scale": OPTION_SCALE, "raters": ratings.rater_names,
        "n_units": int((n_ratings > 0).sum()), "n_raters": len(ratings.rater_names),
        "n_excluded_units": int(((n_ratings > 0) & (n_ratings < 2)).sum()), "per_option": per_option,
        "bootstrap": {"n": n_boot, "seed": seed} if n_boot > 0 else None,
    }


def agreement_overview(*, study: Study) -> list[dict[str, Any]]:
    """Point estimates for every (pool, rateable question) of the study, for the report index."""
    out = []
    for pool in Pool.objects.filter(study=study).prefetch_related("questions").order_by("name"):
        for question in pool.questions.all():
            if question.kind not in RATEABLE:
                continue
            rep = agreement_report(pool=pool, question=question)
            out.append({"pool": pool, "question": question, "report": rep})
    return out


AGREEMENT_CSV_HEADER = ["statistic", "rater_a", "rater_b", "label", "value", "ci_low", "ci_high", "ci_method",
                        "n_units", "n_excluded_units", "reason"]


def _csv_row(stat: str, d: dict[str, Any], *, rater_a: str = "", rater_b: str = "", label: str = "") -> list[Any]:
    ci = d.get("ci95") or [None, None]
    return [stat, rater_a, rater_b, label, d.get("value"), ci[0], ci[1], d.get("ci_method") or "",
            d.get("n_units"), d.get("n_excluded_units"), d.get("reason") or ""]


def agreement_csv(report: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
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


def pair_matrix(report: dict[str, Any]) -> dict[str, Any]:
    """The annotator × annotator κ matrix as rows for a template (diagonal empty)."""
    names = report.get("raters") or []
    by_pair = {}
    for p in report.get("cohen_kappa_pairs") or []:
        by_pair[(p["rater_a"], p["rater_b"])] = p
        by_pair[(p["rater_b"], p["rater_a"])] = p
    rows = [{"rater": a, "cells": [None if a == b else by_pair.get((a, b)) for b in names]} for a in names]
    return {"names": names, "rows": rows}


# --- metric sources ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricValues:
    values: dict[tuple[int, str], float]
    n_not_ok: int = 0
    note: str = ""


@dataclass(frozen=True)
class MetricSource:
    """Something that gives a number per unit: a score run, or a measure derived from human labels."""

    key: str
    label: str
    scope: str
    load: Callable[[], MetricValues] = field(compare=False)
    origin: str = "score_run"
    pool_id: int | None = None


def score_run_sources(study: Study) -> list[MetricSource]:
    from scoring.models import Score, ScoreRun, ScoreState

    sources = []
    for run in ScoreRun.objects.filter(study=study).order_by("-created_at", "-id"):
        first = Score.objects.filter(run=run).values_list("unit_key", flat=True).first()
        if first is None:
            continue

        def load(run_id: int = run.pk) -> MetricValues:
            rows = Score.objects.filter(run_id=run_id).values_list("item_id", "unit_key", "value", "state")
            values: dict[tuple[int, str], float] = {}
            not_ok = 0
            for item_id, key, value, state in rows:
                if state == ScoreState.OK and value is not None:
                    values[(item_id, key)] = float(value)
                else:
                    not_ok += 1
            return MetricValues(values, not_ok, "scores that are undetermined or failed are excluded")

        label = f"{run.metric} v{run.metric_version} · {run.backend}" + (f" · {run.model_identity}" if run.model_identity else "")
        sources.append(MetricSource(key=f"run:{run.pk}", label=f"run #{run.pk}: {label}", scope=unit_scope(first),
                                    load=load, origin="score_run"))
    return sources


def human_measure_sources(study: Study) -> list[MetricSource]:
    """adjudication.measures through E's selector: one source per pool × measure × rater (gold first)."""
    from adjudication import selectors

    sources = []
    for pool in Pool.objects.filter(study=study).order_by("name"):
        available = selectors.human_measures_available(pool_id=pool.pk)
        if not available:
            continue
        raters = selectors.human_measure_raters(pool_id=pool.pk)
        raters = [selectors.GOLD] + [r for r in raters if r != selectors.GOLD]
        for measure in available:
            for rater in raters:

                def load(pool_id: int = pool.pk, measure: str = measure, rater: str = rater) -> MetricValues:
                    per_item = selectors.human_measure_values(pool_id=pool_id, measure=measure, rater=rater)
                    ids = dict(Item.objects.filter(study=study, external_id__in=per_item.values).values_list("external_id", "pk"))
                    values = {(ids[ext], "item"): float(v) for ext, v in per_item.values.items() if ext in ids}
                    return MetricValues(values, len(per_item.undefined), "items where the measure is undefined are excluded")

                who = "gold" if rater == selectors.GOLD else rater
                sources.append(MetricSource(
                    key=f"measure:{pool.pk}:{measure}:{rater}", label=f"{measure} ({pool.name}, {who})", scope="item",
                    load=load, origin="human_measure", pool_id=pool.pk,
                ))
    return sources


# The providers of metric sources, in display order. A new kind of metric (e.g. an LLM judge's
# verdicts stored elsewhere) is added here as one function Study -> list[MetricSource].
METRIC_SOURCE_PROVIDERS: list[Callable[[Study], list[MetricSource]]] = [score_run_sources, human_measure_sources]


def metric_sources(study: Study) -> list[MetricSource]:
    return [s for provider in METRIC_SOURCE_PROVIDERS for s in provider(study)]


def metric_source_get(*, study: Study, key: str) -> MetricSource:
    for source in metric_sources(study):
        if source.key == key:
            return source
    raise NotFound("no such metric source in this study")


# --- human targets ---------------------------------------------------------------------------------


def target_choices(*, pool: Pool) -> list[tuple[str, str]]:
    names = PoolMembership.objects.filter(pool=pool).order_by("pseudonym").values_list("pseudonym", flat=True)
    return [("gold", "gold labels"), ("majority", "majority of the pool"), *[(f"rater:{n}", n) for n in names]]


def human_target(*, pool: Pool, question: Question, target: str, ratings: Ratings) -> tuple[dict[tuple[int, str], float], dict[str, int]]:
    """Scale positions (or numbers) of the human target per unit, and what was left out and why."""
    excluded: dict[str, int] = {}
    if target == "gold":
        rows = GoldLabel.objects.filter(pool=pool, question=question, is_current=True).exclude(
            source=GoldSource.UNRESOLVED
        ).values_list("item_id", "unit_key", "value")
        out: dict[tuple[int, str], float] = {}
        off = 0
        for item_id, key, value in rows:
            pos = _position(question, value)
            if pos is None:
                off += 1
            else:
                out[(item_id, key)] = pos
        excluded["gold_off_scale"] = off
        return out, excluded
    if target == "majority":
        if ratings.scale is None:
            raise ValidationFailed("a majority needs a categorical question")
        k = len(ratings.scale)
        counts = ag.category_counts(ratings.codes, k)
        top = counts.max(axis=1)
        winners = (counts == top[:, None]).sum(axis=1)
        mode = counts.argmax(axis=1)
        keep = (top > 0) & (winners == 1)
        excluded["majority_ties"] = int(((top > 0) & (winners > 1)).sum())
        return {ratings.units[i]: float(mode[i]) for i in np.nonzero(keep)[0]}, excluded
    if target.startswith("rater:"):
        name = target.split(":", 1)[1]
        if name not in ratings.rater_names:
            raise NotFound("no such annotator with labels on this question in this pool")
        col = ratings.codes[:, ratings.rater_names.index(name)]
        return {ratings.units[i]: float(col[i]) for i in np.nonzero(~np.isnan(col))[0]}, excluded
    raise ValidationFailed("target must be gold, majority or rater:<pseudonym>")


def _position(question: Question, value: Any) -> float | None:
    if question.kind in CATEGORICAL:
        try:
            return float(question.option_values.index(str(value)))
        except ValueError:
            return None
    x = _number_or_nan(value)
    return None if np.isnan(x) else x


def default_positive(question: Question) -> str:
    """The first option for binary and nominal questions; for ordinal ones the middle option, so that
    "positive" is the upper half of the scale (at least ``slight`` on none / slight / severe; 3 or
    more on 1..5) rather than every unit."""
    options = question.option_values
    return options[len(options) // 2] if question.kind == QuestionKind.ORDINAL else options[0]


def binary_target(question: Question, positions: np.ndarray, positive: str) -> np.ndarray:
    """1 where the human said the positive class, else 0 (NaN stays NaN).

    Binary and nominal: positive = that option. Ordinal: positive = that option *or any later one in
    the declared order* (choose ``slight`` on none / slight / severe for "at least slight").
    """
    options = question.option_values
    if positive not in options:
        raise ValidationFailed(f"positive must be one of the question's options: {', '.join(options)}")
    p = options.index(positive)
    hit = positions >= p if question.kind == QuestionKind.ORDINAL else positions == p
    return np.where(np.isnan(positions), np.nan, hit.astype(float))


def compatible_questions(*, study: Study, scope: str) -> list[tuple[Pool, Question]]:
    out = []
    for pool in Pool.objects.filter(study=study).prefetch_related("questions").order_by("name"):
        for q in pool.questions.all():
            if q.kind in CATEGORICAL and q.scope == scope:
                out.append((pool, q))
    return out


def validity_pairs(*, study: Study) -> list[dict[str, Any]]:
    """Every (metric source, pool, question) that can be compared, without computing anything."""
    out = []
    for source in metric_sources(study):
        for pool, question in compatible_questions(study=study, scope=source.scope):
            if source.pool_id == pool.pk:
                # A measure from a pool's own labels against the same pool is circular (DESIGN.md §2).
                continue
            out.append({"source": source, "pool": pool, "question": question})
    return out


@dataclass
class ValidityParams:
    source: str
    pool_id: int
    question: str
    target: str = "gold"
    positive: str | None = None
    compare: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {"source": self.source, "pool": self.pool_id, "question": self.question, "target": self.target,
               "positive": self.positive}
        if self.compare:
            out["compare"] = self.compare
        return out


def validity_report(
    *, study: Study, params: ValidityParams, n_boot: int = 0, seed: int = 0, progress: ag.Progress | None = None
) -> dict[str, Any]:
    """One metric source against one human question of one pool, with the pool's agreement beside it."""
    source = metric_source_get(study=study, key=params.source)
    pool = pool_get_for_report(study=study, pool_id=params.pool_id)
    question = question_get_for_report(pool=pool, key=params.question)
    if question.kind not in CATEGORICAL:
        raise ValidationFailed("metric vs human needs a categorical human question")
    if question.scope != source.scope:
        raise ValidationFailed(f"the metric scores {source.scope} units; the question is about {question.scope} units")
    positive = params.positive or default_positive(question)
    ratings = ratings_load(pool=pool, question=question)
    human, excluded = human_target(pool=pool, question=question, target=params.target, ratings=ratings)
    metric = source.load()
    units = sorted(set(human) & set(metric.values))
    positions = np.array([human[u] for u in units], dtype=float)
    scores = np.array([metric.values[u] for u in units], dtype=float)
    labels = binary_target(question, positions, positive)
    ordinal = positions if question.kind == QuestionKind.ORDINAL else None
    # A bootstrap covers the AUC (n_boot) and the humans' κ and α beside it (2 × n_boot): one progress bar.
    def auc_progress(done: int, total: int) -> None:
        if progress is not None:
            progress(done, 3 * total)

    def ceiling_progress(done: int, total: int) -> None:
        if progress is not None:
            progress(total // 2 + done, total // 2 * 3)

    summary = va.validity_summary(scores, labels, ordinal_target=ordinal, n_boot=n_boot, seed=seed,
                                  progress=auc_progress)
    ceiling = agreement_report(pool=pool, question=question, ratings=ratings, n_boot=n_boot, seed=seed,
                               progress=ceiling_progress)
    binary_codes = np.where(np.isnan(ratings.codes), np.nan, binary_target(question, ratings.codes, positive))
    binary_fleiss = (ag.fleiss_kappa(binary_codes, 2, n_boot=n_boot, seed=seed).as_dict()
                     if ratings.units else None)
    comparison = _paired_comparison(study=study, params=params, source=source, human=human, question=question,
                                    positive=positive, metric=metric) if params.compare else None
    return {
        "study": study.slug,
        "source": {"key": source.key, "label": source.label, "scope": source.scope, "origin": source.origin},
        "pool": {"id": pool.pk, "name": pool.name},
        "question": {"key": question.key, "kind": question.kind, "scope": question.scope, "options": question.option_values},
        "target": params.target, "positive": positive,
        "positive_rule": "at or after this option in the declared order" if question.kind == QuestionKind.ORDINAL
        else "equal to this option",
        "n_units_metric": len(metric.values), "n_metric_not_ok": metric.n_not_ok, "n_units_human": len(human),
        "n_units_both": len(units), "human_excluded": excluded,
        **summary,
        "comparison": comparison,
        "human_ceiling": {
            "fleiss_kappa": ceiling.get("fleiss_kappa"), "krippendorff_alpha": ceiling.get("krippendorff_alpha"),
            "mean_pairwise_cohen_kappa": ceiling.get("mean_pairwise_cohen_kappa"),
            "binary_fleiss_kappa": binary_fleiss, "n_raters": ceiling.get("n_raters"),
            "note": "the humans' own agreement on this question: a metric cannot be expected to agree with "
                    "a human better than humans agree with each other",
        },
    }


def _paired_comparison(
    *, study: Study, params: ValidityParams, source: MetricSource, human: dict[tuple[int, str], float],
    question: Question, positive: str, metric: MetricValues,
) -> dict[str, Any]:
    """The paired DeLong test of this metric against another one on the units both scored."""
    other = metric_source_get(study=study, key=params.compare or "")
    if other.scope != source.scope:
        raise ValidationFailed(f"{other.label} scores {other.scope} units, not {source.scope} units")
    other_values = other.load().values
    units = sorted(set(human) & set(metric.values) & set(other_values))
    labels = binary_target(question, np.array([human[u] for u in units], dtype=float), positive)
    a = np.array([metric.values[u] for u in units], dtype=float)
    b = np.array([other_values[u] for u in units], dtype=float)
    paired = va.delong_paired(a, b, labels)
    return {
        "source_b": {"key": other.key, "label": other.label},
        "n_units": len(units),
        "auc_a": va.roc_auc(a, labels).as_dict(),
        "auc_b": va.roc_auc(b, labels).as_dict(),
        "delong_paired": {"diff": paired.extra.get("diff"), "z": paired.extra.get("z"),
                          "p_value": paired.extra.get("p_value"), **paired.as_dict()},
    }


def comparison_choices(*, study: Study, source_key: str) -> list[MetricSource]:
    """Other metric sources on the same kind of unit, for the paired DeLong test."""
    sources = metric_sources(study)
    scope = next((s.scope for s in sources if s.key == source_key), None)
    return [s for s in sources if s.scope == scope and s.key != source_key]


VALIDITY_CSV_HEADER = ["statistic", "value", "ci_low", "ci_high", "ci_method", "n_units", "n_excluded_units", "reason"]


def validity_csv(report: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(VALIDITY_CSV_HEADER)

    def row(name: str, d: dict[str, Any] | None, ci_key: str = "ci95", method: str | None = None) -> None:
        if d is None:
            return
        ci = d.get(ci_key) or [None, None]
        w.writerow([name, d.get("value"), ci[0], ci[1], method or d.get("ci_method") or "", d.get("n_units"),
                    d.get("n_excluded_units"), d.get("reason") or ""])

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


def roc_svg_points(roc: dict[str, list[float]] | None, size: int = 300) -> str:
    """The ROC curve as an SVG polyline ``points`` attribute in a size × size box (y up)."""
    if not roc:
        return ""
    fpr, tpr = np.asarray(roc["fpr"]), np.asarray(roc["tpr"])
    if fpr.size > ROC_SVG_MAX_POINTS:
        keep = np.unique(np.linspace(0, fpr.size - 1, ROC_SVG_MAX_POINTS).astype(int))
        fpr, tpr = fpr[keep], tpr[keep]
    return " ".join(f"{x * size:.1f},{(1 - y) * size:.1f}" for x, y in zip(fpr, tpr, strict=True))


# --- bootstrap jobs ---------------------------------------------------------------------------------


def _params_hash(kind: str, params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps({"kind": kind, **params}, sort_keys=True).encode()).hexdigest()[:40]


def bootstrap_params(raw_n: Any, raw_seed: Any) -> tuple[int, int]:
    try:
        n = int(raw_n) if raw_n not in (None, "") else DEFAULT_BOOTSTRAP
        seed = int(raw_seed) if raw_seed not in (None, "") else 0
    except (TypeError, ValueError):
        raise ValidationFailed("n_boot and seed must be whole numbers") from None
    if not 100 <= n <= MAX_BOOTSTRAP:
        raise ValidationFailed(f"n_boot must be between 100 and {MAX_BOOTSTRAP}")
    return n, seed


def report_job_start(*, study: Study, kind: str, params: dict[str, Any], user: AbstractBaseUser) -> ReportJob:
    """Queue a bootstrap for these parameters, or return the job that already has (or is computing) it.

    Keyed on (study, parameters): asking twice, or a redelivered task, never duplicates work.
    """
    if kind not in ReportJobKind.values:
        raise ValidationFailed("unknown report kind")
    _validate_job_params(study=study, kind=kind, params=params)
    key = _params_hash(kind, params)
    from adjudication.report_tasks import report_bootstrap_run

    with transaction.atomic():
        job, created = ReportJob.objects.select_for_update().get_or_create(
            study=study, params_hash=key, defaults={"kind": kind, "params": params, "requested_by": user}
        )
        if not created and job.status != ReportJobStatus.FAILED:
            return job
        if not created:
            job.status, job.error, job.n_done, job.result = ReportJobStatus.QUEUED, "", 0, None
            job.requested_by = user
            job.save(update_fields=["status", "error", "n_done", "result", "requested_by"])
        report_bootstrap_run.delay_on_commit(job.pk)
    return job


def _validate_job_params(*, study: Study, kind: str, params: dict[str, Any]) -> None:
    pool = pool_get_for_report(study=study, pool_id=int(params["pool"]))
    question_get_for_report(pool=pool, key=params["question"])
    if kind == ReportJobKind.VALIDITY:
        metric_source_get(study=study, key=params["source"])


def report_job_run(*, job_id: int) -> None:
    """Compute a queued bootstrap, writing progress as it goes; the result replaces, never appends."""
    claimed = ReportJob.objects.filter(pk=job_id, status__in=[ReportJobStatus.QUEUED, ReportJobStatus.RUNNING]).update(
        status=ReportJobStatus.RUNNING, started_at=timezone.now(), n_done=0
    )
    if not claimed:
        return
    job = ReportJob.objects.select_related("study").get(pk=job_id)
    params = job.params
    n_boot, seed = int(params["n_boot"]), int(params["seed"])
    last = [0]

    def progress(done: int, total: int) -> None:
        if done - last[0] >= max(total // 20, 1) or done == total:
            last[0] = done
            ReportJob.objects.filter(pk=job_id).update(n_done=done, n_total=total)

    try:
        if job.kind == ReportJobKind.AGREEMENT:
            pool = pool_get_for_report(study=job.study, pool_id=int(params["pool"]))
            question = question_get_for_report(pool=pool, key=params["question"])
            result = agreement_report(pool=pool, question=question, weights=params.get("weights"),
                                      n_boot=n_boot, seed=seed, progress=progress)
        else:
            vp = ValidityParams(source=params["source"], pool_id=int(params["pool"]), question=params["question"],
                                target=params.get("target") or "gold", positive=params.get("positive"),
                                compare=params.get("compare"))
            result = validity_report(study=job.study, params=vp, n_boot=n_boot, seed=seed, progress=progress)
    except (ValidationFailed, NotFound) as exc:
        ReportJob.objects.filter(pk=job_id).update(status=ReportJobStatus.FAILED, error=exc.message, finished_at=timezone.now())
        return
    except OperationalError:
        raise  # the task retries; the job stays claimable (running) for that retry
    except Exception as exc:
        ReportJob.objects.filter(pk=job_id).update(status=ReportJobStatus.FAILED, error=str(exc)[:2000], finished_at=timezone.now())
        raise
    ReportJob.objects.filter(pk=job_id).update(
        status=ReportJobStatus.DONE, result=result, finished_at=timezone.now()
    )


def report_job_get(*, study: Study, job_id: int) -> ReportJob:
    job = ReportJob.objects.filter(study=study, pk=job_id).first()
    if job is None:
        raise NotFound("no such report job")
    return job


def report_job_latest(*, study: Study, kind: str, params: dict[str, Any]) -> ReportJob | None:
    """The job for exactly these parameters (bootstrap size and seed included), if one was asked for."""
    return ReportJob.objects.filter(study=study, params_hash=_params_hash(kind, params)).first()


def job_as_dict(job: ReportJob) -> dict[str, Any]:
    return {"id": job.pk, "kind": job.kind, "status": job.status, "params": job.params, "n_done": job.n_done,
            "n_total": job.n_total, "progress": job.progress, "error": job.error or None, "result": job.result}


def _data_version(*, pool: Pool, question: Question, source: str | None = None) -> str:
    """A fingerprint of the data a report reads, kept in a job's parameters so that a bootstrap
    computed before labels, gold or scores changed is never shown as the current one."""
    labels = Label.objects.filter(assignment__pool=pool, question=question).aggregate(n=Count("pk"), at=Max("updated_at"))
    gold = GoldLabel.objects.filter(pool=pool, question=question).aggregate(n=Count("pk"), at=Max("created_at"))
    parts = [labels["n"], labels["at"], gold["n"], gold["at"]]
    if source and source.startswith("run:"):
        from scoring.models import Score

        scores = Score.objects.filter(run_id=int(source.split(":")[1])).aggregate(n=Count("pk"), at=Max("computed_at"))
        parts += [scores["n"], scores["at"]]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def _int(value: Any, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValidationFailed(f"{name} must be a whole number") from None


def default_target(*, pool: Pool, question: Question) -> str:
    """Gold when every labelled unit has gold, else the majority.

    Gold that covers only part of the units is usually the unanimous part (consensus makes gold
    without adjudication only where everyone agreed): scoring a metric on it alone would keep the
    easy units and flatter the metric, so it is used only when chosen explicitly.
    """
    gold = GoldLabel.objects.filter(pool=pool, question=question, is_current=True).exclude(
        source=GoldSource.UNRESOLVED
    ).count()
    if gold == 0:
        return "majority"
    labelled = Label.objects.filter(
        assignment__pool=pool, question=question, assignment__status=AssignmentStatus.SUBMITTED
    ).values("assignment__item_id", "unit_key").distinct().count()
    return "gold" if gold >= labelled else "majority"


def agreement_params_parse(*, pool_id: int, question: str, query: Any) -> dict[str, Any]:
    """The parameters that key an agreement report and its bootstrap (weights follow the question)."""
    n_boot, seed = bootstrap_params(query.get("n_boot"), query.get("seed"))
    return {"pool": pool_id, "question": question, "weights": None, "n_boot": n_boot, "seed": seed}


def validity_params_parse(*, study: Study, query: Any) -> ValidityParams:
    """Validity parameters from a query, with the defaults resolved (gold when the pool has gold for
    the question, else the majority; the question's first option as the positive class)."""
    source = (query.get("source") or "").strip()
    key = (query.get("question") or "").strip()
    if not source or not key or not query.get("pool"):
        raise ValidationFailed("choose a metric source, a pool and a question")
    pool = pool_get_for_report(study=study, pool_id=_int(query.get("pool"), "pool"))
    question = question_get_for_report(pool=pool, key=key)
    if question.kind not in CATEGORICAL:
        raise ValidationFailed("metric vs human needs a categorical human question")
    target = (query.get("target") or "").strip() or default_target(pool=pool, question=question)
    positive = (query.get("positive") or "").strip() or default_positive(question)
    if positive not in question.option_values:
        raise ValidationFailed(f"positive must be one of the question's options: {', '.join(question.option_values)}")
    compare = (query.get("compare") or "").strip() or None
    if compare == source:
        raise ValidationFailed("compare the metric with a different one")
    return ValidityParams(source=source, pool_id=pool.pk, question=key, target=target, positive=positive,
                          compare=compare)


def agreement_report_with_bootstrap(*, study: Study, params: dict[str, Any]) -> tuple[dict[str, Any], ReportJob | None]:
    """Point estimates, or the finished bootstrap for exactly these parameters and the current data."""
    pool = pool_get_for_report(study=study, pool_id=int(params["pool"]))
    question = question_get_for_report(pool=pool, key=params["question"])
    keyed = {**params, "data_version": _data_version(pool=pool, question=question)}
    job = report_job_latest(study=study, kind=ReportJobKind.AGREEMENT, params=keyed)
    if job is not None and job.status == ReportJobStatus.DONE and job.result:
        return {**job.result, "bootstrap_status": "done"}, job
    report = agreement_report(pool=pool, question=question, weights=params.get("weights"))
    return {**report, "bootstrap_status": job.status if job else "not requested"}, job


def validity_report_with_bootstrap(
    *, study: Study, params: ValidityParams, n_boot: int, seed: int
) -> tuple[dict[str, Any], ReportJob | None]:
    pool = pool_get_for_report(study=study, pool_id=params.pool_id)
    question = question_get_for_report(pool=pool, key=params.question)
    keyed = {**params.as_dict(), "n_boot": n_boot, "seed": seed,
             "data_version": _data_version(pool=pool, question=question, source=params.source)}
    job = report_job_latest(study=study, kind=ReportJobKind.VALIDITY, params=keyed)
    if job is not None and job.status == ReportJobStatus.DONE and job.result:
        return {**job.result, "bootstrap_status": "done"}, job
    report = validity_report(study=study, params=params)
    return {**report, "bootstrap_status": job.status if job else "not requested"}, job


def job_params_parse(*, study: Study, data: Any) -> tuple[str, dict[str, Any]]:
    """The kind and the normalised, data-versioned parameters of a bootstrap request."""
    kind = (data.get("kind") or "").strip()
    n_boot, seed = bootstrap_params(data.get("n_boot"), data.get("seed"))
    if kind == ReportJobKind.AGREEMENT:
        pool = pool_get_for_report(study=study, pool_id=_int(data.get("pool"), "pool"))
        question = question_get_for_report(pool=pool, key=(data.get("question") or "").strip())
        params = {"pool": pool.pk, "question": question.key, "weights": None, "n_boot": n_boot, "seed": seed,
                  "data_version": _data_version(pool=pool, question=question)}
        return kind, params
    if kind == ReportJobKind.VALIDITY:
        vp = validity_params_parse(study=study, query=data)
        metric_source_get(study=study, key=vp.source)
        pool = pool_get_for_report(study=study, pool_id=vp.pool_id)
        question = question_get_for_report(pool=pool, key=vp.question)
        params = {**vp.as_dict(), "n_boot": n_boot, "seed": seed,
                  "data_version": _data_version(pool=pool, question=question, source=vp.source)}
        return kind, params
    raise ValidationFailed("kind must be agreement or validity")


# --- text for the CLI ------------------------------------------------------------------------------


def _fmt(x: Any) -> str:
    return "—" if x is None else f"{x:.4f}" if isinstance(x, float) else str(x)


def _stat_line(name: str, d: dict[str, Any]) -> str:
    if d.get("value") is None:
        return f"  {name:<28} undefined: {d.get('reason')}"
    ci = d.get("ci95")
    ci_text = f"  95% CI [{_fmt(ci[0])}, {_fmt(ci[1])}] ({d.get('ci_method')})" if ci else "  (no interval)"
    return (f"  {name:<28} {_fmt(d['value'])}{ci_text}  n units {d.get('n_units')}, "
            f"excluded {d.get('n_excluded_units')}")


def format_agreement_text(s: dict[str, Any]) -> str:
    lines = [
        f"units {s['n_units']}  raters {s['n_raters']}  excluded units (rated fewer than twice) {s['n_excluded_units']}",
        f"level {s['level']}" + (f"  scale {', '.join(s['scale'])}" if s.get("scale") else "") + f"  weights {s['weights']}",
    ]
    lines += [f"note: {n}" for n in s.get("notes", [])]
    lines.append("overall")
    for key, name in (("percent_agreement", "percent agreement"), ("fleiss_kappa", "Fleiss kappa"),
                      ("krippendorff_alpha", f"Krippendorff alpha ({s['level']})"), ("cohen_kappa", "Cohen kappa")):
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
        lines.append(f"  {'AUC bootstrap 95% CI':<28} [{_fmt(lo)}, {_fmt(hi)}] ({auc['bootstrap']['n']} stratified resamples, seed {auc['bootstrap']['seed']})")
    for key in ("pearson", "spearman", "kendall"):
        lines.append(_stat_line(key.capitalize(), s[key]))
    if s.get("youden"):
        y = s["youden"]
        lines.append(f"  Youden threshold {y['threshold']:.4g}: sensitivity {y['sensitivity']:.4f}, specificity {y['specificity']:.4f}")
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
            lines.append(f"  DeLong paired: diff {_fmt(d['diff'])}  z {_fmt(d['z'])}  p {d['p_value']:.4g}  "
                         f"95% CI [{_fmt(d['ci95'][0])}, {_fmt(d['ci95'][1])}]")
    return "\n".join(lines)

