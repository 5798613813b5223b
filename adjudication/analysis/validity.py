"""The validity report: one metric source (a score run or a human measure) against one human question of
one pool, with the pool's own agreement beside it as the ceiling (statistics in
:mod:`adjudication.stats.validity`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import Exists, OuterRef

from adjudication.analysis.access import CATEGORICAL, get_pool_for_report, get_question_for_report
from adjudication.analysis.agreement import agreement_report, quality_note, quality_params_parse
from adjudication.analysis.loading import (
    MetricSource,
    MetricValues,
    Ratings,
    UnitList,
    binary_target,
    common_positions,
    common_units,
    compatible_questions,
    default_positive,
    human_target_arrays,
    metric_source_get,
    metric_sources,
)
from adjudication.analysis.params import id_param
from adjudication.analysis.quality import flagged_annotators
from adjudication.analysis.rating_tables import RatingTables, rating_tables_load
from adjudication.models import GoldLabel, GoldSource
from adjudication.stats import agreement as ag
from adjudication.stats import validity as va
from annotation.models import AssignmentStatus, Label, Pool, Question, QuestionKind, Study
from concord.errors import ValidationFailed


def validity_pairs(*, study: Study) -> list[dict[str, Any]]:
    """Every (metric source, pool, question) that can be compared, without computing anything."""
    out = []
    for source in metric_sources(study):
        for pool, question in compatible_questions(study=study, scope=source.scope):
            if source.pool_id == pool.pk:
                # A measure from a pool's own labels against the same pool is circular.
                continue
            if not source.estimates_question(question.key):
                # A metric is compared only with the human questions it declares it estimates
                # (CF with perceived faithfulness, not with "harmful").
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
    include_controls: bool = False
    exclude_flagged: bool = False

    def as_dict(self) -> dict[str, Any]:
        out = {
            "source": self.source,
            "pool": self.pool_id,
            "question": self.question,
            "target": self.target,
            "positive": self.positive,
        }
        if self.compare:
            out["compare"] = self.compare
        # Only options that differ from the defaults, so existing bootstraps keep their keys.
        if self.include_controls:
            out["include_controls"] = True
        if self.exclude_flagged:
            out["exclude_flagged"] = True
        return out


def validity_report(
    *, study: Study, params: ValidityParams, n_boot: int = 0, seed: int = 0, progress: ag.Progress | None = None
) -> dict[str, Any]:
    """One metric source against one human question of one pool, with the pool's agreement beside it."""
    source = metric_source_get(study=study, key=params.source)
    pool = get_pool_for_report(study, params.pool_id)
    question = get_question_for_report(pool, params.question)
    if question.kind not in CATEGORICAL:
        raise ValidationFailed("metric vs human needs a categorical human question")
    if question.scope != source.scope:
        raise ValidationFailed(f"the metric scores {source.scope} units; the question is about {question.scope} units")
    if not source.estimates_question(question.key):
        raise ValidationFailed(
            f"{source.label} does not estimate {question.key!r}; it estimates "
            f"{', '.join(source.estimates or ()) or 'no human question'}"
        )
    positive = params.positive or default_positive(question)
    flagged = flagged_annotators(pool=pool) if params.exclude_flagged else []
    # Read a range of items at a time into count tables (the majority, Fleiss' κ and the agreement beside the
    # AUC come from them), keeping the one annotator's own ratings when the target is theirs.
    ratings = rating_tables_load(
        pool=pool, question=question, include_controls=params.include_controls,
        exclude_raters=frozenset(u for u, _ in flagged),
        collect_rater=params.target.split(":", 1)[1] if params.target.startswith("rater:") else None,
    )
    human_units, human_values, excluded = human_target_arrays(
        pool=pool, question=question, target=params.target, ratings=ratings, include_controls=params.include_controls
    )

    # A bootstrap covers the humans' κ and α (2 × n_boot) and the AUC (n_boot): one progress bar, in that order.
    def ceiling_progress(done: int, total: int) -> None:
        if progress is not None:
            progress(done, total // 2 * 3)

    def auc_progress(done: int, total: int) -> None:
        if progress is not None:
            progress(2 * total + done, 3 * total)

    # What each step needs and no more (a million units: tens of MiB an array). The humans' agreement needs the
    # count tables alone, and runs first: they are let go before the metric's values are read. The metric's
    # statistics then need only the scores and targets of the units both have.
    ceiling = agreement_report(
        pool=pool, question=question, ratings=ratings, n_boot=n_boot, seed=seed, progress=ceiling_progress,
        include_controls=params.include_controls,
    )
    binary_fleiss = _binary_fleiss(ratings, question, positive, n_boot=n_boot, seed=seed) if ratings.units else None
    quality = quality_note(
        ratings, include_controls=params.include_controls, exclude_flagged=params.exclude_flagged, flagged=flagged
    )
    del ratings
    metric = source.load()
    comparison = (
        _paired_comparison(
            study=study, params=params, source=source, human=(human_units, human_values), question=question,
            positive=positive, metric=metric,
        )
        if params.compare
        else None
    )
    # The units both have, by item id, then unit key (as sorting the (item id, unit key) pairs orders them): only
    # where they are in each, as arrays (a million units are no million tuples).
    at_human, at_metric = common_positions(human_units, metric.units)
    sizes = {"n_units_metric": len(metric), "n_metric_not_ok": metric.n_not_ok, "n_units_human": len(human_units),
             "n_units_both": int(at_human.size)}
    del human_units
    positions = human_values[at_human]
    del human_values, at_human
    scores = metric.values[at_metric]
    del metric, at_metric
    labels = binary_target(question, positions, positive)
    ordinal = positions if question.kind == QuestionKind.ORDINAL else None
    del positions
    summary = va.validity_summary(
        scores, labels, ordinal_target=ordinal, n_boot=n_boot, seed=seed, progress=auc_progress
    )
    return {
        "study": study.slug,
        "source": {"key": source.key, "label": source.label, "scope": source.scope, "origin": source.origin},
        "pool": {"id": pool.pk, "name": pool.name},
        "question": {
            "key": question.key,
            "kind": question.kind,
            "scope": question.scope,
            "options": question.option_values,
        },
        "target": params.target,
        "positive": positive,
        "positive_rule": "at or after this option in the declared order"
        if question.kind == QuestionKind.ORDINAL
        else "equal to this option",
        **sizes,
        "human_excluded": excluded,
        "quality": quality,
        **summary,
        "comparison": comparison,
        "human_ceiling": {
            "fleiss_kappa": ceiling.get("fleiss_kappa"),
            "krippendorff_alpha": ceiling.get("krippendorff_alpha"),
            "mean_pairwise_cohen_kappa": ceiling.get("mean_pairwise_cohen_kappa"),
            "binary_fleiss_kappa": binary_fleiss,
            "n_raters": ceiling.get("n_raters"),
            "note": "the humans' own agreement on this question: a metric cannot be expected to agree with "
            "a human better than humans agree with each other",
        },
    }


def _binary_fleiss(
    ratings: Ratings | RatingTables, question: Question, positive: str, *, n_boot: int, seed: int
) -> dict[str, Any]:
    """Fleiss' κ of the ratings mapped to the binary target (1 = the positive class), from each unit's two
    counts: the same estimate and bootstrap draws as ``ag.fleiss_kappa`` of the mapped units × raters matrix
    (the same patterns, in the same order), without building it (ratings.codes).

    The two counts are sums of the columns of the units × categories table (ratings.counts): the positive class's
    by :func:`binary_target`'s rule (binary and nominal: the positive option; ordinal: it and every later one),
    and the other categories'. Ratings off the scale are in no column, as mapping each entry left them in no
    class."""
    scale = ratings.scale
    if scale is None:
        raise ValidationFailed("a binary target needs a categorical question")
    at = binary_target(question, np.arange(len(scale), dtype=float), positive).astype(bool)
    # From the count table's patterns (a handful, however many units): each pattern's two sums, and the patterns
    # that become the same pair merged.
    if isinstance(ratings, RatingTables) and ratings.tables is not None:
        patterns = ratings.tables.patterns
    else:
        patterns = ag.CountPatterns.of(ratings.counts)
    rows = np.stack([patterns.rows[:, ~at].sum(axis=1), patterns.rows[:, at].sum(axis=1)], axis=1)
    binary = ag.CountPatterns.merged(rows, patterns.weights)
    return ag.fleiss_kappa_from_patterns(binary, n_boot=n_boot, seed=seed).as_dict()


def _paired_comparison(
    *,
    study: Study,
    params: ValidityParams,
    source: MetricSource,
    human: tuple[UnitList, np.ndarray],
    question: Question,
    positive: str,
    metric: MetricValues,
) -> dict[str, Any]:
    """The paired DeLong test of this metric against another one on the units both scored."""
    other = metric_source_get(study=study, key=params.compare or "")
    if other.scope != source.scope:
        raise ValidationFailed(f"{other.label} scores {other.scope} units, not {source.scope} units")
    other_values = other.load()
    human_units, human_values = human
    units, (at_human, at_a, at_b) = common_units(human_units, metric.units, other_values.units)
    labels = binary_target(question, human_values[at_human], positive)
    a = metric.values[at_a]
    b = other_values.values[at_b]
    paired = va.delong_paired(a, b, labels)
    return {
        "source_b": {"key": other.key, "label": other.label},
        "n_units": len(units),
        "auc_a": va.roc_auc(a, labels).as_dict(),
        "auc_b": va.roc_auc(b, labels).as_dict(),
        "delong_paired": {
            "diff": paired.extra.get("diff"),
            "z": paired.extra.get("z"),
            "p_value": paired.extra.get("p_value"),
            **paired.as_dict(),
        },
    }


def comparison_choices(*, study: Study, source_key: str) -> list[MetricSource]:
    """Other metric sources on the same kind of unit, for the paired DeLong test."""
    sources = metric_sources(study)
    scope = next((s.scope for s in sources if s.key == source_key), None)
    return [s for s in sources if s.scope == scope and s.key != source_key]


def default_target(*, pool: Pool, question: Question) -> str:
    """Gold when every labelled unit has gold, else the majority.

    Gold that covers only part of the units is usually the unanimous part (consensus makes gold
    without adjudication only where everyone agreed): scoring a metric on it alone would keep the
    easy units and flatter the metric, so it is used only when chosen explicitly.
    """
    gold = GoldLabel.objects.filter(pool=pool, question=question, is_current=True).exclude(
        source=GoldSource.UNRESOLVED
    )
    if not gold.exists():
        return "majority"
    # One labelled unit without gold decides, found by one probe of the current gold's unique index a label until
    # then; counting the distinct labelled units instead took minutes at a million items (every label grouped).
    uncovered = Label.objects.filter(
        assignment__pool=pool, question=question, assignment__status=AssignmentStatus.SUBMITTED
    ).exclude(Exists(gold.filter(item_id=OuterRef("assignment__item_id"), unit_key=OuterRef("unit_key"))))
    return "majority" if uncovered.exists() else "gold"


def validity_params_parse(*, study: Study, query: Any) -> ValidityParams:
    """Validity parameters from a query, with the defaults resolved (gold when the pool has gold for
    the question, else the majority; the question's first option as the positive class of a binary or
    nominal question; an ordinal question needs its cut-off given)."""
    source = (query.get("source") or "").strip()
    key = (query.get("question") or "").strip()
    if not source or not key or not query.get("pool"):
        raise ValidationFailed("choose a metric source, a pool and a question")
    pool = get_pool_for_report(study, id_param(query.get("pool"), "pool must be a pool id"))
    question = get_question_for_report(pool, key)
    if question.kind not in CATEGORICAL:
        raise ValidationFailed("metric vs human needs a categorical human question")
    target = (query.get("target") or "").strip() or default_target(pool=pool, question=question)
    positive = (query.get("positive") or "").strip() or default_positive(question)
    if positive not in question.option_values:
        raise ValidationFailed(f"positive must be one of the question's options: {', '.join(question.option_values)}")
    compare = (query.get("compare") or "").strip() or None
    if compare == source:
        raise ValidationFailed("compare the metric with a different one")
    return ValidityParams(
        source=source, pool_id=pool.pk, question=key, target=target, positive=positive, compare=compare,
        **quality_params_parse(query),
    )
