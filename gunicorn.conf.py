"""The web server Concord recommends: ``gunicorn -c gunicorn.conf.py concord.wsgi`` (README, production).

gunicorn also reads this file by itself when started from the repository root. Settings given on the
command line win over these; the environment variables below adjust them without editing the file.

- Worker class ``gthread``: a save spends most of its time waiting on the database, so each process
  serves several requests with threads; keep-alive connections wait in the worker's poller, not in a
  thread.
- Processes and threads from the cores this process may run on (``os.sched_getaffinity``, which honours
  a container's or taskset's CPU set): ``2 × cores`` processes (``WEB_CONCURRENCY``) of ``4`` threads
  (``GUNICORN_THREADS``). More processes with fewer threads each, rather than one big process per core:
  each process accepts only the connections it can serve soon, the GIL is shared by fewer threads, and
  a busy process leaves new connections to an idle one.
- ``preload_app``: the application is imported once in the arbiter and forked, so a worker that is
  recycled starts in milliseconds instead of re-importing Django (no database connection is opened at
  import; each thread opens its own on its first request).
- ``keepalive`` 10 s: longer than a paced annotator's pause between saves, so the client's next request
  reuses its connection; short enough that idle connections do not stay tied to one worker.
- ``max_requests`` with ``max_requests_jitter``: each worker is replaced after 10,000–11,000 requests,
  at different times for different workers. Its keep-alive connections close with it and reconnect to
  whichever worker accepts them, so a pile of long-lived connections on one worker does not last, and
  any slow leak is bounded.
- ``GUNICORN_BIND`` (default ``127.0.0.1:8000``: behind a TLS proxy on the same machine) and
  ``GUNICORN_TIMEOUT`` (default 60 s, for a worker silent that long).
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
worker_class = "gthread"
workers = _env_int("WEB_CONCURRENCY", 2 * cores())
threads = _env_int("GUNICORN_THREADS", 4)
preload_app = True
keepalive = 10
max_requests = 10_000
max_requests_jitter = 1_000
timeout = _env_int("GUNICORN_TIMEOUT", 60)
graceful_timeout = 30
# No control socket: its default path is one per user ($HOME/.gunicorn/gunicorn.ctl), which a second
# gunicorn on the machine (a benchmark next to the server) would take over.
control_socket_disable = True
