"""Operations (concord/ops, docs/operations.md): the probes, /metrics and its protection, request ids in JSON logs
and in the Celery tasks a request starts, and the workers' heartbeats."""

from __future__ import annotations

import importlib.util
import io
import json
import logging
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from celery import Celery
from celery.worker.request import Request
from django.db import OperationalError, connections
from django.db.migrations.recorder import MigrationRecorder
from django.http import HttpResponse
from django.urls import reverse
from django.utils import timezone
from kombu import Connection
from prometheus_client.parser import text_string_to_metric_families

from annotation.labels import label_save, label_save_in_unit
from concord.celery import app
from concord.errors import Conflict
from concord.ops import checks, heartbeat, request_id
from concord.ops.models import WorkerHeartbeat
from scoring.models import RunStatus, ScoreRun
from tests import factories
from tests.ops_tasks import log_request_id
from tests.waiting import SLOW_TEST_TIMEOUT, SUBPROCESS_TIMEOUT, join, wait_for
from tests.worker import celery_worker
from tests.worker import wait_for as wait_for_worker

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "metrics-token-0123456789abcdef"
QUEUES = ["jobs", "scoring-cpu", "scoring-gpu", "scoring-llm"]


def use_broker(monkeypatch, url: str, **transport_options) -> None:
    """The probes and scrapes of this test reach the broker at ``url`` (a real kombu connection). Celery's
    ``broker_url`` prefers the CELERY_BROKER_URL environment variable (set by CI) to the app's own: it is unset
    for the test."""
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)
    other = Celery("concord-ops-test", broker=url, set_as_current=False)
    other.conf.broker_transport_options = transport_options
    monkeypatch.setattr(checks, "celery_app", lambda: other)


def beat_all(queues=QUEUES, *, hostname="celery@w1", age=timedelta(0)):
    now = timezone.now()
    heartbeat.beat(hostname, list(queues), started_at=now - age, now=now - age)


# --- /healthz ---------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_healthz_answers_ok_anonymously_without_touching_the_database(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"} and response["Content-Type"] == "application/json"
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
def test_probes_are_answered_over_plain_http_when_every_other_page_is_redirected_to_https(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    beat_all()
    assert client.get("/accounts/login/").status_code == 301
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200
    assert client.get("/metrics").status_code == 404  # exempt from the redirect, and off without a token


# --- /readyz ----------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_readyz_is_200_and_lists_every_check_when_all_pass(client):
    beat_all()
    response = client.get("/readyz")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "migrations", "broker", "workers"}
    assert all(check["ok"] for check in body["checks"].values())
    assert body["checks"]["workers"]["live"] == 1


@pytest.mark.django_db
def test_readyz_is_503_when_the_database_is_down_and_names_no_host(client, monkeypatch):
    def refused(*args, **kwargs):
        raise OperationalError('connection to server at "db.secret.internal", port 5432 failed: refused')

    beat_all()
    monkeypatch.setattr(connections["default"], "ensure_connection", refused)
    response = client.get("/readyz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["database"] == {"ok": False, "error": "OperationalError"}
    assert checks["migrations"] == {"ok": False, "skipped": "database"}
    assert checks["workers"] == {"ok": False, "skipped": "database"}
    assert checks["broker"]["ok"] is True
    assert b"secret.internal" not in response.content


@pytest.mark.django_db
def test_readyz_is_503_while_a_migration_is_unapplied(client):
    beat_all()
    MigrationRecorder(connections["default"]).record_unapplied("ops", "0001_initial")
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["migrations"] == {"ok": False, "unapplied": 1}


@pytest.mark.django_db
def test_readyz_is_503_when_the_broker_refuses_and_never_shows_its_password(client, monkeypatch):
    beat_all()
    # Nothing listens on port 1: a real connection attempt through kombu's Redis transport, refused at once.
    use_broker(monkeypatch, "redis://:hunter2-broker-password@127.0.0.1:1/0")
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["broker"]["ok"] is False
    assert body["checks"]["database"]["ok"] and body["checks"]["workers"]["ok"]
    assert b"hunter2" not in response.content


@pytest.mark.django_db
def test_readyz_is_503_when_the_filesystem_brokers_folder_is_gone(client, monkeypatch, tmp_path, caplog):
    beat_all()
    options = {**app.conf.broker_transport_options, "data_folder_in": str(tmp_path / "gone")}
    use_broker(monkeypatch, "filesystem://", **options)
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["broker"] == {"ok": False, "error": "ConnectionError"}
    # The failing check is logged once, with its cause; not Django's "Service Unavailable" at every probe.
    [record] = caplog.records
    assert (record.name, record.levelname, record.getMessage()) == (
        "concord.ops.checks",
        "WARNING",
        "readiness check broker failed",
    )
    assert record.exc_info is not None


@pytest.mark.django_db
def test_readyz_wants_a_live_worker_on_every_queue(client, settings):
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["workers"] == {"ok": False, "live": 0, "queues_without_worker": QUEUES}

    beat_all(["jobs", "scoring-cpu"], hostname="celery@cpu")
    workers = client.get("/readyz").json()["checks"]["workers"]
    assert workers == {"ok": False, "live": 1, "queues_without_worker": ["scoring-gpu", "scoring-llm"]}

    # A deployment that sends nothing to the GPU or LLM queues says so.
    settings.CONCORD_READY_QUEUES = ["jobs", "scoring-cpu"]
    assert client.get("/readyz").status_code == 200


@pytest.mark.django_db
def test_readyz_counts_a_worker_silent_past_the_stale_limit_as_dead(client, settings):
    settings.CONCORD_WORKER_STALE_SECONDS = 60
    beat_all(age=timedelta(seconds=61))
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["workers"]["live"] == 0
    beat_all(age=timedelta(seconds=59))
    assert client.get("/readyz").status_code == 200


# --- Heartbeats -------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_heartbeat_updates_its_workers_row_and_prunes_workers_silent_for_a_day():
    now = timezone.now()
    heartbeat.beat("celery@old", ["jobs"], started_at=now, now=now - timedelta(days=2))
    heartbeat.beat("celery@w1", ["scoring-cpu", "jobs"], started_at=now, now=now - timedelta(seconds=5))
    heartbeat.beat("celery@w1", ["scoring-cpu", "jobs"], started_at=now, now=now)
    row = WorkerHeartbeat.objects.get()
    assert (row.hostname, row.queues, row.last_seen, row.pid) == (
        "celery@w1",
        ["jobs", "scoring-cpu"],
        now,
        os.getpid(),
    )


def test_the_worker_step_beats_from_its_own_thread_with_the_consumed_queues_and_stops(monkeypatch, settings):
    settings.CONCORD_WORKER_HEARTBEAT_SECONDS = 3600  # one beat, then the thread waits for the stop
    beats = []
    monkeypatch.setattr(heartbeat, "beat", lambda hostname, queues, started_at: beats.append((hostname, queues)))
    removed = []
    monkeypatch.setattr(
        WorkerHeartbeat.objects, "filter", lambda **kw: SimpleNamespace(delete=lambda: removed.append(kw))
    )
    consumer = SimpleNamespace(
        hostname="celery@gpu1",
        task_consumer=SimpleNamespace(queues=[SimpleNamespace(name="scoring-gpu"), SimpleNamespace(name="jobs")]),
    )
    step = heartbeat.Heartbeat(SimpleNamespace())
    step.start(consumer)
    thread = step.thread
    wait_for(lambda: beats, what="the first heartbeat")
    assert beats == [("celery@gpu1", ["jobs", "scoring-gpu"])]
    assert thread.name == "concord-heartbeat" and thread.daemon
    step.shutdown(consumer)
    join(thread, what="the heartbeat thread")
    assert step.thread is None
    assert removed == [{"hostname": "celery@gpu1"}]


def test_every_worker_runs_the_heartbeat_step():
    assert "concord.ops.heartbeat:Heartbeat" in app.steps["consumer"]


# --- /metrics ---------------------------------------------------------------------------------------------------


def scrape(client) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def value(samples, name, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture
def metrics_on(settings):
    settings.CONCORD_METRICS_TOKEN = TOKEN


@pytest.mark.django_db
def test_metrics_are_off_unless_a_token_or_loopback_is_configured(client):
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize(
    "authorization", [None, "Bearer wrong-token-0123456789abcdef", f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Bearer"]
)
def test_metrics_refuse_a_scraper_without_the_token(client, metrics_on, authorization):
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    response = client.get("/metrics", **headers)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert b"concord_" not in response.content


@pytest.mark.django_db
def test_metrics_on_loopback_answer_this_machine_only(client, settings):
    settings.CONCORD_METRICS_LOOPBACK = True
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 401


@pytest.mark.django_db
def test_requests_are_counted_by_url_name_and_status_never_by_path(client, metrics_on):
    before = scrape(client)
    client.get("/healthz")
    client.get(reverse("annotation:item", args=[987654]))  # anonymous: a redirect to the login page
    client.get("/no-such-page/987654/")
    after = scrape(client)
    for view, status in (("healthz", "200"), ("annotation:item", "302"), ("<unresolved>", "404")):
        key = {"view": view, "method": "GET", "status": status}
        assert (
            value(after, "concord_http_requests_total", **key)
            == value(before, "concord_http_requests_total", **key) + 1
        )
        assert value(after, "concord_http_request_duration_seconds_count", **key) == (
            value(before, "concord_http_request_duration_seconds_count", **key) + 1
        )
    assert not any("987654" in str(labels) for _, labels in after)


@pytest.mark.django_db
@pytest.mark.parametrize("save", [label_save, label_save_in_unit], ids=["api", "page"])
def test_a_label_save_is_counted_and_a_refused_one_is_not(client, metrics_on, study, annotator, save):
    assignment, question = factories.one_nominal_assignment(study, annotator)
    before = value(scrape(client), "concord_label_saves_total")
    save(assignment=assignment, question=question, unit_key="item", value="3", base_version=0, actor=annotator)
    assert value(scrape(client), "concord_label_saves_total") == before + 1
    with pytest.raises(Conflict):  # based on no label, while there is one now
        save(assignment=assignment, question=question, unit_key="item", value="4", base_version=0, actor=annotator)
    assert value(scrape(client), "concord_label_saves_total") == before + 1


@pytest.mark.django_db
def test_metrics_give_queue_depths_read_at_scrape_time(client, metrics_on):
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge("scoring-llm")
        before = scrape(client)
        app.send_task("tests.ops_nothing", queue="scoring-llm", connection=conn)
        after = scrape(client)
        conn.default_channel.queue_purge("scoring-llm")
    assert value(before, "concord_broker_up") == 1
    assert value(before, "concord_queue_messages", queue="scoring-llm") == 0
    assert value(after, "concord_queue_messages", queue="scoring-llm") == 1
    assert {labels for name, labels in after if name == "concord_queue_messages"} == {
        (("queue", queue),) for queue in QUEUES
    }


def test_a_queue_the_broker_has_never_seen_has_no_messages():
    # kombu's memory transport, like Redis, refuses a passive declaration of a queue it does not hold.
    with Connection("memory://") as conn:
        conn.SimpleQueue("ops-seen").put({"n": 1})
        assert checks.queue_depths(conn, ["ops-seen", "ops-never-seen"]) == {"ops-seen": 1, "ops-never-seen": 0}


@pytest.mark.django_db
def test_metrics_say_when_the_broker_is_down(client, metrics_on, monkeypatch):
    use_broker(monkeypatch, "redis://127.0.0.1:1/0")
    samples = scrape(client)
    assert value(samples, "concord_broker_up") == 0
    assert not any(name == "concord_queue_messages" for name, _ in samples)


@pytest.mark.django_db
def test_metrics_give_each_workers_heartbeat_age(client, metrics_on):
    beat_all(["jobs"], hostname="celery@w1", age=timedelta(seconds=30))
    beat_all(["scoring-gpu"], hostname="celery@gpu", age=timedelta(hours=2))
    samples = scrape(client)
    assert 30 <= value(samples, "concord_worker_heartbeat_age_seconds", worker="celery@w1") < 3600
    assert value(samples, "concord_worker_heartbeat_age_seconds", worker="celery@gpu") >= 7200


@pytest.mark.django_db
def test_metrics_give_the_progress_of_running_score_runs(client, metrics_on, study):
    common = {"study": study, "metric": "rf", "metric_version": "1", "backend": "lexical"}
    running = ScoreRun.objects.create(**common, status=RunStatus.RUNNING, n_total=10, n_done=3, n_failed=1)
    ScoreRun.objects.create(**common, status=RunStatus.DONE, n_total=5, n_done=5)
    ScoreRun.objects.create(**common, status=RunStatus.QUEUED, n_total=7)
    samples = scrape(client)
    labels = {"run": str(running.pk), "study": study.slug, "metric": "rf", "backend": "lexical"}
    assert value(samples, "concord_score_run_items_done", **labels) == 3
    assert value(samples, "concord_score_run_items_failed", **labels) == 1
    assert value(samples, "concord_score_run_items_total", **labels) == 10
    assert [labels for name, labels in samples if name == "concord_score_run_items_total"] == [
        tuple(sorted(labels.items()))
    ]
    assert value(samples, "concord_score_runs", status="running") == 1
    assert value(samples, "concord_score_runs", status="queued") == 1


_MULTIPROCESS = """
import django, os, sys
django.setup()
from concord.ops import metrics
if sys.argv[1] == "save":
    metrics.LABEL_SAVES.inc()
else:
    sys.stdout.write(metrics.exposition().decode())
"""


def test_with_a_multiprocess_folder_metrics_sum_the_counts_of_every_process(tmp_path):
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "tests.settings"}

    def run(what: str) -> str:
        result = subprocess.run(
            [sys.executable, "-c", _MULTIPROCESS, what],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=SUBPROCESS_TIMEOUT,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    run("save")
    run("save")
    families = {f.name: f for f in text_string_to_metric_families(run("scrape"))}
    [sample] = [s for s in families["concord_label_saves"].samples if s.name == "concord_label_saves_total"]
    assert sample.value == 2


def _gunicorn_config():
    spec = importlib.util.spec_from_file_location("gunicorn_conf", ROOT / "gunicorn.conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gunicorn_empties_the_multiprocess_folder_at_start_and_marks_exited_processes_dead(tmp_path, monkeypatch):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    for name in ("counter_111.db", "histogram_111.db", "gauge_livesum_222.db", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    config = _gunicorn_config()
    config.on_starting(server=None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    (tmp_path / "gauge_livesum_222.db").write_bytes(b"")
    (tmp_path / "counter_222.db").write_bytes(b"")
    config.child_exit(server=None, worker=SimpleNamespace(pid=222))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counter_222.db", "notes.txt"]  # its counts stay


# --- Request ids and JSON logs ----------------------------------------------------------------------------------


@pytest.fixture
def json_lines():
    """The JSON lines (settings.LOGGING's formatter and filter) that the root logger writes during the test."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(request_id.json_formatter())
    handler.addFilter(request_id.RequestIdFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)


@pytest.mark.django_db
def test_a_well_formed_incoming_request_id_is_kept_returned_and_logged(client, json_lines):
    response = client.get("/no-such-page/", HTTP_X_REQUEST_ID="lb-0123456789abcdef")
    assert response.status_code == 404
    assert response["X-Request-ID"] == "lb-0123456789abcdef"
    [line] = [line for line in json_lines() if line["logger"] == "django.request"]
    assert {"timestamp", "level", "logger", "message", "request_id"} <= set(line)
    assert line["request_id"] == "lb-0123456789abcdef"
    assert line["level"] == "WARNING"
    assert line["message"] == "Not Found: /no-such-page/"
    assert request_id.request_id.get() is None  # gone once the request is answered


@pytest.mark.django_db
@pytest.mark.parametrize("incoming", [None, "", "short", "has space 0123456789", "x" * 129, '{"forged":1}xxxx', "a\nb"])
def test_a_missing_or_malformed_request_id_is_replaced_by_a_new_uuid(client, incoming):
    headers = {"HTTP_X_REQUEST_ID": incoming} if incoming is not None else {}
    first = client.get("/healthz", **headers)["X-Request-ID"]
    second = client.get("/healthz", **headers)["X-Request-ID"]
    assert len(first) == 32 and int(first, 16) >= 0
    assert first != second and first != incoming


def _published(**options):
    """The message that ``log_request_id`` publishes with ``options``, as a worker receives it."""
    with Connection("memory://") as conn:
        log_request_id.apply_async(connection=conn, queue="jobs", **options)
        message = conn.SimpleQueue("jobs").get(timeout=SUBPROCESS_TIMEOUT)
        message.ack()
        return message


def test_a_task_started_during_a_request_logs_that_requests_id_in_the_worker(rf, json_lines):
    published = []

    def start_task(request):
        published.append(_published())
        return HttpResponse("started")

    middleware = request_id.RequestIdMiddleware(start_task)
    response = middleware(rf.get("/", HTTP_X_REQUEST_ID="req-from-the-browser-01"))
    assert response["X-Request-ID"] == "req-from-the-browser-01"
    [message] = published
    assert message.headers[request_id.TASK_HEADER] == "req-from-the-browser-01"

    # The worker's side: Celery's own request runs the task (task_prerun, task_postrun).
    result = Request(message, app=app, task=log_request_id).execute()
    assert result == "req-from-the-browser-01"
    [line] = [line for line in json_lines() if line["message"] == "task ran"]
    assert line["request_id"] == "req-from-the-browser-01" and line["logger"] == "tests.ops"
    assert request_id.request_id.get() is None  # the worker's context is clean after the task


def test_a_task_sent_outside_a_request_carries_no_id_and_logs_none(json_lines):
    message = _published()
    assert request_id.TASK_HEADER not in message.headers
    assert Request(message, app=app, task=log_request_id).execute() is None
    [line] = [line for line in json_lines() if line["message"] == "task ran"]
    assert line["request_id"] is None


def test_a_task_run_in_place_keeps_its_callers_request_id():
    token = request_id.request_id.set("req-eager-0123456789")
    try:
        assert log_request_id.apply().get() == "req-eager-0123456789"
        assert log_request_id.apply(headers={request_id.TASK_HEADER: "req-other-012345"}).get() == "req-other-012345"
        assert request_id.request_id.get() == "req-eager-0123456789"
    finally:
        request_id.request_id.reset(token)


def test_concord_log_format_json_writes_one_json_object_per_line(tmp_path):
    code = (
        "import django, logging; django.setup(); from concord.ops.request_id import request_id; "
        "request_id.set('req-0123456789abcdef'); logging.getLogger('concord.demo').warning('hello %s', 'there')"
    )
    env = {**os.environ, "CONCORD_LOG_FORMAT": "json", "DJANGO_SETTINGS_MODULE": "tests.settings"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT
    )
    assert result.returncode == 0, result.stderr
    [line] = [json.loads(line) for line in result.stderr.splitlines()]
    assert set(line) == {"timestamp", "level", "logger", "message", "request_id"}
    assert (line["level"], line["logger"], line["message"], line["request_id"]) == (
        "WARNING",
        "concord.demo",
        "hello there",
        "req-0123456789abcdef",
    )
    assert timezone.datetime.fromisoformat(line["timestamp"]).tzinfo is not None


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CONCORD_LOG_FORMAT", "xml"),
        ("CONCORD_METRICS_TOKEN", "short-token"),
        ("CONCORD_READY_QUEUES", "jobs,scoring-gpus"),
        ("CONCORD_WORKER_STALE_SECONDS", "5"),  # below the heartbeat interval
    ],
)
def test_bad_operations_settings_are_refused(name, value):
    env = {**os.environ, name: value, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
    )
    assert result.returncode != 0 and name in result.stderr.splitlines()[-1]


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.timeout(SLOW_TEST_TIMEOUT)
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_beats_makes_readyz_pass_and_logs_the_request_id_in_json(client, settings):
    """A real worker on the jobs queue: its heartbeat makes /readyz pass for that queue, a task published under a
    request id logs a JSON line with that id, and its row is gone once it stops."""
    settings.CONCORD_READY_QUEUES = ["jobs"]
    assert client.get("/readyz").status_code == 503
    with celery_worker(queues=("jobs",), include=("tests.ops_tasks",), CONCORD_LOG_FORMAT="json") as worker:
        row = wait_for_worker(
            lambda: WorkerHeartbeat.objects.filter(queues=["jobs"]).first(), worker=worker, what="the heartbeat"
        )
        assert row.hostname.startswith("test-")
        response = client.get("/readyz")
        assert response.status_code == 200, response.json()

        token = request_id.request_id.set("req-into-the-worker-01")
        try:
            log_request_id.apply_async(queue="jobs")
        finally:
            request_id.request_id.reset(token)

        def task_line():
            for text in worker.log().splitlines():
                if text.startswith("{") and json.loads(text).get("message") == "task ran":
                    return json.loads(text)
            return None

        line = wait_for_worker(task_line, worker=worker, what="the task's log line")
        assert line["request_id"] == "req-into-the-worker-01"
        assert {"timestamp", "level", "logger", "message", "request_id"} <= set(line)
    assert not WorkerHeartbeat.objects.filter(hostname=row.hostname).exists()
