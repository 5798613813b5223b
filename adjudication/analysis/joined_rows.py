"""A validity report's joined (score, label, target) rows, held by the database rather than by the process.

The report reads its units a range of items at a time; each range's units, joined with the metric's values, become
a few rows of distinct (score, label, target) triples with how many units have each (a
:class:`~adjudication.stats.validity_table.ScoreTable`). A metric with a distinct score for nearly every unit (a
continuous similarity, a judge's mean probability) has nearly a row per unit: a million units are a million rows.
:class:`JoinedRows` adds each range's rows to a temporary table of the read's database connection (a triple already
there has its units added to it) and reads them back in ascending (score, label, target) order a page at a time, as
often as the statistics need (:class:`adjudication.stats.validity_stream.RowSource`): the process holds a page, never
the table.

The table is temporary (the connection's own, invisible to every other one, dropped by :meth:`JoinedRows.drop`, by
the rollback of the transaction that created it, or with the connection), so the report stays a read of the study.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from types import TracebackType
from typing import Any

import numpy as np
from django.db import connection

from adjudication.stats.validity import DelongSums
from adjudication.stats.validity_table import ScoreTable

# The statements, on a table name this module generates (never from input).
_CREATE = (
    "CREATE TEMPORARY TABLE {table} (score DOUBLE PRECISION NOT NULL, label BOOLEAN NOT NULL, "
    "target DOUBLE PRECISION NOT NULL, weight BIGINT NOT NULL, PRIMARY KEY (score, label, target))"
)
# Each column one array literal ('{0.25,0.5}'): psycopg adapts a Python list element by element, 2 µs a value,
# where the text is written by numpy and parsed by PostgreSQL; float8's text is the shortest that reads back as the
# same double, both ways (Python's repr, PostgreSQL's output since 12).
_ADD_PG = (
    "INSERT INTO {table} (score, label, target, weight) "
    "SELECT * FROM unnest(%s::float8[], %s::boolean[], %s::float8[], %s::int8[]) "
    "ON CONFLICT (score, label, target) DO UPDATE SET weight = {table}.weight + EXCLUDED.weight"
)
# A page as one row of four array literals, in the table's order (parsed by numpy, not a tuple per row).
_PAGE_PG = (
    "SELECT array_agg(score ORDER BY score, label, target)::text, "
    "array_agg(label ORDER BY score, label, target)::text, "
    "array_agg(target ORDER BY score, label, target)::text, "
    "array_agg(weight ORDER BY score, label, target)::text "
    "FROM (SELECT * FROM {table} {after} ORDER BY score, label, target LIMIT %s) page"
)
_ADD_SQLITE = (
    "INSERT INTO {table} (score, label, target, weight) VALUES (%s, %s, %s, %s) "
    "ON CONFLICT (score, label, target) DO UPDATE SET weight = weight + excluded.weight"
)
_FIRST_PAGE = "SELECT score, label, target, weight FROM {table} ORDER BY score, label, target LIMIT %s"
_NEXT_PAGE = (
    "SELECT score, label, target, weight FROM {table} WHERE (score, label, target) > (%s, %s, %s) "
    "ORDER BY score, label, target LIMIT %s"
)
_PAIRED_CREATE = (
    "CREATE TEMPORARY TABLE {table} (a_ok BOOLEAN NOT NULL, a DOUBLE PRECISION NOT NULL, b_ok BOOLEAN NOT NULL, "
    "b DOUBLE PRECISION NOT NULL, label BOOLEAN NOT NULL, weight BIGINT NOT NULL, "
    "PRIMARY KEY (a_ok, a, b_ok, b, label))"
)
# As _ADD_PG: each column one array literal.
_PAIRED_ADD_PG = (
    "INSERT INTO {table} (a_ok, a, b_ok, b, label, weight) SELECT * FROM unnest(%s::boolean[], %s::float8[], "
    "%s::boolean[], %s::float8[], %s::boolean[], %s::int8[]) "
    "ON CONFLICT (a_ok, a, b_ok, b, label) DO UPDATE SET weight = {table}.weight + EXCLUDED.weight"
)
_PAIRED_ADD_SQLITE = (
    "INSERT INTO {table} (a_ok, a, b_ok, b, label, weight) VALUES (%s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (a_ok, a, b_ok, b, label) DO UPDATE SET weight = weight + excluded.weight"
)
_DROP = "DROP TABLE IF EXISTS {table}"

# Rows a page of the read back: one query each, a few hundred KiB of text while it is turned into arrays.
PAGE_ROWS = 20_000
# Rows held in the process before they are written to the table: a metric of few distinct scores (a rubric, a
# share of sentences) never has this many, and its rows are written once; a continuous metric's are written every
# few ranges.
HOLD_ROWS = 50_000


class JoinedRows:
    """The rows in a temporary table; :meth:`pieces` reads them back in order, ``page_rows`` rows a query.

    Use as a context manager (or call :meth:`drop`): the table is created on entry (the validity report enters
    before its read's transaction, so that the table outlasts it for the statistics) and dropped on exit."""

    def __init__(self, page_rows: int | None = None) -> None:
        self.page_rows = page_rows or PAGE_ROWS  # read at call time
        # Unique, so that a report inside another one's transaction (a test, a nested read) has its own table.
        self.name = f"concord_joined_rows_{uuid.uuid4().hex[:16]}"
        self.held = ScoreTable.empty()

    def __enter__(self) -> JoinedRows:
        self.create()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.drop()

    def create(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(_CREATE.format(table=self.name))

    def drop(self) -> None:
        _drop(self.name)

    def add(self, part: ScoreTable) -> None:
        """Add a range's rows: a triple already there has ``part``'s units added to its own. Held in the process
        (merged) until HOLD_ROWS rows are, then written."""
        self.held = ScoreTable.merged([self.held, part])
        if self.held.scores.size >= HOLD_ROWS:
            self._write()

    def _write(self) -> None:
        held, self.held = self.held, ScoreTable.empty()
        if held.scores.size == 0:
            return
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute(
                    _ADD_PG.format(table=self.name),
                    [_floats(held.scores), _bools(held.labels), _floats(held.targets), _ints(held.weights)],
                )
            else:
                rows = zip(
                    held.scores.tolist(), held.labels.tolist(), held.targets.tolist(), held.weights.tolist(),
                    strict=True,
                )
                cursor.executemany(_ADD_SQLITE.format(table=self.name), list(rows))

    def pieces(self) -> Iterator[ScoreTable]:
        """Every row in ascending (score, label, target) order, ``page_rows`` at a time: each page one query from
        where the last one ended, along the table's primary key (keyset pagination, no cursor held open)."""
        self._write()
        after: tuple[float, bool, float] | None = None
        while True:
            piece = self._page(after)
            if piece.scores.size == 0:
                return
            yield piece
            if piece.scores.size < self.page_rows:
                return
            after = (float(piece.scores[-1]), bool(piece.labels[-1]), float(piece.targets[-1]))

    def _page(self, after: tuple[float, bool, float] | None) -> ScoreTable:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                where = "" if after is None else "WHERE (score, label, target) > (%s, %s, %s)"
                cursor.execute(_PAGE_PG.format(table=self.name, after=where), [*(after or ()), self.page_rows])
                scores, labels, targets, weights = cursor.fetchone()
                if scores is None:
                    return ScoreTable.empty()
                return ScoreTable(
                    _parsed(scores, np.float64), _parsed(labels, "U1") == "t", _parsed(targets, np.float64),
                    _parsed(weights, np.int64),
                )
            if after is None:
                cursor.execute(_FIRST_PAGE.format(table=self.name), [self.page_rows])
            else:
                cursor.execute(_NEXT_PAGE.format(table=self.name), [*after, self.page_rows])
            page = cursor.fetchall()
        if not page:
            return ScoreTable.empty()
        columns = list(zip(*page, strict=True))
        return ScoreTable(
            np.asarray(columns[0], dtype=np.float64), np.asarray(columns[1], dtype=bool),
            np.asarray(columns[2], dtype=np.float64), np.asarray(columns[3], dtype=np.int64),
        )


def _floats(values: np.ndarray) -> str:
    """An array literal of finite doubles, each written as the shortest text that reads back as it (repr)."""
    return "{" + ",".join(map(repr, values.tolist())) + "}"


def _bools(values: np.ndarray) -> str:
    return "{" + ",".join(np.where(values, "t", "f").tolist()) + "}"


def _ints(values: np.ndarray) -> str:
    return "{" + ",".join(map(str, values.tolist())) + "}"


def _parsed(literal: str, dtype: Any) -> np.ndarray:
    """A one-dimensional array literal of numbers or booleans ('{1,2.5}', '{t,f}') as an array."""
    return np.array(literal[1:-1].split(","), dtype=dtype)


# Per class, the sums of two metrics' DeLong components over the rows that pass a condition (DelongSums). A row's
# component for metric a, times twice the other class's size: for a positive, 2·(negatives with a lower a) +
# (negatives with the same a) = 2·(negatives up to its a) − (negatives at its a); for a negative, 2·(positives with a
# higher a) + (positives with the same a) = 2·(positives in all − positives up to its a) + (positives at its a). "Up
# to" is the window ordered by the score with its default frame, which ends with the row's last peer (every row of
# the same score). Sums of products in NUMERIC: exact, past where bigint would overflow.
_DELONG_SUMS = """
WITH rows AS (SELECT a, b, label, weight, CASE WHEN label THEN weight ELSE 0 END AS pos,
                     CASE WHEN label THEN 0 ELSE weight END AS neg
              FROM {table} WHERE {condition}),
counted AS (
    SELECT label, weight,
           SUM(pos) OVER () AS m,
           SUM(neg) OVER (ORDER BY a) AS neg_upto_a, SUM(neg) OVER (PARTITION BY a) AS neg_at_a,
           SUM(pos) OVER (ORDER BY a) AS pos_upto_a, SUM(pos) OVER (PARTITION BY a) AS pos_at_a,
           SUM(neg) OVER (ORDER BY b) AS neg_upto_b, SUM(neg) OVER (PARTITION BY b) AS neg_at_b,
           SUM(pos) OVER (ORDER BY b) AS pos_upto_b, SUM(pos) OVER (PARTITION BY b) AS pos_at_b
    FROM rows),
components AS (
    SELECT label, CAST(weight AS NUMERIC) AS w,
           CAST(CASE WHEN label THEN 2 * neg_upto_a - neg_at_a ELSE 2 * (m - pos_upto_a) + pos_at_a END
                AS NUMERIC) AS ta,
           CAST(CASE WHEN label THEN 2 * neg_upto_b - neg_at_b ELSE 2 * (m - pos_upto_b) + pos_at_b END
                AS NUMERIC) AS tb
    FROM counted)
SELECT label, SUM(w), SUM(w * ta), SUM(w * tb), SUM(w * ta * ta), SUM(w * tb * tb), SUM(w * ta * tb)
FROM components GROUP BY label
"""


class PairedRows:
    """Two metrics' scores and the label of the units a paired comparison pairs, as distinct (a, b, label) rows with
    how many units have each, in a temporary table like :class:`JoinedRows`'s. A score that is missing (not finite)
    is held as 0.0 with its ``ok`` flag false: the unit still counts for the other metric's AUC."""

    def __init__(self) -> None:
        self.name = f"concord_paired_rows_{uuid.uuid4().hex[:16]}"

    def __enter__(self) -> PairedRows:
        with connection.cursor() as cursor:
            cursor.execute(_PAIRED_CREATE.format(table=self.name))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        _drop(self.name)

    def add(self, a: np.ndarray, b: np.ndarray, labels: np.ndarray) -> None:
        """Units' scores (either may be missing) and labels (booleans: the caller leaves out a unit without one)."""
        a_ok, b_ok = np.isfinite(a), np.isfinite(b)
        keys = np.stack([a_ok, np.where(a_ok, a, 0.0) + 0.0, b_ok, np.where(b_ok, b, 0.0) + 0.0, labels], axis=1)
        rows, weights = np.unique(keys, axis=0, return_counts=True)
        if not rows.size:
            return
        a_ok, a, b_ok, b, labels = rows[:, 0] == 1, rows[:, 1], rows[:, 2] == 1, rows[:, 3], rows[:, 4] == 1
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute(
                    _PAIRED_ADD_PG.format(table=self.name),
                    [_bools(a_ok), _floats(a), _bools(b_ok), _floats(b), _bools(labels), _ints(weights)],
                )
            else:
                values = [c.tolist() for c in (a_ok, a, b_ok, b, labels, weights)]
                cursor.executemany(_PAIRED_ADD_SQLITE.format(table=self.name), list(zip(*values, strict=True)))

    def sums(self, condition: str) -> tuple[DelongSums, DelongSums]:
        """The positives' and the negatives' DelongSums over the rows where ``condition`` holds ("a_ok", "b_ok" or
        "a_ok AND b_ok")."""
        found = {True: DelongSums(0, 0, 0, 0, 0, 0), False: DelongSums(0, 0, 0, 0, 0, 0)}
        with connection.cursor() as cursor:
            cursor.execute(_DELONG_SUMS.format(table=self.name, condition=condition))
            for label, *sums in cursor.fetchall():
                found[bool(label)] = DelongSums(*(int(v) for v in sums))
        return found[True], found[False]


def _drop(name: str) -> None:
    """Drop a temporary table (nothing if the rollback of the transaction that created it already has)."""
    if connection.connection is None or connection.needs_rollback:
        return
    with connection.cursor() as cursor:
        cursor.execute(_DROP.format(table=name))
