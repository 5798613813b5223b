"""The per-pool, per-item assignment counts (``PoolItemCounts``), kept by database triggers.

The data manager filters items by their state in a pool ("done", "not assigned"). Read from the assignments,
that is a join over every assignment of the pool — k per item, three million at a million items with k = 3 —
whatever page is asked for. The counts table holds one row per (pool, item) with the number of its
assignments in each state, so those filters read one index entry per item (partial indexes of the done and
the assigned rows).

The counts are written only by triggers on the assignment table, in the same transaction as the change:

* PostgreSQL: one statement-level trigger per operation with transition tables, so a bulk insert (the pool's
  top-up, an import's COPY) or a bulk status change updates each (pool, item) once, in (pool, item) order (the
  same lock order for every writer). Enabled ALWAYS, as the audit triggers are: a replication role does not
  silence it.
* SQLite: row-level triggers (SQLite has no others); its writers are serialised anyway.

An UPDATE that leaves the status, pool and item as they were (a reservation renewed on each page view) changes
no count and writes nothing. A count can never go below zero (a check constraint): a change the triggers
missed is refused loudly rather than shown as a wrong state.

:func:`install` creates the triggers where they are missing (or finishes a rebuild that did not finish) and
rebuilds every count from the assignments. It runs after every ``migrate`` (the app's post_migrate handler).
On PostgreSQL, where annotators keep working through an upgrade, the rebuild goes in steps of
``REBUILD_ITEMS`` item ids, each holding the assignment table's SHARE ROW EXCLUSIVE lock for a fraction of a
second (a label save writes its assignment, so it waits for one step at most), with the check constraint
dropped meanwhile and validated again at the end (see :func:`install`). On SQLite the triggers are dropped
before each ``migrate`` (a table SQLite rebuilds to alter it loses its triggers, and a rename is refused while
triggers name a table), so there they are recreated and the counts rebuilt, in one transaction, after each one.
"""

from __future__ import annotations

import time
from typing import Any

from django.db import OperationalError, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from annotation import audit

ASSIGNMENTS = "annotation_assignment"
COUNTS = "annotation_poolitemcounts"
FUNCTION = "concord_pool_item_counts"
OPERATIONS = ("insert", "update", "delete")

# Each count, and the statuses it counts (annotation.models.AssignmentStatus).
COLUMNS = {
    "n_open": ("assigned", "started"),
    "n_submitted": ("submitted",),
    "n_skipped": ("skipped",),
    "n_withdrawn": ("withdrawn",),
}


def trigger_name(operation: str) -> str:
    return f"concord_pool_item_counts_{operation}"


def _is(status: str, statuses: tuple[str, ...]) -> str:
    """SQL: 1 when ``status`` (an expression) is one of ``statuses``, else 0."""
    listed = ", ".join(f"'{s}'" for s in statuses)
    return f"(CASE WHEN {status} IN ({listed}) THEN 1 ELSE 0 END)"


def _tally(rows: str) -> str:
    """SQL: each (pool, item) of ``rows`` (a relation with pool_id, item_id, status) with its counts."""
    sums = ", ".join(f"SUM({_is('status', statuses)}) AS {column}" for column, statuses in COLUMNS.items())
    return f"SELECT pool_id, item_id, {sums} FROM {rows} GROUP BY pool_id, item_id"


_ADD = ", ".join(f"{c} = c.{c} + EXCLUDED.{c}" for c in COLUMNS)
_NAMES = ", ".join(COLUMNS)


def _upsert(select: str) -> str:
    return (
        f"INSERT INTO {COUNTS} AS c (pool_id, item_id, {_NAMES}) {select} ORDER BY pool_id, item_id "
        f"ON CONFLICT (pool_id, item_id) DO UPDATE SET {_ADD}"
    )


def _pg_function() -> str:
    moved = "(n.status, n.pool_id, n.item_id) IS DISTINCT FROM (o.status, o.pool_id, o.item_id)"
    pairs = f"FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE {moved}"
    changed = (
        f"SELECT n.pool_id, n.item_id, n.status, 1 AS sign {pairs} "
        f"UNION ALL SELECT o.pool_id, o.item_id, o.status, -1 {pairs}"
    )
    signed = ", ".join(f"SUM(sign * {_is('status', statuses)}) AS {column}" for column, statuses in COLUMNS.items())
    # A change within one count (assigned to started, on an item's first opening) writes nothing.
    nonzero = " OR ".join(f"SUM(sign * {_is('status', statuses)}) <> 0" for statuses in COLUMNS.values())
    zeros = ", ".join("0" for _ in COLUMNS)
    # PostgreSQL checks an upsert's proposed row against the check constraint before it finds the conflict, so a
    # change that lowers a count is an UPDATE of a row that exists (created with zeros where an assignment moved
    # to a (pool, item) that had none), never a proposed negative row.
    add = ", ".join(f"{c} = c.{c} + d.{c}" for c in COLUMNS)
    subtract = ", ".join(f"{c} = c.{c} - d.{c}" for c in COLUMNS)
    return f"""
CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        {_upsert(_tally("new_rows"))};
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO {COUNTS} (pool_id, item_id, {_NAMES})
        SELECT DISTINCT n.pool_id, n.item_id, {zeros} {pairs} ORDER BY 1, 2
        ON CONFLICT (pool_id, item_id) DO NOTHING;
        UPDATE {COUNTS} c SET {add}
        FROM (SELECT pool_id, item_id, {signed} FROM ({changed}) m GROUP BY pool_id, item_id HAVING {nonzero}) d
        WHERE c.pool_id = d.pool_id AND c.item_id = d.item_id;
    ELSE
        UPDATE {COUNTS} c SET {subtract} FROM ({_tally("old_rows")}) d
        WHERE c.pool_id = d.pool_id AND c.item_id = d.item_id;
    END IF;
    RETURN NULL;
END
$$"""


def _pg_triggers() -> list[str]:
    tables = {
        "insert": "NEW TABLE AS new_rows",
        "update": "NEW TABLE AS new_rows OLD TABLE AS old_rows",
        "delete": "OLD TABLE AS old_rows",
    }
    out = [_pg_function()]
    for op in OPERATIONS:
        name = trigger_name(op)
        out.append(
            f"CREATE TRIGGER {name} AFTER {op.upper()} ON {ASSIGNMENTS} REFERENCING {tables[op]} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {FUNCTION}()"
        )
        out.append(f"ALTER TABLE {ASSIGNMENTS} ENABLE ALWAYS TRIGGER {name}")
    return out


def _sqlite_row(ref: str) -> str:
    return ", ".join(_is(f"{ref}.status", statuses) for statuses in COLUMNS.values())


def _sqlite_add(ref: str) -> str:
    return (
        f"INSERT INTO {COUNTS} (pool_id, item_id, {_NAMES}) VALUES ({ref}.pool_id, {ref}.item_id, {_sqlite_row(ref)}) "
        f"ON CONFLICT (pool_id, item_id) DO UPDATE SET " + ", ".join(f"{c} = {c} + excluded.{c}" for c in COLUMNS)
    )


def _sqlite_subtract(ref: str) -> str:
    sets = ", ".join(f"{c} = {c} - {_is(f'{ref}.status', statuses)}" for c, statuses in COLUMNS.items())
    return f"UPDATE {COUNTS} SET {sets} WHERE pool_id = {ref}.pool_id AND item_id = {ref}.item_id"


def _sqlite_triggers() -> list[str]:
    moved = "OLD.status IS NOT NEW.status OR OLD.pool_id IS NOT NEW.pool_id OR OLD.item_id IS NOT NEW.item_id"
    return [
        f"CREATE TRIGGER {trigger_name('insert')} AFTER INSERT ON {ASSIGNMENTS} BEGIN {_sqlite_add('NEW')}; END",
        f"CREATE TRIGGER {trigger_name('update')} AFTER UPDATE ON {ASSIGNMENTS} WHEN {moved} "
        f"BEGIN {_sqlite_subtract('OLD')}; {_sqlite_add('NEW')}; END",
        f"CREATE TRIGGER {trigger_name('delete')} AFTER DELETE ON {ASSIGNMENTS} BEGIN {_sqlite_subtract('OLD')}; END",
    ]


def present(*, using: str = "default") -> set[str]:
    """The names of the counts' triggers that exist."""
    connection = connections[using]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgname LIKE 'concord_pool_item_counts%%'"
            )
        else:
            cursor.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'concord_pool_item_counts%'"
            )
        return {row[0] for row in cursor.fetchall()}


def _tables(connection: BaseDatabaseWrapper) -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.table_names(cursor))


def remove(*, using: str = "default") -> None:
    connection = connections[using]
    with connection.cursor() as cursor:
        for op in OPERATIONS:
            if connection.vendor == "postgresql":
                cursor.execute(f"DROP TRIGGER IF EXISTS {trigger_name(op)} ON {ASSIGNMENTS}")
            else:
                cursor.execute(f"DROP TRIGGER IF EXISTS {trigger_name(op)}")


# Items per step of PostgreSQL's rebuild: each step holds the assignment table's lock for a fraction of a second
# (about 0.3 s for 20,000 items at a million; label saves write their assignment, so they wait that long at most).
REBUILD_ITEMS = 20_000
CHECK = "pool_item_counts_not_negative"  # the model's check constraint (annotation.models.PoolItemCounts)


def rebuild(*, using: str = "default", items: tuple[int, int] | None = None) -> int:
    """Recompute the counts from the assignments, of every item or of the item ids in ``[lo, hi)``; returns how many
    (pool, item) rows were written. Call it where assignment writers are kept out (:func:`install` does)."""
    connection = connections[using]
    where, params = ("", []) if items is None else (" WHERE item_id >= %s AND item_id < %s", list(items))
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {COUNTS}{where}", params)
        cursor.execute(f"INSERT INTO {COUNTS} (pool_id, item_id, {_NAMES}) {_tally(ASSIGNMENTS + where)}", params)
        return int(cursor.rowcount)


def install(*, using: str = "default") -> bool:
    """Create the triggers where any is missing, and then rebuild the counts. Returns whether anything was done
    (False: the triggers were all there, the counts kept up to date by them).

    SQLite: one transaction (its writers are serialised anyway). PostgreSQL, where annotators keep working through
    an upgrade: the triggers first (the count's check constraint dropped meanwhile: an assignment of an item not
    yet rebuilt may move a count below zero until its step rewrites it), then the counts in steps of
    ``REBUILD_ITEMS`` item ids, each under the table's SHARE ROW EXCLUSIVE lock (assignment writers, label saves
    among them, wait for one step at most; the step reads a table nobody changes, and the triggers keep what it
    wrote exact from its commit on), then the check constraint back (``NOT VALID``, then validated without
    blocking writers)."""
    connection = connections[using]
    if connection.vendor not in ("postgresql", "sqlite"):
        raise RuntimeError(f"Concord runs on PostgreSQL or SQLite, not {connection.vendor}: no assignment counts")
    tables = _tables(connection)
    if ASSIGNMENTS not in tables:
        return False
    if COUNTS not in tables:  # migrated back past the counts' table: triggers naming it would break every write
        removed = bool(present(using=using))
        remove(using=using)
        return removed
    if present(using=using) == {trigger_name(op) for op in OPERATIONS} and _checked(connection):
        return False
    if connection.vendor == "sqlite":
        with transaction.atomic(using=using):
            remove(using=using)
            with connection.cursor() as cursor:
                for sql in _sqlite_triggers():
                    cursor.execute(sql)
            rebuild(using=using)
        return True
    # CREATE OR REPLACE (PostgreSQL 14+): DROP TRIGGER would take the table's ACCESS EXCLUSIVE lock. The check
    # constraint goes in the same step; it comes back last, so that its absence says a rebuild is unfinished.
    statements = [
        f"ALTER TABLE {COUNTS} DROP CONSTRAINT IF EXISTS {CHECK}",
        *(sql.replace("CREATE TRIGGER ", "CREATE OR REPLACE TRIGGER ", 1) for sql in _pg_triggers()),
    ]
    _locked(using, lambda cursor: [cursor.execute(sql) for sql in statements])
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT MIN(item_id), MAX(item_id) FROM {ASSIGNMENTS}")
        low, high = cursor.fetchone()
    low, high = (0, 0) if low is None else (low, high + 1)
    # Rows of items outside the assignments' range (all of them, with no assignments left) go in the first step.
    _locked(
        using, lambda cursor: cursor.execute(f"DELETE FROM {COUNTS} WHERE item_id < %s OR item_id >= %s", [low, high])
    )
    for start in range(low, high, REBUILD_ITEMS):
        span = (start, min(start + REBUILD_ITEMS, high))
        _locked(using, lambda cursor, span=span: rebuild(using=using, items=span))
    checks = " AND ".join(f"{c} >= 0" for c in COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {COUNTS} ADD CONSTRAINT {CHECK} CHECK ({checks}) NOT VALID")
        cursor.execute(f"ALTER TABLE {COUNTS} VALIDATE CONSTRAINT {CHECK}")
    return True


def _checked(connection: BaseDatabaseWrapper) -> bool:
    """Whether the counts' check constraint is there (PostgreSQL; part of SQLite's table): the last step of a
    rebuild, so False after an interrupted one, which the next :func:`install` then does again."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_constraint WHERE conname = %s AND conrelid = %s::regclass", [CHECK, COUNTS])
        return cursor.fetchone() is not None


def _locked(using: str, step: Any) -> None:
    """``step(cursor)`` in a transaction holding the assignment table's SHARE ROW EXCLUSIVE lock (PostgreSQL). Like
    the audit triggers' install, the lock is waited for at most INSTALL_LOCK_TIMEOUT_MS at a time and retried, so
    that no writer queues behind a waiting install; a table that stays busy fails with the lock timeout."""
    connection = connections[using]
    for attempt in range(audit.INSTALL_ATTEMPTS):
        try:
            with transaction.atomic(using=using), connection.cursor() as cursor:
                cursor.execute("SHOW lock_timeout")
                before = cursor.fetchone()[0]
                cursor.execute(f"SET LOCAL lock_timeout = '{audit.INSTALL_LOCK_TIMEOUT_MS}ms'")
                cursor.execute(f"LOCK TABLE {ASSIGNMENTS} IN SHARE ROW EXCLUSIVE MODE")
                cursor.execute("SELECT set_config('lock_timeout', %s, true)", [before])
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE refuses pending deferred checks
                step(cursor)
            return
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != "55P03" or attempt == audit.INSTALL_ATTEMPTS - 1:
                raise  # not a lock timeout, or the table stayed busy: migrate fails, saying why
            time.sleep(0.2 * (attempt + 1))


def on_pre_migrate(*, using: str = "default", **kwargs: Any) -> None:
    # See the module docstring: SQLite loses a rebuilt table's triggers and refuses renames they name.
    if connections[using].vendor == "sqlite" and ASSIGNMENTS in _tables(connections[using]):
        remove(using=using)


def on_post_migrate(*, using: str = "default", **kwargs: Any) -> None:
    install(using=using)
