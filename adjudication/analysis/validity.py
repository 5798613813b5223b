"""The validity report: one metric source (a score run or a human measure) against one human question of
one pool, with the pool's own agreement beside it as the ceiling (statistics in
:mod:`adjudication.stats.validity`)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import Exists, OuterRef

from adjudication.analysis.access import CATEGORICAL, get_pool_for_report, get_question_for_report
from adjudication.analysis.agreement import agreement_report, quality_note, quality_params_parse
from adjudication.analysis.joined_rows import JoinedRows, PairedRows
from adjudication.analysis.loading import (
    MetricSource,
    MetricValues,
    Ratings,
    UnitList,
    binary_target,
    common_positions,
    compatible_questions,
    default_positive,
    gold_item_span,
    gold_target,
    metric_source_get,
    metric_sources,
    metric_values_in,
)
from adjudication.analysis.params import id_param
from adjudication.analysis.quality import flagged_annotators
from adjudication.analysis.rating_tables import (
    STREAM_ITEMS,
    RangeRatings,
    RatingTables,
    one_snapshot,
    rating_tables_load,
)
from adjudication.models import GoldLabel, GoldSource
from adjudication.stats import agreement as ag
from adjudication.stats import targets
from adjudication.stats import validity as va
from adjudication.stats.validity_stream import MAX_TARGET_LEVELS, validity_summary_rows
from adjudication.stats.validity_table import ScoreTable
from annotation.models import AssignmentStatus, Label, Pool, PoolMembership, Question, QuestionKind, Study
from concord.errors import NotFound, ValidationFailed


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
    if question.kind == QuestionKind.ORDINAL and len(question.option_values) > MAX_TARGET_LEVELS:
        raise ValidationFailed(
            f"metric vs human takes an ordinal question of at most {MAX_TARGET_LEVELS} options; this one has "
            f"{len(question.option_values)}"
        )
    if question.scope != source.scope:
        raise ValidationFailed(f"the metric scores {source.scope} units; the question is about {question.scope} units")
    if not source.estimates_question(question.key):
        raise ValidationFailed(
            f"{source.label} does not estimate {question.key!r}; it estimates "
            f"{', '.join(source.estimates or ()) or 'no human question'}"
        )
    positive = params.positive or default_positive(question)
    flagged = flagged_annotators(pool=pool) if params.exclude_flagged else []
    exclude = frozenset(u for u, _ in flagged)
    target = params.target
    if target not in ("gold", "majority") and not target.startswith("rater:"):
        raise ValidationFailed("target must be gold, majority or rater:<pseudonym>")

    # A bootstrap covers the humans' κ and α (2 × n_boot) and the AUC (n_boot): one progress bar, in that order.
    def ceiling_progress(done: int, total: int) -> None:
        if progress is not None:
            progress(done, total // 2 * 3)

    def auc_progress(done: int, total: int) -> None:
        if progress is not None:
            progress(2 * total + done, 3 * total)

    other = _compared_source(study=study, params=params, source=source)
    # The joined rows (and a comparison's paired rows) live in temporary tables of this connection, dropped once the
    # statistics are computed.
    with JoinedRows() as rows, PairedRows() if other else nullcontext() as paired:
        join = _Join(question, positive, source, rows, other=other, paired=paired)
        with one_snapshot():
            ratings, excluded = _read_joined(params=params, pool=pool, question=question, exclude=exclude, join=join)
            n_metric, n_not_ok = join.metric_sizes()
        comparison = join.comparison() if other else None
        # The humans' agreement from the count tables' patterns, after the read's transaction.
        ceiling = agreement_report(
            pool=pool, question=question, ratings=ratings, n_boot=n_boot, seed=seed, progress=ceiling_progress,
            include_controls=params.include_controls,
        )
        n_read = ratings.n_units if isinstance(ratings, RatingTables) else len(ratings.units)
        binary_fleiss = _binary_fleiss(ratings, question, positive, n_boot=n_boot, seed=seed) if n_read else None
        quality = quality_note(
            ratings, include_controls=params.include_controls, exclude_flagged=params.exclude_flagged, flagged=flagged
        )
        del ratings
        sizes = {"n_units_metric": n_metric, "n_metric_not_ok": n_not_ok, "n_units_human": join.n_human,
                 "n_units_both": join.n_both}
        summary = validity_summary_rows(
            rows, ordinal=question.kind == QuestionKind.ORDINAL, n_excluded=join.n_excluded, n_boot=n_boot,
            seed=seed, progress=auc_progress,
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


def _compared_source(*, study: Study, params: ValidityParams, source: MetricSource) -> MetricSource | None:
    """The metric a paired comparison compares this one with (none asked for: None)."""
    if not params.compare:
        return None
    other = metric_source_get(study=study, key=params.compare)
    if other.scope != source.scope:
        raise ValidationFailed(f"{other.label} scores {other.scope} units, not {source.scope} units")
    return other


def _read_joined(
    *, params: ValidityParams, pool: Pool, question: Question, exclude: frozenset[int], join: _Join
) -> tuple[RatingTables, dict[str, int]]:
    """Read the pool's ratings and the human target joined with the metric's values (and a compared metric's) into
    ``join`` a range of items at a time: the pool's count tables (nothing kept per unit), and the human target of
    the range's units joined with the metrics' values on the same items, added to the joined rows; no array of the
    pool's units is held. Returns the ratings (for the humans' agreement) and what the target left out."""
    target = params.target
    ratings = rating_tables_load(
        pool=pool, question=question, include_controls=params.include_controls, exclude_raters=exclude,
        per_unit=False, on_range=_range_target(pool, question, target, join),
    )
    if target.startswith("rater:") and target.split(":", 1)[1] not in ratings.rater_names:
        raise NotFound("no such annotator with labels on this question in this pool")
    if target == "gold":
        _join_gold(pool, question, params.include_controls, join)
    return ratings, join.human_excluded(target)


class _Values:
    """A metric source's values a range of items at a time; a source that cannot be read so is read whole once."""

    def __init__(self, source: MetricSource) -> None:
        self.source = source
        self._whole: MetricValues | None = None

    def _read_whole(self) -> MetricValues:
        if self._whole is None:
            self._whole = self.source.load()
        return self._whole

    def items(self, low: int, high: int) -> MetricValues:
        if self.source.load_items is not None:
            return self.source.load_items(low, high)
        return metric_values_in(self._read_whole(), low, high)

    def sizes(self) -> tuple[int, int]:
        """The source's usable units and those it has no usable value for (all of them, not only the ranges')."""
        if self.source.sizes is not None:
            return self.source.sizes()
        whole = self._read_whole()
        return len(whole), whole.n_not_ok


class _Join:
    """The units a metric source and a human target both have, added a range at a time (:meth:`add_items`) to the
    joined rows, distinct (score, label, target) triples with how many units have each (:class:`JoinedRows`): what
    the report's statistics are computed from. With a compared metric, the units the human target and both metrics
    have go to the paired rows (:class:`PairedRows`), distinct (score a, score b, label) triples: what the paired
    DeLong test is computed from (:meth:`comparison`)."""

    def __init__(
        self, question: Question, positive: str, source: MetricSource, rows: JoinedRows, *,
        other: MetricSource | None = None, paired: PairedRows | None = None,
    ) -> None:
        self.question, self.positive, self.source = question, positive, source
        self.ordinal = question.kind == QuestionKind.ORDINAL
        self.rows, self.paired = rows, paired
        self.values = _Values(source)
        self.other = _Values(other) if other is not None else None
        self.n_human = self.n_both = self.n_excluded = 0
        self.n_ties = self.n_off_scale = 0
        # The paired comparison's units (human target and both metrics), those without a label, and those with a
        # label but without metric a's score, without b's, without either.
        self.n_paired = self.n_paired_no_label = 0
        self.n_no_a = self.n_no_b = self.n_no_pair = 0

    def metric_sizes(self) -> tuple[int, int]:
        return self.values.sizes()

    def add_items(self, human_units: UnitList, human_values: np.ndarray, low: int, high: int) -> None:
        """The human target's units (sorted, each once) and positions on the items with ids in [low, high)."""
        other = self.other.items(low, high) if self.other is not None else None
        self.add(human_units, human_values, self.values.items(low, high), other)

    def add(
        self, human_units: UnitList, human_values: np.ndarray, metric: MetricValues, other: MetricValues | None = None
    ) -> None:
        """The human target's units (sorted, each once) and positions, and the metrics' values, of the same items."""
        self.n_human += len(human_units)
        at_human, at_metric = common_positions(human_units, metric.units)
        self.n_both += int(at_human.size)
        positions = human_values[at_human]
        scores = metric.values[at_metric]
        labels = binary_target(self.question, positions, self.positive)
        # As validity_summary's cleaning: a unit without a finite score or label is left out and counted.
        ok = np.isfinite(scores) & np.isfinite(labels)
        self.n_excluded += int((~ok).sum())
        self.rows.add(ScoreTable.of(scores[ok], labels[ok], positions[ok] if self.ordinal else None))
        if other is not None:
            self._add_paired(human_units, human_values, metric, other)

    def _add_paired(
        self, human_units: UnitList, human_values: np.ndarray, metric: MetricValues, other: MetricValues
    ) -> None:
        assert self.paired is not None
        at_human, at_a, at_b = common_positions(human_units, metric.units, other.units)
        self.n_paired += int(at_human.size)
        labels = binary_target(self.question, human_values[at_human], self.positive)
        labelled = np.isfinite(labels)
        self.n_paired_no_label += int((~labelled).sum())
        a, b = metric.values[at_a][labelled], other.values[at_b][labelled]
        a_ok, b_ok = np.isfinite(a), np.isfinite(b)
        self.n_no_a += int((~a_ok).sum())
        self.n_no_b += int((~b_ok).sum())
        self.n_no_pair += int((~(a_ok & b_ok)).sum())
        self.paired.add(a, b, labels[labelled] == 1.0)

    def comparison(self) -> dict[str, Any]:
        """The paired DeLong test of this metric against the compared one on the units both scored, with each one's
        AUC: validity's roc_auc and delong_paired on those units, from the paired rows' sums."""
        assert self.paired is not None and self.other is not None
        no_label = self.n_paired_no_label
        auc_a = va.delong_from_sums(*self.paired.sums("a_ok"), n_excluded=no_label + self.n_no_a)[0]
        auc_b = va.delong_from_sums(*self.paired.sums("b_ok"), n_excluded=no_label + self.n_no_b)[1]
        paired = va.delong_from_sums(*self.paired.sums("a_ok AND b_ok"), n_excluded=no_label + self.n_no_pair)[2]
        return comparison_entry(self.other.source, self.n_paired, auc_a, auc_b, paired)

    def human_excluded(self, target: str) -> dict[str, int]:
        """What :func:`human_target_arrays` says was left out of the target, summed over the ranges."""
        if target == "gold":
            return {"gold_off_scale": self.n_off_scale}
        if target == "majority":
            return {"majority_ties": self.n_ties}
        return {}


def _range_target(
    pool: Pool, question: Question, target: str, join: _Join
) -> Callable[[RangeRatings], None] | None:
    """What the read does with each range's ratings: the majority's or one annotator's units joined with the
    metric's values on the range's items (``target`` gold: nothing, gold is read by :func:`_join_gold`)."""
    if target == "majority":

        def majority(found: RangeRatings) -> None:
            kept, winners, ties = targets.majority_from_counts(found.counts)
            join.n_ties += ties
            units = UnitList(found.units.items[kept], found.units.key_codes[kept], found.units.keys)
            join.add_items(units, winners.astype(np.float64), found.low, found.high)

        return majority
    if target.startswith("rater:"):
        name = target.split(":", 1)[1]
        user = PoolMembership.objects.filter(pool=pool, pseudonym=name).values_list("user_id", flat=True).first()
        if user is None:
            raise NotFound("no such annotator with labels on this question in this pool")

        def rater(found: RangeRatings) -> None:
            at = int(np.searchsorted(found.raters, user))
            if at >= found.raters.size or found.raters[at] != user:
                return
            mine = found.ratings.rater == at
            rated = found.ratings.unit[mine]
            units = UnitList(found.units.items[rated], found.units.key_codes[rated], found.units.keys)
            join.add_items(units, np.asarray(found.ratings.value[mine], dtype=np.float64), found.low, found.high)

        return rater
    return None


def _join_gold(pool: Pool, question: Question, include_controls: bool, join: _Join) -> None:
    """The pool's gold joined with the metric's values a range of item ids at a time."""
    span = gold_item_span(pool=pool, question=question)
    if span is None:
        return
    for low in range(span[0], span[1] + 1, STREAM_ITEMS):
        high = low + STREAM_ITEMS
        units, values, n_off = gold_target(
            pool=pool, question=question, include_controls=include_controls, items=(low, high)
        )
        join.n_off_scale += n_off
        join.add_items(units, values, low, high)


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


def comparison_entry(
    other: MetricSource, n_units: int, auc_a: ag.Estimate, auc_b: ag.Estimate, paired: ag.Estimate
) -> dict[str, Any]:
    """The report's comparison: metric b, the units the human target and both metrics have, both AUCs and the paired
    DeLong test."""
    return {
        "source_b": {"key": other.key, "label": other.label},
        "n_units": n_units,
        "auc_a": auc_a.as_dict(),
        "auc_b": auc_b.as_dict(),
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
