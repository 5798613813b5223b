"""A worker process's database connections prepare no statements, so psycopg keeps no tally of the statements they
run (concord.ops.worker_connections); a web process's keep DB_PREPARE_THRESHOLD."""

from __future__ import annotations

import pytest
from celery import signals
from django.conf import settings
from django.db import connection
from django.db.backends.signals import connection_created

from concord.ops import worker_connections

POSTGRES = settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not POSTGRES, reason="psycopg's prepared statements: PostgreSQL only"),
]


@pytest.fixture
def fresh_connections():
    """Connections opened in the test are closed after it, and the worker's receiver taken off again, so that the
    next test's connection is a web process's."""
    yield
    connection_created.disconnect(dispatch_uid=worker_connections._UID)
    connection.close()


def _reopened() -> object:
    connection.close()
    connection.ensure_connection()
    return connection.connection


def _run_distinct_statements() -> int:
    """Runs five distinct statements; by how many psycopg's tally grew (its internal counts, read to show what a
    worker is spared: every distinct statement's text, up to prepared_max of them)."""
    before = len(connection.connection._prepared._counts)
    with connection.cursor() as cursor:
        for i in range(5):
            cursor.execute(f"SELECT {i} AS n")
    return len(connection.connection._prepared._counts) - before


def test_a_web_process_connection_prepares_after_the_configured_runs(fresh_connections):
    assert _reopened().prepare_threshold == settings.DATABASES["default"]["OPTIONS"]["prepare_threshold"] == 5
    assert _run_distinct_statements() == 5  # each statement's text held by the tally


@pytest.mark.parametrize("signal", [signals.worker_init, signals.worker_process_init])
def test_a_worker_process_connections_prepare_nothing(fresh_connections, signal):
    import concord.celery  # noqa: F401  (connects the worker's signals, as a worker's start does)

    signal.send(sender=None)  # (Celery's Django fix-up closes the connections the process has)
    assert _reopened().prepare_threshold is None  # every connection opened after it
    assert _run_distinct_statements() == 0  # nothing tallied


def test_a_connection_open_when_the_worker_starts_prepares_nothing_either(fresh_connections):
    connection.ensure_connection()
    worker_connections.worker_connections()
    assert connection.connection.prepare_threshold is None
    assert _run_distinct_statements() == 0


def test_the_receiver_leaves_other_databases_alone():
    class Other:
        vendor = "sqlite"
        connection = object()

    worker_connections.statement_tally_off(connection=Other())  # no attribute to set, nothing raised
