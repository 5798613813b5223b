"""Hand-written SQL for the statements of the hottest request (an annotator's label save), built from the
ORM's own metadata so that what it reads and writes is exactly what the ORM would.

Building a query through the ORM costs about 1,500 Python function calls before the database sees it
(filters, joins, compilation, model construction); a label save used to build seven. The few statements
of that path are therefore written out once, but never by hand-copying a schema:

* column lists come from ``Model._meta.concrete_fields`` (a migration that adds a column changes them);
* parameters are adapted by the field itself (``Field.get_db_prep_save``: JSON, datetimes, ...);
* values read back go through the same converters the ORM applies (the backend's and the field's
  ``from_db_value``), and model instances are built with ``Model.from_db``.

Everything else (validation, the save's rules) stays with the save (``annotation.labels``); this module only
speaks SQL.

On PostgreSQL these statements go through :func:`cursor`, which binds parameters on the server, so that
PostgreSQL parses and plans each of them once per connection (a prepared statement) instead of once per
request: that halves the database's CPU per label save (bench/profile_save.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models import Field, Model

Converter = Callable[[Any, Any, BaseDatabaseWrapper], Any]


def cursor() -> CursorWrapper:
    """A cursor of the default connection for the statements built here.

    Elsewhere Django's PostgreSQL cursors bind parameters on the client (the values are written into the
    SQL text), which PostgreSQL must then parse and plan anew each time. On PostgreSQL this cursor binds
    them on the server (psycopg's ``Cursor``, Django's ``ServerBindingCursor``): the SQL text is the same
    for every call, so psycopg prepares a statement once it has run ``prepare_threshold`` times on a
    connection (``DATABASES["default"]["OPTIONS"]``, settings ``DB_PREPARE_THRESHOLD``) and later calls
    skip the parse and plan. It is Django's cursor wrapper all the same (execute wrappers, query logging,
    error translation, the connection's health check). On other databases it is ``connection.cursor()``.
    """
    if connection.vendor != "postgresql":
        return connection.cursor()
    from django.db.backends.postgresql.base import ServerBindingCursor

    # What BaseDatabaseWrapper.cursor() does, with the server-binding cursor class.
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    with connection.wrap_database_errors:
        raw = ServerBindingCursor(connection.connection)
    return (_LoggedCursor if connection.queries_logged else CursorWrapper)(raw, connection)


class _LoggedCursor(CursorDebugWrapper):
    """Django's query log for a server-binding cursor: psycopg keeps no text of a prepared statement's
    run, so the log shows the statement as written (placeholders, not values)."""

    def execute(self, sql: str, params: Any = None) -> Any:
        with self.debug_sql(sql, params):
            return CursorWrapper.execute(self, sql, params)


def quote(connection: BaseDatabaseWrapper, name: str) -> str:
    return connection.ops.quote_name(name)


def table(connection: BaseDatabaseWrapper, model: type[Model]) -> str:
    return quote(connection, model._meta.db_table)


def column(connection: BaseDatabaseWrapper, model: type[Model], name: str) -> str:
    """The quoted column of the field ``name`` (``"question"`` gives ``"question_id"``)."""
    return quote(connection, model._meta.get_field(name).column)  # type: ignore[union-attr]


def adapt(connection: BaseDatabaseWrapper, model: type[Model], name: str, value: Any) -> Any:
    """``value`` as the ORM would send it for the field ``name`` of ``model``."""
    field = model._meta.get_field(name)
    return field.get_db_prep_save(value, connection)  # type: ignore[union-attr]


class Names:
    """The quoted table and column names of one model on the default database: ``names(Label).table``,
    ``names(Label).question`` (the column of the field ``question``, i.e. ``"question_id"``)."""

    def __init__(self, model: type[Model]) -> None:
        self._model = model
        self.table = table(connection, model)

    def __getattr__(self, name: str) -> str:
        if name.startswith("_"):
            raise AttributeError(name)
        return column(connection, self._model, name)


def names(model: type[Model]) -> Names:
    return Names(model)


class Columns:
    """All concrete columns of one model under a table alias: the SELECT list, and the instance from a row."""

    def __init__(self, model: type[Model], alias: str) -> None:
        self.model = model
        self.alias = alias
        self.fields: tuple[Field, ...] = tuple(model._meta.concrete_fields)
        self.attnames = [f.attname for f in self.fields]
        self._converters: dict[str, list[tuple[int, list[Converter], Any]]] = {}

    def __len__(self) -> int:
        return len(self.fields)

    def select(self, connection: BaseDatabaseWrapper) -> str:
        return ", ".join(f"{self.alias}.{quote(connection, f.column)}" for f in self.fields)

    def converters(self, connection: BaseDatabaseWrapper) -> list[tuple[int, list[Converter], Any]]:
        """Per column that needs one, the converters the ORM's compiler would apply (backend's, then field's)."""
        key = connection.vendor
        if key not in self._converters:
            found = []
            for index, field in enumerate(self.fields):
                expression = field.get_col(self.alias)
                functions = connection.ops.get_db_converters(expression) + field.get_db_converters(connection)
                if functions:
                    found.append((index, functions, expression))
            self._converters[key] = found
        return self._converters[key]

    def convert(self, connection: BaseDatabaseWrapper, values: Sequence[Any]) -> list[Any]:
        values = list(values)
        for index, functions, expression in self.converters(connection):
            value = values[index]
            for function in functions:
                value = function(value, expression, connection)
            values[index] = value
        return values

    def build(self, connection: BaseDatabaseWrapper, values: Sequence[Any]) -> Model:
        """The model instance of one row's values (in ``select``'s order), as a queryset would build it."""
        return self.model.from_db(connection.alias, self.attnames, self.convert(connection, values))


def convert_value(connection: BaseDatabaseWrapper, model: type[Model], name: str, value: Any, alias: str = "") -> Any:
    """One value read from the column of field ``name``, converted as the ORM would."""
    field = model._meta.get_field(name)
    expression = field.get_col(alias or model._meta.db_table)  # type: ignore[union-attr]
    for function in connection.ops.get_db_converters(expression) + field.get_db_converters(connection):  # type: ignore[union-attr]
        value = function(value, expression, connection)
    return value
