"""A real ``celery -A concord worker`` process on the test database and the test broker.

Use with ``transactional_db`` (the worker is another process: it sees only committed rows)::

    with celery_worker() as worker:
        ...                      # enqueue work, poll the database
        worker.kill()            # SIGKILL the worker and its pool, as a crash would
        worker.start()           # a fresh worker on the same database and broker

The worker gets the test database (on SQLite the test database file from ``DATABASES TEST NAME``; on
PostgreSQL pytest-django's ``test_<name>`` database) through ``DATABASE_URL``, and the broker the test
process publishes to: the same ``CELERY_BROKER_URL`` and, for the filesystem broker, the same
``CONCORD_VAR_DIR``.

Waiting on a worker never uses a fixed deadline (``tests/waiting.py``): a worker advances while its log
grows or it uses CPU time (importing Django and the models at start, scoring), and a wait fails at once,
with the log, when the worker has exited.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from django.conf import settings
from django.db import connection

from tests import waiting

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class WorkerDied(AssertionError):
    """The worker process exited while a test waited on it."""


def process_group_cpu_seconds(pgid: int) -> float:
    """CPU time (user + system) used so far by the live processes of one process group; 0 where /proc is
    not available (the log is then the only sign of progress)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # the process ended meanwhile
        # After the command name: state, ppid, pgrp, …, utime (14th field of the line), stime (15th).
        if len(fields) > 12 and fields[2] == str(pgid):
            total += int(fields[11]) + int(fields[12])
    return total / _TICKS


def test_database_url() -> str:
    """The URL of the database the test process is using right now."""
    s = connection.settings_dict
    if s["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{s['NAME']}"
    auth = quote(s["USER"] or "", safe="")
    if s.get("PASSWORD"):
        auth += ":" + quote(s["PASSWORD"], safe="")
    host = s["HOST"] or "127.0.0.1"
    port = f":{s['PORT']}" if s.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{s['NAME']}"


class WorkerProcess:
    def __init__(
        self,
        *,
        env: dict[str, str],
        log_dir: Path,
        concurrency: int = 1,
        purge: bool = True,
        include: tuple[str, ...] = (),
        queues: tuple[str, ...] = (),
    ) -> None:
        self.env = env
        self.include = include
        self.queues = queues
        self.log_dir = log_dir
        self.concurrency = concurrency
        self.purge_first = purge
        self.process: subprocess.Popen | None = None
        self.log_path: Path | None = None
        self.starts = 0

    def start(self) -> None:
        """Start a worker and wait until it consumes. Only the first start purges stale messages left
        on the broker by earlier test sessions; a restart must find the killed worker's messages."""
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Start the worker's process without waiting for it (``wait_ready`` waits): several workers then
        import Django and the apps at the same time."""
        self.starts += 1
        self.log_path = self.log_dir / f"worker-{self.starts}-{uuid.uuid4().hex[:6]}.log"
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "concord",
            "worker",
            "--loglevel=INFO",
            "--pool=prefork",
            f"--concurrency={self.concurrency}",
            f"--hostname=test-{uuid.uuid4().hex[:8]}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        if self.include:
            command.append(f"--include={','.join(self.include)}")
        if self.queues:
            command.append(f"--queues={','.join(self.queues)}")
        if self.purge_first and self.starts == 1:
            command.append("--purge")
        log = self.log_path.open("wb")
        # A session of its own, so that kill() reaches the pool's children too.
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()

    def wait_ready(self) -> None:
        """Wait until the launched worker consumes; kill it if it never does."""
        try:
            # Starting imports Django, Celery and the apps: CPU time, before the log says anything.
            waiting.wait_for(
                lambda: " ready." in self.log(), what="the worker to be ready", progress=self.progress,
                report=self.report,
            )
        except BaseException:
            self.kill()
            raise

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""

    def report(self) -> str:
        return f"--- worker log ({self.log_path}) ---\n{self.log()[-6000:]}"

    def progress(self) -> tuple[int, int]:
        """What shows that the worker is getting on: the size of its log and the whole seconds of CPU time
        its processes used. Raises WorkerDied, with the log, when it has exited."""
        if self.process is None:
            raise WorkerDied("the worker is not running (killed or stopped)")
        if self.process.poll() is not None:
            raise WorkerDied(f"the worker exited with {self.process.returncode}\n{self.report()}")
        size = self.log_path.stat().st_size if self.log_path and self.log_path.exists() else 0
        # Whole seconds: an idle worker's polling does not count as progress, work does.
        return size, int(process_group_cpu_seconds(self.process.pid))

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes: no warm shutdown, nothing acknowledged or restored."""
        if self.process is None:
            return
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=waiting.GUARD_SECONDS)  # a SIGKILLed process only has to be reaped
        self.process = None

    def stop(self) -> None:
        """Warm shutdown (SIGTERM), then SIGKILL if the worker lingers."""
        stop_all([self])

    def terminate(self) -> None:
        """Ask for a warm shutdown (SIGTERM) without waiting for it (``stop`` waits)."""
        if self.process is None:
            return
        # The main process only: it stops its pool children itself and hands back unacked messages.
        with suppress(ProcessLookupError):
            self.process.terminate()


def stop_all(workers: Sequence[WorkerProcess]) -> None:
    """Warm shutdown (SIGTERM) of every worker at once, then SIGKILL of any that lingers: the workers' shutdowns
    overlap instead of following one another."""
    for worker in workers:
        worker.terminate()
    for worker in workers:
        if worker.process is not None:
            with suppress(subprocess.TimeoutExpired):
                worker.process.wait(timeout=20)  # not a test's deadline: a slower shutdown is only cut short
        worker.kill()


def worker_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=test_database_url(),
        CELERY_BROKER_URL=settings.CELERY_BROKER_URL,
        CONCORD_VAR_DIR=str(settings.VAR_DIR),
        CELERY_TASK_ALWAYS_EAGER="false",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


@contextmanager
def celery_worker(
    *,
    concurrency: int = 1,
    purge: bool = True,
    include: tuple[str, ...] = (),
    queues: tuple[str, ...] = (),
    **env: str,
) -> Iterator[WorkerProcess]:
    """A started worker, stopped on exit; ``env`` adds environment variables (settings) for it,
    ``include`` modules for it to import (a test-only metric, say) and ``queues`` the only queues it
    consumes (default: every queue in settings.CELERY_TASK_QUEUES)."""
    log_dir = Path(settings.VAR_DIR) / "worker-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    worker = WorkerProcess(
        env=worker_env(**env), log_dir=log_dir, concurrency=concurrency, purge=purge, include=include, queues=queues
    )
    worker.start()
    try:
        yield worker
    finally:
        worker.stop()


@contextmanager
def celery_workers(
    *queue_sets: tuple[str, ...],
    concurrency: int = 1,
    purge: bool = True,
    include: tuple[str, ...] = (),
    **env: str,
) -> Iterator[list[WorkerProcess]]:
    """``celery_worker`` for several workers, one per set of queues (as several machines each consume their own),
    all with the same ``env``, ``include`` and ``concurrency``: they are launched together and each is waited for
    until it consumes (their starts overlap), and stopped together on exit. Yields them in the order of
    ``queue_sets``."""
    log_dir = Path(settings.VAR_DIR) / "worker-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    workers = [
        WorkerProcess(env=worker_env(**env), log_dir=log_dir, concurrency=concurrency, purge=purge, include=include,
                      queues=queues)
        for queues in queue_sets
    ]
    try:
        for worker in workers:
            worker.launch()
        for worker in workers:
            worker.wait_ready()
        yield workers
    finally:
        stop_all(workers)


def wait_for(
    condition: Callable[[], T],
    *,
    what: str,
    worker: WorkerProcess | Sequence[WorkerProcess] = (),
    progress: waiting.Observation | Sequence[waiting.Observation] = (),
    **kwargs: Any,
) -> T:
    """``tests.waiting.wait_for`` with the workers' progress among the observations and their logs in
    the failure; ``progress`` adds the test's own (a run's count of scored items, a job's status)."""
    workers = [worker] if isinstance(worker, WorkerProcess) else list(worker)
    observations = [progress] if callable(progress) else list(progress)
    return waiting.wait_for(
        condition,
        what=what,
        progress=[*observations, *(w.progress for w in workers)],
        report=lambda: "\n".join(w.report() for w in workers),
        **kwargs,
    )
