"""Faults survived: crashes, outages, double submits and retries lose nothing and
duplicate nothing.

Which test proves which fault:

* A Celery worker killed mid-run (SIGKILL to its whole process group) and restarted: the run completes
  with exactly one score per unit — ``tests/scoring/test_worker.py::
  test_a_worker_killed_mid_run_and_restarted_leaves_exactly_one_score_per_unit`` (not repeated here).
* The broker restarted mid-run, no task lost: ``test_a_broker_killed_and_restarted_mid_run_loses_no_task``
  (while batches are being scored; the broker back with its data, or empty) and
  ``test_a_broker_killed_during_a_runs_fan_out_loses_no_batch`` (while
  the run's batch messages are being published).
* The database connection dropped during a label save, the client sees an error and its retry writes
  once: ``test_a_label_save_whose_database_connection_drops_fails_and_its_retry_writes_once`` (the
  connection dies before the write, or at commit after the write).
* Double submits and network retries, no lost or duplicated label:
  ``test_the_same_label_save_sent_twice_is_stored_once``,
  ``test_two_saves_on_one_version_store_the_first_and_answer_the_second_with_409_and_the_current_value``,
  ``test_the_same_submit_sent_concurrently_submits_once_and_runs_the_handlers_once``,
  ``test_the_last_two_annotators_submitting_at_once_still_hand_the_item_to_adjudication``,
  ``test_a_label_put_retried_after_a_client_timeout_is_stored_once`` and
  ``test_two_tabs_of_one_annotator_editing_one_label_lose_nothing``.

The broker tests need a Redis server they may kill, which the shared one is not: each starts a private
``redis-server`` on a free loopback port with ``--appendonly yes`` (and no RDB snapshots) and points a real
worker and this process's publishing at it, whatever broker the suite is configured with. Queued tasks
survive a restart of Redis only through that persistence: the durability tested here is the deployment's
``appendonly yes`` (with the default ``appendfsync everysec`` a killed redis-server loses nothing the
kernel has; a machine crash may lose the last second). Messages can still be lost around an outage
(received but not started, or popped but not yet recorded as unacknowledged), and a broker may come back
empty: the worker's consumer re-sends from the database what is unfinished each time it reconnects
(``scoring.tasks.RecoverOnConsumerStart``, ``score_runs_recover``), which the "empty" case proves.
Skipped only where no ``redis-server`` binary is installed.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import kombu
import pytest
import redis
from celery.signals import before_task_publish, task_postrun, task_prerun
from django.core.signals import request_started
from django.db import DatabaseError, connection, connections
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from adjudication.apps import disagreements_on_submit
from adjudication.models import AdjudicationCase, GoldLabel
from annotation import labels, services
from annotation.labels import save, statements
from annotation.models import Assignment, AssignmentStatus, Item, Label, LabelHistory, Sentence
from annotation.segmentation import split_sentences
from concord.celery import app
from scoring import services as scoring_services
from scoring.models import BatchStatus, RunStatus, Score, ScoreRun
from tests import factories, waiting
from tests.scoring import runs_support  # noqa: F401 - registers the probe metric in this process too
from tests.waiting import SLOW_TEST_TIMEOUT
from tests.worker import celery_worker, wait_for

REDIS_SERVER = shutil.which("redis-server")


# --- The broker restarted mid-run ---------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PrivateRedis:
    """A redis-server of this test's own: killing it disturbs nobody else. Restarts reuse the port and
    the data directory, as a supervisor restarting a crashed server would."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = _free_port()
        self.process: subprocess.Popen | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=1, socket_timeout=2)

    def start(self) -> None:
        self.starts += 1
        log_path = self.directory / f"redis-{self.starts}.log"
        with log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    REDIS_SERVER,
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "yes",
                    "--dir",
                    str(self.directory),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        process = self.process

        def answers() -> bool:
            try:
                return bool(self.client().ping())  # LOADING (an error) until the append-only file is replayed
            except redis.RedisError:
                return False

        def alive() -> int:
            if process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {process.returncode}:\n{log_path.read_text()}")
            return log_path.stat().st_size

        waiting.wait_for(
            answers, what="redis-server to answer", progress=alive, report=lambda: log_path.read_text(), interval=0.05
        )

    def wipe(self) -> None:
        """Delete the stopped server's data: its next start comes back empty."""
        assert self.process is None, "wipe a stopped server only"
        for path in self.directory.iterdir():
            if path.name.startswith(("appendonly", "dump")):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        assert not any(path.name.startswith(("appendonly", "dump")) for path in self.directory.iterdir())

    def kill(self) -> None:
        """SIGKILL: no shutdown save, no goodbye to clients — a crash."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=waiting.GUARD_SECONDS)  # a SIGKILLed process only has to be reaped
            self.process = None


@contextmanager
def _publishing_to(url: str) -> Iterator[None]:
    """Point this process's Celery publishing at ``url``. The write URL, because the environment's
    CELERY_BROKER_URL outranks ``broker_url`` in Celery; the transport reset, because the filesystem
    configuration names its own transport class, which would win over the URL's scheme."""
    conf = app.conf
    saved = {key: conf.get(key) for key in ("broker_write_url", "broker_transport", "broker_transport_options")}

    def forget_connections() -> None:
        app._pool = None
        app.amqp._producer_pool = None

    forget_connections()
    conf.update(broker_write_url=url, broker_transport=None, broker_transport_options={"visibility_timeout": 3600})
    try:
        yield
    finally:
        app.pool.force_close_all()
        forget_connections()
        conf.update(saved)


def _bulk_items(study, n: int) -> None:
    answer = "Metformin is the usual first-line drug. Hello there!"
    items = Item.objects.bulk_create(
        Item(study=study, external_id=f"b{i:04d}", question="What is first-line?", answer=answer) for i in range(n)
    )
    spans = split_sentences(answer)
    Sentence.objects.bulk_create(
        Sentence(item=item, part="answer", index=j, text=s.text, start=s.start, end=s.end)
        for item in items
        for j, s in enumerate(spans)
    )


def _run_progress(run_id: int) -> Callable[[], tuple]:
    def observe() -> tuple:
        run = ScoreRun.objects.get(pk=run_id)
        return run.status, run.n_done, sorted(run.batches.values_list("status", flat=True))

    return observe


@pytest.mark.worker
@pytest.mark.timeout(SLOW_TEST_TIMEOUT)
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(REDIS_SERVER is None, reason="needs a redis-server binary to start a broker it may kill")
@pytest.mark.parametrize("comes_back", ["with its data", "empty"])
def test_a_broker_killed_and_restarted_mid_run_loses_no_task(tmp_path, comes_back):
    """The broker comes back with its append-only file (messages that the worker had received but not
    acknowledged can still be missing: kombu pops a message before it records it as unacknowledged, and
    Celery drops what it received but had not started), or empty (a broker without persistence, or
    whose disk was lost): either way the worker re-sends, when it reconnects, what the database says is
    unfinished."""
    broker = PrivateRedis(tmp_path)
    broker.start()
    try:
        with (
            _publishing_to(broker.url),
            celery_worker(
                include=("tests.scoring.runs_support",), CELERY_BROKER_URL=broker.url, SCORING_LEASE_SECONDS="5"
            ) as worker,
        ):
            researcher = factories.make_user("rita-researcher")
            study = factories.make_study(owner=researcher)
            n = 240
            _bulk_items(study, n)
            run = scoring_services.score_run_start(
                study=study, metric="probe", backend="lexical", parameters={}, actor=researcher, batch_size=4
            )

            def progress() -> ScoreRun:
                return ScoreRun.objects.get(pk=run.pk)

            wait_for(lambda: progress().n_done >= 8, worker=worker, progress=_run_progress(run.pk),
                     what="the first scores")
            broker.kill()
            at_kill = progress()
            pending = run.batches.filter(status=BatchStatus.PENDING).count()
            assert at_kill.status == RunStatus.RUNNING, "the run finished before the broker was killed"
            # The worker holds at most one message (prefetch 1, acks late): the other pending batches
            # exist only as messages in the killed broker.
            assert pending >= 2
            # An outage, not a blip: the broker comes back only once the worker has noticed that it is gone.
            wait_for(lambda: "Connection to broker lost" in worker.log(), worker=worker,
                     what="the worker to notice that the broker is gone")
            if comes_back == "empty":
                broker.wipe()
            broker.start()
            wait_for(lambda: progress().status == RunStatus.DONE, worker=worker, progress=_run_progress(run.pk),
                     what="the run to finish")
            # The same worker finished it: a worker's start re-sends unfinished batches from the database,
            # so a restart would hide lost messages.
            assert worker.starts == 1 and worker.process is not None and worker.process.poll() is None
    finally:
        broker.kill()
    run.refresh_from_db()
    assert (run.n_total, run.n_done, run.n_failed) == (n, n, 0)
    assert Score.objects.filter(run=run).count() == n * 3  # two sentences and the item, once each
    assert Score.objects.filter(run=run).values("item").distinct().count() == n
    assert set(run.batches.values_list("status", flat=True)) == {BatchStatus.DONE}


# Set in a worker's environment (the worker imports this module with --include): the pid of a broker
# to SIGKILL just before the worker publishes its KILL_AT-th batch message, i.e. in the middle of a
# run's fan-out, when the run's batches are in the database but not all of their messages are queued.
KILL_BROKER_PID = "CONCORD_TEST_KILL_BROKER_PID"
KILL_AT = 5
_batch_messages_published = 0
# Set in a worker's environment too: a file to which the worker appends a line for each failed attempt of
# a running fan-out to connect to the broker, so that the test sees how long the fan-out has kept trying
# (in attempts, not in seconds).
FAN_OUT_ATTEMPTS_FILE = "CONCORD_TEST_FAN_OUT_ATTEMPTS_FILE"
_running_tasks: list[str] = []


@task_prerun.connect
def _task_began(sender: Any = None, **_kwargs: Any) -> None:
    _running_tasks.append(getattr(sender, "name", ""))


@task_postrun.connect
def _task_ended(**_kwargs: Any) -> None:
    _running_tasks.clear()


def _count_the_fan_outs_failed_connections() -> None:
    path = os.environ.get(FAN_OUT_ATTEMPTS_FILE)
    if not path:
        return
    # Every attempt of kombu to (re)connect goes through this method: one call per attempt of a retry policy.
    connect = kombu.Connection._connection_factory

    def counted(self: kombu.Connection) -> Any:
        try:
            return connect(self)
        except Exception:
            if "scoring.score_run_fan_out" in _running_tasks:
                with open(path, "a", encoding="utf-8") as attempts:
                    attempts.write("failed\n")
            raise

    kombu.Connection._connection_factory = counted


_count_the_fan_outs_failed_connections()


@before_task_publish.connect
def _kill_the_broker_mid_fan_out(sender: str | None = None, **_kwargs: Any) -> None:
    global _batch_messages_published
    pid = os.environ.get(KILL_BROKER_PID)
    if not pid or sender != "scoring.score_batch":
        return
    _batch_messages_published += 1
    if _batch_messages_published != KILL_AT:
        return
    with suppress(OSError):
        # Never signal a recycled pid: only the redis-server the test started.
        if Path(f"/proc/{pid}/comm").read_text().strip() == "redis-server":
            os.kill(int(pid), signal.SIGKILL)


@pytest.mark.worker
@pytest.mark.timeout(SLOW_TEST_TIMEOUT)
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(REDIS_SERVER is None, reason="needs a redis-server binary to start a broker it may kill")
def test_a_broker_killed_during_a_runs_fan_out_loses_no_batch(tmp_path):
    """The fan-out publishes one message per batch after the batches are committed: a message that
    cannot be published while the broker restarts must be published once it is back, not dropped."""
    broker = PrivateRedis(tmp_path)
    broker.start()
    attempts = tmp_path / "fan-out-attempts"
    # Celery's default publish policy connects once and retries max_retries times, within about 0.6 s.
    default_attempts = 1 + app.conf.task_publish_retry_policy["max_retries"]

    def failed_attempts() -> int:
        return len(attempts.read_text().splitlines()) if attempts.exists() else 0

    try:
        with (
            _publishing_to(broker.url),
            celery_worker(
                include=("tests.scoring.runs_support", "tests.test_faults"),
                CELERY_BROKER_URL=broker.url,
                **{KILL_BROKER_PID: str(broker.process.pid), FAN_OUT_ATTEMPTS_FILE: str(attempts)},
            ) as worker,
        ):
            researcher = factories.make_user("rita-researcher")
            study = factories.make_study(owner=researcher)
            n = 40
            _bulk_items(study, n)
            run = scoring_services.score_run_start(
                study=study, metric="probe", backend="lexical", parameters={}, actor=researcher, batch_size=4
            )
            wait_for(
                lambda: broker.process.poll() is not None,
                worker=worker,
                what="the fan-out to kill the broker",
            )
            broker.process = None

            def tried_longer_than_the_default_policy() -> bool:
                if re.search(r"Task scoring\.score_run_fan_out\[[0-9a-f-]+\] raised", worker.log()):
                    raise AssertionError(f"the fan-out gave up while the broker was down\n{worker.report()}")
                return failed_attempts() > default_attempts

            # The broker stays down until the fan-out has failed to reach it more often than Celery's default
            # policy tries: a message published with that policy would be lost by now, whatever the speed.
            wait_for(
                tried_longer_than_the_default_policy,
                worker=worker,
                progress=failed_attempts,
                what=f"the fan-out to fail to reach the broker more than {default_attempts} times",
            )
            broker.start()
            wait_for(
                lambda: ScoreRun.objects.get(pk=run.pk).status == RunStatus.DONE,
                worker=worker,
                progress=_run_progress(run.pk),
                what="the run to finish",
            )
            assert worker.starts == 1 and worker.process is not None and worker.process.poll() is None
    finally:
        broker.kill()
    run.refresh_from_db()
    assert (run.n_total, run.n_done, run.n_failed) == (n, n, 0)
    assert Score.objects.filter(run=run).count() == n * 3
    assert set(run.batches.values_list("status", flat=True)) == {BatchStatus.DONE}


# --- Labels: shared set-up ---------------------------------------------------------------------------


def _binary(study, key: str):
    return factories.make_question(study, key, prompt=f"{key}?")


@pytest.fixture
def one_item(study, annotator, no_submit_receivers):
    """One item, one item-level ordinal question, one assignment of the annotator's."""
    pf = factories.make_question(
        study, "pf", kind="ordinal", options=[{"value": str(n), "label": str(n), "key": str(n)} for n in range(1, 6)]
    )
    item = factories.make_item(study, answer="Take 0.5 mg daily.")
    pool = factories.make_pool(study, questions=[pf])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    return {"assignment": assignment, "pf": pf, "pool": pool}


def _history(label: Label) -> list[tuple[Any, Any, int]]:
    return list(
        LabelHistory.objects.filter(label=label).order_by("id").values_list("old_value", "new_value", "new_version")
    )


# --- The database connection dropped during a label save -----------------------------------------------


def _drop(conn) -> None:
    """Make ``conn`` really lose its database: on PostgreSQL another session terminates its backend
    (the socket is closed under it); on SQLite its handle is closed (the file's open transaction is
    rolled back, as when the process holding it dies)."""
    if conn.vendor == "postgresql":
        import psycopg

        s = conn.settings_dict
        pid = conn.connection.info.backend_pid
        with psycopg.connect(
            host=s["HOST"] or "127.0.0.1",
            port=s["PORT"] or 5432,
            user=s["USER"],
            password=s["PASSWORD"] or None,
            dbname=s["NAME"],
            autocommit=True,
        ) as admin:
            # The two-argument form waits until the backend is gone.
            assert admin.execute("SELECT pg_terminate_backend(%s, 5000)", [pid]).fetchone()[0]
    else:
        conn.connection.close()


@contextmanager
def _first_label_write(
    around: Callable[[Callable[..., Any], tuple, dict], Any], *, locked: bool = False
) -> Iterator[list[str]]:
    """Run ``around`` instead of the first label write of the server (the retry writes normally);
    yields the list of what happened, for the test to wait on.

    The write is the API's one-statement save on PostgreSQL (``annotation.labels.statements.save_label_at_once``:
    lock, checks, label and history, committed as one statement), elsewhere the locked save's write
    (``annotation.labels.save._write_label``, inside its transaction). ``locked``: the locked save's write on
    every database, with the one-statement save handing every save over to it (as it does for the htmx page and
    for every case it does not write itself)."""
    owner, name = (statements, "save_label_at_once") if connection.vendor == "postgresql" and not locked else (
        save, "_write_label"
    )
    original = getattr(owner, name)
    at_once = save._label_save_at_once
    events: list[str] = []
    lock = threading.Lock()

    def patched(*args: Any, **kwargs: Any) -> Label:
        with lock:
            first = not events
            events.append("write")
        if first:
            try:
                return around(original, args, kwargs)
            finally:
                events.append("first done")
        return original(*args, **kwargs)

    setattr(owner, name, patched)
    if locked:
        save._label_save_at_once = lambda *args, **kwargs: None
    try:
        yield events
    finally:
        setattr(owner, name, original)
        save._label_save_at_once = at_once


def _drop_before_the_write(original, args, kwargs):
    # The request has locked its assignment (its first queries); the label is not yet written.
    _drop(connections["default"])
    return original(*args, **kwargs)


def _drop_at_commit(original, args, kwargs):
    # The locked save: the label and its history row are written, not committed.
    label = original(*args, **kwargs)
    conn = connections["default"]
    commit = conn._commit

    def drop_then_commit() -> None:
        del conn._commit
        _drop(conn)
        commit()

    conn._commit = drop_then_commit
    return label


@pytest.fixture
def api_http(live_server, one_item, annotator) -> Iterator[httpx.Client]:
    """A script talking to a real threaded HTTP server with the annotator's API token."""
    token = Token.objects.create(user=annotator)
    # The client's own limit is only a guard (a test that needs a client to give up passes its own timeout).
    headers = {"Authorization": f"Token {token.key}"}
    with httpx.Client(base_url=live_server.url, headers=headers, timeout=waiting.GUARD_SECONDS) as client:
        yield client


@pytest.mark.parametrize(
    "moment, locked",
    [(_drop_before_the_write, False), (_drop_before_the_write, True), (_drop_at_commit, True)],
    ids=["before the write", "before the locked save's write", "at the locked save's commit"],
)
def test_a_label_save_whose_database_connection_drops_fails_and_its_retry_writes_once(
    api_http, one_item, moment, locked, caplog
):
    url = reverse("api-labels", args=[one_item["assignment"].pk])
    body = {"question": "pf", "unit_key": "item", "value": "4", "base_version": 0}
    with _first_label_write(moment, locked=locked) as events:
        failed = api_http.put(url, json=body)
        assert "first done" in events
        assert failed.status_code == 500, failed.text
        # The error is the lost connection (OperationalError on PostgreSQL; on SQLite, ProgrammingError
        # from the closed handle), not anything else going wrong in the request.
        logged = [r.exc_info[0] for r in caplog.records if r.name == "django.request" and r.exc_info]
        assert logged and issubclass(logged[-1], DatabaseError), logged
        assert not Label.objects.exists() and not LabelHistory.objects.exists()  # nothing half-written

        retried = api_http.put(url, json=body)
    assert retried.status_code == 200, retried.text
    assert (retried.json()["value"], retried.json()["version"]) == ("4", 1)
    label = Label.objects.get()
    assert (label.value, label.version) == ("4", 1)
    assert _history(label) == [(None, "4", 1)]


# --- Network retries and double submits -----------------------------------------------------------------


@contextmanager
def _requests_started() -> Iterator[list[str]]:
    """The paths of the requests the live server has begun to handle, in order."""
    started: list[str] = []

    def record(sender: Any = None, environ: dict | None = None, **_kwargs: Any) -> None:
        started.append((environ or {}).get("PATH_INFO", ""))

    request_started.connect(record, weak=False, dispatch_uid="tests.test_faults.requests_started")
    try:
        yield started
    finally:
        request_started.disconnect(dispatch_uid="tests.test_faults.requests_started")


def test_a_label_put_retried_after_a_client_timeout_is_stored_once(api_http, one_item):
    """The first request is still working when the client gives up and sends it again (on PostgreSQL its
    one statement has stored the label; elsewhere it still holds its transaction, and the retry waits for
    it): the retry finds the value it sends already stored, and answers with that label."""
    url = reverse("api-labels", args=[one_item["assignment"].pk])
    body = {"question": "pf", "unit_key": "item", "value": "4", "base_version": 0}

    with _requests_started() as started:

        def slow(original, args, kwargs):
            written = original(*args, **kwargs)
            # Held until the client's retry has reached the server: the client surely gives up on this request
            # first, and its retry surely arrives while this one is still working, however fast the machine.
            waiting.wait_for(lambda: started.count(url) >= 2, what="the client's retry to reach the server")
            return written

        with _first_label_write(slow) as events:
            with pytest.raises(httpx.ReadTimeout):
                api_http.put(url, json=body, timeout=0.5)
            retried = api_http.put(url, json=body)
            waiting.wait_for(lambda: "first done" in events, what="the first request to finish")
    assert started == [url, url]
    assert retried.status_code == 200, retried.text
    assert retried.json()["version"] == 1
    label = Label.objects.get()
    assert (label.value, label.version) == ("4", 1)
    assert _history(label) == [(None, "4", 1)]


@pytest.fixture
def api(annotator) -> APIClient:
    client = APIClient()
    client.force_authenticate(annotator)
    return client


@pytest.mark.django_db
def test_the_same_label_save_sent_twice_is_stored_once(api, one_item):
    """A double click or a resent request: the repeat carries the value already stored, so it is
    answered with the stored label (200, same version) rather than a conflict, and writes nothing."""
    url = reverse("api-labels", args=[one_item["assignment"].pk])
    body = {"question": "pf", "unit_key": "item", "value": "4", "base_version": 0}
    first, second = api.put(url, body, format="json"), api.put(url, body, format="json")
    assert (first.status_code, second.status_code) == (200, 200)
    assert first.json()["version"] == second.json()["version"] == 1
    label = Label.objects.get()
    assert _history(label) == [(None, "4", 1)]


@pytest.mark.django_db
def test_two_saves_on_one_version_store_the_first_and_answer_the_second_with_409_and_the_current_value(
    api, one_item, annotator
):
    url = reverse("api-labels", args=[one_item["assignment"].pk])
    assert (
        api.put(url, {"question": "pf", "unit_key": "item", "value": "4", "base_version": 0}, format="json").status_code
        == 200
    )
    refused = api.put(url, {"question": "pf", "unit_key": "item", "value": "2", "base_version": 0}, format="json")
    assert refused.status_code == 409
    details = refused.json()["details"]
    assert (details["value"], details["version"], details["your_value"], details["updated_by"]) == (
        "4",
        1,
        "2",
        "you",
    )
    label = Label.objects.get()
    assert (label.value, label.version) == ("4", 1)
    assert _history(label) == [(None, "4", 1)]


SUBMISSIONS: list[tuple[int, int]] = []
_submissions_lock = threading.Lock()


def record_submission(sender: Any, *, pool_id: int, item_id: int, **kwargs: Any) -> None:
    """A second receiver of assignment_submitted: counts how often the receivers ran (in committed submissions)."""
    with _submissions_lock:
        SUBMISSIONS.append((pool_id, item_id))


@pytest.fixture
def two_annotators_one_item(study, submit_receivers):
    """Two annotators, overlap 2, one item: they agree on ``agree`` and disagree on ``differ``."""
    submit_receivers(disagreements_on_submit, record_submission)
    SUBMISSIONS.clear()
    agree, differ = _binary(study, "agree"), _binary(study, "differ")
    item = factories.make_item(study, answer="Take 0.5 mg daily.")
    pool = factories.make_pool(study, questions=[agree, differ], overlap=2)
    first, second = factories.make_user("nora-nurse"), factories.make_user("dan-doctor")
    for user in (first, second):
        factories.add_member(pool, user)
    services.pool_assign_items(pool=pool)
    for user, differ_value in ((first, "yes"), (second, "no")):
        assignment = pool.assignments.get(annotator=user)
        for question, value in ((agree, "yes"), (differ, differ_value)):
            labels.label_save(
                assignment=assignment, question=question, unit_key="item", value=value, base_version=0, actor=user
            )
    return {"pool": pool, "item": item, "first": first, "second": second}


class _Overlap:
    """How far concurrent submissions have got: begun (the request is sent), inside (in the submitting
    transaction, at the first handler), detected (past the disagreement detection)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.begun = self.inside = self.detected = 0


OVERLAP = _Overlap()


def _concurrently(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls at the same moment, each in a thread with its own database connection."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            barrier.wait()
            with OVERLAP.lock:
                OVERLAP.begun += 1
            results[i] = calls[i]()
        except Exception as exc:  # reported by the assertions on the results
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for i, thread in enumerate(threads):
        waiting.join(thread, what=f"concurrent call {i}")
    return results


def _submit_call(user, assignment: Assignment) -> Callable[[], Any]:
    def call() -> Any:
        client = APIClient()
        client.force_authenticate(user)
        response = client.post(reverse("api-submit", args=[assignment.pk]))
        return response.status_code, response.json()

    return call


@pytest.mark.django_db(transaction=True)
def test_the_same_submit_sent_concurrently_submits_once_and_runs_the_handlers_once(two_annotators_one_item):
    data = two_annotators_one_item
    pool, first, second = data["pool"], data["first"], data["second"]
    services.assignment_submit(assignment=pool.assignments.get(annotator=first), actor=first)
    last = pool.assignments.get(annotator=second)
    results = _concurrently([_submit_call(second, last)] * 4)
    assert [status for status, _ in results] == [200] * 4, results
    assert {body["status"] for _, body in results} == {AssignmentStatus.SUBMITTED}
    assert len({body["submitted_at"] for _, body in results}) == 1  # one submission, reported four times
    assert [(pool.pk, data["item"].pk)] * 2 == SUBMISSIONS  # the first annotator's submit, then one of these
    assert list(GoldLabel.objects.filter(pool=pool).values_list("question__key", "value", "version")) == [
        ("agree", "yes", 1)
    ]
    assert list(AdjudicationCase.objects.filter(pool=pool).values_list("question__key", flat=True)) == ["differ"]
    assert Label.objects.filter(assignment__pool=pool).count() == 4
    assert LabelHistory.objects.filter(label__assignment__pool=pool).count() == 4


def _the_other_waits_for_this_transaction() -> bool:
    """PostgreSQL: another session waits for a lock this transaction holds. SQLite, whose write transactions
    take the database's write lock when they begin (IMMEDIATE): the other submission has begun."""
    if connection.vendor != "postgresql":
        return OVERLAP.begun > 1
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted AND pg_backend_pid() = ANY(pg_blocking_pids(pid)))"
        )
        return bool(cursor.fetchone()[0])


def overlap_before_the_detection(sender: Any, **kwargs: Any) -> None:
    """The first submission in holds its transaction open until the other one waits for it, or has come in
    too (nothing kept them apart): the two surely overlap, by a condition, not by a duration."""
    with OVERLAP.lock:
        OVERLAP.inside += 1
        if OVERLAP.inside > 1:
            return
    waiting.wait_for(
        lambda: OVERLAP.inside > 1 or _the_other_waits_for_this_transaction(),
        what="the other submission to wait for this one, or to come in too",
    )


def overlap_after_the_detection(sender: Any, **kwargs: Any) -> None:
    """No submission commits before the other one has run the detection too, unless the other waits for it:
    where nothing serialises them, both detections surely run before either submission is committed."""
    with OVERLAP.lock:
        OVERLAP.detected += 1
    waiting.wait_for(
        lambda: OVERLAP.detected > 1 or _the_other_waits_for_this_transaction(),
        what="the other submission to run the detection too, or to wait for this one",
    )


@pytest.mark.django_db(transaction=True)
def test_the_last_two_annotators_submitting_at_once_still_hand_the_item_to_adjudication(
    two_annotators_one_item, submit_receivers
):
    """Each submission's receiver must see the other one: if both ran on a snapshot where the other
    assignment was still open, neither would make gold or open the case, and the item would be lost
    to adjudication."""
    OVERLAP.__init__()
    data = two_annotators_one_item
    submit_receivers(
        overlap_before_the_detection, disagreements_on_submit, overlap_after_the_detection, record_submission
    )
    pool, first, second = data["pool"], data["first"], data["second"]
    results = _concurrently(
        [
            _submit_call(first, pool.assignments.get(annotator=first)),
            _submit_call(second, pool.assignments.get(annotator=second)),
        ]
    )
    assert [status for status, _ in results] == [200, 200], results
    assert set(pool.assignments.values_list("status", flat=True)) == {AssignmentStatus.SUBMITTED}
    assert list(GoldLabel.objects.filter(pool=pool).values_list("question__key", "value")) == [("agree", "yes")]
    assert list(AdjudicationCase.objects.filter(pool=pool).values_list("question__key", flat=True)) == ["differ"]


# --- Two tabs ------------------------------------------------------------------------------------------------


def _tab(user) -> Client:
    tab = Client()
    tab.force_login(user)
    return tab


def _htmx_save(tab: Client, assignment: Assignment, value: str, base_version: int):
    return tab.post(
        reverse("annotation:label-save", args=[assignment.pk]),
        {"question": "pf", "unit_key": "item", "value": value, "base_version": base_version},
        HTTP_HX_REQUEST="true",
    )


@pytest.mark.django_db
def test_two_tabs_of_one_annotator_editing_one_label_lose_nothing(one_item, annotator):
    """Two sessions of one user, both opened before either saved (both saw version 0)."""
    assignment = one_item["assignment"]
    first, second = _tab(annotator), _tab(annotator)
    assert first.session.session_key != second.session.session_key
    for tab in (first, second):
        assert tab.get(reverse("annotation:item", args=[assignment.pk])).status_code == 200

    assert _htmx_save(first, assignment, "4", 0).status_code == 200
    stale = _htmx_save(second, assignment, "2", 0)
    assert stale.status_code == 409
    page = stale.content.decode()
    # The second tab is shown the newer answer and keeps its own, unsaved, to save deliberately.
    assert '<strong class="conflict-value">4</strong>' in page
    assert '<strong class="conflict-mine">2</strong>' in page
    assert '<input type="hidden" name="base_version" value="1">' in page
    assert Label.objects.get().value == "4"

    assert _htmx_save(second, assignment, "2", 1).status_code == 200  # "save my answer over it"
    assert _htmx_save(first, assignment, "5", 1).status_code == 409  # the first tab is now the stale one
    label = Label.objects.get()
    assert (label.value, label.version) == ("2", 2)
    assert _history(label) == [(None, "4", 1), ("4", "2", 2)]
