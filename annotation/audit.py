"""The audit trail: database triggers record every change to the audited tables, a hash chain seals them.

Why triggers: labels, gold, memberships and settings are also changed by bulk ``QuerySet.update()``,
``bulk_create`` and raw SQL, which no model method or signal sees. A trigger sees every INSERT, UPDATE
and DELETE of a row, whatever issued it (the ORM, a shell, a worker, a psql session).

How it works:

* ``audited_tables()`` is what is audited: each app declares its own tables in its AppConfig (``Audited``
  specs). ``triggers_install`` (run after every ``migrate`` and ``flush`` by annotation/apps.py and the
  ``flush`` command) creates, for each of these tables that exists, AFTER INSERT / UPDATE / DELETE row
  triggers that insert an unsealed :class:`~annotation.models.AuditEvent` with the old and new row as JSON.
  On PostgreSQL one generic PL/pgSQL function does this with ``to_jsonb(OLD/NEW)``; on SQLite, which has no
  row-to-JSON function, each trigger spells out ``json_object()`` over the table's actual columns, so the
  triggers are regenerated whenever a migration changes a table (on SQLite they are dropped before
  ``migrate`` and recreated after it, which also keeps SQLite's table rebuilds free of dangling trigger
  references).
* Protective triggers on the audit table refuse every DELETE (and TRUNCATE on PostgreSQL) and every
  UPDATE except the one that seals an unsealed event (setting ``seq``, ``prev_hash`` and ``hash`` only).
* ``events_seal`` appends unsealed events to the chain in id order:
  ``hash = sha256(prev_hash + canonical JSON of the event)``, ``seq`` counting 1, 2, 3, ... .
  Someone who can drop the protective triggers can still edit or delete rows; ``chain_verify`` then
  finds the first event whose hash, link or position no longer holds. Rewriting the whole tail of the
  chain consistently is caught by the anchor: ``audit_verify`` records the verified head (seq and hash) in
  a file outside the database and later refuses a chain that no longer contains it.
* The chain proves the trail intact; the data is then checked against the trail, for the tables whose
  ``Audited`` spec names ``fixed_columns`` (who is credited: an assignment's annotator, pool and item, a
  label's assignment, a history row, a membership's pseudonym, an import identity, gold's adjudicator) and
  ``tracked_columns``: ``attribution_changes`` finds UPDATE events of a fixed column (the application never
  makes one), ``rows_unaccounted`` rows that were created, changed or deleted with the triggers off (no
  creation event, fixed columns other than their creation event recorded, tracked columns other than their
  latest event recorded, gone without a DELETE event), ``labels_unaccounted`` labels that do not match
  their history. Rows that existed when this began (migration 0012) have a baseline event (``EXISTS``).

The acting user: SQLite has no per-transaction variable that a trigger could read, so ``actor_id`` is
the user that the audited row itself names (``Label.updated_by``, ``LabelHistory.actor``,
``GoldLabel.adjudicator``, ``ExportDownload.user``, ...), read from the new row; DELETE events have no
actor. Tables without such a column (roles, memberships, study settings) record who changed them only
through the surrounding rows the services write in the same transaction.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.apps import apps as global_apps
from django.core.exceptions import ImproperlyConfigured
from django.db import OperationalError, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

AUDIT_TABLE = "annotation_auditevent"
GENESIS_HASH = ""
# An arbitrary constant: the PostgreSQL advisory lock that serialises sealing.
_SEAL_LOCK_KEY = 7_262_010_401
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# SQLite's default SQLITE_MAX_FUNCTION_ARG is 127: json_object takes two arguments per column.
_SQLITE_MAX_COLUMNS = 63


@dataclass(frozen=True)
class Audited:
    table: str
    # The column naming the acting user, as the row records it ("" when the row records none).
    actor_column: str = ""
    # When set, an UPDATE is recorded only if one of these columns changes (e.g. a user's roles, not
    # every last_login); otherwise any change of any column is recorded.
    watched_columns: tuple[str, ...] = ()
    # Columns never copied into the trail (secrets).
    excluded_columns: tuple[str, ...] = ()
    # Columns that decide whom a row credits, or what it records, and that the application writes once, when
    # it creates the row (moving an assignment to another annotator, pool or item moves its labels). An
    # UPDATE event changing one, or a row whose value differs from the one its creation event recorded,
    # fails ``audit_verify`` (``attribution_changes``, ``rows_unaccounted``).
    fixed_columns: tuple[str, ...] = ()
    # Columns the application may change, whose current value must be the one the row's latest audit event
    # recorded: every change of them is recorded, so a difference is a change made with the triggers off.
    tracked_columns: tuple[str, ...] = ()

    @property
    def verified_columns(self) -> tuple[str, ...]:
        return self.fixed_columns + self.tracked_columns


ATTRIBUTION_ASSIGNMENT = ("pool_id", "item_id", "annotator_id")
# The operation of a baseline event: the row as it stood when the trail began to vouch for it (migration
# annotation 0012; ``baseline_record``), standing in for the INSERT the trail never saw.
BASELINE = "EXISTS"


def audited_tables() -> tuple[Audited, ...]:
    """Everything that is audited: the ``audited_tables`` each installed app declares in its AppConfig, in the
    order of INSTALLED_APPS (annotation's in annotation/apps.py, adjudication's in adjudication/apps.py).

    Each app names its own tables, so this module names no table of an app above it. A table that does not
    exist (yet) is skipped and picked up by the next migrate, so an app may add its table later without touching
    this machinery's install order. Two apps declaring one table is refused: which spec would hold?"""
    specs: list[Audited] = []
    declared_by: dict[str, str] = {}
    for config in global_apps.get_app_configs():
        for spec in getattr(config, "audited_tables", ()):
            if not isinstance(spec, Audited):
                raise ImproperlyConfigured(f"{config.label}'s audited_tables holds {spec!r}, not an Audited spec")
            if spec.table in declared_by:
                raise ImproperlyConfigured(
                    f"the audited table {spec.table} is declared by both {declared_by[spec.table]} and {config.label}"
                )
            declared_by[spec.table] = config.label
            specs.append(spec)
    return tuple(specs)


_OPERATIONS = ("INSERT", "UPDATE", "DELETE")
_PROTECT_TRIGGERS = ("concord_audit_protect", "concord_audit_protect_update", "concord_audit_protect_truncate")
_PG_PROTECT_NAMES = ("concord_audit_protect", "concord_audit_protect_truncate")


def _trigger_name(table: str, operation: str) -> str:
    return f"concord_audit_{table}_{operation.lower()}"


def _check_identifier(name: str) -> str:
    if not _IDENTIFIER.match(name):
        raise ValueError(f"refusing to build audit SQL for the odd identifier {name!r}")
    return name


def _existing_tables(connection: BaseDatabaseWrapper) -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.table_names(cursor))


def _table_columns(connection: BaseDatabaseWrapper, table: str) -> list[str]:
    with connection.cursor() as cursor:
        return [_check_identifier(c.name) for c in connection.introspection.get_table_description(cursor, table)]


def _primary_key_column(connection: BaseDatabaseWrapper, table: str) -> str:
    with connection.cursor() as cursor:
        pk = connection.introspection.get_primary_key_column(cursor, table)
    return _check_identifier(pk or "id")


def _json_columns(table: str) -> set[str]:
    """Columns that hold JSON text (on SQLite they are embedded as JSON, not as a quoted string)."""
    for model in global_apps.get_models(include_auto_created=True):
        if model._meta.db_table == table:
            return {f.column for f in model._meta.concrete_fields if f.get_internal_type() == "JSONField"}
    return set()


# --- SQLite ---------------------------------------------------------------------------------------


def _sqlite_row_json(ref: str, columns: list[str], json_columns: set[str]) -> str:
    parts = []
    for column in columns:
        value = f'{ref}."{column}"'
        if column in json_columns:
            value = f"CASE WHEN json_valid({value}) THEN json({value}) ELSE {value} END"
        parts.append(f"'{column}', {value}")
    return f"json_object({', '.join(parts)})"


def _sqlite_changed(columns: list[str] | tuple[str, ...]) -> str:
    return " OR ".join(f'OLD."{c}" IS NOT NEW."{c}"' for c in columns)


def _sqlite_table_triggers(connection: BaseDatabaseWrapper, spec: Audited) -> list[str]:
    table = _check_identifier(spec.table)
    all_columns = _table_columns(connection, table)
    columns = [c for c in all_columns if c not in spec.excluded_columns]
    if len(columns) > _SQLITE_MAX_COLUMNS:
        raise ValueError(f"{table} has {len(columns)} columns; json_object() takes at most {_SQLITE_MAX_COLUMNS}")
    json_columns = _json_columns(table)
    pk = _primary_key_column(connection, table)
    watched = [c for c in spec.watched_columns if c in all_columns] or columns
    actor = spec.actor_column if spec.actor_column in all_columns else ""
    now = "strftime('%Y-%m-%d %H:%M:%f', 'now')"
    insert = (
        f"INSERT INTO {AUDIT_TABLE} "
        "(table_name, row_pk, operation, old_row, new_row, actor_id, at, seq, prev_hash, hash) "
    )
    statements = []
    for operation in _OPERATIONS:
        ref = "OLD" if operation == "DELETE" else "NEW"
        old = _sqlite_row_json("OLD", columns, json_columns) if operation != "INSERT" else "NULL"
        new = _sqlite_row_json("NEW", columns, json_columns) if operation != "DELETE" else "NULL"
        actor_value = f'NEW."{actor}"' if actor and operation != "DELETE" else "NULL"
        when = f" WHEN {_sqlite_changed(watched)}" if operation == "UPDATE" else ""
        statements.append(
            f'CREATE TRIGGER {_trigger_name(table, operation)} AFTER {operation} ON "{table}" FOR EACH ROW{when} BEGIN '
            f"{insert}VALUES ('{table}', CAST({ref}.\"{pk}\" AS TEXT), '{operation}', {old}, {new}, {actor_value}, "
            f"{now}, NULL, '', ''); END"
        )
    return statements


_SQLITE_CONTENT_COLUMNS = ("id", "table_name", "row_pk", "operation", "old_row", "new_row", "actor_id", "at")

_SQLITE_PROTECT = (
    f"CREATE TRIGGER concord_audit_protect BEFORE DELETE ON {AUDIT_TABLE} FOR EACH ROW BEGIN "
    "SELECT RAISE(ABORT, 'audit events are append-only: DELETE refused'); END",
    f"CREATE TRIGGER concord_audit_protect_update BEFORE UPDATE ON {AUDIT_TABLE} FOR EACH ROW "
    f"WHEN OLD.hash <> '' OR {_sqlite_changed(_SQLITE_CONTENT_COLUMNS)} BEGIN "
    "SELECT RAISE(ABORT, 'audit events are append-only: only sealing an unsealed event may UPDATE it'); END",
)


# --- PostgreSQL -----------------------------------------------------------------------------------

_PG_FUNCTIONS = (
    # TG_ARGV: primary key column, actor column ('' for none), comma-separated excluded columns.
    """
CREATE OR REPLACE FUNCTION concord_audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    old_row jsonb := NULL;
    new_row jsonb := NULL;
    excluded text[];
    actor text := NULL;
BEGIN
    IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(OLD); END IF;
    IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW); END IF;
    IF TG_ARGV[2] <> '' THEN
        -- Only tables with secret columns pay for removing them (each removal copies the row's JSON).
        excluded := string_to_array(TG_ARGV[2], ',');
        old_row := old_row - excluded;
        new_row := new_row - excluded;
    END IF;
    IF TG_OP <> 'DELETE' AND TG_ARGV[1] <> '' THEN actor := new_row ->> TG_ARGV[1]; END IF;
    INSERT INTO annotation_auditevent
        (table_name, row_pk, operation, old_row, new_row, actor_id, at, seq, prev_hash, hash)
    VALUES (TG_TABLE_NAME, COALESCE(new_row, old_row) ->> TG_ARGV[0], TG_OP, old_row, new_row, actor::bigint,
            clock_timestamp(), NULL, '', '');
    RETURN NULL;
END $$
""",
    """
CREATE OR REPLACE FUNCTION concord_audit_protect() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF OLD.hash = '' AND (NEW.id, NEW.table_name, NEW.row_pk, NEW.operation, NEW.old_row, NEW.new_row,
                              NEW.actor_id, NEW.at)
                IS NOT DISTINCT FROM (OLD.id, OLD.table_name, OLD.row_pk, OLD.operation, OLD.old_row, OLD.new_row,
                                      OLD.actor_id, OLD.at) THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION 'audit events are append-only: only sealing an unsealed event may UPDATE it';
    END IF;
    RAISE EXCEPTION 'audit events are append-only: % refused', TG_OP;
END $$
""",
)

_PG_PROTECT = (
    f"CREATE TRIGGER concord_audit_protect BEFORE UPDATE OR DELETE ON {AUDIT_TABLE} "
    "FOR EACH ROW EXECUTE FUNCTION concord_audit_protect()",
    f"CREATE TRIGGER concord_audit_protect_truncate BEFORE TRUNCATE ON {AUDIT_TABLE} "
    "FOR EACH STATEMENT EXECUTE FUNCTION concord_audit_protect()",
)


def _pg_quote_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _pg_table_triggers(connection: BaseDatabaseWrapper, spec: Audited) -> list[str]:
    table = _check_identifier(spec.table)
    all_columns = _table_columns(connection, table)
    pk = _primary_key_column(connection, table)
    actor = spec.actor_column if spec.actor_column in all_columns else ""
    excluded = ",".join(_check_identifier(c) for c in spec.excluded_columns)
    args = f"{_pg_quote_literal(pk)}, {_pg_quote_literal(actor)}, {_pg_quote_literal(excluded)}"
    watched = [c for c in spec.watched_columns if c in all_columns]
    if watched:
        changed = " OR ".join(f'OLD."{c}" IS DISTINCT FROM NEW."{c}"' for c in watched)
    else:
        changed = "OLD.* IS DISTINCT FROM NEW.*"
    statements = []
    for operation in _OPERATIONS:
        when = f" WHEN ({changed})" if operation == "UPDATE" else ""
        statements.append(
            f'CREATE TRIGGER {_trigger_name(table, operation)} AFTER {operation} ON "{table}" FOR EACH ROW{when} '
            f"EXECUTE FUNCTION concord_audit_row({args})"
        )
    return statements


# --- Install / remove -----------------------------------------------------------------------------


def _drop_trigger_sql(connection: BaseDatabaseWrapper, name: str, table: str) -> str:
    if connection.vendor == "postgresql":
        return f'DROP TRIGGER IF EXISTS {name} ON "{table}"'
    return f"DROP TRIGGER IF EXISTS {name}"


def _check_vendor(connection: BaseDatabaseWrapper) -> None:
    if connection.vendor not in {"sqlite", "postgresql"}:
        raise RuntimeError(f"the audit trail supports SQLite and PostgreSQL, not {connection.vendor}")


def triggers_remove(*, using: str = "default", protection_only: bool = False) -> None:
    """Drop the audit triggers (all of them, or only those protecting the audit table)."""
    connection = connections[using]
    _check_vendor(connection)
    existing = _existing_tables(connection)
    statements = []
    if AUDIT_TABLE in existing:
        statements += [_drop_trigger_sql(connection, name, AUDIT_TABLE) for name in _PROTECT_TRIGGERS]
    if not protection_only:
        for spec in audited_tables():
            if spec.table in existing:
                statements += [
                    _drop_trigger_sql(connection, _trigger_name(spec.table, op), spec.table) for op in _OPERATIONS
                ]
    with transaction.atomic(using=using), connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


# How long one table's trigger statements may wait for their lock before the table is tried again (PostgreSQL):
# a waiting lock request queues every later save of that table behind it, so it never waits long.
INSTALL_LOCK_TIMEOUT_MS = 500
INSTALL_ATTEMPTS = 20


def triggers_install(*, using: str = "default", only_missing: bool = False) -> list[str]:
    """(Re)create every audit trigger; idempotent. Returns the audited tables that exist.

    ``only_missing`` (PostgreSQL): leave alone the tables whose three triggers exist and are enabled ALWAYS, so
    that a caller inside a long transaction (migration annotation 0014, whose baseline follows) takes no lock on
    them; the full reinstall after ``migrate`` brings their definitions up to date.

    On PostgreSQL (run after every ``migrate``, on a live database) each table's triggers are replaced in place
    (``CREATE OR REPLACE TRIGGER``: a lock that lets the table be read, never the ``ACCESS EXCLUSIVE`` lock of a
    ``DROP TRIGGER``) in a transaction of their own, so a table is locked only for its own few statements, never
    while the other tables are done; each waits at most ``INSTALL_LOCK_TIMEOUT_MS`` for its lock and is tried
    again (a long transaction on the table would otherwise queue every label save behind the waiting request).
    At every moment each trigger exists: nothing is dropped. SQLite drops and recreates them in one transaction.
    """
    connection = connections[using]
    _check_vendor(connection)
    existing = _existing_tables(connection)
    if AUDIT_TABLE not in existing:
        return []
    specs = [spec for spec in audited_tables() if spec.table in existing]
    if connection.vendor == "postgresql":
        if only_missing:
            present = triggers_present(using=using)
            silenced = {entry.split()[0] for entry in triggers_not_always_enabled(using=using)}
            pending = [
                spec for spec in specs
                if any(name not in present or name in silenced
                       for name in (_trigger_name(spec.table, op) for op in _OPERATIONS))
            ]
            protect_ok = all(name in present and name not in silenced for name in _PG_PROTECT_NAMES)
            _pg_install(connection, using, pending, protect=not protect_ok)
        else:
            _pg_install(connection, using, specs)
        return [spec.table for spec in specs]
    statements: list[str] = []
    for spec in specs:
        statements += [_drop_trigger_sql(connection, _trigger_name(spec.table, op), spec.table) for op in _OPERATIONS]
        statements += _sqlite_table_triggers(connection, spec)
    statements += [_drop_trigger_sql(connection, name, AUDIT_TABLE) for name in _PROTECT_TRIGGERS]
    statements += list(_SQLITE_PROTECT)
    with transaction.atomic(using=using), connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)
    return [spec.table for spec in specs]


def _pg_install(connection: BaseDatabaseWrapper, using: str, specs: list[Audited], protect: bool = True) -> None:
    def or_replace(statements: list[str]) -> list[str]:
        return [sql.replace("CREATE TRIGGER ", "CREATE OR REPLACE TRIGGER ", 1) for sql in statements]

    # The functions first (no table lock): a trigger names its function.
    groups: list[list[str]] = [list(_PG_FUNCTIONS)]
    for spec in specs:
        # ENABLE ALWAYS: the triggers fire under ``session_replication_role = replica`` too, which would
        # otherwise silence every ordinary trigger (a superuser's way to edit without a trace).
        groups.append(
            or_replace(_pg_table_triggers(connection, spec))
            + [f'ALTER TABLE "{spec.table}" ENABLE ALWAYS TRIGGER {_trigger_name(spec.table, op)}'
               for op in _OPERATIONS]
        )
    if protect:
        groups.append(
            or_replace(list(_PG_PROTECT))
            + [f"ALTER TABLE {AUDIT_TABLE} ENABLE ALWAYS TRIGGER {name}" for name in _PG_PROTECT_NAMES]
        )
    with connection.cursor() as cursor:
        cursor.execute("SHOW lock_timeout")
        before = cursor.fetchone()[0]
    for statements in groups:
        for attempt in range(INSTALL_ATTEMPTS):
            try:
                with transaction.atomic(using=using), connection.cursor() as cursor:
                    cursor.execute(f"SET LOCAL lock_timeout = '{INSTALL_LOCK_TIMEOUT_MS}ms'")
                    for sql in statements:
                        cursor.execute(sql)
                    # Inside a caller's transaction, SET LOCAL would outlive this block: restore it.
                    cursor.execute("SELECT set_config('lock_timeout', %s, true)", [before])
                break
            except OperationalError as exc:
                if getattr(exc.__cause__, "sqlstate", None) != "55P03" or attempt == INSTALL_ATTEMPTS - 1:
                    raise  # not a lock timeout, or the table stayed busy: migrate fails, saying why
                time.sleep(0.2 * (attempt + 1))


def triggers_present(*, using: str = "default") -> set[str]:
    """Names of the audit triggers that exist in the database (for checks and tests)."""
    connection = connections[using]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgname LIKE 'concord_audit%%'")
        else:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'concord_audit%'")
        return {row[0] for row in cursor.fetchall()}


def triggers_not_always_enabled(*, using: str = "default") -> list[str]:
    """Audit triggers that exist but would not fire on every change (PostgreSQL).

    ``ALTER TABLE … DISABLE TRIGGER`` (as the tables' owner) silences a trigger; one merely ``ENABLE``d
    (not ``ENABLE ALWAYS``) is silenced by ``session_replication_role = replica``. Either way changes go
    unrecorded, so ``audit_verify`` fails. SQLite triggers cannot be disabled: always empty there.
    """
    connection = connections[using]
    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tgname, tgenabled FROM pg_trigger WHERE NOT tgisinternal AND tgname LIKE 'concord_audit%%' "
            "AND tgenabled <> 'A' ORDER BY tgname"
        )
        states = {"D": "disabled", "O": "enabled, but not ALWAYS", "R": "enabled for replicas only"}
        return [f"{name} ({states.get(str(state), state)})" for name, state in cursor.fetchall()]


def triggers_missing(*, using: str = "default") -> list[str]:
    """Audit triggers that should exist (for the audited tables that exist) but do not."""
    connection = connections[using]
    existing = _existing_tables(connection)
    if AUDIT_TABLE not in existing:
        return [f"the audit table {AUDIT_TABLE}"]
    protect = (
        "concord_audit_protect",
        "concord_audit_protect_truncate" if connection.vendor == "postgresql" else "concord_audit_protect_update",
    )
    expected = [*protect] + [
        _trigger_name(spec.table, op) for spec in audited_tables() if spec.table in existing for op in _OPERATIONS
    ]
    present = triggers_present(using=using)
    return [name for name in expected if name not in present]


def on_pre_migrate(*, using: str = "default", **kwargs: Any) -> None:
    # SQLite rebuilds a table to alter it, and refuses to rename the rebuilt audit table into place
    # while other tables' triggers name it; its json_object() column lists must be regenerated anyway.
    # PostgreSQL keeps triggers through ALTER TABLE and to_jsonb() follows new columns, so there the
    # trail keeps recording during migrations (data migrations included).
    if connections[using].vendor == "sqlite":
        triggers_remove(using=using)


def on_post_migrate(*, using: str = "default", **kwargs: Any) -> None:
    triggers_install(using=using)


# --- The hash chain -------------------------------------------------------------------------------


def event_canonical(event: Any) -> str:
    """The canonical JSON of an event's content and chain position (sorted keys, no spaces)."""
    body = {
        "seq": event.seq,
        "id": event.id,
        "table": event.table_name,
        "row_pk": event.row_pk,
        "operation": event.operation,
        "old": event.old_row,
        "new": event.new_row,
        "actor_id": event.actor_id,
        "at": event.at.isoformat(),
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def event_hash(event: Any, prev_hash: str) -> str:
    return hashlib.sha256((prev_hash + event_canonical(event)).encode("utf-8")).hexdigest()


def _events(using: str) -> Any:
    # Imported here: app configs import this module (for ``Audited``) before the models can be imported.
    from annotation.models import AuditEvent

    return AuditEvent.objects.using(using)


# Events sealed per transaction: the chain is extended batch by batch, so memory stays flat however many
# events are pending (a bulk import or a migration can leave tens of millions).
SEAL_BATCH = 5_000


def events_seal(*, using: str = "default", batch: int = SEAL_BATCH) -> int:
    """Append every unsealed event to the chain, in id order. Returns how many were sealed.

    Works in batches of ``batch`` events, each in its own transaction that holds the database's write lock
    (SQLite: the IMMEDIATE transaction; PostgreSQL: an advisory lock) and reads the chain's head afresh, so two
    sealers never give two events the same position and at most one batch of events is held in memory. Events
    committed late with a lower id are simply sealed later: the chain's order is ``seq``, not ``id``.
    """
    connection = connections[using]
    events = _events(using)
    total = 0
    after = 0  # the batches walk the ids upwards; an event committed late below ``after`` waits for the next run
    while True:
        with transaction.atomic(using=using):
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_SEAL_LOCK_KEY])
            head = events.filter(seq__isnull=False).order_by("-seq").values_list("seq", "hash").first()
            seq, prev_hash = head if head else (0, GENESIS_HASH)
            pending = list(events.filter(seq__isnull=True, id__gt=after).order_by("id")[:batch])
            if not pending:
                return total
            for event in pending:
                seq += 1
                event.seq = seq
                event.prev_hash = prev_hash
                event.hash = event_hash(event, prev_hash)
                prev_hash = event.hash
            _seal_write(connection, [(e.seq, e.prev_hash, e.hash, e.id) for e in pending])
        total += len(pending)
        after = pending[-1].id


def _seal_write(connection: BaseDatabaseWrapper, rows: list[tuple[int, str, str, int]]) -> None:
    """Write a batch's positions and hashes; refuses (rolling the batch back) unless every event was unsealed."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One keyed UPDATE from the batch's arrays: one statement, not one per event.
            cursor.execute(
                "UPDATE annotation_auditevent e SET seq = v.seq, prev_hash = v.prev_hash, hash = v.hash "
                "FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::bigint[]) AS v(seq, prev_hash, hash, id) "
                "WHERE e.id = v.id AND e.seq IS NULL",
                [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows]],
            )
        else:
            # executemany of a keyed UPDATE: Django's bulk_update builds CASE expressions that grow
            # quadratically with the batch on SQLite.
            cursor.executemany(
                "UPDATE annotation_auditevent SET seq = %s, prev_hash = %s, hash = %s WHERE id = %s AND seq IS NULL",
                rows,
            )
        if cursor.rowcount not in (-1, len(rows)):
            raise RuntimeError(f"sealing updated {cursor.rowcount} of {len(rows)} events; nothing was sealed")


@dataclass(frozen=True)
class ChainReport:
    n_sealed: int
    n_unsealed: int
    head_seq: int
    head_hash: str
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def chain_verify(*, using: str = "default", anchor: dict[str, Any] | None = None) -> ChainReport:
    """Recompute the chain; report the first event whose position, link or content does not hold.

    ``anchor`` (``{"seq": int, "hash": str}``), a head recorded earlier outside the database, must
    still be in the chain with the same hash: this catches a tail deleted or rewritten consistently.
    """
    events = _events(using)
    expected_seq, prev_hash, n = 1, GENESIS_HASH, 0
    anchor_found = anchor is None

    def report(problem: str = "") -> ChainReport:
        unsealed = events.filter(seq__isnull=True).count()
        return ChainReport(
            n_sealed=n, n_unsealed=unsealed, head_seq=expected_seq - 1, head_hash=prev_hash, problem=problem
        )

    for event in events.filter(seq__isnull=False).order_by("seq").iterator(chunk_size=2000):
        where = f"event seq {event.seq} (id {event.id}, {event.operation} {event.table_name}#{event.row_pk})"
        if event.seq != expected_seq:
            return report(f"event seq {expected_seq} is missing (the next is {where}): sealed events were deleted")
        if event.prev_hash != prev_hash:
            return report(f"{where} does not link to event seq {expected_seq - 1}: the chain was altered")
        if event_hash(event, prev_hash) != event.hash:
            return report(f"{where} was edited: its content no longer matches its hash")
        if anchor is not None and event.seq == anchor["seq"]:
            if event.hash != anchor["hash"]:
                return report(f"{where} differs from the anchored head recorded earlier: the chain was rewritten")
            anchor_found = True
        prev_hash, expected_seq, n = event.hash, expected_seq + 1, n + 1
    if not anchor_found:
        return report(
            f"the anchored head (seq {anchor['seq']}) is no longer in the chain, which ends at seq {expected_seq - 1}: "
            "sealed events were deleted"
        )
    stray = events.filter(seq__isnull=True).exclude(hash="", prev_hash="").order_by("id").first()
    if stray is not None:
        return report(f"event id {stray.id} carries a hash but has no position in the chain: the chain was altered")
    return report()


def anchor_read(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("seq"), int) or not isinstance(data.get("hash"), str):
        raise ValueError(f"{path} is not an audit anchor ({{'seq': int, 'hash': str}})")
    return data


def anchor_write(path: Path, *, seq: int, hash: str) -> None:
    """Record the verified head; written to a temporary file and renamed so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps({"seq": seq, "hash": hash}) + "\n", encoding="utf-8")
    tmp.replace(path)


# --- The data against its history and the trail ----------------------------------------------------
#
# The chain proves the trail was not edited; these checks prove the data is what the trail says. Each is
# one set-based statement (the same SQL on PostgreSQL and SQLite but for how a value is read out of an
# event's JSON and how a subquery is fenced), never a Python loop over a table: audit_verify runs on tens of
# millions of labels. Each returns at most ``limit`` problems, each naming the row.
#
# The latest event of a row is the one with the highest id: the trigger writes it while the row is locked
# by the change, so a later change of the same row always gets a later id.


def _column_kinds(table: str) -> dict[str, str]:
    """Each column's Django field type (``JSONField``, ``DateTimeField``, ...), as the models declare it."""
    for model in global_apps.get_models(include_auto_created=True):
        if model._meta.db_table == table:
            return {f.column: f.get_internal_type() for f in model._meta.concrete_fields}
    return {}


def _recorded(vendor: str, row: str, column: str) -> str:
    """A column's value in an event's ``old_row``/``new_row``, comparable between events."""
    _check_identifier(column)
    if vendor == "postgresql":
        return f"({row} -> '{column}')"
    return f"json_extract({row}, '$.{column}')"


def _is_distinct(vendor: str) -> str:
    return "IS DISTINCT FROM" if vendor == "postgresql" else "IS NOT"


def _sqlite_json_value(ref: str) -> str:
    # How a JSON column's text compares with json_extract() of the trail (the triggers embed valid JSON).
    return f"CASE WHEN json_valid({ref}) THEN json_extract({ref}, '$') ELSE {ref} END"


def _pg_json(ref: str) -> str:
    return f"COALESCE({ref}, 'null'::jsonb)"


def _event_changed(vendor: str, column: str) -> str:
    """An UPDATE event ``e`` changed ``column``."""
    return f"{_recorded(vendor, 'e.old_row', column)} {_is_distinct(vendor)} {_recorded(vendor, 'e.new_row', column)}"


def _row_differs(vendor: str, row: str, column: str, kind: str) -> str:
    """The current row ``t``'s ``column`` differs from what an event recorded in its ``new_row`` (``row``).

    A column the event does not hold (added to the table after the event was written) is not compared."""
    ref = f't."{_check_identifier(column)}"'
    if vendor == "postgresql":
        present = f"({row} -> '{column}') IS NOT NULL"
        if kind == "DateTimeField":  # compared as instants: the JSON text depends on the writer's time zone
            recorded, current = f"({row} ->> '{column}')::timestamptz", ref
        else:
            recorded, current = _recorded(vendor, row, column), _pg_json(f"to_jsonb({ref})")
    else:
        present = f"json_type({row}, '$.{column}') IS NOT NULL"
        recorded = _recorded(vendor, row, column)
        current = _sqlite_json_value(ref) if kind == "JSONField" else ref
    return f"({present} AND {recorded} {_is_distinct(vendor)} {current})"


def _as_json(value: Any) -> dict[str, Any]:
    if isinstance(value, str):  # SQLite hands JSON columns of a raw cursor back as text
        value = json.loads(value)
    return value if isinstance(value, dict) else {}


def _verified_specs(connection: BaseDatabaseWrapper) -> list[Audited]:
    existing = _existing_tables(connection)
    specs = [spec for spec in audited_tables() if spec.verified_columns and spec.table in existing]
    for spec in specs:
        for name in (spec.table, *spec.verified_columns):
            _check_identifier(name)
    return specs


def _fetch(connection: BaseDatabaseWrapper, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def attribution_changes(*, using: str = "default", limit: int = 20) -> list[str]:
    """UPDATE events that changed a column the application writes only when it creates the row.

    ``fixed_columns`` say whom a row credits (an assignment's annotator, pool and item; a label's assignment;
    a history row's actor; a membership's pseudonym; a gold label's adjudicator) and what it records. The
    application never updates them — a reassignment closes the old assignment and creates a new one — so an
    UPDATE of one in the trail is someone moving work by hand, however it was attributed."""
    connection = connections[using]
    vendor = connection.vendor
    specs = {spec.table: spec for spec in _verified_specs(connection) if spec.fixed_columns}
    if not specs:
        return []
    clauses = [
        f"(e.table_name = {_pg_quote_literal(table)} AND ("
        + " OR ".join(_event_changed(vendor, c) for c in spec.fixed_columns)
        + "))"
        for table, spec in specs.items()
    ]
    sql = (
        f"SELECT e.id, e.table_name, e.row_pk, e.old_row, e.new_row FROM {AUDIT_TABLE} e "
        f"WHERE e.operation = 'UPDATE' AND ({' OR '.join(clauses)}) ORDER BY e.id LIMIT %s"
    )
    problems = []
    for event_id, table, row_pk, old, new in _fetch(connection, sql, [limit]):
        old, new = _as_json(old), _as_json(new)
        changes = ", ".join(
            f"{c} {old.get(c)!r} → {new.get(c)!r}" for c in specs[table].fixed_columns if old.get(c) != new.get(c)
        )
        problems.append(
            f"{table}#{row_pk}: audit event id {event_id} records an UPDATE of {changes}, which the application "
            "never makes (it creates a new row instead): the work was moved by hand"
        )
    return problems


def rows_unaccounted(*, using: str = "default", limit: int = 20) -> list[str]:
    """Rows of the verified tables that the trail does not account for: changed, created or deleted with the
    audit triggers off (or before the trail began to vouch for them, without a baseline event).

    For each row: it must have a creation event (INSERT, or the baseline of migration annotation 0012); its
    ``fixed_columns`` must be what that event recorded (so a history row forged with the triggers off, even
    one matching its label, has no INSERT event with its content); its ``tracked_columns`` what its latest
    event recorded; and that latest event must not be a DELETE. A row the trail records as existing (its
    latest event is not a DELETE) must still exist."""
    connection = connections[using]
    problems: list[str] = []
    for spec in _verified_specs(connection):
        problems += _rows_against_their_events(connection, spec, limit - len(problems))
        if len(problems) < limit:
            problems += _rows_gone_without_a_trace(connection, spec, limit - len(problems))
        if len(problems) >= limit:
            break
    return problems


def _fence(vendor: str) -> str:
    # Keeps a subquery from being merged into the query around it, so that its per-row lookups run once per
    # row (SQLite allows OFFSET only after a LIMIT; -1 is none).
    return "OFFSET 0" if vendor == "postgresql" else "LIMIT -1 OFFSET 0"


def _row_events_sql(vendor: str, table: str, pk: str) -> str:
    """Each row of ``table`` (as ``t``) with the ids of its creation event and its latest event, the latest
    one's ``new_row`` (NULL for a DELETE) and, when the two differ, the creation event's ``new_row``.

    Looked up row by row, through the (table_name, row_pk) index and then the events' primary key, in
    subqueries fenced off from the query around them: a plan that does not depend on the planner's row
    estimates (a join of the table with all its events can be planned as a nested loop over both on stale
    statistics, or hash the whole audit table) and that grows linearly with the table."""
    events = f'FROM {AUDIT_TABLE} e WHERE e.table_name = %s AND e.row_pk = CAST(t."{pk}" AS TEXT)'
    ids = (
        f"SELECT t.*, (SELECT MIN(CASE WHEN e.operation IN ('INSERT', '{BASELINE}') THEN e.id END) {events}) "
        f'AS concord_created_id, (SELECT MAX(e.id) {events}) AS concord_last_id FROM "{table}" t {_fence(vendor)}'
    )
    return (
        f"SELECT t.*, (SELECT e.new_row FROM {AUDIT_TABLE} e WHERE e.id = t.concord_last_id) AS concord_last_row, "
        "CASE WHEN t.concord_created_id = t.concord_last_id THEN NULL ELSE "
        f"(SELECT e.new_row FROM {AUDIT_TABLE} e WHERE e.id = t.concord_created_id) END AS concord_created_other "
        f"FROM ({ids}) t {_fence(vendor)}"
    )


def _rows_against_their_events(connection: BaseDatabaseWrapper, spec: Audited, limit: int) -> list[str]:
    vendor = connection.vendor
    table = _check_identifier(spec.table)
    existing = set(_table_columns(connection, table))
    kinds = _column_kinds(table)
    pk = _primary_key_column(connection, table)
    fixed = [c for c in spec.fixed_columns if c in existing]
    tracked = [c for c in spec.tracked_columns if c in existing]
    created_row = (
        "(CASE WHEN t.concord_created_id = t.concord_last_id THEN t.concord_last_row ELSE t.concord_created_other END)"
    )
    def flag(row: str, column: str) -> str:
        return f"CASE WHEN {_row_differs(vendor, row, column, kinds.get(column, ''))} THEN 1 ELSE 0 END"

    # Fixed columns against the creation event and the latest one; tracked columns against the latest.
    against_created = [flag(created_row, c) for c in fixed]
    against_last = [flag("t.concord_last_row", c) for c in fixed + tracked]
    flags = against_created + against_last
    names = [f"d{i}" for i in range(len(flags))]
    # Only a DELETE event has no new row.
    deleted = "CASE WHEN t.concord_last_id IS NOT NULL AND t.concord_last_row IS NULL THEN 1 ELSE 0 END"
    sql = (
        f"SELECT * FROM (SELECT t.\"{pk}\" AS pk, t.concord_created_id AS created_id, t.concord_last_id AS last_id, "
        f"{deleted} AS deleted"
        + "".join(f", {flag} AS {name}" for flag, name in zip(flags, names, strict=True))
        + f" FROM ({_row_events_sql(vendor, table, pk)}) t) x "
        "WHERE x.created_id IS NULL OR x.deleted = 1"
        + "".join(f" OR x.{name} = 1" for name in names)
        + " ORDER BY x.pk LIMIT %s"
    )
    problems = []
    for row_pk, created_id, last_id, deleted, *differs in _fetch(connection, sql, [table, table, limit]):
        where = f"{table}#{row_pk}"
        created = f"its INSERT (or baseline) audit event (id {created_id})"
        if created_id is None:
            later = f" (the trail holds only later changes of it, up to event id {last_id})" if last_id else ""
            problems.append(f"{where} has no INSERT audit event{later}: it was created with the audit triggers off")
            continue
        if deleted:
            problems.append(
                f"{where} exists, but its latest audit event (id {last_id}) deleted it: "
                "it was re-created with the audit triggers off"
            )
            continue
        off_trail = [c for c, d in zip(fixed + tracked, differs[len(fixed) :], strict=True) if d]
        moved = [c for c, d in zip(fixed, differs[: len(fixed)], strict=True) if d and c not in off_trail]
        if off_trail:
            latest = created if last_id == created_id else f"its latest audit event (id {last_id})"
            problems.append(
                f"{where}: {', '.join(off_trail)} differ from what {latest} recorded: "
                "changed with the audit triggers off"
            )
        if moved:
            problems.append(
                f"{where}: {', '.join(moved)} differ from what {created} recorded: moved by an UPDATE in the trail"
            )
    return problems[:limit]


def _rows_gone_without_a_trace(connection: BaseDatabaseWrapper, spec: Audited, limit: int) -> list[str]:
    table = _check_identifier(spec.table)
    pk = _primary_key_column(connection, table)
    # Grouped once (the rows that are gone have no row to look up by).
    sql = (
        f"SELECT ev.row_pk, l.id, l.operation FROM (SELECT row_pk, MAX(id) AS last_id FROM {AUDIT_TABLE} "
        "WHERE table_name = %s GROUP BY row_pk) ev "
        f"JOIN {AUDIT_TABLE} l ON l.id = ev.last_id WHERE l.operation <> 'DELETE' "
        f'AND NOT EXISTS (SELECT 1 FROM "{table}" t WHERE t."{pk}" = CAST(ev.row_pk AS BIGINT)) '
        "ORDER BY l.id LIMIT %s"
    )
    return [
        f"{table}#{row_pk} is gone, but the trail records no DELETE of it (its latest audit event, id {event_id}, "
        f"is an {operation}): it was deleted with the audit triggers off"
        for row_pk, event_id, operation in _fetch(connection, sql, [table, limit])
    ]


def baseline_record(*, using: str = "default") -> dict[str, int]:
    """Record a baseline event (operation ``EXISTS``: the row as it stands, no actor) for each row of the
    verified tables that has no creation event. Returns how many per table.

    Run once, by migration annotation 0012, when the trail began to vouch for every row of these tables:
    assignments and import identities were not audited before, and rows of the audited tables may predate
    the trail (migration 0002). It is the documented cut-off: rows as they stood then are taken as given.
    Never run it again on a live database: it would vouch for rows created with the triggers off since."""
    connection = connections[using]
    _check_vendor(connection)
    if AUDIT_TABLE not in _existing_tables(connection):
        return {}
    counts: dict[str, int] = {}
    for spec in _verified_specs(connection):
        table = _check_identifier(spec.table)
        pk = _primary_key_column(connection, table)
        if connection.vendor == "postgresql":
            row = "to_jsonb(t)" + "".join(f" - {_pg_quote_literal(c)}" for c in spec.excluded_columns)
            now = "clock_timestamp()"
        else:
            columns = [c for c in _table_columns(connection, table) if c not in spec.excluded_columns]
            row = _sqlite_row_json("t", columns, _json_columns(table))
            now = "strftime('%Y-%m-%d %H:%M:%f', 'now')"
        # Each row's creation event is looked up by index, row by row (see _row_events_sql): an anti-join
        # planned on stale statistics can be quadratic.
        created = (
            f"SELECT MIN(e.id) FROM {AUDIT_TABLE} e WHERE e.table_name = {_pg_quote_literal(table)} "
            f"AND e.row_pk = CAST(t.\"{pk}\" AS TEXT) AND e.operation IN ('INSERT', '{BASELINE}')"
        )
        sql = (
            f"INSERT INTO {AUDIT_TABLE} (table_name, row_pk, operation, old_row, new_row, actor_id, at, seq, "
            f"prev_hash, hash) SELECT {_pg_quote_literal(table)}, CAST(t.\"{pk}\" AS TEXT), '{BASELINE}', NULL, "
            f"{row}, NULL, {now}, NULL, '', '' FROM \"{table}\" t WHERE t.\"{pk}\" IN (SELECT r.\"{pk}\" FROM "
            f"(SELECT t.\"{pk}\", ({created}) AS concord_created_id FROM \"{table}\" t {_fence(connection.vendor)}) r "
            f"WHERE r.concord_created_id IS NULL) ORDER BY t.\"{pk}\""
        )
        with transaction.atomic(using=using), connection.cursor() as cursor:
            cursor.execute(sql)
            counts[table] = max(cursor.rowcount, 0)
    return counts


def labels_unaccounted(*, using: str = "default", limit: int = 20) -> list[str]:
    """Label changes that did not go through ``label_save`` (at most ``limit`` of them, described).

    Every change of a label's value bumps its version and appends a ``LabelHistory`` row in the same
    transaction. So (1) each label's current version and value must be those of its newest history row,
    and (2) each recorded UPDATE of a label's value in the trail must raise the version by one, with the
    history row of that version recorded too. A raw ``UPDATE annotation_label SET value = …`` fails (1) —
    and, when the trail recorded it, (2) — however it is attributed (the trigger names the row's
    ``updated_by``, who did not make it). A change made with the triggers off, with a history row forged to
    match, passes both; ``rows_unaccounted`` finds it (neither row matches the trail).
    """
    connection = connections[using]
    vendor = connection.vendor
    if vendor == "postgresql":
        value_differs = f"{_pg_json('l.value')} IS DISTINCT FROM {_pg_json('h.new_value')}"
        version = "COALESCE(({row} ->> 'version')::bigint, 0)"
    else:
        value_differs = f"{_sqlite_json_value('l.value')} IS NOT {_sqlite_json_value('h.new_value')}"
        version = "COALESCE(json_extract({row}, '$.version'), 0)"
    problems: list[str] = []
    # Each label's newest version looked up through the history's unique (label, version) index.
    newest = (
        "SELECT l.id, l.version, h.new_version, CASE WHEN " + value_differs + " THEN 1 ELSE 0 END "
        "FROM (SELECT l.*, (SELECT MAX(x.new_version) FROM annotation_labelhistory x WHERE x.label_id = l.id) "
        f"AS concord_newest FROM annotation_label l {_fence(vendor)}) l "
        "LEFT JOIN annotation_labelhistory h ON h.label_id = l.id AND h.new_version = l.concord_newest "
        f"WHERE h.id IS NULL OR h.new_version <> l.version OR {value_differs} ORDER BY l.id LIMIT %s"
    )
    for label_id, label_version, history_version_, _differs in _fetch(connection, newest, [limit]):
        if history_version_ is None:
            problems.append(f"label {label_id} has no history row")
        elif history_version_ != label_version:
            problems.append(
                f"label {label_id} is at version {label_version} but its history ends at version {history_version_}"
            )
        else:
            problems.append(f"label {label_id}'s value differs from its history's version {label_version}")
    if len(problems) >= limit:
        return problems
    old_version, new_version = version.format(row="e.old_row"), version.format(row="e.new_row")
    # The history row is looked up in its table (by its unique index): that each history row is the one the
    # trail recorded is ``rows_unaccounted``'s part.
    events = (
        f"SELECT e.id, e.row_pk, {old_version}, {new_version}, CASE WHEN h.id IS NULL THEN 0 ELSE 1 END "
        f"FROM {AUDIT_TABLE} e LEFT JOIN annotation_labelhistory h "
        f"ON h.label_id = CAST(e.row_pk AS BIGINT) AND h.new_version = {new_version} "
        "WHERE e.table_name = 'annotation_label' AND e.operation = 'UPDATE' "
        f"AND {_event_changed(vendor, 'value')} AND ({new_version} <> {old_version} + 1 OR h.id IS NULL) "
        "ORDER BY e.id LIMIT %s"
    )
    for event_id, row_pk, old, new, recorded in _fetch(connection, events, [limit - len(problems)]):
        if new != old + 1:
            problems.append(
                f"audit event id {event_id}: label {row_pk}'s value changed without a new version "
                f"(version {old} → {new}): not written by the application"
            )
        elif not recorded:
            problems.append(f"audit event id {event_id}: label {row_pk} version {new} has no history row")
    return problems
