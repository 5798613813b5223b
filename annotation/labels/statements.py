"""The statements of the label save, written out in SQL (an annotator's most frequent request).

Building a query through the ORM costs about 1,500 Python function calls before the database sees it; a
label save used to build seven. These few statements are written here once, from the models' metadata
(``concord.rawsql``: the ORM's column lists, parameter adaptation and value conversion), so that what they
read and write is exactly what the ORM would. The rules stay with their callers: authentication in
``annotation.accounts.tokens``, access in ``annotation.labels.access`` (whose SQL form these statements
apply), the pool's questions in ``annotation.labels.questions``, the save in ``annotation.labels.save``.

Names come from the models' metadata and every value is a parameter (hence ruff's S608 is off here).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.authtoken.models import Token

from annotation import units
from annotation.labels import access
from annotation.models import (
    Aspect,
    AspectStatus,
    Assignment,
    AssignmentStatus,
    Chunk,
    Item,
    Label,
    LabelHistory,
    PasswordChangeRequired,
    Pool,
    Question,
    Sentence,
    Study,
)
from concord import rawsql

# The range of the database's ids: an id outside it names nothing (the ORM answers such a lookup with no
# rows too, rather than letting the database refuse the number).
BIGINT = (-(2**63), 2**63 - 1)
# PositiveIntegerField (sentence index, chunk rank) holds at most this on every backend.
POSITIVE_INT_MAX = 2**31 - 1
_cache: dict[tuple[str, Any], Any] = {}


def _cached(key: Any, build: Any) -> Any:
    full = (connection.vendor, key)
    if full not in _cache:
        _cache[full] = build()
    return _cache[full]


_ACCESS = (rawsql.Columns(Assignment, "a"), rawsql.Columns(Pool, "p"), rawsql.Columns(Study, "s"))
_ACCESS_WITH_ITEM = (*_ACCESS, rawsql.Columns(Item, "i"))


# The revision of the questions (migration 0010): it changes with every change of any question or of any
# pool's questions. The token statement reads it with the assignment, and the pool then carries it under
# this name, so that the pool's questions kept by this process are used only while they are current
# (annotation.labels.questions).
QUESTIONS_REVISION = "_concord_questions_revision"
_REVISION = "(SELECT r.n FROM annotation_questions_revision r WHERE r.id = 1)"


# --- Authentication: the token, its person and the forced password change, in one statement -------

_TOKEN = rawsql.Columns(Token, "t")
_USER = rawsql.Columns(get_user_model(), "u")


def _token_sql(with_assignment: bool) -> str:
    t, u, p = rawsql.names(Token), rawsql.names(get_user_model()), rawsql.names(PasswordChangeRequired)
    select = f"{_TOKEN.select(connection)}, {_USER.select(connection)}"
    joins = ""
    if with_assignment:
        # The assignment the URL names, only if it is the token holder's own (the access rule, SQL form).
        a, po, s = rawsql.names(Assignment), rawsql.names(Pool), rawsql.names(Study)
        select += ", " + ", ".join(columns.select(connection) for columns in _ACCESS) + f", {_REVISION}"
        joins = (
            f" LEFT OUTER JOIN {a.table} a ON a.{a.id} = %s AND {access.own_assignment_sql(f't.{t.user}')}"
            f" LEFT OUTER JOIN {po.table} p ON p.{po.id} = a.{a.pool}"
            f" LEFT OUTER JOIN {s.table} s ON s.{s.id} = p.{po.study}"
        )
    return (
        f"SELECT {select}, EXISTS (SELECT 1 FROM {p.table} pcr WHERE pcr.{p.user} = t.{t.user}) "
        f"FROM {t.table} t INNER JOIN {u.table} u ON u.{u.id} = t.{t.user}{joins} WHERE t.{t.key} = %s"
    )


def token_lookup(
    key: str, *, assignment_pk: Any = None
) -> tuple[Any, Token, bool, Assignment | None] | None:
    """The token ``key`` with its person and whether that person holds a one-time password; None if the
    token is unknown. With ``assignment_pk``, also that assignment if the person may work on it (as
    :func:`assignment_for_annotator`, in the same statement), else None."""
    with_assignment = _valid_id(assignment_pk)
    params = [assignment_pk, key] if with_assignment else [key]
    with rawsql.cursor() as cursor:
        cursor.execute(_cached(("token", with_assignment), lambda: _token_sql(with_assignment)), params)
        row = cursor.fetchone()
    if row is None:
        return None
    n, m = len(_TOKEN), len(_USER)
    token = _TOKEN.build(connection, row[:n])
    user = _USER.build(connection, row[n : n + m])
    token.user = user  # type: ignore[attr-defined]
    assignment = None
    if with_assignment and row[n + m] is not None:
        assignment = _build_access(row[n + m : -2])
        assignment.pool.__dict__[QUESTIONS_REVISION] = row[-2]
    return user, token, bool(row[-1]), assignment  # type: ignore[return-value]


def _valid_id(pk: Any) -> bool:
    return isinstance(pk, int) and not isinstance(pk, bool) and BIGINT[0] <= pk <= BIGINT[1]


def _build_access(values: Any, with_item: bool = False) -> Assignment:
    built = []
    start = 0
    for columns in _ACCESS_WITH_ITEM if with_item else _ACCESS:
        built.append(columns.build(connection, values[start : start + len(columns)]))
        start += len(columns)
    assignment, pool, study = built[:3]
    pool.study = study  # type: ignore[attr-defined]
    assignment.pool = pool  # type: ignore[attr-defined]
    if with_item:
        assignment.item = built[3]  # type: ignore[attr-defined]
    return assignment  # type: ignore[return-value]


# --- Access: the annotator's own assignment, with pool and study, in one statement -------------------


def _access_sql(with_item: bool) -> str:
    parts = _ACCESS_WITH_ITEM if with_item else _ACCESS
    a, p, s = rawsql.names(Assignment), rawsql.names(Pool), rawsql.names(Study)
    i = rawsql.names(Item)
    item_join = f" INNER JOIN {i.table} i ON i.{i.id} = a.{a.item}" if with_item else ""
    return (
        f"SELECT {', '.join(columns.select(connection) for columns in parts)} FROM {a.table} a "
        f"INNER JOIN {p.table} p ON p.{p.id} = a.{a.pool} INNER JOIN {s.table} s ON s.{s.id} = p.{p.study}"
        f"{item_join} WHERE a.{a.id} = %s AND {access.own_assignment_sql('%s')}"
    )


def assignment_for_annotator(pk: int, user_id: Any, *, with_item: bool = False) -> Assignment | None:
    """The assignment ``pk`` if the access rule lets ``user_id`` reach it (its pool and study attached, and its
    item when ``with_item``); None otherwise."""
    if user_id is None or not _valid_id(pk):
        return None
    with rawsql.cursor() as cursor:
        cursor.execute(_cached(("access", with_item), lambda: _access_sql(with_item)), [pk, user_id, user_id])
        row = cursor.fetchone()
    return None if row is None else _build_access(row, with_item)


# --- The pool's questions ---------------------------------------------------------------------------

_QUESTION = rawsql.Columns(Question, "q")


def _pool_questions_sql() -> str:
    q, pq = rawsql.names(Question), rawsql.names(Pool.questions.through)
    return (
        f"SELECT {_QUESTION.select(connection)} FROM {q.table} q INNER JOIN {pq.table} pq "
        f"ON pq.{pq.question} = q.{q.id} WHERE pq.{pq.pool} = %s ORDER BY q.{q.order}, q.{q.id}"
    )


def pool_questions(pool_id: int) -> list[Question]:
    """The questions of the pool, in protocol order (order, then id)."""
    with rawsql.cursor() as cursor:
        cursor.execute(_cached("questions", _pool_questions_sql), [pool_id])
        return [_QUESTION.build(connection, row) for row in cursor.fetchall()]  # type: ignore[misc]


# --- The save: lock the assignment, then write the label and its history ----------------------------

LOCK_COLUMNS = ("id", "question_id", "unit_key", "value", "version", "updated_by_id", "updated_at")


def _unit_exists(scope: str, unit_key: str) -> tuple[str, list[Any]]:
    """Which of the conditions of :func:`_unit_exists_sql` tells whether the assignment's item has the unit
    ``unit_key`` of ``scope`` (the same units as ``annotation.item_units.ItemUnits.keys_for``), and its parameters."""
    if not units.is_valid(unit_key):
        return "none", []
    unit = units.parse(unit_key)
    if unit.scope != scope:
        return "none", []
    if unit.kind == units.ITEM:
        return "item", []
    ref = unit.ref or 0
    if unit.kind == units.ANSWER_SENTENCE:
        return ("sentence", ["answer", ref]) if ref <= POSITIVE_INT_MAX else ("none", [])
    if unit.kind == units.CHUNK:
        return ("chunk", [ref]) if ref <= POSITIVE_INT_MAX else ("none", [])
    return ("aspect", [ref, AspectStatus.ACCEPTED.value]) if ref <= BIGINT[1] else ("none", [])


def _unit_exists_sql(kind: str, named: bool = False) -> str:
    """The SQL condition over the assignment row ``a`` of one kind of :func:`_unit_exists` (``named``: its
    parameters as ``%(unit0)s``, ``%(unit1)s``, for a statement with named parameters)."""
    if kind in ("none", "item"):
        return "1 = 0" if kind == "none" else "1 = 1"
    p0, p1 = ("%(unit0)s", "%(unit1)s") if named else ("%s", "%s")
    a = rawsql.names(Assignment)
    if kind == "sentence":
        x = rawsql.names(Sentence)
        return (
            f"EXISTS (SELECT 1 FROM {x.table} x WHERE x.{x.item} = a.{a.item} AND x.{x.part} = {p0} "
            f"AND x.{x.index} = {p1})"
        )
    if kind == "chunk":
        x = rawsql.names(Chunk)
        return f"EXISTS (SELECT 1 FROM {x.table} x WHERE x.{x.item} = a.{a.item} AND x.{x.rank} = {p0})"
    x = rawsql.names(Aspect)
    return (
        f"EXISTS (SELECT 1 FROM {x.table} x WHERE x.{x.item} = a.{a.item} AND x.{x.id} = {p0} "
        f"AND x.{x.status} = {p1} AND x.{x.retired_in_version} IS NULL)"
    )


def _lock_sql(kind: str, one_label: bool) -> str:
    a, lb = rawsql.names(Assignment), rawsql.names(Label)
    lock = " FOR UPDATE OF a" if connection.features.has_select_for_update_of else ""
    labels = ", ".join(f"l.{getattr(lb, name.removesuffix('_id'))}" for name in LOCK_COLUMNS)
    which = f"l.{lb.question} = %s AND l.{lb.unit_key} = %s" if one_label else f"l.{lb.unit_key} IN (%s, %s)"
    return (
        f"SELECT a.{a.status}, a.{a.reserved_until}, {_unit_exists_sql(kind)}, {labels} FROM {a.table} a "
        f"LEFT OUTER JOIN {lb.table} l ON l.{lb.assignment} = a.{a.id} AND {which} "
        f"WHERE a.{a.id} = %s{lock}"
    )


def lock_open_assignment(
    assignment_id: int, scope: str, unit_key: str, *, only_question: int | None = None
) -> list[tuple[Any, ...]]:
    """Lock the assignment row (FOR UPDATE where the database has it; SQLite's writers are serialised by its
    IMMEDIATE transactions) and read, in the same statement, its status and reservation, whether the unit
    exists, and its labels of ``unit_key`` and of the item (with ``only_question``: its label of that question
    and unit): one row per label (or one row of NULLs), as ``(status, reserved_until, unit_exists,
    *LOCK_COLUMNS)`` with values converted as the ORM would."""
    kind, exists_params = _unit_exists(scope, unit_key)
    one_label = only_question is not None
    sql = _cached(("lock", kind, one_label), lambda: _lock_sql(kind, one_label))
    which_params = [only_question, unit_key] if one_label else [unit_key, units.ITEM]
    with rawsql.cursor() as cursor:
        cursor.execute(sql, [*exists_params, *which_params, assignment_id])
        rows = cursor.fetchall()
    c = connection
    converted = []
    for status, reserved_until, unit_ok, pk, question_id, key, value, version, updated_by_id, updated_at in rows:
        converted.append((
            status, rawsql.convert_value(c, Assignment, "reserved_until", reserved_until), unit_ok,
            pk, question_id, key, rawsql.convert_value(c, Label, "value", value), version, updated_by_id,
            rawsql.convert_value(c, Label, "updated_at", updated_at),
        ))
    return converted


# On PostgreSQL the label and its history row are one statement (a data-modifying WITH); SQLite has no
# such statement, so there they are two, in the same transaction.


def _label_sql() -> dict[str, str]:
    lb, h = rawsql.names(Label), rawsql.names(LabelHistory)
    history = (
        f"INSERT INTO {h.table} ({h.label}, {h.old_value}, {h.new_value}, {h.old_version}, {h.new_version}, "
        f"{h.actor}, {h.at}, {h.undoes}) "
    )
    insert = (
        f"INSERT INTO {lb.table} ({lb.assignment}, {lb.question}, {lb.unit_key}, {lb.value}, {lb.version}, "
        f"{lb.updated_by}, {lb.updated_at}) VALUES (%s, %s, %s, %s, 1, %s, %s) RETURNING {lb.id}"
    )
    update = (
        f"UPDATE {lb.table} SET {lb.value} = %s, {lb.version} = {lb.version} + 1, {lb.updated_by} = %s, "
        f"{lb.updated_at} = %s WHERE {lb.id} = %s AND {lb.version} = %s"
    )
    if connection.vendor == "postgresql":
        return {
            "insert": f"WITH new AS ({insert}) {history}SELECT new.{lb.id}, NULL, %s, NULL, 1, %s, %s, NULL "
            f"FROM new RETURNING {h.label}",
            "update": f"WITH changed AS ({update} RETURNING {lb.id}) {history}SELECT changed.{lb.id}, %s, %s, "
            f"%s, %s, %s, %s, NULL FROM changed RETURNING {h.label}",
        }
    return {"insert": insert, "update": update, "history": f"{history}VALUES (%s, %s, %s, %s, %s, %s, %s, NULL)"}


def insert_label_and_history(label: Label) -> int:
    """INSERT the new label (version 1) and its first history row; returns the label's id. A concurrent
    first answer to the same unit raises IntegrityError (the unique constraint), as ``create`` would."""
    c = connection
    value = rawsql.adapt(c, Label, "value", label.value)
    at = rawsql.adapt(c, Label, "updated_at", label.updated_at)
    new_value = rawsql.adapt(c, LabelHistory, "new_value", label.value)
    sql = _cached("label", _label_sql)
    label_params = [label.assignment_id, label.question_id, label.unit_key, value, label.updated_by_id, at]
    with rawsql.cursor() as cursor:
        if c.vendor == "postgresql":
            cursor.execute(sql["insert"], [*label_params, new_value, label.updated_by_id, at])
            return int(cursor.fetchone()[0])
        cursor.execute(sql["insert"], label_params)
        label_id = int(cursor.fetchone()[0])
        cursor.execute(sql["history"], [label_id, None, new_value, None, 1, label.updated_by_id, at])
        return label_id


def update_label_and_history(current: Label, value: Any, actor_id: Any, now: datetime) -> bool:
    """UPDATE the label to ``value`` (version + 1) if it is still at ``current.version``, with its history
    row; returns whether it was."""
    c = connection
    old = current.version
    new = rawsql.adapt(c, Label, "value", value)
    at = rawsql.adapt(c, Label, "updated_at", now)
    old_value = rawsql.adapt(c, LabelHistory, "old_value", current.value)
    new_value = rawsql.adapt(c, LabelHistory, "new_value", value)
    sql = _cached("label", _label_sql)
    with rawsql.cursor() as cursor:
        if c.vendor == "postgresql":
            params = [new, actor_id, at, current.pk, old, old_value, new_value, old, old + 1, actor_id, at]
            cursor.execute(sql["update"], params)
            return cursor.fetchone() is not None
        cursor.execute(sql["update"], [new, actor_id, at, current.pk, old])
        if cursor.rowcount != 1:
            return False
        cursor.execute(sql["history"], [current.pk, old_value, new_value, old, old + 1, actor_id, at])
        return True


# --- The common save in one statement (PostgreSQL) ----------------------------------------------------
#
# One statement, which outside a transaction is its own (inside one, an undo's, it is one statement of it):
# it locks the assignment row, checks that the assignment is open and the unit exists, and writes either
# the first answer (base version 0, no label yet) or the next version of the label (the label at the base
# version, its value different), with its history row, and extends a reservation about to lapse, as the
# locked save does in a transaction of four statements. When
# it writes nothing (an item no longer open, a unit that does not exist, a stale base version, a repeat of
# the stored value, a concurrent first answer) it has changed nothing, and the caller runs the locked save,
# which answers those cases.
#
# The label is read in the statement's snapshot, which may predate the lock when the statement waited for
# it; the update is therefore guarded twice: the label read has the base version, and the row updated
# still has it (PostgreSQL re-checks the updated row's condition on its newest version). The history row's
# old value is then the value at the base version. A concurrent first answer meets the unique constraint
# and is skipped (ON CONFLICT DO NOTHING), never raised.


def _save_at_once_sql(kind: str) -> str:
    a, lb, h = rawsql.names(Assignment), rawsql.names(Label), rawsql.names(LabelHistory)
    return (
        f"WITH a AS (SELECT a.{a.id}, a.{a.status}, a.{a.reserved_until}, {_unit_exists_sql(kind, True)} AS unit_ok "
        f"FROM {a.table} a WHERE a.{a.id} = %(assignment)s FOR UPDATE OF a), "
        f"go AS (SELECT a.{a.id} FROM a WHERE a.{a.status} IN (%(assigned)s, %(started)s) AND a.unit_ok), "
        f"cur AS (SELECT l.{lb.id}, l.{lb.version}, l.{lb.value} FROM {lb.table} l "
        f"WHERE l.{lb.assignment} = %(assignment)s AND l.{lb.question} = %(question)s "
        f"AND l.{lb.unit_key} = %(unit_key)s), "
        f"changed AS (UPDATE {lb.table} l SET {lb.value} = %(value)s, {lb.version} = l.{lb.version} + 1, "
        f"{lb.updated_by} = %(actor)s, {lb.updated_at} = %(now)s FROM cur, go "
        f"WHERE l.{lb.id} = cur.{lb.id} AND cur.{lb.version} = %(base)s AND l.{lb.version} = %(base)s "
        f"AND l.{lb.value} IS DISTINCT FROM %(value)s RETURNING l.{lb.id}, l.{lb.version}, cur.{lb.value} AS old), "
        f"added AS (INSERT INTO {lb.table} ({lb.assignment}, {lb.question}, {lb.unit_key}, {lb.value}, "
        f"{lb.version}, {lb.updated_by}, {lb.updated_at}) SELECT go.{a.id}, %(question)s, %(unit_key)s, "
        f"%(value)s, 1, %(actor)s, %(now)s FROM go WHERE %(base)s = 0 AND NOT EXISTS (SELECT 1 FROM cur) "
        f"ON CONFLICT ({lb.assignment}, {lb.question}, {lb.unit_key}) DO NOTHING RETURNING {lb.id}), "
        f"history AS (INSERT INTO {h.table} ({h.label}, {h.old_value}, {h.new_value}, {h.old_version}, "
        f"{h.new_version}, {h.actor}, {h.at}, {h.undoes}) "
        f"SELECT w.id, w.old, %(history_value)s, w.old_version, w.new_version, %(actor)s, %(now)s, NULL "
        f"FROM (SELECT changed.{lb.id} AS id, changed.old, %(base)s AS old_version, changed.{lb.version} AS "
        f"new_version FROM changed UNION ALL SELECT added.{lb.id}, NULL, NULL, 1 FROM added) w "
        f"RETURNING {h.label}), "
        f"extended AS (UPDATE {a.table} x SET {a.reserved_until} = %(until)s FROM a "
        f"WHERE x.{a.id} = a.{a.id} AND a.{a.reserved_until} < %(soon)s "
        f"AND EXISTS (SELECT 1 FROM history)) "
        f"SELECT (SELECT {lb.id} FROM changed), (SELECT {lb.version} FROM changed), (SELECT {lb.id} FROM added) "
        f"FROM a"
    )


def save_label_at_once(
    *, assignment_id: int, question_id: int, scope: str, unit_key: str, value: Any, base_version: int,
    actor_id: Any, now: datetime, reserve_until: datetime, reserve_if_before: datetime,
) -> tuple[int, int] | None:
    """Write the answer in one statement (PostgreSQL only; see above): ``(label id, new version)``, or None
    when it wrote nothing."""
    kind, exists_params = _unit_exists(scope, unit_key)
    if kind == "none":
        # No such unit: the statement would write nothing, and a key longer than the column (a 400-digit
        # one) would not even bind to it. The locked save refuses it.
        return None
    c = connection
    params = {
        "assignment": assignment_id, "question": question_id, "unit_key": unit_key, "base": base_version,
        "value": rawsql.adapt(c, Label, "value", value),
        "history_value": rawsql.adapt(c, LabelHistory, "new_value", value),
        "actor": actor_id, "now": rawsql.adapt(c, Label, "updated_at", now),
        "until": rawsql.adapt(c, Assignment, "reserved_until", reserve_until),
        "soon": rawsql.adapt(c, Assignment, "reserved_until", reserve_if_before),
        # Only an open item takes answers (submitted, skipped or withdrawn: the locked save says why not).
        "assigned": AssignmentStatus.ASSIGNED.value, "started": AssignmentStatus.STARTED.value,
    }
    sql = _cached(("at-once", kind), lambda: _save_at_once_sql(kind))
    for n, param in enumerate(exists_params):
        params[f"unit{n}"] = param
    with rawsql.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    # (PostgreSQL runs every data-modifying WITH part once, read or not: ``extended`` needs no reader.)
    changed_id, changed_version, added_id = row
    if changed_id is not None:
        return int(changed_id), int(changed_version)
    if added_id is not None:
        return int(added_id), 1
    return None
