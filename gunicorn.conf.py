"""The web server Concord recommends: ``gunicorn -c gunicorn.conf.py concord.wsgi`` (README, production).

gunicorn also reads this file by itself when started from the repository root. Settings given on the
command line win over these; the environment variables below adjust them without editing the file.

- Worker class ``sync``, behind the buffering TLS proxy the README puts in front (nginx or the like):
  a save is CPU work in Python plus a few short statements on a nearby database, so one request per
  process is the cheapest way to run it, and the proxy, not gunicorn, holds the clients' slow and
  keep-alive connections. A sync worker takes a connection only when it is idle, so requests spread
  over all processes by construction (the kernel's accept queue is first come, first served). Measured
  with ``bench/annotate_load.py --mode capacity`` (50 closed-loop annotators, 2 cores): with sync workers
  each of the 5 processes did 18–22 % of the work and p99 was 1.2–1.3 × p50 (quiet machine); with ``gthread``
  workers and keep-alive, one process collected 29–44 of the 50 connections (it keeps accepting while it
  holds fewer than ``worker_connections``) and those annotators' saves queued behind each other, p99 up
  to 10–21 × p50 for the same bare save.
  ``GUNICORN_WORKER_CLASS=gthread`` (with ``GUNICORN_THREADS``) is for a deployment without such a proxy.
- Processes ``2 × cores + 1`` (``WEB_CONCURRENCY``), gunicorn's own rule: one per core computing, one
  per core waiting on the database, and one spare. Cores are those this process may run on
  (``os.sched_getaffinity``, which honours a container's or taskset's CPU set).
- ``preload_app``: the application is imported once in the arbiter and forked, so a worker that is
  recycled starts in milliseconds instead of re-importing Django (no database connection is opened at
  import; each process opens its own on its first request and keeps it, ``DB_CONN_MAX_AGE``).
- ``keepalive`` 10 s: used by ``gthread`` only (a sync worker closes each connection after its response).
- ``max_requests`` with ``max_requests_jitter``: each worker is replaced after 10,000–11,000 requests,
  at different times for different workers, so any slow leak is bounded.
- ``GUNICORN_BIND`` (default ``127.0.0.1:8000``: behind the proxy on the same machine),
  ``GUNICORN_TIMEOUT`` (default 60 s, for a worker silent that long) and ``GUNICORN_BACKLOG`` (default
  2048 waiting connections).
"""

from __future__ import annotations

import os


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise SystemExit(f"gunicorn.conf.py: {name}={raw!r} must be a whole number of at least 1")
    return int(raw)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


bind = [os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")]
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "sync").strip() or "sync"
if worker_class not in {"sync", "gthread"}:
    raise SystemExit(f"gunicorn.conf.py: GUNICORN_WORKER_CLASS={worker_class!r} must be sync or gthread")
workers = _env_int("WEB_CONCURRENCY", 2 * cores() + 1)
threads = _env_int("GUNICORN_THREADS", 1 if worker_class == "sync" else 4)
preload_app = True
keepalive = 10
max_requests = 10_000
max_requests_jitter = 1_000
timeout = _env_int("GUNICORN_TIMEOUT", 60)
backlog = _env_int("GUNICORN_BACKLOG", 2048)
graceful_timeout = 30
# No control socket: its default path is one per user ($HOME/.gunicorn/gunicorn.ctl), which a second
# gunicorn on the machine (a benchmark next to the server) would take over.
control_socket_disable = True


# Metrics of several processes (docs/operations.md): with PROMETHEUS_MULTIPROC_DIR set, each process writes its
# counters to files in that folder and /metrics sums them. The folder is emptied when gunicorn starts (counts of
# an earlier server would otherwise be added in), and a process that exits is marked dead.
def on_starting(server) -> None:
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "").strip()
    if folder:
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            if name.endswith(".db"):
                os.remove(os.path.join(folder, name))


def child_exit(server, worker) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR", "").strip():
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
