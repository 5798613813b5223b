"""What bounds the ``llm`` backend's calls beyond one request: the machine-wide concurrency limit, a run's
budget of requests and tokens, and the answer cache. No ORM here: ``scoring.llm_runs`` gives a score run
its budget and the database cache; the backend only sees the two small interfaces below.

Concurrency: at most ``LLM_MAX_CONCURRENT_REQUESTS`` requests are in flight at once from all the processes
of one machine (every Celery worker process, the ``score`` command), by ``flock`` on one of that many slot
files in ``<CONCORD_VAR_DIR>/llm-slots``. A request that finds no free slot waits on one until it frees
(the kernel wakes it; no polling). The limit is per machine: a deployment that runs the model queues on
several machines allows that many times the setting (docs/operations.md).
"""

from __future__ import annotations

import fcntl
import os
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from scoring.metrics.base import BackendResponseError


class BudgetSpent(BackendResponseError):
    """The run's budget of requests or tokens is spent: the item fails with this reason, nothing is sent."""


class Budget(Protocol):
    def take_request(self) -> None:
        """Count one request against the budget, or raise ``BudgetSpent`` without counting it."""

    def add_tokens(self, tokens: int) -> None:
        """Count the tokens an answer reported (prompt and completion)."""


class ResponseStore(Protocol):
    def get(self, key: str) -> str | None: ...

    def put(self, key: str, content: str, facts: dict[str, Any]) -> None: ...


class _Waiting:
    """How many requests of this process wait for a slot now (read by tests to prove the limit)."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = threading.Condition()

    def add(self, delta: int) -> None:
        with self.changed:
            self.count += delta
            self.changed.notify_all()


WAITING = _Waiting()


@contextmanager
def request_slot(directory: Path, limit: int) -> Iterator[int | None]:
    """Hold one of ``limit`` slots while the body runs (yields its number); ``limit`` 0: no limit (None).

    A free slot is taken at once; when all are held, the caller blocks on one of them (chosen from its process
    and thread, so waiters spread over the slots) until its holder lets go. A process that dies releases its
    slot with its file descriptors."""
    if limit <= 0:
        yield None
        return
    directory.mkdir(parents=True, exist_ok=True)
    handles: list[int] = []
    try:
        for slot in range(limit):
            fd = os.open(directory / f"slot-{slot}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            handles.append(fd)
            yield slot
            return
        slot = zlib.crc32(f"{os.getpid()}:{threading.get_ident()}".encode()) % limit
        fd = os.open(directory / f"slot-{slot}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        handles.append(fd)
        WAITING.add(1)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        finally:
            WAITING.add(-1)
        yield slot
    finally:
        for fd in handles:
            os.close(fd)  # closing the descriptor releases its lock
