"""What /readyz checks and /metrics reads at scrape time: the database, its migrations, the broker, its queues
and the workers' heartbeats. Each check answers ``(ok, detail)``; a detail never holds a URL, a host name or an
exception's message (they can name hosts, users or worse): only counts, names of queues and exception classes.
The exception itself is logged on the server."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from kombu.exceptions import ChannelError

from concord.ops.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

Result = tuple[bool, dict[str, Any]]


def _failed(check: str, exc: BaseException) -> Result:
    logger.warning("readiness check %s failed", check, exc_info=exc)
    return False, {"error": type(exc).__name__}


def check_database() -> Result:
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return _failed("database", exc)
    return True, {}


def unapplied_migrations() -> list[tuple[str, str]]:
    connection = connections[DEFAULT_DB_ALIAS]
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return [(migration.app_label, migration.name) for migration, backwards in plan if not backwards]


def check_migrations() -> Result:
    try:
        unapplied = unapplied_migrations()
    except Exception as exc:
        return _failed("migrations", exc)
    if unapplied:
        return False, {"unapplied": len(unapplied)}
    return True, {}


def celery_app() -> Any:
    from concord.celery import app

    return app


@contextmanager
def broker_connection() -> Iterator[Any]:
    """A connection to the broker, opened now (one try, CONCORD_PROBE_TIMEOUT_SECONDS to connect)."""
    timeout = settings.CONCORD_PROBE_TIMEOUT_SECONDS
    app = celery_app()
    options = app.conf.broker_transport_options or {}
    folder = options.get("data_folder_in")
    if app.conf.broker_url.startswith("filesystem://") and folder and not os.access(folder, os.W_OK | os.X_OK):
        # The filesystem broker "connects" to anything: its folder is what must be there.
        raise ConnectionError("the filesystem broker's folder is missing or not writable")
    with app.connection_for_write(connect_timeout=timeout) as conn:
        conn.transport_options.setdefault("socket_timeout", timeout)
        conn.ensure_connection(max_retries=0, timeout=timeout)  # one attempt
        yield conn


def check_broker() -> Result:
    try:
        with broker_connection():
            pass
    except Exception as exc:
        return _failed("broker", exc)
    return True, {}


def celery_queues() -> list[str]:
    """Every queue Concord routes tasks to."""
    return list(settings.CELERY_TASK_QUEUES)


def used_queues() -> list[str]:
    """The queues that must each have a live worker: CONCORD_READY_QUEUES, by default every queue Concord routes to."""
    return list(settings.CONCORD_READY_QUEUES or celery_queues())


def queue_depths(conn: Any, queues: list[str]) -> dict[str, int]:
    depths = {}
    channel = conn.default_channel
    for queue in queues:
        try:
            depths[queue] = channel.queue_declare(queue=queue, passive=True).message_count
        except ChannelError:  # never declared (Redis: no key while it is empty)
            depths[queue] = 0
    return depths


def live_workers() -> list[WorkerHeartbeat]:
    since = timezone.now() - timedelta(seconds=settings.CONCORD_WORKER_STALE_SECONDS)
    return list(WorkerHeartbeat.objects.filter(last_seen__gte=since))


def all_workers() -> list[WorkerHeartbeat]:
    return list(WorkerHeartbeat.objects.all())


def check_workers() -> Result:
    try:
        live = live_workers()
    except Exception as exc:
        return _failed("workers", exc)
    served = {queue for worker in live for queue in worker.queues}
    missing = [queue for queue in used_queues() if queue not in served]
    detail: dict[str, Any] = {"live": len(live)}
    if missing:
        detail["queues_without_worker"] = missing
    return not missing, detail


CHECKS = ("database", "migrations", "broker", "workers")  # each one's function is check_<name>


def readiness() -> tuple[bool, dict[str, dict[str, Any]]]:
    """Every check, in order; those that need the database are skipped (failed) when it is down."""
    results: dict[str, dict[str, Any]] = {}
    database_ok = True
    for name in CHECKS:
        if not database_ok and name in ("migrations", "workers"):
            results[name] = {"ok": False, "skipped": "database"}
            continue
        ok, detail = globals()[f"check_{name}"]()
        results[name] = {"ok": ok, **detail}
        if name == "database":
            database_ok = ok
    return all(r["ok"] for r in results.values()), results
