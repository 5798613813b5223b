"""The tests' waiting helper (tests/waiting.py) gives up only when nothing has advanced for the stall
period or after the overall guard, and says what it waited for. Driven by a fake clock: no test here
sleeps or depends on the machine's speed."""

from __future__ import annotations

import threading

import pytest

from tests import waiting


class FakeClock:
    """Time advances only when the helper sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps = 0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        self.now += seconds


def _wait(clock: FakeClock, condition, **kwargs):
    kwargs.setdefault("stall", 60)
    kwargs.setdefault("guard", 600)
    return waiting.wait_for(condition, what="the thing", interval=1, clock=clock, sleep=clock.sleep, **kwargs)


def test_the_conditions_value_is_returned_as_soon_as_it_is_true():
    clock = FakeClock()
    answers = iter([None, 0, "", {"done": 1}])
    assert _wait(clock, lambda: next(answers)) == {"done": 1}
    assert clock.sleeps == 3


def test_a_wait_that_keeps_advancing_outlasts_many_stall_periods():
    clock = FakeClock()
    rows = iter(range(10_000))
    # The condition comes true after 500 s; the observed count advances every second meanwhile.
    done_at = clock.now + 500
    assert _wait(clock, lambda: clock.now >= done_at, progress=lambda: next(rows))
    assert clock.now == done_at


def test_progress_seen_at_any_moment_restarts_the_stall_period():
    clock = FakeClock()
    start = clock.now
    # One change after 59 s, then nothing: the wait ends 60 s after that change, not 60 s after the start.
    with pytest.raises(waiting.WaitFailed, match=r"nothing it watches advanced for 60 s \(waited 119 s"):
        _wait(clock, lambda: False, progress=lambda: clock.now >= start + 59)


def test_a_stalled_wait_fails_naming_what_it_waited_for_and_the_last_observation_and_report():
    clock = FakeClock()
    with pytest.raises(waiting.WaitFailed) as failed:
        _wait(clock, lambda: False, progress=[lambda: 7, lambda: "running"], report=lambda: "--- log ---\nstuck")
    message = str(failed.value)
    assert message.startswith("gave up waiting for the thing: nothing it watches advanced for 60 s (waited 60 s")
    assert "last observed: [7, 'running']" in message and message.endswith("--- log ---\nstuck")


def test_without_observations_the_condition_has_one_stall_period():
    clock = FakeClock()
    with pytest.raises(waiting.WaitFailed, match=r"advanced for 60 s \(waited 60 s\)$"):
        _wait(clock, lambda: False)
    assert clock.now == 1060


def test_the_overall_guard_ends_a_wait_that_advances_for_ever():
    clock = FakeClock()
    ticks = iter(range(10_000))
    with pytest.raises(waiting.WaitFailed, match="still not done after the overall guard of 600 s"):
        _wait(clock, lambda: False, progress=lambda: next(ticks))
    assert clock.now == 1600


def test_an_observation_that_raises_ends_the_wait_at_once():
    clock = FakeClock()

    def died() -> int:
        if clock.now > 1005:
            raise waiting.WaitFailed("the worker exited with -9")
        return 0

    with pytest.raises(waiting.WaitFailed, match="exited with -9"):
        _wait(clock, lambda: False, progress=died)
    assert clock.now == 1006


def test_join_names_a_thread_that_does_not_end():
    clock = FakeClock()
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        with pytest.raises(waiting.WaitFailed, match="gave up waiting for the submitter thread"):
            waiting.join(thread, what="the submitter thread", stall=5, clock=clock, sleep=clock.sleep)
    finally:
        release.set()
        thread.join()
    waiting.join(thread, what="the submitter thread", clock=clock, sleep=clock.sleep)


@pytest.mark.parametrize("raw", ["soon", "0", "-5"])
def test_a_malformed_limit_in_the_environment_is_refused_by_name(monkeypatch, raw):
    monkeypatch.setenv("CONCORD_TEST_STALL_SECONDS", raw)
    with pytest.raises(RuntimeError, match=f"CONCORD_TEST_STALL_SECONDS={raw!r}"):
        waiting._seconds("CONCORD_TEST_STALL_SECONDS", 180.0)
    monkeypatch.setenv("CONCORD_TEST_STALL_SECONDS", "240")
    assert waiting._seconds("CONCORD_TEST_STALL_SECONDS", 180.0) == 240.0
