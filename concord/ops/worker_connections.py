"""A worker process's database connections keep no prepared-statement tally.

psycopg counts how often each statement runs on a connection, to prepare the frequent ones (``prepare_threshold``;
the label save's statements, bound on the server, are prepared this way: concord.rawsql). It keeps the last 100
distinct statements it saw (``prepared_max``) — and a statement Django binds on the client, which is nearly every
statement, is its whole text with the values written in. A worker sends large ones: a score run's fan-out inserts a
chunk of batches in one statement of about 145 KB, an import its rows; each is a distinct statement, held in full
until a hundred are, so a worker's memory grew with every chunk of a long job (the fan-out: 3.9 MiB above idle
without the tally, 7.9 MiB with it, after 63 chunks on a million items; bench/scale.py).

Workers save no labels, and the statements they repeat are few and planned in far less time than their work takes,
so their connections prepare nothing: ``prepare_threshold = None`` on each connection a worker process opens (psycopg:
"If None, prepared statements are disabled on the connection", and nothing is tallied). Web processes keep
``DB_PREPARE_THRESHOLD``.
"""

from __future__ import annotations

from typing import Any

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created

_UID = "concord.ops.worker_connections"


def statement_tally_off(sender: Any = None, *, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """No prepared statements, and so no tally of statements, on this connection (PostgreSQL)."""
    if connection.vendor == "postgresql" and connection.connection is not None:
        connection.connection.prepare_threshold = None


def worker_connections(**kwargs: Any) -> None:
    """From a worker's start on: every connection its process opens, and any already open, keeps no tally."""
    connection_created.connect(statement_tally_off, weak=False, dispatch_uid=_UID)
    for wrapper in connections.all(initialized_only=True):
        statement_tally_off(connection=wrapper)


def connect_celery_signals() -> None:
    from celery import signals

    # The worker's main process (which runs the tasks itself with the solo and threads pools) and each process a
    # prefork pool starts.
    signals.worker_init.connect(worker_connections, weak=False, dispatch_uid=_UID)
    signals.worker_process_init.connect(worker_connections, weak=False, dispatch_uid=_UID)
