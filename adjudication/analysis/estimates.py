"""Prediction-powered estimates for a study: the share of items the clinicians would call positive, from a
score run on every item and the human labels of a sample (statistics in :mod:`adjudication.stats.ppi`).

* **The population** is the run's items with an ``ok`` item-level value: the estimate is about them.
* **The human label of an item** is its current gold in the pool where there is one (not ``unresolved``), else
  the strict majority of the pool's submitted labels (more than half of them give the same answer); an item
  without either (a tie, no labels) has no label. The result counts how many labels came from each source.
  The answer is turned into 1 (positive) or 0 as in the validity report: equal to the chosen option, or for an
  ordinal question that option or any later one.
* **Which items are labelled must not depend on the items.** An interval from a sample is valid only when
  chance chose the sample. So the estimate is given only when

  - every item of the population has a label: then the labelled mean *is* the share (exact over the population),
    and the metric adds nothing; or
  - the pool records a sampling design (:class:`SamplingDesign`): a uniform draw (a simple random sample, the
    setting of PPI and PPI++) or a draw with a known inclusion probability per item (Poisson sampling:
    the inverse-probability-weighted estimate of active inference). Labels of items the design did not draw
    are not used (nothing says how they were chosen); every drawn item of the population needs a label,
    since dropping the ones still missing would no longer be the sample that was drawn.

  Anything else (an annotator chose what to label, the queue's order, a partly labelled pool) is refused with
  the reason: no formula can repair a sample whose choice may depend on the answers.

Read-only: the design is the one recorded for the pool (``adjudication.models.PoolSample``, drawn by
``adjudication.sampling``); nothing here draws one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.db.models import Max

from adjudication.analysis.access import CATEGORICAL, get_pool_for_report, get_question_for_report
from adjudication.analysis.loading import default_positive, ratings_load
from adjudication.analysis.params import id_param
from adjudication.models import GoldLabel, GoldSource, PoolSample, PoolSampleItem, SampleDesign
from adjudication.stats import ppi as ppi_stats
from adjudication.stats import targets
from annotation import units
from annotation.models import Item, Label, Pool, Question, QuestionKind, Study
from concord.errors import NotFound, ValidationFailed
from scoring.models import RunStatus, Score, ScoreRun, ScoreState

# The confidence levels offered (1 − alpha). A fixed list: a float parsed from a request accepts Unicode
# digits and "1e400", and nothing is gained by an arbitrary alpha.
ALPHAS = {"0.1": 0.1, "0.05": 0.05, "0.01": 0.01}
DEFAULT_ALPHA = "0.05"
# Planning: the target half-width of the interval, a decimal written with ASCII digits within these bounds.
DEFAULT_HALF_WIDTH = "0.05"
MIN_HALF_WIDTH, MAX_HALF_WIDTH = 0.005, 0.5
HALF_WIDTH_PATTERN = re.compile(r"0?\.[0-9]{1,4}|0", re.ASCII)
TRUE_WORDS = {"1", "true", "on", "yes"}

GOLD = "gold"
MAJORITY = "majority"

UNIFORM = "uniform"
PROBABILITY = "probability"


@dataclass(frozen=True)
class SamplingDesign:
    """How the items to label were drawn from the population, as recorded for a pool.

    ``kind`` is :data:`UNIFORM` (a simple random sample of ``n`` of the ``population`` items, each drawn with
    probability n/N) or :data:`PROBABILITY` (each item drawn independently with its own probability).
    ``probabilities`` maps each drawn item's id to its inclusion probability; ``description`` says how the
    draw was made (seed, score run) for the report.
    """

    kind: str
    probabilities: Mapping[int, float]
    population: int
    description: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    # The items the draw could pick (its population); None: not recorded (taken to be the population).
    frame: frozenset[int] | None = None


@dataclass(frozen=True)
class EstimateParams:
    pool_id: int
    question: str
    run_id: int
    positive: str
    invert: bool = False
    alpha: str = DEFAULT_ALPHA
    compare_run_id: int | None = None  # a second run: the paired difference run − compare run
    half_width: str = DEFAULT_HALF_WIDTH  # planning's target half-width

    def as_dict(self) -> dict[str, Any]:
        return {
            "pool": self.pool_id,
            "question": self.question,
            "run": self.run_id,
            "positive": self.positive,
            "invert": self.invert,
            "alpha": self.alpha,
            "compare": self.compare_run_id,
            "half_width": self.half_width,
        }


def sampling_design_for(*, pool: Pool) -> SamplingDesign | None:
    """The sampling design recorded for ``pool`` (its ``PoolSample``), or None."""
    sample = PoolSample.objects.filter(pool=pool).first()
    if sample is None:
        return None
    rows = PoolSampleItem.objects.filter(sample=sample).values_list("item_id", "probability", "drawn")
    frame = set()
    probabilities = {}
    for item_id, probability, drawn in rows:
        frame.add(item_id)
        if drawn:
            probabilities[item_id] = probability
    kind = UNIFORM if sample.design == SampleDesign.UNIFORM else PROBABILITY
    how = (
        f"{sample.n} of {sample.population} items drawn uniformly at random, seed {sample.seed}"
        if kind == UNIFORM
        else f"{sample.n_drawn} of {sample.population} items drawn with probabilities from run #{sample.run_id}'s "
        f"values (expected {sample.n}, floor {sample.floor} × n/N), seed {sample.seed}"
    )
    return SamplingDesign(
        kind=kind,
        probabilities=probabilities,
        population=sample.population,
        description=how,
        details={"run": sample.run_id, "seed": sample.seed, "n": sample.n, "drawn_at": sample.created_at.isoformat()},
        frame=frozenset(frame),
    )


def get_run_for_report(study: Study, run_id: int) -> ScoreRun:
    run = ScoreRun.objects.filter(study=study, pk=run_id).first()
    if run is None:
        raise NotFound("no such score run in this study")
    return run


def _estimable_question(pool: Pool, key: str) -> Question:
    question = get_question_for_report(pool, key)
    if question.kind not in CATEGORICAL:
        raise ValidationFailed(
            f"an estimate here is a share: it needs a binary, nominal or ordinal question; {key!r} is {question.kind}"
        )
    if question.scope != units.ITEM:
        raise ValidationFailed(
            f"{key!r} is asked about {question.scope} units; a score run's item-level values need a question about "
            "whole items"
        )
    return question


def estimate_params_parse(*, study: Study, query: Any) -> EstimateParams:
    """Estimate parameters from a query: ``pool``, ``question``, ``run`` (required), ``positive`` (the first
    option of a binary or nominal question by default; an ordinal question needs its cut-off), ``invert``
    (use 1 − score) and ``alpha`` (0.1, 0.05 or 0.01). Ids that are not ids are 400; ids of nothing the
    study holds are 404; an option the question does not have is 400."""
    raw_pool, raw_run = query.get("pool"), query.get("run")
    key = query.get("question")
    if not raw_pool or not raw_run or not key:
        raise ValidationFailed("choose a pool, a question and a score run")
    if not isinstance(key, str):
        raise ValidationFailed("question must be a question key")
    pool = get_pool_for_report(study, id_param(raw_pool, "pool must be a pool id"))
    run_id = id_param(raw_run, "run must be a score run id")
    question = _estimable_question(pool, key.strip())
    get_run_for_report(study, run_id)
    positive = query.get("positive")
    positive = positive.strip() if isinstance(positive, str) and positive.strip() else default_positive(question)
    if positive not in question.option_values:
        raise ValidationFailed(f"positive must be one of the question's options: {', '.join(question.option_values)}")
    alpha = query.get("alpha")
    alpha = alpha.strip() if isinstance(alpha, str) and alpha.strip() else DEFAULT_ALPHA
    if alpha not in ALPHAS:
        raise ValidationFailed(f"alpha must be one of {', '.join(ALPHAS)}")
    invert = query.get("invert")
    raw_compare = query.get("compare")
    compare = None
    if isinstance(raw_compare, str) and raw_compare.strip():
        compare = id_param(raw_compare.strip(), "compare must be a score run id")
        get_run_for_report(study, compare)
        if compare == run_id:
            raise ValidationFailed("compare must be another score run than run (a run compared with itself is 0)")
    elif raw_compare not in (None, ""):
        raise ValidationFailed("compare must be a score run id")
    return EstimateParams(
        half_width=half_width_parse(query.get("half_width")),
        pool_id=pool.pk,
        question=question.key,
        run_id=run_id,
        positive=positive,
        invert=isinstance(invert, str) and invert.strip().lower() in TRUE_WORDS,
        alpha=alpha,
        compare_run_id=compare,
    )


def half_width_parse(raw: Any) -> str:
    """Planning's target half-width: empty gives the default; else a decimal such as 0.05 (ASCII digits, at
    most four decimals) from MIN_HALF_WIDTH to MAX_HALF_WIDTH, or ValidationFailed saying so."""
    message = f"half_width must be a number from {MIN_HALF_WIDTH} to {MAX_HALF_WIDTH}, such as 0.05"
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return DEFAULT_HALF_WIDTH
    if not isinstance(raw, str) or not HALF_WIDTH_PATTERN.fullmatch(raw.strip()):
        raise ValidationFailed(message)
    text = raw.strip()
    if not MIN_HALF_WIDTH <= float(text) <= MAX_HALF_WIDTH:
        raise ValidationFailed(message)
    return text


# --- loading ---------------------------------------------------------------------------------------------


def _run_label(run: ScoreRun) -> str:
    label = f"run #{run.pk}: {run.metric} v{run.metric_version} · {run.backend}"
    return label + (f" · {run.model_identity}" if run.model_identity else "")


def population_scores(run: ScoreRun) -> tuple[dict[int, float], int]:
    """The run's ok item-level values by item id, and how many item-level values are not ok."""
    values: dict[int, float] = {}
    not_ok = 0
    rows = Score.objects.filter(run=run, unit_key=units.ITEM).values_list("item_id", "value", "state")
    for item_id, value, state in rows:
        if state == ScoreState.OK and value is not None:
            values[item_id] = float(value)
        else:
            not_ok += 1
    return values, not_ok


def strict_majority(codes: np.ndarray, n_categories: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Per row of a units × raters matrix of codes (NaN: no rating): the rows where one code has more than
    half of the row's ratings, their codes, and how many rated rows have no such code."""
    counts = np.zeros((codes.shape[0], n_categories), dtype=np.int64)
    for c in range(n_categories):
        counts[:, c] = (codes == c).sum(axis=1)
    rated = counts.sum(axis=1)
    top = counts.max(axis=1) if n_categories else np.zeros(codes.shape[0], np.int64)
    keep = np.nonzero((rated > 0) & (2 * top > rated))[0]
    return keep, counts.argmax(axis=1)[keep], int(((rated > 0) & (2 * top <= rated)).sum())


@dataclass
class HumanLabels:
    """Scale positions per item id, where each came from, and what gave no label."""

    positions: dict[int, float]
    source: dict[int, str]
    no_majority: set[int]
    gold_off_scale: int


def human_labels(*, pool: Pool, question: Question) -> HumanLabels:
    """Current gold where it exists, else the strict majority of the pool's submitted labels (item units)."""
    options = question.option_values
    positions: dict[int, float] = {}
    source: dict[int, str] = {}
    off = 0
    gold = (
        GoldLabel.objects.filter(pool=pool, question=question, is_current=True, unit_key=units.ITEM)
        .exclude(source=GoldSource.UNRESOLVED)
        .values_list("item_id", "value")
    )
    for item_id, value in gold:
        pos = targets.scale_position(value, options)
        if pos is None:
            off += 1
            continue
        positions[item_id] = pos
        source[item_id] = GOLD
    ratings = ratings_load(pool=pool, question=question)
    no_majority: set[int] = set()
    if ratings.units:
        rows = [i for i, (_, key) in enumerate(ratings.units) if key == units.ITEM]
        codes = ratings.codes[rows]
        item_ids = [ratings.units[i][0] for i in rows]
        keep, winners, _ = strict_majority(codes, len(options))
        decided = {item_ids[i]: float(w) for i, w in zip(keep.tolist(), winners.tolist(), strict=True)}
        rated = {item_ids[i] for i in np.nonzero((~np.isnan(codes)).any(axis=1))[0].tolist()}
        for item_id in rated:
            if item_id in positions:
                continue
            if item_id in decided:
                positions[item_id] = decided[item_id]
                source[item_id] = MAJORITY
            else:
                no_majority.add(item_id)
    return HumanLabels(positions, source, no_majority, off)


# --- the estimate ----------------------------------------------------------------------------------------


def _binary(question: Question, position: float, positive: str) -> float:
    cut = question.option_values.index(positive)
    return float(position >= cut if question.kind == QuestionKind.ORDINAL else position == cut)


def estimate_compute(
    *,
    scores: Mapping[int, float],
    labels: Mapping[int, float],
    design: SamplingDesign | None,
    alpha: float,
) -> dict[str, Any]:
    """The estimates from plain data: ``scores`` (the metric's prediction per population item), ``labels``
    (0/1 per labelled item, any item) and the pool's ``design`` (or None).

    Returns ``valid`` with either ``estimates`` (PPI++, plain PPI, classical) or ``refusal`` (why no valid
    interval can be given), ``exact`` (every population item is labelled), and the counts the estimate used.
    """
    population = sorted(scores)
    pop = set(population)
    labelled_in = [i for i in population if i in labels]
    out: dict[str, Any] = {
        "n_population": len(population),
        "n_labelled": len(labelled_in),
        "n_labelled_outside_population": sum(1 for i in labels if i not in pop),
        "metric_mean": float(np.mean([scores[i] for i in population])) if population else None,
        "exact": False,
        "valid": False,
        "refusal": None,
        "estimates": [],
        "headline": ppi_stats.PPIPP,
        "design": None,
        "notes": [],
    }
    if not population:
        out["refusal"] = "the score run has no item with an ok item-level value: there is no population to estimate"
        return out
    if design is None:
        return _without_design(out, population, scores, labels, labelled_in, alpha)
    return _with_design(out, population, scores, labels, design, alpha)


def _refuse(out: dict[str, Any], reason: str) -> dict[str, Any]:
    out["refusal"] = reason
    return out


def _without_design(
    out: dict[str, Any],
    population: list[int],
    scores: Mapping[int, float],
    labels: Mapping[int, float],
    labelled_in: list[int],
    alpha: float,
) -> dict[str, Any]:
    n, big_n = len(labelled_in), len(population)
    if n < big_n:
        return _refuse(
            out,
            f"{n} of the {big_n} items of the population carry a human label and the pool records no sampling "
            "design: nothing says chance chose the labelled items (an annotator may have picked them, or the "
            "queue's order did), and a sample chosen by anything that can depend on the answers gives no valid "
            "interval, with or without the metric. Label every item of the population, or record a sampling "
            "design for the pool and label the items it draws.",
        )
    y = np.array([labels[i] for i in population], dtype=float)
    out["exact"] = True
    out["exact_value"] = float(y.mean())
    out["n_positive"] = int(y.sum())
    out["notes"].append(
        f"every one of the {big_n} items of the population is labelled: the share of positive labels, "
        f"{out['exact_value']:.4f}, is exact over this population, and the metric adds nothing (PPI needs "
        "unlabelled items). The classical interval below is for a larger population these items would be a "
        "random sample of."
    )
    try:
        out["estimates"] = [ppi_stats.classical(y, alpha=alpha).as_dict()]
    except ppi_stats.PPIError as exc:
        out["notes"].append(f"no classical interval: {exc}")
    out["headline"] = ppi_stats.CLASSICAL
    out["valid"] = True
    return out


def _with_design(
    out: dict[str, Any],
    population: list[int],
    scores: Mapping[int, float],
    labels: Mapping[int, float],
    design: SamplingDesign,
    alpha: float,
) -> dict[str, Any]:
    pop = set(population)
    drawn = [i for i in population if i in design.probabilities]
    missing = [i for i in drawn if i not in labels]
    out["design"] = {
        "kind": design.kind,
        "description": design.description,
        "n_drawn": len(design.probabilities),
        "n_drawn_in_population": len(drawn),
        "n_drawn_outside_population": sum(1 for i in design.probabilities if i not in pop),
        "n_labelled_not_drawn": sum(1 for i in labels if i in pop and i not in design.probabilities),
        "n_drawn_without_label": len(missing),
        **design.details,
    }
    if design.frame is not None:
        outside = [i for i in population if i not in design.frame]
        if outside:
            return _refuse(
                out,
                f"{len(outside)} items of this run's population were not among the items the pool's sample was "
                "drawn from (they could not be drawn): estimate over the population the sample was drawn from "
                "(its score run, or a run that scored no other items)",
            )
    if missing:
        return _refuse(
            out,
            f"{len(missing)} of the {len(drawn)} items the pool's sampling design drew from this population have no "
            "human label yet (no gold and no majority): an estimate from the others would no longer rest on the "
            "sample that chance drew. Finish labelling them (and adjudicate items without a majority).",
        )
    if out["design"]["n_labelled_not_drawn"]:
        out["notes"].append(
            f"{out['design']['n_labelled_not_drawn']} labelled items were not drawn by the design: their labels are "
            "not used (nothing says how they were chosen); the metric's value stands for them"
        )
    if len(drawn) == len(population):  # the design drew every item: the labelled share is exact
        return _without_design(out, population, scores, labels, drawn, alpha)
    y = np.array([labels[i] for i in drawn], dtype=float)
    f = np.array([scores[i] for i in drawn], dtype=float)
    f_u = np.array([scores[i] for i in population if i not in design.probabilities], dtype=float)
    out["n_labelled"] = len(drawn)
    out["n_positive"] = int(y.sum()) if y.size else 0
    try:
        if design.kind == UNIFORM:
            estimates = [
                ppi_stats.ppipp(y, f, f_u, alpha=alpha),
                ppi_stats.ppi(y, f, f_u, alpha=alpha),
                ppi_stats.classical(y, alpha=alpha),
            ]
        else:
            pi = np.array([design.probabilities[i] for i in drawn], dtype=float)
            estimates = [
                ppi_stats.active_mean(y, f, pi, f_u, alpha=alpha),
                ppi_stats.active_mean(y, f, pi, f_u, alpha=alpha, lam=1.0),
                ppi_stats.active_mean(y, f, pi, f_u, alpha=alpha, lam=0.0),
            ]
            out["headline"] = ppi_stats.ACTIVE
    except ppi_stats.PPIError as exc:
        return _refuse(out, f"no interval can be computed from these labels: {exc}")
    out["estimates"] = [e.as_dict() for e in estimates]
    out["valid"] = True
    return out


# --- judges learned on this study's gold -------------------------------------------------------------------

CROSS_FITTED = "cross-fitted on its own training study"
JUDGE_OPTIONS = ("model", "supports_model", "informative_model", "relevance_model", "kind_model")


def _training_items(judge: Any) -> set[int]:
    """The item ids a judge trained from a study's gold learned from (its artifact's fold assignment, one group
    per item), read without loading its models."""
    from scoring.judges.artifacts import training_groups

    return {int(group) for group in training_groups(judge.path)}


def judge_check(run: ScoreRun, labelled: set[int]) -> dict[str, Any] | None:
    """For a run of the ``learned`` backend whose judge was trained on this study's gold: the items it learned
    from and whether any of them is among the ``labelled`` items an estimate uses (None for any other run).

    Such a run scored each training item with the fold model that held it out and every other item with the
    model trained on all of them. When no labelled item trained the judge, its predictions do not depend on
    these labels: PPI as for any metric (a ``note`` says so). When some did (``overlap``), the run's values of
    the other items came from a model that saw those labels, so the estimate must be cross-prediction-powered
    (:func:`cross_ppi_apply`, from the fold values the run records); ``refusal`` says why not where it cannot be
    (here: the judge cannot be identified; there: the run records no fold values)."""
    if run.backend != "learned":
        return None
    from scoring.judges.selectors import judges_usable_by

    options = run.backend_options or {}
    names = {v for k, v in options.items() if k in JUDGE_OPTIONS and isinstance(v, str)}
    own = [
        j
        for j in judges_usable_by(run.study_id).filter(name__in=names)
        if j.source_kind == "study" and j.source_study_id == run.study_id
    ]
    out: dict[str, Any] = {
        "judges": [j.name for j in own], "n_training": 0, "n_overlap": 0, "refusal": None, "method": None,
    }  # fmt: skip
    if not own:
        if CROSS_FITTED in (run.model_identity or ""):
            out["refusal"] = (
                f"{_run_label(run)} scored with a judge trained on this study's gold, and that judge is no longer in "
                "the study's registry: nothing says which items trained it, so the labels the estimate would use "
                "may be the judge's own training labels. Estimate with a run whose judge is still registered."
            )
            return out
        return None
    training: set[int] = set()
    for judge in own:
        if f"@{judge.data_hash[:12]}" not in (run.model_identity or ""):
            out["refusal"] = (
                f"the judge {judge.name!r} in the registry is not the one {_run_label(run)} scored with (its data "
                "differ): nothing says which items trained the run's judge"
            )
            return out
        try:
            training |= _training_items(judge)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            out["refusal"] = f"the judge {judge.name!r}'s training items cannot be read ({exc}): no estimate"
            return out
    overlap = training & labelled
    out["n_training"], out["n_overlap"] = len(training), len(overlap)
    names_text = ", ".join(repr(j.name) for j in own)
    if overlap:
        out["overlap"] = (
            f"{_run_label(run)} scores with the judge {names_text}, trained on this study's gold, and {len(overlap)} "
            f"of the {len(labelled)} labelled items the estimate uses were among its {len(training)} training items"
        )
        out["refusal"] = (
            f"{out['overlap']}. Its values of the other items come from the model trained on all of them, which saw "
            "those labels, and in-sample predictions are never used; a cross-prediction-powered interval needs "
            "each other item's value under every fold model, and a paired comparison has no cross-prediction "
            "interval here. Estimate this run alone, or estimate from labels the judge did not train on."
        )
    else:
        out["note"] = (
            f"the judge {names_text} was trained on {len(training)} items of this study's gold, none of them among "
            "the labelled items used: its predictions do not depend on these labels, and the interval is valid as "
            "for any metric"
        )
    return out


def _apply_judge_check(
    result: dict[str, Any], run: ScoreRun, labelled: set[int], cross: CrossInputs | None = None
) -> None:
    """Refuse ``result`` (an estimate or a comparison) in place when the run's judge trained on its labels;
    for an estimate (``cross``), give the cross-prediction-powered one instead where the run allows it."""
    if not result.get("valid") or result.get("exact"):
        return
    check = judge_check(run, labelled)
    if check is None:
        return
    result.setdefault("judges", []).append({"run": run.pk, **check})
    if check.get("overlap") and cross is not None:
        check["refusal"] = cross_ppi_apply(result, run=run, cross=cross, overlap=check["overlap"])
        check["method"] = None if check["refusal"] else ppi_stats.CROSS_PPI
        result["judges"][-1].update(refusal=check["refusal"], method=check["method"])
    if check["refusal"]:
        result["valid"] = False
        result["estimates"] = []
        result["refusal"] = check["refusal"]
    elif check.get("note"):
        result["notes"].append(check["note"])


@dataclass(frozen=True)
class CrossInputs:
    """What a cross-prediction-powered estimate is computed from: the run's value per population item (inverted
    where the estimate inverts), the labels, the pool's design, alpha and whether values are inverted."""

    scores: Mapping[int, float]
    labels: Mapping[int, float]
    design: SamplingDesign | None
    alpha: float
    invert: bool


def cross_fit_records(run: ScoreRun) -> dict[int, Any]:
    """Per item with an ok item-level value, what the run recorded for cross-prediction (the item score's
    ``details.cross_fit``: ``held_out`` for an item that trained the judge, ``folds`` the K fold models'
    values for any other item; None where nothing was recorded, as in runs made before it was)."""
    rows = Score.objects.filter(run=run, unit_key=units.ITEM, state=ScoreState.OK).exclude(value=None)
    return dict(rows.values_list("item_id", "details__cross_fit"))


def cross_ppi_apply(result: dict[str, Any], *, run: ScoreRun, cross: CrossInputs, overlap: str) -> str | None:
    """Replace ``result``'s estimates by the cross-prediction-powered one (Zrnic & Candès, PNAS 2024:
    ``ppi.cross_ppi_mean``) and the classical interval, for a run whose judge trained on some labelled items;
    or return why that cannot be done (the caller refuses the estimate with it).

    Only predictions that never saw an item's label are used, from what the run recorded
    (:func:`cross_fit_records`): a labelled item that trained the judge keeps its held-out value (the fold model
    that never saw it); a labelled item that did not is predicted by the mean of the K fold models (none saw it).
    Each unlabelled item's row of the N × K grid is its value under each fold model, or, for an item that trained
    the judge, its held-out value in every column. The final model, which saw the labels, is not used at all."""
    design = cross.design
    if design is None or design.kind != UNIFORM:
        return (
            f"{overlap}, so the estimate must be cross-prediction-powered, which is computed here for a uniform "
            "sample only (this pool's sample was drawn with unequal probabilities)"
        )
    population = sorted(cross.scores)
    records = cross_fit_records(run)
    missing = [i for i in population if not isinstance(records.get(i), dict)]
    if missing:
        return (
            f"{overlap}. A cross-prediction-powered interval needs each item's value under every fold model of the "
            f"judge, and {len(missing)} of the {len(population)} items of this run carry none (the run was made "
            "before learned runs recorded them): re-run the scoring with this judge (a new score run) and estimate "
            "with the new run. In-sample predictions are never used."
        )
    folds = {i: r["folds"] for i, r in records.items() if i in cross.scores and "held_out" not in r}
    bad = [i for i, f in folds.items() if not isinstance(f, list) or any(v is None for v in f)]
    ks = {len(f) for i, f in folds.items() if i not in bad}
    if bad or len(ks) > 1:
        reasons = {str(records[i].get("reason")) for i in bad if records[i].get("reason")}
        return (
            f"{overlap}, and {len(bad) or 'some'} items lack a value under one of the fold models"
            + (f" ({'; '.join(sorted(reasons))})" if reasons else "")
            + ": no cross-prediction-powered interval can be computed from this run"
        )
    k = ks.pop() if ks else ppi_stats.MIN_FOLDS

    def fold_values(i: int) -> list[float]:
        if i not in folds:  # trained the judge: its held-out value stands in every column
            return [float(cross.scores[i])] * k
        return [1.0 - float(v) if cross.invert else float(v) for v in folds[i]]

    drawn = [i for i in population if i in design.probabilities]
    rest = [i for i in population if i not in design.probabilities]
    y = np.array([cross.labels[i] for i in drawn], dtype=float)
    yhat = np.array([float(np.mean(fold_values(i))) if i in folds else cross.scores[i] for i in drawn], dtype=float)
    grid = np.array([fold_values(i) for i in rest], dtype=float).reshape(len(rest), k)
    try:
        estimates = [
            ppi_stats.cross_ppi_mean(y, yhat, grid, alpha=cross.alpha),
            ppi_stats.classical(y, alpha=cross.alpha),
        ]
    except ppi_stats.PPIError as exc:
        return f"{overlap}: no cross-prediction-powered interval can be computed from these labels: {exc}"
    n_held = sum(1 for i in drawn if i not in folds)
    result["estimates"] = [e.as_dict() for e in estimates]
    result["headline"] = ppi_stats.CROSS_PPI
    result["cross_ppi"] = {
        "folds": k,
        "n_labelled_held_out": n_held,
        "n_labelled_fold_mean": len(drawn) - n_held,
        "n_unlabelled_by_fold": sum(1 for i in rest if i in folds),
        "n_unlabelled_held_out": sum(1 for i in rest if i not in folds),
    }
    result["notes"].append(
        f"{overlap}: the estimate is cross-prediction-powered (cross-PPI, Zrnic & Candès 2024) from the {k} fold "
        f"models' values the run recorded, never from a model that saw an item's label: {n_held} labelled items "
        "that trained the judge use the fold model that held each out, the others the mean of the fold models; "
        "each unlabelled item the mean of its fold values (its held-out value if it trained the judge). PPI and "
        "PPI++ with the run's values are not shown: those values came from the model trained on these labels."
    )
    return None


# --- planning ---------------------------------------------------------------------------------------------


def plan_compute(
    *,
    scores: Mapping[int, float],
    labels: Mapping[int, float],
    design: SamplingDesign | None,
    result: Mapping[str, Any],
    half_width: float,
    alpha: float,
) -> dict[str, Any]:
    """How many clinician labels (in all, and more than now) reach ``half_width``, with the metric (PPI++) and
    without it (classical), from the labels of the pool's uniform sample so far
    (:func:`adjudication.stats.ppi.labels_for_half_width`). ``available`` is False with the ``reason`` where no
    plan can be made: no valid estimate yet, every item labelled, or a design that is not a uniform draw."""
    out: dict[str, Any] = {"half_width": half_width, "alpha": alpha, "available": False, "reason": None}
    if not result.get("valid"):
        out["reason"] = "there is no valid estimate from the labels so far (see why above): nothing to plan from"
    elif result.get("exact"):
        out["reason"] = "every item of the population is labelled: the share is exact, no more labels are needed"
    elif result.get("headline") == ppi_stats.CROSS_PPI:
        out["reason"] = (
            "the estimate is cross-prediction-powered (the run's judge trained on labelled items): planning is "
            "made for PPI++ with a metric that did not learn from the labels"
        )
    elif design is None or design.kind != UNIFORM:
        out["reason"] = (
            "planning takes the labels so far as a uniform random sample, and this pool's sample was drawn with "
            "unequal probabilities: plan from a uniform sample"
        )
    else:
        drawn = [i for i in sorted(scores) if i in design.probabilities]
        y = np.array([labels[i] for i in drawn], dtype=float)
        f = np.array([scores[i] for i in drawn], dtype=float)
        f_u = np.array([scores[i] for i in sorted(scores) if i not in design.probabilities], dtype=float)
        try:
            plan = ppi_stats.labels_for_half_width(y, f, f_u, half_width, alpha=alpha)
        except ppi_stats.PPIError as exc:
            out["reason"] = f"no plan from these labels: {exc}"
        else:
            out.update(plan.as_dict())
            out["available"] = True
    return out


# --- the interval as labels arrive ------------------------------------------------------------------------

TRAJECTORY_STEPS = 6
PLOT_WIDTH, PLOT_HEIGHT = 560, 240
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 56, 16, 12, 36


def label_times(*, pool: Pool, question: Question, item_ids: list[int]) -> dict[int, datetime]:
    """When each item's human label became what it is: its current gold's time, else the last submission of
    the pool's labels on it (the majority is complete then)."""
    times: dict[int, datetime] = dict(
        GoldLabel.objects.filter(pool=pool, question=question, is_current=True, unit_key=units.ITEM)
        .filter(item_id__in=item_ids)
        .exclude(source=GoldSource.UNRESOLVED)
        .values_list("item_id", "created_at")
    )
    rows = (
        Label.objects.filter(assignment__pool=pool, question=question, unit_key=units.ITEM)
        .filter(assignment__item_id__in=item_ids, assignment__submitted_at__isnull=False)
        .values("assignment__item_id")
        .annotate(last=Max("assignment__submitted_at"))
    )
    for row in rows:
        times.setdefault(row["assignment__item_id"], row["last"])
    return times


def trajectory_compute(
    *,
    scores: Mapping[int, float],
    labels: Mapping[int, float],
    design: SamplingDesign | None,
    result: Mapping[str, Any],
    order: list[int],
    alpha: float,
) -> dict[str, Any]:
    """The PPI++ estimate and interval and the classical interval recomputed on the first n labelled items in
    ``order`` (the order their labels arrived), for a handful of n up to all of them: at each n the other
    items of the population are the unlabelled ones. Given for a uniform sample with a valid estimate (a
    prefix of a probability sample has no known inclusion probabilities); else ``available`` is False with
    the ``reason``."""
    out: dict[str, Any] = {"available": False, "reason": None, "steps": []}
    if not result.get("valid") or result.get("exact"):
        out["reason"] = (
            "every item is labelled: the share is exact" if result.get("exact") else "there is no valid estimate"
        )
        return out
    if result.get("headline") == ppi_stats.CROSS_PPI:
        out["reason"] = (
            "not shown for a cross-prediction-powered estimate: the run's values of the items labelled later "
            "come from a judge that trained on the labels"
        )
        return out
    if design is None or design.kind != UNIFORM:
        out["reason"] = "shown for a uniform sample only (a prefix of a probability sample has no known probabilities)"
        return out
    drawn = set(design.probabilities)
    ordered = [i for i in order if i in drawn and i in scores]
    y = np.array([labels[i] for i in ordered], dtype=float)
    f = np.array([scores[i] for i in ordered], dtype=float)
    f_u = np.array([scores[i] for i in sorted(scores) if i not in drawn], dtype=float)
    n = len(ordered)
    first = min(n, 10)
    ns = sorted({int(v) for v in np.rint(np.linspace(first, n, TRAJECTORY_STEPS))} - {0, 1})
    for k in ns:
        rest = np.concatenate([f_u, f[k:]])
        try:
            ppipp = ppi_stats.ppipp(y[:k], f[:k], rest, alpha=alpha)
            classical = ppi_stats.classical(y[:k], alpha=alpha)
        except ppi_stats.PPIError:
            continue
        out["steps"].append(
            {
                "n": k,
                "ppipp": {"point": ppipp.point, "lower": ppipp.lower, "upper": ppipp.upper, "lam": ppipp.lam},
                "classical": {"point": classical.point, "lower": classical.lower, "upper": classical.upper},
            }
        )
    out["available"] = bool(out["steps"])
    if not out["available"]:
        out["reason"] = "too few labels for an interval"
    return out


def trajectory_plot(steps: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Coordinates for the inline SVG of the intervals (numbers only; the template draws them): per step, the
    x of n and the y of each interval's ends and point, PPI++ left of the step and classical right of it."""
    if not steps:
        return None
    n_max = max(s["n"] for s in steps)
    lows = [s[m]["lower"] for s in steps for m in ("ppipp", "classical")]
    highs = [s[m]["upper"] for s in steps for m in ("ppipp", "classical")]
    lo, hi = max(min(lows), -0.05), min(max(highs), 1.05)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.05, hi + 0.05
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad
    inner_w = PLOT_WIDTH - PLOT_LEFT - PLOT_RIGHT
    inner_h = PLOT_HEIGHT - PLOT_TOP - PLOT_BOTTOM

    def x(n: float) -> float:
        return round(PLOT_LEFT + inner_w * n / n_max, 1)

    def y(v: float) -> float:
        v = min(max(v, lo), hi)
        return round(PLOT_TOP + inner_h * (hi - v) / (hi - lo), 1)

    points = []
    for s in steps:
        cx = x(s["n"])
        points.append(
            {
                "n": s["n"],
                "x": cx,
                "ppipp": {"x": round(cx - 4, 1), **{k: y(s["ppipp"][k]) for k in ("point", "lower", "upper")}},
                "classical": {"x": round(cx + 4, 1), **{k: y(s["classical"][k]) for k in ("point", "lower", "upper")}},
            }
        )
    yticks = [{"y": y(v), "label": f"{v:.2f}"} for v in np.linspace(lo + pad, hi - pad, 5)]
    return {
        "width": PLOT_WIDTH,
        "height": PLOT_HEIGHT,
        "left": PLOT_LEFT,
        "right": PLOT_WIDTH - PLOT_RIGHT,
        "top": PLOT_TOP,
        "bottom": PLOT_HEIGHT - PLOT_BOTTOM,
        "label_y": PLOT_HEIGHT - 6,
        "points": points,
        "yticks": yticks,
    }


# --- comparing two runs (paired) --------------------------------------------------------------------------

PAIRING = "by the item's question text (the same patient question answered by each run's system)"


def _prompt_key(text: str) -> str:
    return " ".join(text.split()).casefold()


def _by_prompt(scores: Mapping[int, float], prompts: Mapping[int, str]) -> tuple[dict[str, int], int]:
    """Each question text asked exactly once among the run's items, to its item; and how many items are
    left out (an empty question, or one asked by several of the run's items: no one pair)."""
    groups: dict[str, list[int]] = {}
    for item_id in scores:
        groups.setdefault(_prompt_key(prompts.get(item_id, "")), []).append(item_id)
    single = {k: v[0] for k, v in groups.items() if k and len(v) == 1}
    return single, len(scores) - len(single)


def comparison_compute(
    *,
    scores_a: Mapping[int, float],
    scores_b: Mapping[int, float],
    prompts: Mapping[int, str],
    labels: Mapping[int, float],
    design: SamplingDesign | None,
    alpha: float,
) -> dict[str, Any]:
    """The paired prediction-powered difference share(a) − share(b) between the systems two score runs scored.

    An item of run a and an item of run b are a pair when they answer the same question (``prompts``: item id
    to question text, asked once in each run). The labels (0/1) come from the same pool and question as the
    estimate. A labelled pair has both items labelled; validity is the estimate's: every pair labelled (the
    exact difference), or the pool's sampling design drew the items, and then only pairs whose two items were
    both drawn are used — under a uniform draw those are a simple random sample of the pairs (PPI++ on the
    differences, :func:`adjudication.stats.ppi.paired_difference`), under a probability draw each pair was
    drawn with probability π_a·π_b (the inverse-probability-weighted estimate on the differences).
    """
    out: dict[str, Any] = {
        "pairing": PAIRING,
        "n_a": len(scores_a),
        "n_b": len(scores_b),
        "n_pairs": 0,
        "n_labelled_pairs": 0,
        "exact": False,
        "valid": False,
        "refusal": None,
        "estimates": [],
        "headline": ppi_stats.PAIRED,
        "notes": [],
    }
    shared = set(scores_a) & set(scores_b)
    if shared:
        return _refuse(
            out,
            f"the two runs score {len(shared)} of the same items: the human label of an item is one, so the "
            "difference of the two runs' human shares over the same answers is 0 by definition. A comparison is "
            "between two systems' (or two versions') answers to the same questions, each scored by its own run; "
            "to compare two metrics on the same answers, use the model comparison report.",
        )
    a, left_a = _by_prompt(scores_a, prompts)
    b, left_b = _by_prompt(scores_b, prompts)
    keys = sorted(a.keys() & b.keys(), key=lambda k: a[k])
    pairs = [(a[k], b[k]) for k in keys]
    out["n_pairs"] = len(pairs)
    out["n_unpaired_a"] = len(scores_a) - len(pairs)
    out["n_unpaired_b"] = len(scores_b) - len(pairs)
    if left_a or left_b:
        out["notes"].append(
            f"{left_a} items of the first run and {left_b} of the second have no question text or share it with "
            "another item of the same run: they cannot be paired and are left out"
        )
    if len(pairs) < ppi_stats.MIN_LABELS:
        return _refuse(
            out,
            f"{len(pairs)} question(s) are answered by an item of each run: a paired comparison needs the two "
            "runs' items to answer the same questions (the same question text)",
        )
    fa = np.array([scores_a[i] for i, _ in pairs], dtype=float)
    fb = np.array([scores_b[j] for _, j in pairs], dtype=float)
    out["metric_difference"] = float(fa.mean() - fb.mean())
    if design is None:
        labelled = [p for p in pairs if p[0] in labels and p[1] in labels]
        out["n_labelled_pairs"] = len(labelled)
        if len(labelled) < len(pairs):
            return _refuse(
                out,
                f"{len(labelled)} of the {len(pairs)} pairs carry a human label on both items and the pool records "
                "no sampling design: nothing says chance chose the labelled pairs. Label both items of every "
                "pair, or record a sampling design for the pool.",
            )
        return _paired_exact(out, pairs, labels, alpha)
    probabilities = design.probabilities
    if design.frame is not None:
        outside = sum(1 for p in pairs for i in p if i not in design.frame)
        if outside:
            return _refuse(
                out,
                f"{outside} paired items were not among the items the pool's sample was drawn from (they could "
                "not be drawn): draw the sample from a run that scored both systems' answers",
            )
    drawn = [p for p in pairs if p[0] in probabilities and p[1] in probabilities]
    missing = [p for p in drawn if p[0] not in labels or p[1] not in labels]
    out["n_drawn_pairs"] = len(drawn)
    out["n_labelled_pairs"] = len(drawn) - len(missing)
    if missing:
        return _refuse(
            out,
            f"{len(missing)} of the {len(drawn)} pairs whose two items the design drew lack a human label on one "
            "of them: finish labelling them first.",
        )
    if len(drawn) == len(pairs):
        return _paired_exact(out, pairs, labels, alpha)
    if len(drawn) < ppi_stats.MIN_LABELS:
        return _refuse(
            out,
            f"the pool's sample drew both items of {len(drawn)} of the {len(pairs)} pairs: a paired interval needs "
            f"at least {ppi_stats.MIN_LABELS} (draw a larger sample, from a run that scored both systems' answers)",
        )
    drawn_set = set(drawn)
    rest = [p for p in pairs if p not in drawn_set]
    ya = np.array([labels[i] for i, _ in drawn], dtype=float)
    yb = np.array([labels[j] for _, j in drawn], dtype=float)
    da = np.array([scores_a[i] for i, _ in drawn], dtype=float)
    db = np.array([scores_b[j] for _, j in drawn], dtype=float)
    ua = np.array([scores_a[i] for i, _ in rest], dtype=float)
    ub = np.array([scores_b[j] for _, j in rest], dtype=float)
    try:
        if design.kind == UNIFORM:
            estimates = [
                ppi_stats.paired_difference(ya, yb, da, db, ua, ub, alpha=alpha),
                ppi_stats.classical(ya - yb, alpha=alpha),
            ]
        else:
            pi = np.array([probabilities[i] * probabilities[j] for i, j in drawn], dtype=float)
            estimates = [
                ppi_stats.active_mean(ya - yb, da - db, pi, ua - ub, alpha=alpha),
                ppi_stats.active_mean(ya - yb, da - db, pi, ua - ub, alpha=alpha, lam=0.0),
            ]
            out["headline"] = ppi_stats.ACTIVE
    except ppi_stats.PPIError as exc:
        return _refuse(out, f"no interval for the difference can be computed from these labels: {exc}")
    out["estimates"] = [e.as_dict() for e in estimates]
    out["valid"] = True
    return out


def _paired_exact(
    out: dict[str, Any], pairs: list[tuple[int, int]], labels: Mapping[int, float], alpha: float
) -> dict[str, Any]:
    d = np.array([labels[i] - labels[j] for i, j in pairs], dtype=float)
    out["n_labelled_pairs"] = len(pairs)
    out["exact"] = True
    out["exact_value"] = float(d.mean())
    out["headline"] = ppi_stats.CLASSICAL
    out["notes"].append(
        f"both items of every one of the {len(pairs)} pairs are labelled: the difference of the shares, "
        f"{out['exact_value']:.4f}, is exact over these pairs, and the metric adds nothing"
    )
    try:
        out["estimates"] = [ppi_stats.classical(d, alpha=alpha).as_dict()]
    except ppi_stats.PPIError as exc:
        out["notes"].append(f"no classical interval: {exc}")
    out["valid"] = True
    return out


def _comparison_report(
    *,
    study: Study,
    params: EstimateParams,
    labels: Mapping[int, float],
    design: SamplingDesign | None,
    scores_a: Mapping[int, float],
    run_a: ScoreRun,
) -> dict[str, Any]:
    run_b = get_run_for_report(study, params.compare_run_id)  # type: ignore[arg-type]
    raw_b, not_ok_b = population_scores(run_b)
    scores_b = {i: 1.0 - v for i, v in raw_b.items()} if params.invert else raw_b
    prompts = dict(Item.objects.filter(pk__in=set(scores_a) | set(scores_b)).values_list("pk", "question"))
    result = comparison_compute(
        scores_a=scores_a, scores_b=scores_b, prompts=prompts, labels=labels, design=design,
        alpha=ALPHAS[params.alpha],
    )  # fmt: skip
    used = {i for i in labels if design is None or i in design.probabilities}
    _apply_judge_check(result, run_a, {i for i in used if i in scores_a})
    _apply_judge_check(result, run_b, {i for i in used if i in scores_b})
    return {
        "run": {"id": run_b.pk, "label": _run_label(run_b), "metric": run_b.metric, "status": run_b.status},
        "n_scores_not_ok": not_ok_b,
        **result,
    }


def estimate_report(*, study: Study, params: EstimateParams) -> dict[str, Any]:
    """The estimate for a study (see the module's docstring), with what it was computed from."""
    pool = get_pool_for_report(study, params.pool_id)
    question = _estimable_question(pool, params.question)
    run = get_run_for_report(study, params.run_id)
    if params.positive not in question.option_values:
        raise ValidationFailed(f"positive must be one of the question's options: {', '.join(question.option_values)}")
    raw, n_not_ok = population_scores(run)
    if not raw and not n_not_ok:
        raise ValidationFailed(
            f"{_run_label(run)} has no item-level values (its metric scores other units): an estimate needs one "
            "value per item"
        )
    scores = {i: 1.0 - v for i, v in raw.items()} if params.invert else raw
    human = human_labels(pool=pool, question=question)
    labels = {i: _binary(question, p, params.positive) for i, p in human.positions.items()}
    design = sampling_design_for(pool=pool)
    result = estimate_compute(scores=scores, labels=labels, design=design, alpha=ALPHAS[params.alpha])
    used = [i for i in human.positions if i in scores and (design is None or i in design.probabilities)]
    sources = {GOLD: 0, MAJORITY: 0}
    for i in used:
        sources[human.source[i]] += 1
    if run.status != RunStatus.DONE:
        result["notes"].append(f"the score run is {run.status}, not done: the population is the items scored ok so far")
    cross = CrossInputs(scores=scores, labels=labels, design=design, alpha=ALPHAS[params.alpha], invert=params.invert)
    _apply_judge_check(result, run, set(used), cross)
    drawn_ids = sorted(design.probabilities) if design is not None else []
    times = label_times(pool=pool, question=question, item_ids=drawn_ids)
    order = sorted(drawn_ids, key=lambda i: (i not in times, times[i].timestamp() if i in times else 0.0, i))
    result["trajectory"] = trajectory_compute(
        scores=scores, labels=labels, design=design, result=result, order=order, alpha=ALPHAS[params.alpha]
    )
    result["plan"] = plan_compute(
        scores=scores, labels=labels, design=design, result=result, half_width=float(params.half_width),
        alpha=ALPHAS[params.alpha],
    )  # fmt: skip
    if params.compare_run_id is not None:
        result["comparison"] = _comparison_report(
            study=study, params=params, labels=labels, design=design, scores_a=scores, run_a=run
        )
    return {
        "study": study.slug,
        "pool": {"id": pool.pk, "name": pool.name},
        "question": {"key": question.key, "kind": question.kind, "options": question.option_values},
        "run": {"id": run.pk, "label": _run_label(run), "metric": run.metric, "status": run.status},
        "positive": params.positive,
        "positive_rule": "at or after this option in the declared order"
        if question.kind == QuestionKind.ORDINAL
        else "equal to this option",
        "invert": params.invert,
        "alpha": ALPHAS[params.alpha],
        "confidence": 1.0 - ALPHAS[params.alpha],
        "n_scores_not_ok": n_not_ok,
        "label_sources": {
            GOLD: sources[GOLD],
            MAJORITY: sources[MAJORITY],
            "no_majority": sum(1 for i in human.no_majority if i in scores),
            "gold_off_scale": human.gold_off_scale,
        },
        **result,
    }


# --- the form's choices ----------------------------------------------------------------------------------


def estimate_choices(*, study: Study) -> dict[str, Any]:
    """What the form offers: the study's pools with the questions an estimate can be made for (categorical,
    about whole items), and its score runs that have item-level values."""
    pools = []
    for pool in Pool.objects.filter(study=study).prefetch_related("questions").order_by("name"):
        questions = [
            {"key": q.key, "kind": q.kind, "options": q.option_values}
            for q in pool.questions.all()
            if q.kind in CATEGORICAL and q.scope == units.ITEM
        ]
        if questions:
            pools.append({"id": pool.pk, "name": pool.name, "questions": questions})
    with_items = Score.objects.filter(run__study=study, unit_key=units.ITEM).values("run_id").distinct()
    runs = [
        {"id": run.pk, "label": _run_label(run), "status": run.status}
        for run in ScoreRun.objects.filter(study=study, pk__in=with_items).order_by("-created_at", "-id")
    ]
    return {"pools": pools, "runs": runs, "alphas": list(ALPHAS)}


def pool_sample_info(*, pool: Pool) -> dict[str, Any] | None:
    """The pool's recorded sample as plain data, or None."""
    sample = PoolSample.objects.filter(pool=pool).select_related("run").first()
    if sample is None:
        return None
    return {
        "design": sample.design,
        "run": {"id": sample.run_id, "label": _run_label(sample.run)},
        "n": sample.n,
        "seed": sample.seed,
        "floor": sample.floor,
        "population": sample.population,
        "n_drawn": sample.n_drawn,
        "drawn_at": sample.created_at.isoformat(),
    }


def pool_samples(*, study: Study) -> list[dict[str, Any]]:
    """Each pool of the study with its recorded sample (None) and whether it may still draw one (nothing handed
    out yet)."""
    return [
        {
            "id": pool.pk,
            "name": pool.name,
            "sample": pool_sample_info(pool=pool),
            "can_draw": not pool.assignments.exists(),
        }
        for pool in Pool.objects.filter(study=study).order_by("name")
    ]
