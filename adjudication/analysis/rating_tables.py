"""A pool's ratings on one categorical or multi-label question, summarised as they are read, a range of items at a
time: the report jobs' way to read a pool of a million items without holding its ratings.

:func:`adjudication.analysis.loading.ratings_load` reads every rating into one entry each (three arrays of a
number per rating, and the text they were parsed from). :func:`rating_tables_load` reads the same labels a range of
item ids at a time (:data:`STREAM_ITEMS` ids: one statement, its labels parsed at once) and adds each range's
ratings into the :class:`adjudication.stats.agreement.CategoricalTables` every categorical statistic is computed
from. What it keeps grows by one row of k counts and an item id a unit — or by nothing a unit with ``per_unit=False``
(the agreement report's way: its statistics need only the counts' patterns and the raters' tables); the ratings of
one range at most are held at a time.

The result is the same as ``ratings_load``'s to the last digit — the same units in the same order, the same raters,
the same counts and tables — so the reports computed from it are too (tests/adjudication/analysis/
test_rating_tables.py compares them, on both databases, with ranges of a few items). Two things make that so:

* Units are ordered by item id, then unit key: ranges of item ids in ascending order, and each range's units in
  that order, are the whole's order.
* Raters are numbered by user id before any label is read, over every annotator with an assignment in the pool
  (one index probe per annotator on PostgreSQL); those with no rating on the question are dropped at the end.

All the statements run in one transaction; on PostgreSQL at REPEATABLE READ when the report opens it, so every
range is read from the same snapshot (a label submitted during the read is in none of them, or in all). Inside a
caller's transaction they run at its isolation: a rater absent from the numbering then means the pool changed
during the read, and the read stops with an error rather than leaving the rating out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd
from django.db import connection, transaction
from django.db.models import Max, Min

from adjudication.analysis.access import CATEGORICAL
from adjudication.analysis.loading import (
    OPTION_SCALE,
    UnitList,
    _label_rows,
    _LabelRows,
    _rows_without,
    control_item_ids,
    level_for,
    option_marks,
    scale_positions,
)
from adjudication.stats import agreement as ag
from annotation.models import Assignment, AssignmentStatus, Pool, PoolMembership, Question, QuestionKind

# Item ids read by one statement. At three labels an item, twenty thousand items are about 60,000 labels, a text of
# about 2 MB: what a read holds at once, whatever the size of the pool.
STREAM_ITEMS = 20_000


@dataclass
class RatingTables:
    """What :func:`rating_tables_load` read: the units (as :class:`~adjudication.analysis.loading.Ratings` has
    them), the raters with a rating, the number of ratings on the scale per unit, and the tables — one
    :class:`~adjudication.stats.agreement.CategoricalTables` for a single-choice question (``tables``), one per
    option for a multi-label question (``option_tables``, each option rated selected / not selected)."""

    question: Question
    units: UnitList | None  # None when read with per_unit=False
    rater_ids: list[int]
    rater_names: list[str]
    scale: list[str]
    level: ag.Level
    # A multi-label question's number of ratings (on the scale) per unit; a single-choice question's are its
    # counts' row sums (:attr:`n_ratings`), not kept twice.
    option_n_ratings: np.ndarray | None = None
    tables: ag.CategoricalTables | None = None
    option_tables: dict[str, ag.CategoricalTables] | None = None
    n_off_scale_ratings: int = 0
    n_control_ratings_excluded: int = 0
    n_rater_ratings_excluded: int = 0
    # The units read (with a rating or not), those with a rating on the scale and those with exactly one.
    n_units: int = 0
    n_rated_units: int = 0
    n_single_units: int = 0

    @property
    def n_ratings(self) -> np.ndarray:
        """Each unit's number of ratings on the scale."""
        if self.option_n_ratings is not None:
            return self.option_n_ratings
        return self.counts.sum(axis=1)

    @property
    def counts(self) -> np.ndarray:
        """The units × categories table of a single-choice question's ratings."""
        if self.tables is None:
            raise ValueError("category counts need a single-choice categorical question")
        if self.tables.counts is None:
            raise ValueError("these ratings were read without each unit's counts (per_unit=False)")
        return self.tables.counts


@dataclass(frozen=True)
class RangeRatings:
    """One range's single-choice ratings, handed to ``rating_tables_load``'s ``on_range`` as they are read: the item
    ids [``low``, ``high``), the range's units (sorted by item id, then unit key as text, as the tables' units are),
    its ratings as entries (``ratings.unit`` indexes ``units``; ``ratings.rater`` the pool's numbering of annotators,
    ``raters``, by user id) and its units × categories table (``counts``, as the tables added it)."""

    low: int
    high: int
    units: UnitList
    ratings: ag.SparseRatings
    raters: np.ndarray
    counts: np.ndarray


def rating_tables_load(
    *,
    pool: Pool,
    question: Question,
    include_controls: bool = False,
    exclude_raters: frozenset[int] = frozenset(),
    step: int = STREAM_ITEMS,
    per_unit: bool = True,
    on_range: Callable[[RangeRatings], None] | None = None,
) -> RatingTables:
    """The pool's submitted ratings on a categorical or multi-label ``question`` as :class:`RatingTables`, read
    ``step`` item ids at a time, with :func:`~adjudication.analysis.loading.ratings_load`'s options (items of known
    answer left out unless ``include_controls``; the annotators ``exclude_raters`` left out). With ``per_unit``
    false nothing is kept per unit (``units`` and the tables' ``counts`` are None, as is a multi-label question's
    ``option_n_ratings``): what the read holds does not grow with the pool. ``on_range`` (a single-choice question's)
    is handed each range's units and ratings as they are read, inside the read's transaction (the validity report
    joins them with a metric's values a range at a time)."""
    multilabel = question.kind == QuestionKind.MULTILABEL
    if on_range is not None and multilabel:
        raise ValueError("a multi-label question's ranges are not handed out")
    if question.kind not in CATEGORICAL and not multilabel:
        raise ValueError(f"rating tables need a categorical or multi-label question, not {question.kind}")
    scale = list(question.option_values)
    with one_snapshot():
        raters = _pool_annotators(pool.pk)
        reader = _Reader(question, scale, raters, multilabel, per_unit)
        reader.on_range = on_range
        controls = set() if include_controls else control_item_ids(pool)
        bounds = Assignment.objects.filter(pool=pool, status=AssignmentStatus.SUBMITTED).aggregate(
            low=Min("item_id"), high=Max("item_id")
        )
        if bounds["low"] is not None:
            for low in range(bounds["low"], bounds["high"] + 1, step):
                rows, n_controls, n_raters = _rows_without(
                    _label_rows(pool.pk, question.pk, (low, low + step)), items=controls, raters=set(exclude_raters)
                )
                reader.n_control_ratings_excluded += n_controls
                reader.n_rater_ratings_excluded += n_raters
                reader.add(rows, (low, low + step))
    return reader.finish(pool)


@contextmanager
def one_snapshot() -> Iterator[None]:
    """One transaction for every statement of a read; REPEATABLE READ on PostgreSQL when it is the outermost."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


# Every annotator with an assignment in the pool, by user id: on PostgreSQL one probe of the (pool, annotator, …)
# index per annotator (a loose index scan), not a scan of the pool's assignments.
_POOL_ANNOTATORS = """
WITH RECURSIVE found(annotator_id) AS (
    (SELECT annotator_id FROM annotation_assignment WHERE pool_id = %s ORDER BY annotator_id LIMIT 1)
    UNION ALL
    SELECT (SELECT a.annotator_id FROM annotation_assignment a
            WHERE a.pool_id = %s AND a.annotator_id > found.annotator_id ORDER BY a.annotator_id LIMIT 1)
    FROM found WHERE found.annotator_id IS NOT NULL
)
SELECT annotator_id FROM found WHERE annotator_id IS NOT NULL
"""


def _pool_annotators(pool_id: int) -> np.ndarray:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_POOL_ANNOTATORS, [pool_id, pool_id])
            found = [row[0] for row in cursor.fetchall()]
    else:
        found = list(Assignment.objects.filter(pool_id=pool_id).values_list("annotator_id", flat=True).distinct())
    return np.unique(np.array(found, dtype=np.int64))


class _Reader:
    """Adds the ranges' rows up, as :func:`adjudication.analysis.loading._ratings_from_rows` codes them."""

    def __init__(
        self, question: Question, scale: list[str], raters: np.ndarray, multilabel: bool, per_unit: bool = True
    ) -> None:
        self.question, self.scale, self.raters, self.multilabel = question, scale, raters, multilabel
        self.per_unit = per_unit
        n = int(raters.size)
        if multilabel:
            self.builders = {
                option: ag.CategoricalTablesBuilder(n, len(OPTION_SCALE), keep_counts=per_unit) for option in scale
            }
        else:
            self.builders = {"": ag.CategoricalTablesBuilder(n, len(scale), keep_counts=per_unit)}
        self.seen = np.zeros(n, dtype=bool)
        self.items: list[np.ndarray] = []
        self.key_codes: list[np.ndarray] = []
        self.keys: list[list[str]] = []
        self.n_ratings: list[np.ndarray] = []
        self.on_range: Callable[[RangeRatings], None] | None = None
        self.n_units = 0
        self.n_rated_units = 0
        self.n_single_units = 0
        self.n_off = 0
        self.n_control_ratings_excluded = 0
        self.n_rater_ratings_excluded = 0

    def add(self, rows: _LabelRows, bounds: tuple[int, int] = (0, 0)) -> None:
        if rows.items.size == 0:
            return
        n_keys = max(len(rows.keys), 1)
        unit_codes, unit_uniques = pd.factorize(rows.items * n_keys + rows.key_codes, sort=True)
        rater_codes = np.searchsorted(self.raters, rows.raters)
        if (rater_codes >= self.raters.size).any() or (self.raters[np.minimum(rater_codes, self.raters.size - 1)]
                                                       != rows.raters).any():
            raise RuntimeError("the pool's assignments changed while its labels were read: run the report again")
        self.seen[rater_codes] = True
        n_units, n_raters = len(unit_uniques), int(self.raters.size)
        order = np.argsort(unit_codes * n_raters + rater_codes, kind="stable")
        unit_codes, rater_codes, value_codes = unit_codes[order], rater_codes[order], rows.value_codes[order]

        def entries(coded: np.ndarray) -> ag.SparseRatings:
            return ag.SparseRatings.from_entries(unit_codes, rater_codes, coded, n_units=n_units, n_raters=n_raters)

        if self.multilabel:
            rated, marks = option_marks(rows.values, self.scale)
            for option, builder in self.builders.items():
                builder.add(entries(marks[option][value_codes]))
            on_scale = rated[value_codes]
            per_unit = np.bincount(unit_codes[on_scale], minlength=n_units)
            if self.per_unit:
                self.n_ratings.append(per_unit)
            self.n_off += int((~on_scale).sum())
        else:
            chunk = entries(scale_positions(rows.values, self.scale)[value_codes])
            counts = self.builders[""].add(chunk)
            per_unit = np.bincount(chunk.unit, minlength=n_units)
            self.n_off += int(value_codes.size - chunk.unit.size)
            if self.on_range is not None:
                units = UnitList(unit_uniques // n_keys, (unit_uniques % n_keys).astype(np.int32), rows.keys)
                self.on_range(RangeRatings(bounds[0], bounds[1], units, chunk, self.raters, counts))
        self.n_rated_units += int((per_unit > 0).sum())
        self.n_single_units += int((per_unit == 1).sum())
        self.n_units += n_units
        if not self.per_unit:
            return
        self.items.append(unit_uniques // n_keys)
        self.key_codes.append((unit_uniques % n_keys).astype(np.int32))
        self.keys.append(rows.keys)

    def finish(self, pool: Pool) -> RatingTables:
        keys = sorted({key for chunk_keys in self.keys for key in chunk_keys})
        where = {key: i for i, key in enumerate(keys)}
        recode = [np.array([where[k] for k in chunk_keys], dtype=np.int32) for chunk_keys in self.keys]

        def recoded(i: int, codes: np.ndarray) -> np.ndarray:
            return recode[i][codes] if recode[i].size else codes

        # Each range's arrays are let go as they are joined (the units' arrays are held once, not twice).
        units = (
            UnitList(
                ag.drain_concatenate(self.items, np.int64),
                ag.drain_concatenate(self.key_codes, np.int32, convert=recoded),
                keys,
            )
            if self.per_unit
            else None
        )
        kept = self.raters[self.seen]
        pseudonyms = dict(
            PoolMembership.objects.filter(pool=pool, user_id__in=kept.tolist()).values_list("user_id", "pseudonym")
        )
        rater_ids = kept.tolist()
        names = [pseudonyms.get(r, f"annotator #{r}") for r in rater_ids]
        tables = {option: builder.finish(self.seen) for option, builder in self.builders.items()}
        return RatingTables(
            question=self.question,
            units=units,
            rater_ids=rater_ids,
            rater_names=names,
            scale=self.scale,
            level=level_for(self.question),
            option_n_ratings=_joined(self.n_ratings) if self.multilabel and self.per_unit else None,
            tables=None if self.multilabel else tables[""],
            option_tables=tables if self.multilabel else None,
            n_off_scale_ratings=self.n_off,
            n_control_ratings_excluded=self.n_control_ratings_excluded,
            n_rater_ratings_excluded=self.n_rater_ratings_excluded,
            n_units=self.n_units,
            n_rated_units=self.n_rated_units,
            n_single_units=self.n_single_units,
        )


def _joined(parts: list[np.ndarray], dtype: type = np.int64) -> np.ndarray:
    return np.concatenate(parts) if parts else np.empty(0, dtype=dtype)
