"""Waiting in tests on progress, never on a wall-clock deadline that a loaded machine can miss.

A test that waits for another process or thread (a Celery worker, a server thread, a broker starting)
polls a condition. A fixed deadline ("done within 60 s") fails a correct program on a machine that is
merely busy; so :func:`wait_for` keeps waiting as long as something it can observe advances — rows
written, log lines appended, CPU time used by the worker — and gives up only when

* nothing observed has changed for ``stall`` seconds (``STALL_SECONDS``, 3 minutes: far longer than any
  step of these tests takes between two observable changes, even on a loaded machine), or
* the wait has lasted ``guard`` seconds in all (``GUARD_SECONDS``, 10 minutes: a last resort against
  something that advances for ever without reaching the condition, such as a retry loop).

Its failure says what it was waiting for, which of the two limits ended it, the last observations and
(``report``) whatever helps to understand why — typically the worker's log.

Both limits may be raised for a very slow machine through ``CONCORD_TEST_STALL_SECONDS`` and
``CONCORD_TEST_GUARD_SECONDS``. The clock and the sleep are parameters, so that ``tests/test_waiting.py``
drives the helper itself with a fake clock.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def _seconds(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise RuntimeError(f"{name}={raw!r} must be a number of seconds") from None
    if value <= 0:
        raise RuntimeError(f"{name}={raw!r} must be positive")
    return value


STALL_SECONDS = _seconds("CONCORD_TEST_STALL_SECONDS", 180.0)
GUARD_SECONDS = _seconds("CONCORD_TEST_GUARD_SECONDS", 600.0)
# pytest-timeout's limit for a test that waits on other processes: several waits of up to the guard each.
SLOW_TEST_TIMEOUT = int(3 * GUARD_SECONDS)
# A child process that should only start and answer (python -c "import django; …"): no progress to watch,
# so only a generous guard.
SUBPROCESS_TIMEOUT = GUARD_SECONDS

Observation = Callable[[], Any]


class WaitFailed(AssertionError):
    """A wait gave up: nothing advanced for the stall period, or the overall guard ran out."""


def wait_for(
    condition: Callable[[], T],
    *,
    what: str,
    progress: Observation | Sequence[Observation] = (),
    report: Callable[[], str] | None = None,
    stall: float | None = None,
    guard: float | None = None,
    interval: float = 0.1,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Poll ``condition`` until it returns something true, and return that.

    ``progress``: one or more observations (callables returning any comparable value: a count of rows,
    the length of a log, a status); whenever one of them changes, the stall period starts again. An
    observation may raise (a worker that died): the wait then ends with that error at once. Without
    observations, the condition must come true within one stall period.
    """
    stall = STALL_SECONDS if stall is None else stall
    guard = GUARD_SECONDS if guard is None else guard
    observations = [progress] if callable(progress) else list(progress)
    start = last_change = clock()
    seen = [observe() for observe in observations]
    while True:
        result = condition()
        if result:
            return result
        now = clock()
        current = [observe() for observe in observations]
        if current != seen:
            seen, last_change = current, now
        if now - last_change >= stall:
            reason = f"nothing it watches advanced for {now - last_change:.0f} s"
        elif now - start >= guard:
            reason = f"it kept advancing but was still not done after the overall guard of {guard:.0f} s"
        else:
            sleep(interval)
            continue
        message = f"gave up waiting for {what}: {reason} (waited {now - start:.0f} s"
        message += f"; last observed: {seen!r})" if observations else ")"
        if report is not None:
            message += "\n" + report()
        raise WaitFailed(message)


def join(thread: threading.Thread, *, what: str, **kwargs: Any) -> None:
    """Wait for ``thread`` to end (``wait_for``'s limits): a thread still running fails the test by name
    instead of leaving its result silently missing."""
    wait_for(lambda: not thread.is_alive(), what=what, **kwargs)
