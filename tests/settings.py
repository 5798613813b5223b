"""The test suite's settings: Concord's own (``concord.settings``), with one var directory and one broker per
pytest-xdist worker.

``make test`` runs the suite on every core (``pytest -n``). Each xdist worker is a process of its own with its
own test database (pytest-django names it ``test_<name>_gw<N>``); what the settings read from the environment
must be its own too, or two workers would share files and queues:

- ``CONCORD_VAR_DIR`` (uploads, the SQLite test database, the filesystem broker, the audit anchor) becomes
  ``<var dir>/xdist-gw<N>``;
- a Redis ``CELERY_BROKER_URL`` gets database number ``(<its number> + N) mod 16``, so a real Celery worker that
  a test starts consumes only what its own xdist worker published.

The environment is changed, not only the settings, so that the processes a test starts (a Celery worker, a
``manage.py`` command) inherit the same values. It is changed once per xdist worker: a process started by a
test, which inherits ``CONCORD_XDIST_WORKER``, keeps the values it was given. Without xdist (``pytest -n 0``, or
one test file run on its own) nothing changes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

REDIS_DATABASES = 16  # Redis's default number of databases


def _per_worker_environment() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker or os.environ.get("CONCORD_XDIST_WORKER") == worker:
        return
    match = re.fullmatch(r"gw(\d+)", worker)
    if match is None:
        raise RuntimeError(f"unexpected pytest-xdist worker name {worker!r}")
    index = int(match.group(1))
    base = os.environ.get("CONCORD_VAR_DIR") or str(Path(__file__).resolve().parent.parent / "var")
    os.environ["CONCORD_VAR_DIR"] = str(Path(base) / f"xdist-{worker}")
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if broker.startswith(("redis://", "rediss://")):
        os.environ["CELERY_BROKER_URL"] = redis_url_for_worker(broker, index)
    os.environ["CONCORD_XDIST_WORKER"] = worker


def redis_url_for_worker(url: str, index: int) -> str:
    """``url`` with database number ``(its number + index) mod 16`` (0 when it names none)."""
    match = re.fullmatch(r"(rediss?://[^/?#]*)(?:/(\d*))?([?#].*)?", url)
    if match is None:
        raise RuntimeError(f"cannot give each test worker its own database in CELERY_BROKER_URL {url!r}")
    prefix, number, rest = match.group(1), match.group(2), match.group(3) or ""
    database = (int(number or 0) + index) % REDIS_DATABASES
    return f"{prefix}/{database}{rest}"


_per_worker_environment()

from concord.settings import *  # noqa: E402,F403  (the settings under test are Concord's own)
