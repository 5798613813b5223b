"""What the reports read: the labels of a pool as a units × raters matrix, the metric sources (score runs,
human measures) as values per unit, and the human targets a metric is compared with. Everything comes
back as plain arrays and dictionaries for the report computations (:mod:`adjudication.analysis.agreement`,
:mod:`adjudication.analysis.validity`, ...) and the pure statistics of :mod:`adjudication.stats`; the rules
that turn coded ratings into targets (majority vote, binary target, value coding) are
:mod:`adjudication.stats.targets`, so this module only loads.

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
  ``entailment``). An ordinal question has no default: the researcher sets the cut-off explicitly
  (:func:`default_positive` refuses), since any choice of one (the middle option, say) decides the AUC.
  For ordinal questions "positive" means the chosen option *or any later one* in the declared
  order (choose ``slight`` on none / slight / severe for "at least slight"). Correlations use the ordinal
  position (ordinal questions) or the 0/1 target (binary, nominal).
* Human targets: ``gold`` (current gold labels of the pool, except ``unresolved``), ``majority``
  (the strict plurality of the pool's submitted labels; ties excluded and counted) or one annotator
  (``rater:<pseudonym>``). Gold is the default only where it covers every labelled unit (see
  :func:`default_target`).
* Metric sources are pluggable: :data:`METRIC_SOURCE_PROVIDERS` lists functions that return the
  study's :class:`MetricSource` objects; score runs and the human measures of adjudication.stats.measures
  (through adjudication.selectors.human_measure_values) are the two providers.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from typing import Any, overload

import numpy as np
import pandas as pd
from django.db import connection, transaction
from django.db.models import Count, Max, Min, Q

from adjudication import selectors
from adjudication.analysis.access import CATEGORICAL
from adjudication.models import GoldLabel, GoldSource
from adjudication.stats import agreement as ag
from adjudication.stats import targets
from annotation import units
from annotation.models import (
    AssignmentStatus,
    ControlItem,
    Item,
    Label,
    Pool,
    PoolMembership,
    Question,
    QuestionKind,
    Study,
)
from annotation.presets import PRESETS
from concord.errors import NotFound, ValidationFailed
from concord.params import parse_id
from scoring.metrics import MetricError, get_metric
from scoring.models import Score, ScoreRun, ScoreState

# A multi-label answer is rated per option: did the annotator select it or not.
OPTION_SCALE = ["not selected", "selected"]


def unit_scope(unit_key: str) -> str:
    """The question scope a unit key belongs to; ``other`` for a source sentence or a key that is none."""
    try:
        scope = units.scope_of(unit_key)
    except units.InvalidUnitKey:
        return "other"
    return scope if scope in units.SCOPES else "other"


# --- access --------------------------------------------------------------------------------------


# --- ratings from the database -----------------------------------------------------------------------


class UnitList(Sequence[tuple[int, str]]):
    """The units of a report, (item id, unit key), held as two arrays (an item id and a key's index into the
    sorted ``keys`` per unit) rather than a tuple per unit: a million units are 16 MB here, not a hundred.
    Indexing and iteration give the (item id, unit key) tuples; :attr:`items` and :meth:`key_array` give arrays."""

    __slots__ = ("items", "key_codes", "keys")

    def __init__(self, items: np.ndarray, key_codes: np.ndarray, keys: Sequence[str]) -> None:
        self.items = np.asarray(items, dtype=np.int64)
        # A handful of keys (item, s:<i>, c:<rank>, a:<id>): 4 bytes a unit.
        self.key_codes = np.asarray(key_codes, dtype=np.int32)
        self.keys = [str(k) for k in keys]
        if self.items.shape != self.key_codes.shape or self.items.ndim != 1:
            raise ValueError("items and key codes must be aligned one-dimensional arrays")

    @classmethod
    def from_pairs(cls, pairs: Sequence[tuple[int, str]]) -> UnitList:
        if isinstance(pairs, UnitList):
            return pairs
        if not pairs:
            return cls(np.empty(0, np.int64), np.empty(0, np.int64), [])
        items, names = zip(*pairs, strict=True)
        codes, keys = pd.factorize(np.array(names, dtype=object), sort=True)
        return cls(np.fromiter(items, np.int64, len(items)), codes, [str(k) for k in keys])

    def key_array(self) -> np.ndarray:
        """Each unit's key (an object array of the shared key strings)."""
        return np.array(self.keys, dtype=object)[self.key_codes] if self.keys else np.empty(0, dtype=object)

    def __len__(self) -> int:
        return int(self.items.size)

    @overload
    def __getitem__(self, index: int) -> tuple[int, str]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[int, str]]: ...

    def __getitem__(self, index: int | slice) -> tuple[int, str] | list[tuple[int, str]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return int(self.items[index]), self.keys[int(self.key_codes[index])]

    def __iter__(self) -> Iterator[tuple[int, str]]:
        keys = self.keys
        for item, code in zip(self.items.tolist(), self.key_codes.tolist(), strict=True):
            yield item, keys[code]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UnitList | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"UnitList({len(self)} units)"


@dataclass
class Ratings:
    """One pool's submitted labels on one question: one entry per rating (``entries``) of a units × raters
    matrix, which :attr:`codes` builds when a caller asks for it (the agreement report never does: a matrix of
    a million units and a hundred raters is a hundred million cells for three million ratings).

    ``units`` (a :class:`UnitList`; a list of (item id, unit key) pairs is turned into one) are the matrix's
    rows, ordered by item id, then unit key."""

    question: Question
    units: UnitList
    rater_ids: list[int]
    rater_names: list[str]
    entries: ag.SparseRatings
    scale: list[str] | None
    level: ag.Level
    n_off_scale_ratings: int = 0
    # A multi-label question: each option's selected (1) / not selected (0) entries.
    option_entries: dict[str, ag.SparseRatings] | None = None
    # Ratings of items of known answer left out (annotation.quality; unless asked for) and of annotators left out.
    n_control_ratings_excluded: int = 0
    n_rater_ratings_excluded: int = 0

    def __post_init__(self) -> None:
        self.units = UnitList.from_pairs(self.units)

    @cached_property
    def codes(self) -> np.ndarray:
        """The units × raters matrix of scale positions (or numbers), NaN where not rated; built on first use."""
        return self.entries.dense()

    @cached_property
    def per_option(self) -> dict[str, np.ndarray] | None:
        """A multi-label question's units × raters matrix per option; built on first use."""
        if self.option_entries is None:
            return None
        return {option: entries.dense() for option, entries in self.option_entries.items()}

    @cached_property
    def counts(self) -> np.ndarray:
        """A categorical question's units × categories table of ratings (scale positions 0..k−1)."""
        if self.scale is None:
            raise ValueError("category counts need a categorical question")
        return targets.category_counts_from_entries(self.entries, len(self.scale))

    def rater_entries(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The units (indices into ``units``, ascending) one annotator rated and their values; NotFound when no
        annotator of that pseudonym has labels here."""
        if name not in self.rater_names:
            raise NotFound("no such annotator with labels on this question in this pool")
        mine = self.entries.rater == self.rater_names.index(name)
        return self.entries.unit[mine], self.entries.value[mine]


def level_for(question: Question) -> ag.Level:
    if question.kind == QuestionKind.ORDINAL:
        return "ordinal"
    if question.kind == QuestionKind.NUMBER:
        return "interval"
    return "nominal"


@dataclass
class _LabelRows:
    """The pool's submitted, non-empty labels, one entry per label: item ids, unit keys as codes into
    ``keys`` (sorted), annotator ids, and values as codes into ``values`` (the distinct decoded values, a
    handful, so each is decoded once)."""

    items: np.ndarray
    key_codes: np.ndarray
    keys: list[str]
    raters: np.ndarray
    value_codes: np.ndarray
    values: list[Any]


def _no_rows() -> _LabelRows:
    return _LabelRows(
        np.empty(0, np.int64), np.empty(0, np.int64), [], np.empty(0, np.int64), np.empty(0, np.int64), []
    )


def _label_rows(pool_id: int, question_id: int, items: tuple[int, int] | None = None) -> _LabelRows:
    """The pool's submitted labels on the question (on the items with ids in [low, high) when ``items`` is
    given); a cleared answer (SQL NULL or JSON null) is no rating."""
    if connection.vendor == "postgresql":
        return _label_rows_pg(pool_id, question_id, items)
    labels = Label.objects.filter(
        assignment__pool_id=pool_id, question_id=question_id, assignment__status=AssignmentStatus.SUBMITTED
    )
    if items is not None:
        labels = labels.filter(assignment__item_id__gte=items[0], assignment__item_id__lt=items[1])
    rows = [
        row
        for row in labels.values_list("assignment__item_id", "unit_key", "assignment__annotator_id", "value")
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
    key_codes, key_uniques = pd.factorize(np.array(keys, dtype=object), sort=True)
    return _LabelRows(
        items=np.fromiter(items, np.int64, len(items)),
        key_codes=key_codes,
        keys=[str(k) for k in key_uniques],
        raters=np.fromiter(raters, np.int64, len(raters)),
        value_codes=value_codes,
        values=[original[u] for u in uniques],
    )


# A cleared answer can be SQL NULL or JSON null; the JSON nulls are dropped after decoding (comparing every
# jsonb value with 'null' in the query costs more than the rest of the filter). Each value is written after a
# "v" (see _label_rows_from_text). The lines are built in a subquery (OFFSET 0 keeps it one) so that parallel
# workers can build them; only their concatenation is left to the backend that answers.
_LABELS_AS_TEXT = """
SELECT string_agg(line, E'\\n') FROM (
    SELECT a.item_id::text || E'\\t' || l.unit_key || E'\\t' || a.annotator_id::text || E'\\tv' || l.value::text
        AS line
    FROM annotation_label l JOIN annotation_assignment a ON a.id = l.assignment_id
    WHERE a.pool_id = %s AND l.question_id = %s AND a.status = 'submitted' AND l.value IS NOT NULL
    OFFSET 0
) lines
"""
# The planner prices building a line (integer and jsonb output, four concatenations) at a few operator costs
# and each row handed from a worker at a tenth of a page read, so on its own it reads serially. For this one
# statement the transfer is priced as free: the workers format, the backend concatenates.
_PLANNER_COSTS = {"parallel_setup_cost": "0", "parallel_tuple_cost": "0"}

# The same lines for the items with ids in [low, high) (rating_tables reads a pool a range at a time). Here the
# pool's assignments of the range drive the read, each finding its labels through the label table's assignment
# index: the lateral subquery (kept one by OFFSET 0) is a nested loop the planner cannot turn into a hash join
# over the whole label table (which it prices lower, and which scans ten million labels for sixty thousand:
# 2.1 s a range at 1,000,000 items, against 0.25 s). Compiling the statement (JIT, which the planner's cost of
# that loop asks for) took as long as running it: off for this statement.
_LABELS_IN_RANGE_AS_TEXT = """
SELECT string_agg(a.item_id::text || E'\\t' || l.unit_key || E'\\t' || a.annotator_id::text || E'\\tv' || l.value::text,
                  E'\\n')
FROM annotation_assignment a CROSS JOIN LATERAL (
    SELECT l.unit_key, l.value FROM annotation_label l
    WHERE l.assignment_id = a.id AND l.question_id = %s AND l.value IS NOT NULL
    OFFSET 0
) l
WHERE a.pool_id = %s AND a.status = 'submitted' AND a.item_id >= %s AND a.item_id < %s
"""
_RANGE_SETTINGS = {"jit": "off"}


def _label_rows_pg(pool_id: int, question_id: int, items: tuple[int, int] | None = None) -> _LabelRows:
    """The same rows as one tab-separated text built by PostgreSQL and parsed by pandas' C parser.

    Row by row, even through COPY, a 500,000-label pool costs several seconds of Python per read;
    as one string it is one round trip. The value comes last and is jsonb text, in which a tab or a
    newline is always escaped, and unit keys are generated keys without either, so the split is exact.

    The statement's planner settings are scoped to it: set inside its transaction (or savepoint), and what the
    caller's transaction had put back after.
    """
    if items is None:
        sql, params, settings = _LABELS_AS_TEXT, [pool_id, question_id], _PLANNER_COSTS
    else:
        sql, params, settings = _LABELS_IN_RANGE_AS_TEXT, [question_id, pool_id, *items], _RANGE_SETTINGS
    names = list(settings)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(f"current_setting('{name}')" for name in names))
        before = cursor.fetchone()
        set_all = "SELECT " + ", ".join(f"set_config('{name}', %s, true)" for name in names)
        cursor.execute(set_all, list(settings.values()))
        cursor.execute(sql, params)
        text = cursor.fetchone()[0]
        cursor.execute(set_all, list(before))
    return _label_rows_from_text(text or "")


def _label_rows_from_text(text: str) -> _LabelRows:
    """Parse lines ``item id, unit key, annotator id, "v" + the value's JSON`` (tab-separated).

    Unit keys and values are read as categoricals: the parser codes them as it reads, without a Python
    string per label. A categorical column whose every entry looks like a number (or true/false) would
    come back as numbers, "1" and "1.0" merged; the "v" before each value keeps every value the exact
    JSON text that was stored, decoded once per distinct value. Unit keys (``item``, ``s:0``, ...) never
    look like numbers.
    """
    if not text:
        return _no_rows()
    frame = pd.read_csv(
        io.BytesIO(text.encode()),
        sep="\t",
        header=None,
        names=["item", "unit", "rater", "value"],
        dtype={"item": np.int64, "unit": "category", "rater": np.int64, "value": "category"},
        keep_default_na=False,
        quoting=csv.QUOTE_NONE,
        engine="c",
    )
    values = [json.loads(u[1:]) for u in frame["value"].cat.categories]  # a handful, each decoded once
    value_codes = frame["value"].cat.codes.to_numpy()
    rows: slice | np.ndarray = slice(None)
    null = [i for i, v in enumerate(values) if v is None]
    if null:  # JSON null: a cleared answer
        rows = ~np.isin(value_codes, null)
        if not rows.any():
            return _no_rows()
    return _LabelRows(
        items=frame["item"].to_numpy()[rows],
        key_codes=frame["unit"].cat.codes.to_numpy()[rows],
        keys=[str(k) for k in frame["unit"].cat.categories],
        raters=frame["rater"].to_numpy()[rows],
        value_codes=value_codes[rows],
        values=values,
    )


def _hashable(value: Any) -> Any:
    # Lists (multi-label answers) cannot be dictionary keys; a tagged tuple cannot collide with a string.
    return ("json", json.dumps(value, sort_keys=True)) if isinstance(value, list | dict) else value


def _rows_without(rows: _LabelRows, *, items: set[int], raters: set[int]) -> tuple[_LabelRows, int, int]:
    """``rows`` less the labels on ``items`` and those of ``raters``, and how many of each were dropped."""
    if rows.items.size == 0 or (not items and not raters):
        return rows, 0, 0
    on_items = np.isin(rows.items, np.fromiter(items, np.int64, len(items))) if items else np.zeros(0, bool)
    by_raters = np.isin(rows.raters, np.fromiter(raters, np.int64, len(raters))) if raters else np.zeros(0, bool)
    drop = np.zeros(rows.items.size, dtype=bool)
    n_items = n_raters = 0
    if items:
        drop |= on_items
        n_items = int(on_items.sum())
    if raters:
        n_raters = int((by_raters & ~drop).sum())
        drop |= by_raters
    if not drop.any():
        return rows, 0, 0
    keep = ~drop
    kept = _LabelRows(
        items=rows.items[keep], key_codes=rows.key_codes[keep], keys=rows.keys, raters=rows.raters[keep],
        value_codes=rows.value_codes[keep], values=rows.values,
    )
    return kept, n_items, n_raters


def control_item_ids(pool: Pool) -> set[int]:
    """The study's items of known answer (control, attention and qualification items: annotation.quality)."""
    return set(ControlItem.objects.filter(item__study_id=pool.study_id).values_list("item_id", flat=True))


def ratings_load(
    *, pool: Pool, question: Question, include_controls: bool = False, exclude_raters: frozenset[int] = frozenset()
) -> Ratings:
    """The pool's submitted labels on the question, coded on the declared scale.

    Units are ordered by item id, then unit key (as text); raters by user id. Labels on items of known answer
    are left out unless ``include_controls``; labels of the annotators ``exclude_raters`` (user ids) are left
    out (the reports' option to leave flagged annotators out). The counts dropped are on the result.
    """
    rows = _label_rows(pool.pk, question.pk)
    rows, n_controls, n_raters = _rows_without(
        rows, items=set() if include_controls else control_item_ids(pool), raters=set(exclude_raters)
    )
    ratings = _ratings_from_rows(pool=pool, question=question, rows=rows)
    ratings.n_control_ratings_excluded, ratings.n_rater_ratings_excluded = n_controls, n_raters
    return ratings


def scale_positions(values: Sequence[Any], scale: Sequence[str]) -> np.ndarray:
    """Each distinct stored value's position on a categorical question's declared scale; NaN off the scale."""
    position = {v: float(i) for i, v in enumerate(scale)}
    return np.array(
        [position.get(str(v), np.nan) if not isinstance(v, list | dict) else np.nan for v in values], dtype=float
    )


def option_marks(values: Sequence[Any], options: Sequence[str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A multi-label question's distinct stored values: which are ratings (a list of declared options only), and
    per option 1.0 where such a rating selects it, 0.0 where it does not, NaN where the value is no rating."""
    lists = [v if isinstance(v, list) else None for v in values]
    rated = np.array([lst is not None and all(str(x) in options for x in lst) for lst in lists], dtype=bool)
    marks = {
        option: np.array(
            [float(option in [str(x) for x in lst]) if ok else np.nan for lst, ok in zip(lists, rated, strict=True)],
            dtype=float,
        )
        for option in options
    }
    return rated, marks


def _ratings_from_rows(*, pool: Pool, question: Question, rows: _LabelRows) -> Ratings:
    items, raters, value_codes, value_uniques = rows.items, rows.raters, rows.value_codes, rows.values
    level = level_for(question)
    scale = question.option_values if question.kind in CATEGORICAL else None
    if items.size == 0:
        return Ratings(question, [], [], [], ag.SparseRatings.from_dense(np.empty((0, 0))), scale, level)
    n_keys = max(len(rows.keys), 1)
    combined = items * n_keys + rows.key_codes
    unit_codes, unit_uniques = pd.factorize(combined, sort=True)
    rater_codes, rater_uniques = pd.factorize(raters, sort=True)
    shape = (len(unit_uniques), len(rater_uniques))
    # In the entries' order (unit, then rater) once, for every option's entries.
    order = np.argsort(unit_codes * shape[1] + rater_codes, kind="stable")
    unit_codes, rater_codes, value_codes = unit_codes[order], rater_codes[order], value_codes[order]

    def entries(coded: np.ndarray) -> ag.SparseRatings:
        return ag.SparseRatings.from_entries(unit_codes, rater_codes, coded, n_units=shape[0], n_raters=shape[1])

    per_option: dict[str, ag.SparseRatings] | None = None
    if question.kind == QuestionKind.MULTILABEL:
        rated, marks = option_marks(value_uniques, question.option_values)
        per_option = {option: entries(mapped[value_codes]) for option, mapped in marks.items()}
        coded = np.where(rated[value_codes], 0.0, np.nan)
    elif scale is not None:
        coded = scale_positions(value_uniques, scale)[value_codes]
    else:
        mapped = np.array([targets.number_or_nan(v) for v in value_uniques], dtype=float)
        coded = mapped[value_codes]
    n_off = int(np.isnan(coded).sum())
    units = UnitList(unit_uniques // n_keys, unit_uniques % n_keys, rows.keys)
    rater_ids = rater_uniques.tolist()
    pseudonyms = dict(
        PoolMembership.objects.filter(pool=pool, user_id__in=rater_ids).values_list("user_id", "pseudonym")
    )
    names = [pseudonyms.get(r, f"annotator #{r}") for r in rater_ids]
    return Ratings(question, units, rater_ids, names, entries(coded), scale, level, n_off, per_option)


# --- agreement report -----------------------------------------------------------------------------


# --- metric sources ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricValues:
    """A metric's value per unit, as arrays: ``units`` (a :class:`UnitList`, sorted by item id, then unit key as
    text, each unit once) and ``values`` (float64, aligned with them), never a Python object per unit, so that a
    score run of a million units is a few arrays. ``n_not_ok``: the units the source has no usable value for
    (left out of ``units``)."""

    units: UnitList
    values: np.ndarray
    n_not_ok: int = 0
    note: str = ""

    def __post_init__(self) -> None:
        if self.values.shape != (len(self.units),):
            raise ValueError("a metric's values must be aligned with its units")

    @classmethod
    def from_dict(cls, values: dict[tuple[int, str], float], n_not_ok: int = 0, note: str = "") -> MetricValues:
        """From a value per (item id, unit key), for the small sources (a human measure has one value per item)."""
        pairs = UnitList.from_pairs(list(values))
        floats = np.fromiter(values.values(), np.float64, len(values))
        units, order = sorted_units(pairs.items, pairs.key_codes, pairs.keys)
        return cls(units, floats[order], n_not_ok, note)

    def __len__(self) -> int:
        return len(self.units)

    def as_dict(self) -> dict[tuple[int, str], float]:
        """The values per (item id, unit key), for callers that look units up one by one (small reports, tests)."""
        return dict(zip(self.units, self.values.tolist(), strict=True))


def sorted_units(items: np.ndarray, key_codes: np.ndarray, keys: Sequence[str]) -> tuple[UnitList, np.ndarray]:
    """Units given as item ids and codes into ``keys`` (in any order, keys in any order), as a :class:`UnitList`
    sorted by item id, then unit key as text (the order of ``sorted`` on (item id, unit key) tuples), and the
    order that took them there (to carry aligned arrays along)."""
    codes, ranked = _ranked_codes(key_codes, keys)
    items = np.asarray(items, dtype=np.int64)
    order = np.lexsort((codes, items))
    return UnitList(items[order], codes[order], ranked), order


def _ranked_codes(key_codes: np.ndarray, keys: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """The codes recoded into ``keys`` sorted as text (int32, as a :class:`UnitList` holds them), and those keys."""
    ranked = sorted(range(len(keys)), key=lambda i: str(keys[i]))
    recode = np.empty(len(keys), dtype=np.int32)
    recode[ranked] = np.arange(len(keys), dtype=np.int32)
    return recode[np.asarray(key_codes, dtype=np.intp)], [str(keys[i]) for i in ranked]


# Units compared at a time when checking that units are in order (a few small arrays instead of one per unit).
_ORDER_CHUNK = 1 << 16


def _in_unit_order(items: np.ndarray, codes: np.ndarray) -> bool:
    """Whether the units (item id, key code; codes ranked as the keys sort) are strictly ascending: each unit once,
    in the order :func:`sorted_units` gives."""
    for start in range(0, max(items.size - 1, 0), _ORDER_CHUNK):
        stop = min(start + _ORDER_CHUNK, items.size - 1)
        a, b = items[start:stop], items[start + 1 : stop + 1]
        if not ((b > a) | ((b == a) & (codes[start + 1 : stop + 1] > codes[start:stop]))).all():
            return False
    return True


def common_units(*lists: UnitList) -> tuple[UnitList, list[np.ndarray]]:
    """The units in every list, sorted by item id, then unit key as text (what ``sorted(set(a) & set(b) ...)``
    of the (item id, unit key) tuples gives), and for each list the positions of those units in it. Each list
    holds a unit once (a metric's values, a human target)."""
    common, width, keys, positions = _common_coded(lists)
    if width == 1:
        return UnitList(common, np.zeros(common.size, np.int32), keys), positions
    return UnitList(common // width, common % width, keys), positions


def common_positions(*lists: UnitList) -> list[np.ndarray]:
    """:func:`common_units`' positions alone, for a caller that needs no list of the common units."""
    return _common_coded(lists)[3]


def _common_coded(lists: Sequence[UnitList]) -> tuple[np.ndarray, int, list[str], list[np.ndarray]]:
    """Each unit becomes one integer, item id × number of keys + the key's rank among every list's keys (sorted as
    text), so that integers sort as the tuples do, and the units in every list are found by binary search in the
    sorted integers: a few arrays of the units, no tuple per unit and no sort of the lists together. With one key
    in every list (item-scope units, the common case) the integers are the item ids themselves, not copied."""
    keys = sorted({k for units in lists for k in units.keys})
    rank = {k: i for i, k in enumerate(keys)}
    width = max(len(keys), 1)
    coded = [_coded(units, rank, width) for units in lists]
    common = coded[0] if _ascending(coded[0]) else np.sort(coded[0])
    for other in coded[1:]:
        common = common[_found(other if _ascending(other) else np.sort(other), common)]
    positions = [np.searchsorted(c, common) if _ascending(c) else _positions(c, common) for c in coded]
    return common, width, keys, positions


def _coded(units: UnitList, rank: dict[str, int], width: int) -> np.ndarray:
    if not units.keys:
        return np.empty(0, np.int64)
    if width == 1:
        return units.items
    coded = units.items * width
    coded += np.array([rank[k] for k in units.keys], dtype=np.int64)[units.key_codes]
    return coded


def _found(sorted_values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Which of ``wanted`` are in ``sorted_values`` (ascending), as a boolean mask."""
    if sorted_values.size == 0:
        return np.zeros(wanted.size, dtype=bool)
    at = np.searchsorted(sorted_values, wanted)
    np.minimum(at, sorted_values.size - 1, out=at)
    return np.asarray(sorted_values[at] == wanted)


def _ascending(coded: np.ndarray) -> bool:
    return bool(coded.size < 2 or (coded[1:] > coded[:-1]).all())


def _positions(coded: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Where each of ``wanted`` (all present) is in ``coded`` (unique, in any order)."""
    order = np.argsort(coded, kind="stable")
    return order[np.searchsorted(coded[order], wanted)]


@dataclass(frozen=True)
class MetricSource:
    """Something that gives a number per unit: a score run, or a measure derived from human labels."""

    key: str
    label: str
    scope: str
    load: Callable[[], MetricValues] = field(compare=False)
    origin: str = "score_run"
    pool_id: int | None = None
    # The human questions this source estimates (a metric's declaration); None: not restricted.
    estimates: tuple[str, ...] | None = None
    # A large source's values on the items with ids in [low, high), and its (usable, not usable) unit counts,
    # so that a report can read it a range at a time; None: read it whole (load) and take the ranges from that.
    load_items: Callable[[int, int], MetricValues] | None = field(default=None, compare=False)
    sizes: Callable[[], tuple[int, int]] | None = field(default=None, compare=False)

    def estimates_question(self, key: str) -> bool:
        """Whether this source may be compared with the question ``key``. Declarations name the presets'
        questions; a question of the researcher's own (a key no preset uses) is not restricted."""
        return self.estimates is None or key in self.estimates or key not in PRESET_QUESTION_KEYS


# Every question key the protocol presets define: the vocabulary metrics' ``estimates`` are written in.
PRESET_QUESTION_KEYS = frozenset(spec["key"] for specs in PRESETS.values() for spec in specs)

# What each human measure estimates (adjudication.stats.measures): human CF is the sentence-level
# decomposition of the same judgement as perceived faithfulness; the others are not restricted.
HUMAN_MEASURE_ESTIMATES: dict[str, tuple[str, ...]] = {"human_cf": ("perceived_faithfulness",)}


def run_estimates_question(metric: str, parameters: Any, key: str) -> bool:
    """Whether a run may be compared with the question ``key`` (see :meth:`MetricSource.estimates_question`)."""
    return key not in PRESET_QUESTION_KEYS or key in run_estimates(metric, parameters)


def run_estimates(metric: str, parameters: Any) -> tuple[str, ...]:
    """The human questions a run of ``metric`` with ``parameters`` estimates; () for an unknown metric."""
    try:
        m = get_metric(metric)
        params = m.resolve_params(parameters if isinstance(parameters, dict) else {})
    except MetricError:
        return ()
    return m.estimated_questions(params)


# Score rows a run's values are read by: a cursor's chunk of tuples at a time, each chunk's columns put in
# preallocated arrays before the next is fetched, so no Python object per score outlives its chunk.
_SCORE_CHUNK = 20_000


def score_run_values(run_id: int, item_range: tuple[int, int] | None = None) -> MetricValues:
    """A score run's values: the scores in state OK with a value; every other score (failed, undetermined, a
    null value) is counted in ``n_not_ok``. ``item_range``: only the items with ids in [low, high).

    The arrays are sized by a count of the run's scores first; scores written after it (a run still being
    scored) are read all the same, the arrays growing for them, so what comes back is what the rows read said,
    as when they were read into a dictionary. The rows come ordered by item id and unit key, mostly the order the
    units need already (a database collation may order keys otherwise: then they are sorted here)."""
    scores = Score.objects.filter(run_id=run_id)
    if item_range is not None:
        scores = scores.filter(item_id__gte=item_range[0], item_id__lt=item_range[1])
    capacity = scores.count()
    items = np.empty(capacity, dtype=np.int64)
    codes = np.empty(capacity, dtype=np.int32)
    values = np.empty(capacity, dtype=np.float64)
    keys: dict[str, int] = {}
    rows = (
        scores
        .order_by("item_id", "unit_key")
        .values_list("item_id", "unit_key", "value", "state")
        .iterator(chunk_size=_SCORE_CHUNK)
    )
    filled = n_not_ok = 0
    while chunk := list(islice(rows, _SCORE_CHUNK)):
        ok = [row for row in chunk if row[3] == ScoreState.OK and row[2] is not None]
        n_not_ok += len(chunk) - len(ok)
        end = filled + len(ok)
        if end > items.size:
            items, codes, values = (_grown(a, max(end, 2 * a.size)) for a in (items, codes, values))
        items[filled:end] = np.fromiter((row[0] for row in ok), np.int64, len(ok))
        codes[filled:end] = np.fromiter((keys.setdefault(row[1], len(keys)) for row in ok), np.int32, len(ok))
        values[filled:end] = np.fromiter((row[2] for row in ok), np.float64, len(ok))
        filled = end
    note = "scores that are undetermined or failed are excluded"
    ranked, names = _ranked_codes(codes[:filled], list(keys))
    del codes
    if _in_unit_order(items[:filled], ranked):
        # As read (the usual case): the arrays are the units, without a sort or a copy (a slice of the buffers
        # only when scores came in after the count, or were not usable).
        return MetricValues(UnitList(items[:filled], ranked, names), values[:filled], n_not_ok, note)
    order = np.lexsort((ranked, items[:filled]))
    return MetricValues(UnitList(items[order], ranked[order], names), values[order], n_not_ok, note)


def score_run_sizes(run_id: int) -> tuple[int, int]:
    """How many of a run's scores :func:`score_run_values` reads as usable, and how many it counts as not."""
    usable = Q(state=ScoreState.OK, value__isnull=False)
    counts = Score.objects.filter(run_id=run_id).aggregate(ok=Count("pk", filter=usable), all=Count("pk"))
    return counts["ok"], counts["all"] - counts["ok"]


def metric_values_in(values: MetricValues, low: int, high: int) -> MetricValues:
    """The values of a source read whole on the items with ids in [low, high) (its units are sorted by item id)."""
    start, stop = np.searchsorted(values.units.items, [low, high])
    units = UnitList(values.units.items[start:stop], values.units.key_codes[start:stop], values.units.keys)
    return MetricValues(units, values.values[start:stop], 0, values.note)


def _grown(a: np.ndarray, size: int) -> np.ndarray:
    out = np.empty(size, dtype=a.dtype)
    out[: a.size] = a
    return out


def score_run_sources(study: Study) -> list[MetricSource]:
    sources = []
    for run in ScoreRun.objects.filter(study=study).order_by("-created_at", "-id"):
        first = Score.objects.filter(run=run).values_list("unit_key", flat=True).first()
        if first is None:
            continue

        def load(run_id: int = run.pk) -> MetricValues:
            return score_run_values(run_id)

        def load_items(low: int, high: int, run_id: int = run.pk) -> MetricValues:
            return score_run_values(run_id, (low, high))

        def sizes(run_id: int = run.pk) -> tuple[int, int]:
            return score_run_sizes(run_id)

        label = f"{run.metric} v{run.metric_version} · {run.backend}" + (
            f" · {run.model_identity}" if run.model_identity else ""
        )
        sources.append(
            MetricSource(
                key=f"run:{run.pk}",
                label=f"run #{run.pk}: {label}",
                scope=unit_scope(first),
                load=load,
                origin="score_run",
                estimates=run_estimates(run.metric, run.parameters),
                load_items=load_items,
                sizes=sizes,
            )
        )
    return sources


def human_measure_sources(study: Study) -> list[MetricSource]:
    """adjudication.stats.measures through E's selector: one source per pool × measure × rater (gold first)."""
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
                    return _human_measure(study, pool_id, measure, rater, None)

                def load_items(
                    low: int, high: int, pool_id: int = pool.pk, measure: str = measure, rater: str = rater
                ) -> MetricValues:
                    return _human_measure(study, pool_id, measure, rater, (low, high))

                def sizes(pool_id: int = pool.pk, measure: str = measure, rater: str = rater) -> tuple[int, int]:
                    usable = not_usable = 0
                    for items in _item_ranges(study):  # a range's values at a time, counted and let go
                        found = _human_measure(study, pool_id, measure, rater, items)
                        usable, not_usable = usable + len(found), not_usable + found.n_not_ok
                    return usable, not_usable

                who = "gold" if rater == selectors.GOLD else rater
                sources.append(
                    MetricSource(
                        key=f"measure:{pool.pk}:{measure}:{rater}",
                        label=f"{measure} ({pool.name}, {who})",
                        scope="item",
                        load=load,
                        origin="human_measure",
                        pool_id=pool.pk,
                        estimates=HUMAN_MEASURE_ESTIMATES.get(measure),
                        load_items=load_items,
                        sizes=sizes,
                    )
                )
    return sources


# Item ids a human measure is computed for at a time when a report reads it a range at a time (its sizes).
_MEASURE_ITEMS = 20_000


def _human_measure(
    study: Study, pool_id: int, measure: str, rater: str, items: tuple[int, int] | None
) -> MetricValues:
    """A human measure's values (of the items with ids in ``items`` only, when given) as a metric source's."""
    per_item = selectors.human_measure_values(pool_id=pool_id, measure=measure, rater=rater, items=items)
    ids = dict(Item.objects.filter(study=study, external_id__in=per_item.values).values_list("external_id", "pk"))
    values = {(ids[ext], "item"): float(v) for ext, v in per_item.values.items() if ext in ids}
    return MetricValues.from_dict(values, len(per_item.undefined), "items where the measure is undefined are excluded")


def _item_ranges(study: Study) -> Iterator[tuple[int, int]]:
    """The study's item ids in ranges of _MEASURE_ITEMS ids, [low, high)."""
    span = Item.objects.filter(study=study).aggregate(low=Min("pk"), high=Max("pk"))
    if span["low"] is None:
        return
    for low in range(span["low"], span["high"] + 1, _MEASURE_ITEMS):
        yield low, low + _MEASURE_ITEMS


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


def human_target(
    *, pool: Pool, question: Question, target: str, ratings: Ratings, include_controls: bool = False
) -> tuple[dict[tuple[int, str], float], dict[str, int]]:
    """Scale positions (or numbers) of the human target per unit, and what was left out and why: what
    :func:`human_target_arrays` gives, as a dictionary, for the reports that look units up one by one. Gold comes
    in the order the database gives its rows (by item, then unit key), the other targets in the units' order."""
    if target == "gold":
        gold = _gold_rows(pool=pool, question=question, include_controls=include_controls)
        units = UnitList(gold.items, gold.key_codes, gold.keys)
        return dict(zip(units, gold.values.tolist(), strict=True)), {"gold_off_scale": gold.n_off_scale}
    units, values, excluded = human_target_arrays(
        pool=pool, question=question, target=target, ratings=ratings, include_controls=include_controls
    )
    return dict(zip(units, values.tolist(), strict=True)), excluded


def human_target_arrays(
    *, pool: Pool, question: Question, target: str, ratings: Ratings, include_controls: bool = False
) -> tuple[UnitList, np.ndarray, dict[str, int]]:
    """The human target as arrays: its units (a :class:`UnitList` sorted by item id, then unit key as text, each
    unit once), their scale positions (or numbers; float64, aligned), and what was left out and why. Gold on
    items of known answer is left out unless ``include_controls`` (the ratings behind the other targets already
    are). No Python object per unit."""
    if target == "gold":
        units, values, n_off = gold_target(pool=pool, question=question, include_controls=include_controls)
        return units, values, {"gold_off_scale": n_off}
    excluded: dict[str, int] = {}
    if target == "majority":
        if ratings.scale is None:
            raise ValidationFailed("a majority needs a categorical question")
        # From the units × categories counts, never the units × raters matrix (ratings.codes).
        kept, winners, excluded["majority_ties"] = targets.majority_from_counts(ratings.counts)
        return _units_at(ratings.units, kept), winners.astype(np.float64), excluded
    if target.startswith("rater:"):
        name = target.split(":", 1)[1]
        # The rater's own entries, in unit order (the entries are sorted by unit, then rater).
        rated, values = ratings.rater_entries(name)
        return _units_at(ratings.units, rated), np.asarray(values, dtype=np.float64).copy(), excluded
    raise ValidationFailed("target must be gold, majority or rater:<pseudonym>")


def _units_at(units: UnitList, at: np.ndarray) -> UnitList:
    return UnitList(units.items[at], units.key_codes[at], units.keys)


@dataclass
class _GoldRows:
    """Current gold positions in the order the query gives them: item ids, unit keys as codes into ``keys`` (in
    the order met), positions (float64), and how many gold values were not on the scale (left out)."""

    items: np.ndarray
    key_codes: np.ndarray
    keys: list[str]
    values: np.ndarray
    n_off_scale: int


# Gold rows read at a time (see _SCORE_CHUNK): a pool's gold can cover a tenth of a million units.
_GOLD_CHUNK = 20_000


def gold_target(
    *, pool: Pool, question: Question, include_controls: bool = False, items: tuple[int, int] | None = None
) -> tuple[UnitList, np.ndarray, int]:
    """The gold target of :func:`human_target_arrays` (units sorted, positions, values off the scale), on the items
    with ids in [low, high) when ``items`` is given."""
    gold = _gold_rows(pool=pool, question=question, include_controls=include_controls, items=items)
    units, order = sorted_units(gold.items, gold.key_codes, gold.keys)
    return units, gold.values[order], gold.n_off_scale


def gold_item_span(*, pool: Pool, question: Question) -> tuple[int, int] | None:
    """The lowest and highest item id of the pool's current gold on the question; None without gold."""
    span = (
        GoldLabel.objects.filter(pool=pool, question=question, is_current=True)
        .exclude(source=GoldSource.UNRESOLVED)
        .aggregate(low=Min("item_id"), high=Max("item_id"))
    )
    return None if span["low"] is None else (span["low"], span["high"])


def _gold_rows(
    *, pool: Pool, question: Question, include_controls: bool, items: tuple[int, int] | None = None
) -> _GoldRows:
    """The pool's current gold on the question (not ``unresolved``), each value coded once per distinct value."""
    rows = (
        GoldLabel.objects.filter(pool=pool, question=question, is_current=True)
        .exclude(source=GoldSource.UNRESOLVED)
        .values_list("item_id", "unit_key", "value")
    )
    if items is not None:
        rows = rows.filter(item_id__gte=items[0], item_id__lt=items[1])
    if not include_controls:
        rows = rows.exclude(item_id__in=ControlItem.objects.filter(item__study_id=pool.study_id).values("item_id"))
    options = question.option_values if question.kind in CATEGORICAL else None
    positions: dict[Any, float | None] = {}

    def position(value: Any) -> float:
        key = _hashable(value)
        if key not in positions:
            positions[key] = targets.scale_position(value, options)
        found = positions[key]
        return np.nan if found is None else found

    items: list[np.ndarray] = []
    codes: list[np.ndarray] = []
    values: list[np.ndarray] = []
    keys: dict[str, int] = {}
    off = 0
    cursor = rows.iterator(chunk_size=_GOLD_CHUNK)
    while chunk := list(islice(cursor, _GOLD_CHUNK)):
        coded = np.fromiter((position(row[2]) for row in chunk), np.float64, len(chunk))
        on_scale = ~np.isnan(coded)
        off += int((~on_scale).sum())
        items.append(np.fromiter((row[0] for row in chunk), np.int64, len(chunk))[on_scale])
        codes.append(np.fromiter((keys.setdefault(row[1], len(keys)) for row in chunk), np.int64, len(chunk))[on_scale])
        values.append(coded[on_scale])
    if not items:
        return _GoldRows(np.empty(0, np.int64), np.empty(0, np.int64), [], np.empty(0, np.float64), 0)
    return _GoldRows(np.concatenate(items), np.concatenate(codes), list(keys), np.concatenate(values), off)


def default_positive(question: Question) -> str:
    """The first option for binary and nominal questions. An ordinal question (perceived faithfulness 1..5,
    a severity scale) is binarised only at a cut-off the researcher sets: no silent middle-option default."""
    if question.kind == QuestionKind.ORDINAL:
        raise ValidationFailed(
            f"{question.key!r} is ordinal: choose the cut-off for the positive class explicitly (positive = the "
            f"lowest option that counts as positive, one of {', '.join(question.option_values)})"
        )
    return targets.default_positive(question.option_values, ordinal=False)


def binary_target(question: Question, positions: np.ndarray, positive: str) -> np.ndarray:
    """1 where the human said the positive class, else 0 (NaN stays NaN).

    Binary and nominal: positive = that option. Ordinal: positive = that option *or any later one in
    the declared order* (choose ``slight`` on none / slight / severe for "at least slight").
    """
    options = question.option_values
    if positive not in options:
        raise ValidationFailed(f"positive must be one of the question's options: {', '.join(options)}")
    return targets.binary(positions, options.index(positive), at_least=question.kind == QuestionKind.ORDINAL)


def compatible_questions(*, study: Study, scope: str) -> list[tuple[Pool, Question]]:
    out = []
    for pool in Pool.objects.filter(study=study).prefetch_related("questions").order_by("name"):
        for q in pool.questions.all():
            if q.kind in CATEGORICAL and q.scope == scope:
                out.append((pool, q))
    return out


# --- bootstrap jobs ---------------------------------------------------------------------------------


def data_version(*, pool: Pool, question: Question, source: str | None = None) -> str:
    """A fingerprint of the data a report reads, kept in a job's parameters so that a bootstrap
    computed before labels, gold or scores changed is never shown as the current one."""
    labels = Label.objects.filter(assignment__pool=pool, question=question).aggregate(
        n=Count("pk"), at=Max("updated_at")
    )
    gold = GoldLabel.objects.filter(pool=pool, question=question).aggregate(n=Count("pk"), at=Max("created_at"))
    parts = [labels["n"], labels["at"], gold["n"], gold["at"]]
    run_id = parse_id(source.split(":", 1)[1]) if source and source.startswith("run:") else None
    if run_id is not None:  # a source that names no run has no scores; reading the source says so (404)
        scores = Score.objects.filter(run_id=run_id).aggregate(n=Count("pk"), at=Max("computed_at"))
        parts += [scores["n"], scores["at"]]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


# --- text for the CLI ------------------------------------------------------------------------------
