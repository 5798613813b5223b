"""Models as raters: a score run's categorical output entering the agreement reports as one more rater.

A model rater is (score run, field, threshold, mapping):

* **field** — what the run said about a unit: ``value`` (the score itself) or ``details.<path>``
  (a verdict the metric keeps in its details: ``details.behaviour`` of ``ra``,
  ``details.information_bearing`` / ``details.grounded`` of ``cf`` sentences, ``details.relevant``
  of ``cr`` chunks, ``details.ratings.clarity`` of ``rubric``).
* **category** of a unit — booleans read ``true`` / ``false``, whole numbers their digits (``1.0`` →
  ``1``), text itself. A number that is not whole enters only with a **threshold**, which turns it
  into ``at_or_above`` (value ≥ threshold) or ``below``; the threshold is stated in every report.
* **mapping** — model category → one option of the human question, always explicit in the report.
  Given as ``1=yes,0=no``; when omitted, categories equal to an option map to it, and a two-category
  rater (1/0, true/false, at_or_above/below) on a two-option question maps its positive category to
  the first option (the presets put ``yes`` first) — the report says the mapping came by default.

Units are the question's scope only (a ``cf`` run has item and sentence units). ``value`` reads only
``ok`` scores; ``details.*`` also reads ``undetermined`` ones (``cf`` keeps the information-bearing
verdict of sentences whose grounding it does not assess), never ``failed`` ones. Every unit left out
is counted with its reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

import numpy as np
from django.db.models import Count

from adjudication.analysis.access import CATEGORICAL, get_pool_for_report, get_question_for_report
from adjudication.analysis.loading import compatible_questions, human_target, level_for, ratings_load, unit_scope
from adjudication.analysis.params import id_param
from adjudication.analysis.validity import default_target
from adjudication.models import GoldLabel
from adjudication.stats import agreement as ag
from adjudication.stats import rater_stats
from annotation.models import Pool, Question, QuestionKind, Study
from concord.errors import NotFound, ValidationFailed
from concord.params import MAX_ID_DIGITS
from scoring.models import Score, ScoreRun, ScoreState

AT_OR_ABOVE, BELOW = "at_or_above", "below"
# The categorical outputs each metric keeps, offered on the index page (any details path works).
SUGGESTED_FIELDS: dict[str, list[tuple[str, str]]] = {
    "ra": [
        ("value", "correct behaviour for the scope class (1/0)"),
        ("details.behaviour", "answer / refuse / escalate"),
    ],
    "cf": [
        ("value", "sentence grounded (1/0; information-bearing sentences only)"),
        ("details.information_bearing", "sentence information-bearing (true/false)"),
        ("details.grounded", "sentence grounded (true/false)"),
    ],
    "cr": [("details.relevant", "chunk relevant (true/false)"), ("value", "graded relevance: give a threshold")],
    "icat": [("value", "aspect covered (1/0)")],
    "rubric": [
        (f"details.ratings.{c}", f"{c} 1–5 (mean over samples: a threshold when samples > 1)")
        for c in ("faithfulness", "completeness", "factual_consistency", "clarity")
    ]
    + [("details.samples.0.clarity", "one sample's rating (samples.<i>.<criterion>)")],
}
POSITIVE_FIRST = ({"1", "0"}, "1"), ({"true", "false"}, "true"), ({AT_OR_ABOVE, BELOW}, AT_OR_ABOVE)


def get_run_for_study(study: Study, run_id: int) -> Any:
    run = ScoreRun.objects.filter(study=study, pk=run_id).first()
    if run is None:
        raise NotFound("no such score run in this study")
    return run


@dataclass
class RaterParams:
    run_id: int
    pool_id: int
    question: str
    field: str = "value"
    threshold: float | None = None
    mapping: dict[str, str] = dc_field(default_factory=dict)
    target: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run_id,
            "pool": self.pool_id,
            "question": self.question,
            "field": self.field,
            "threshold": self.threshold,
            "mapping": dict(sorted(self.mapping.items())),
            "target": self.target,
        }


def parse_mapping(text: str | dict[str, str] | None) -> dict[str, str]:
    """``"1=yes,0=no"`` (or a dict) → {"1": "yes", "0": "no"}."""
    if not text:
        return {}
    if isinstance(text, dict):
        return {str(k): str(v) for k, v in text.items()}
    out: dict[str, str] = {}
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise ValidationFailed(f"mapping entries are category=option; {part!r} has no '='")
        k, v = (s.strip() for s in part.split("=", 1))
        if not k or not v:
            raise ValidationFailed(f"mapping entry {part!r} is missing a category or an option")
        if k in out:
            raise ValidationFailed(f"the model category {k!r} is mapped twice")
        out[k] = v
    return out


def parse_threshold(raw: Any) -> float | None:
    if raw in (None, ""):
        return None
    try:
        t = float(raw)
    except (TypeError, ValueError):
        raise ValidationFailed("threshold must be a number") from None
    if not math.isfinite(t):
        raise ValidationFailed("threshold must be a finite number")
    return t


def rater_params_parse(*, study: Study, query: Any) -> RaterParams:
    choose = "choose a score run and a pool (whole-number ids)"
    run_id, pool_id = id_param(query.get("run"), choose), id_param(query.get("pool"), choose)
    key = (query.get("question") or "").strip()
    if not key:
        raise ValidationFailed("choose a question")
    fld = (query.get("field") or "value").strip()
    if fld != "value" and not (fld.startswith("details.") and len(fld) > len("details.")):
        raise ValidationFailed("field must be value or details.<path>")
    get_run_for_study(study, run_id)
    pool = get_pool_for_report(study, pool_id)
    question = get_question_for_report(pool, key)
    if question.kind not in CATEGORICAL:
        raise ValidationFailed("a model rater needs a categorical human question (binary, nominal or ordinal)")
    mapping = parse_mapping(query.get("mapping"))
    bad = sorted(v for v in mapping.values() if v not in question.option_values)
    if bad:
        raise ValidationFailed(
            f"mapping targets must be options of {key}: {', '.join(question.option_values)}; not {', '.join(bad)}"
        )
    target = (query.get("target") or "").strip() or default_target(pool=pool, question=question)
    if target not in ("gold", "majority"):
        raise ValidationFailed("target must be gold or majority")
    return RaterParams(
        run_id=run_id,
        pool_id=pool_id,
        question=key,
        field=fld,
        threshold=parse_threshold(query.get("threshold")),
        mapping=mapping,
        target=target,
    )


# --- model categories ------------------------------------------------------------------------------


def _list_index(part: str) -> int | None:
    """A path part as a list index: ASCII digits, few enough that int() reads them (``"²"`` is a digit to
    ``isdigit()`` but not to ``int()``; more than 4,300 digits are too many for it)."""
    if part.isascii() and part.isdigit() and len(part) <= MAX_ID_DIGITS:
        return int(part)
    return None


def _walk(details: dict[str, Any], path: str) -> Any:
    node: Any = details
    for part in path.split("."):
        index = _list_index(part)
        if isinstance(node, list) and index is not None and index < len(node):
            node = node[index]  # e.g. details.samples.0.clarity: one judge sample of several
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node


def category_of(raw: Any, threshold: float | None) -> tuple[str | None, str | None]:
    """The model category of one raw output, or None and why it has none."""
    if raw is None:
        return None, "no value"
    if isinstance(raw, bool):
        return ("true" if raw else "false"), None
    if isinstance(raw, int | float):
        x = float(raw)
        if not math.isfinite(x):
            return None, "not a finite number"
        if threshold is not None:
            return (AT_OR_ABOVE if x >= threshold else BELOW), None
        if x.is_integer():
            return str(int(x)), None
        return None, "not a whole number (give a threshold)"
    if isinstance(raw, str):
        return (raw if threshold is None else None), (None if threshold is None else "text cannot be thresholded")
    return None, "not a single value"


@dataclass
class ModelLabels:
    categories: dict[tuple[int, str], str]
    excluded: dict[str, int]
    n_units_in_scope: int


def model_labels_load(*, run: Any, scope: str, fld: str, threshold: float | None) -> ModelLabels:
    rows = (
        Score.objects.filter(run=run).exclude(state=ScoreState.FAILED)
        if fld != "value"
        else Score.objects.filter(run=run)
    )
    out: dict[tuple[int, str], str] = {}
    excluded: dict[str, int] = {}
    n_scope = 0
    path = fld.split(".", 1)[1] if fld != "value" else ""
    for item_id, key, value, state, details in rows.values_list("item_id", "unit_key", "value", "state", "details"):
        if unit_scope(key) != scope:
            continue
        n_scope += 1
        if fld == "value":
            if state != ScoreState.OK:
                excluded[f"score {state}"] = excluded.get(f"score {state}", 0) + 1
                continue
            raw: Any = value
        else:
            raw = _walk(details or {}, path)
        cat, why = category_of(raw, threshold)
        if cat is None:
            excluded[why or "no value"] = excluded.get(why or "no value", 0) + 1
            continue
        out[(item_id, key)] = cat
    return ModelLabels(out, excluded, n_scope)


def resolve_mapping(categories: set[str], question: Question, given: dict[str, str]) -> tuple[dict[str, str], str]:
    if given:
        return given, "given"
    options = question.option_values
    mapping = {c: c for c in categories if c in options}
    if len(options) == 2 and not mapping:
        for pair, positive in POSITIVE_FIRST:
            if categories and categories <= pair:
                other = next(iter(pair - {positive}))
                return {positive: options[0], other: options[1]}, "default (positive category → first option)"
    return mapping, "default (categories equal to options)"


# --- the report ------------------------------------------------------------------------------------


def _est(d: ag.Estimate) -> dict[str, Any]:
    return d.as_dict()


def rater_report(
    *, study: Study, params: RaterParams, n_boot: int = 0, seed: int = 0, progress: ag.Progress | None = None
) -> dict[str, Any]:
    """The model beside the humans on one question: κ with each human, gold and majority; α with and
    without the model; per-class P/R/F1 against the target."""
    run = get_run_for_study(study, params.run_id)
    pool: Pool = get_pool_for_report(study, params.pool_id)
    question = get_question_for_report(pool, params.question)
    if question.kind not in CATEGORICAL:
        raise ValidationFailed("a model rater needs a categorical human question")
    labels = model_labels_load(run=run, scope=question.scope, fld=params.field, threshold=params.threshold)
    mapping, mapping_source = resolve_mapping(set(labels.categories.values()), question, params.mapping)
    options = question.option_values
    position = {v: i for i, v in enumerate(options)}
    model: dict[tuple[int, str], float] = {}
    unmapped: dict[str, int] = {}
    for unit, cat in labels.categories.items():
        opt = mapping.get(cat)
        if opt is None or opt not in position:
            unmapped[cat] = unmapped.get(cat, 0) + 1
            continue
        model[unit] = float(position[opt])
    ratings = ratings_load(pool=pool, question=question)
    k = len(options)
    weights: ag.Weights = "linear" if question.kind == QuestionKind.ORDINAL else "none"
    head = {
        "study": study.slug,
        "run": {
            "id": run.pk,
            "metric": run.metric,
            "metric_version": run.metric_version,
            "backend": run.backend,
            "model_identity": run.model_identity,
        },
        "pool": {"id": pool.pk, "name": pool.name},
        "question": {"key": question.key, "kind": question.kind, "scope": question.scope, "options": options},
        "field": params.field,
        "threshold": params.threshold,
        "threshold_rule": f"{params.field} ≥ {params.threshold} is at_or_above"
        if params.threshold is not None
        else None,
        "mapping": dict(sorted(mapping.items())),
        "mapping_source": mapping_source,
        "model_categories": sorted(set(labels.categories.values())),
        "n_model_units_in_scope": labels.n_units_in_scope,
        "n_model_units_rated": len(model),
        "model_excluded": labels.excluded,
        "model_unmapped": unmapped,
        "target": params.target,
        "weights": weights,
        "n_human_raters": len(ratings.rater_names),
    }
    unit_index = {u: i for i, u in enumerate(ratings.units)}
    model_col = np.full(len(ratings.units), np.nan)
    for unit, pos in model.items():
        i = unit_index.get(unit)
        if i is not None:
            model_col[i] = pos
    head["n_model_units_without_human_labels"] = sum(1 for u in model if u not in unit_index)
    steps = 3 if n_boot > 0 else 0

    def sub(step: int) -> ag.Progress | None:
        if progress is None or not steps:
            return None
        return lambda done, total: progress(step * total + done, steps * total)

    level = level_for(question)

    def pair_alpha(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
        return _est(ag.krippendorff_alpha(np.column_stack([a, b]), level, k))

    vs_humans = []
    for r, name in enumerate(ratings.rater_names):
        vs_humans.append(
            {
                "rater": name,
                **_est(ag.cohen_kappa(model_col, ratings.codes[:, r], k, weights)),
                "alpha": pair_alpha(model_col, ratings.codes[:, r]),
            }
        )
    human_pairs = (
        [
            {
                "rater_a": ratings.rater_names[i],
                "rater_b": ratings.rater_names[j],
                **_est(e),
                "alpha": pair_alpha(ratings.codes[:, i], ratings.codes[:, j]),
            }
            for (i, j), e in ag.pairwise_matrix(ratings.codes, k, weights).items()
        ]
        if ratings.units
        else []
    )
    defined = [p["value"] for p in human_pairs if p["value"] is not None]
    model_defined = [p["value"] for p in vs_humans if p["value"] is not None]
    references: dict[str, Any] = {}
    for name in ("gold", "majority"):
        try:
            values, excluded = human_target(pool=pool, question=question, target=name, ratings=ratings)
        except ValidationFailed as exc:
            references[name] = {"available": False, "reason": exc.message}
            continue
        # Gold may exist on units without submitted labels (imported gold): they still compare.
        extra_units = [u for u in values if u not in unit_index and u in model]
        ref = np.array([values.get(u, np.nan) for u in ratings.units] + [values[u] for u in extra_units], dtype=float)
        col = np.concatenate([model_col, np.array([model[u] for u in extra_units], dtype=float)])
        humans_vs_ref = [
            {
                "rater": n,
                **_est(
                    ag.cohen_kappa(
                        np.concatenate([ratings.codes[:, r], np.full(len(extra_units), np.nan)]), ref, k, weights
                    )
                ),
            }
            for r, n in enumerate(ratings.rater_names)
        ]
        references[name] = {
            "available": bool(values),
            "n_units": len(values),
            "excluded": excluded,
            "gold_sources": _gold_sources(pool, question) if name == "gold" else None,
            "model_kappa": _est(ag.cohen_kappa(col, ref, k, weights)),
            "humans_kappa": humans_vs_ref,
            "note": (
                "majority of the pool including the human being compared: a human's κ against it is "
                "flattered by their own vote; the model has no vote"
            )
            if name == "majority"
            else (
                "current gold labels (unresolved excluded); gold decided from these humans' own labels "
                "(unanimous or majority) flatters their κ against it — only adjudicated or independent gold "
                "compares them fairly with the model"
            ),
        }
        if name == params.target:
            head["per_class"] = rater_stats.per_class_prf(col, ref, options, n_boot=n_boot, seed=seed)
            humans_prf = []
            for r, n in enumerate(ratings.rater_names):
                own = np.concatenate([ratings.codes[:, r], np.full(len(extra_units), np.nan)])
                humans_prf.append({"rater": n, "macro_f1": rater_stats.per_class_prf(own, ref, options)["macro_f1"]})
            head["humans_macro_f1"] = humans_prf
    if "per_class" not in head:
        head["per_class"] = None
    both = np.column_stack([ratings.codes, model_col]) if ratings.units else np.empty((0, 0))
    alpha_humans = (
        ag.krippendorff_alpha(ratings.codes, level, k, n_boot=n_boot, seed=seed, progress=sub(1))
        if ratings.units
        else ag.Estimate.undefined("no human labels")
    )
    alpha_with = (
        ag.krippendorff_alpha(both, level, k, n_boot=n_boot, seed=seed, progress=sub(2))
        if ratings.units
        else ag.Estimate.undefined("no human labels")
    )
    if progress is not None and steps:
        progress(steps * max(n_boot, 1), steps * max(n_boot, 1))
    return {
        **head,
        "model_vs_humans": vs_humans,
        "mean_model_vs_human_kappa": float(np.mean(model_defined)) if model_defined else None,
        "human_pairs": human_pairs,
        "mean_human_pair_kappa": float(np.mean(defined)) if defined else None,
        "references": references,
        "alpha_humans": _est(alpha_humans),
        "alpha_with_model": _est(alpha_with),
        "level": level,
        "bootstrap": {"n": n_boot, "seed": seed} if n_boot > 0 else None,
        "note": "κ weights: "
        + ("linear (ordinal question)" if weights == "linear" else "none")
        + "; κ intervals are asymptotic (Fleiss, Cohen & Everitt 1969); α and F1 intervals need the bootstrap",
    }


def _gold_sources(pool: Pool, question: Question) -> dict[str, int]:
    rows = (
        GoldLabel.objects.filter(pool=pool, question=question, is_current=True).values("source").annotate(n=Count("pk"))
    )
    return {r["source"]: r["n"] for r in rows.order_by("source")}


def rater_choices(*, study: Study) -> list[dict[str, Any]]:
    """Score runs and the questions of the same unit scope they could rate, for the index page."""
    out = []
    for run in ScoreRun.objects.filter(study=study).order_by("-created_at", "-id"):
        scopes = {
            unit_scope(k) for k in Score.objects.filter(run=run).values_list("unit_key", flat=True).distinct()[:50]
        }
        pairs = [(pool, q) for scope in sorted(scopes) for pool, q in compatible_questions(study=study, scope=scope)]
        if pairs:
            out.append(
                {"run": run, "pairs": pairs, "fields": SUGGESTED_FIELDS.get(run.metric, [("value", "the score")])}
            )
    return out
