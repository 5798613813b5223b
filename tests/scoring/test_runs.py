"""Score runs through the services, with Celery eager: fan-out, batches, leases, idempotency, cancel."""

from __future__ import annotations

import shutil
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.test import override_settings
from django.utils import timezone

from concord.errors import Conflict, ValidationFailed
from scoring import services
from scoring.metrics import ITEM, UnitScore
from scoring.models import BatchStatus, RunStatus, Score, ScoreBatch, ScoreRun
from tests import factories
from tests.scoring.runs_support import BOOM, FLAKY, FLAKY_FAILURES, eager_celery, nli_available

pytestmark = pytest.mark.django_db

CONTEXT = "Metformin is the usual first-line drug for type 2 diabetes. The usual dose is 500 mg twice daily."


def _items(study, n: int, *, answer: str = "Metformin is the usual first-line drug. Hello there!") -> list:
    items = []
    for i in range(n):
        item = factories.make_item(study, f"q{i:03d}", answer=answer)
        factories.make_chunk(item, 1, CONTEXT)
        items.append(item)
    return items


def _start(study, researcher, **kw) -> ScoreRun:
    args = {"metric": "probe", "backend": "lexical", "parameters": {}, "actor": researcher, "batch_size": 2}
    args.update(kw)
    return services.score_run_start(study=study, **args)


def _units_per_item(run: ScoreRun) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for item_id, unit_key in Score.objects.filter(run=run).values_list("item_id", "unit_key"):
        out.setdefault(item_id, []).append(unit_key)
    return out


def test_a_run_scores_every_item_and_finishes_done(study, researcher, django_capture_on_commit_callbacks):
    items = _items(study, 5)
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        run = _start(study, researcher)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert (run.n_total, run.n_done, run.n_failed) == (5, 5, 0)
    assert run.metric_version == "1"
    assert run.model_identity.startswith("lexical")
    assert run.batches.count() == 3 and set(run.batches.values_list("status", flat=True)) == {BatchStatus.DONE}
    units = _units_per_item(run)
    assert set(units) == {i.pk for i in items}
    assert all(sorted(u) == ["item", "s:0", "s:1"] for u in units.values())
    item_score = Score.objects.get(run=run, item=items[0], unit_key="item")
    assert item_score.state == "ok" and item_score.value == pytest.approx(0.5)  # "Hello there!" is unsupported


def test_starting_enqueues_nothing_until_the_transaction_commits(study, researcher, django_capture_on_commit_callbacks):
    _items(study, 1)
    with eager_celery(), django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = _start(study, researcher)
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and len(callbacks) == 1
    assert not ScoreBatch.objects.filter(run=run).exists()


@pytest.mark.parametrize(
    ("metric", "backend", "parameters", "message"),
    [
        ("no-such-metric", "lexical", {}, "unknown metric"),
        ("probe", "llm", {}, "cannot use the 'llm' backend"),
        ("probe", "lexical", {"threshold": "high"}, "is not a float"),
        ("probe", "lexical", {"temperature": 1}, "unknown parameter"),
    ],
)
def test_start_refuses_bad_metric_backend_or_parameters_and_creates_nothing(
    study, researcher, metric, backend, parameters, message
):
    with pytest.raises(ValidationFailed, match=message):
        services.score_run_start(study=study, metric=metric, backend=backend, parameters=parameters, actor=researcher)
    assert not ScoreRun.objects.exists()


def test_parameters_are_stored_resolved_with_their_defaults(study, researcher, django_capture_on_commit_callbacks):
    run = _start(study, researcher, parameters={"threshold": "0.25"})
    assert run.parameters == {"threshold": 0.25}
    run = _start(study, researcher)
    assert run.parameters == {"threshold": 0.5}


def test_a_failing_item_is_recorded_with_its_error_and_the_run_continues(
    study, researcher, django_capture_on_commit_callbacks
):
    _items(study, 3)
    bad = factories.make_item(study, "bad", answer=f"This one goes {BOOM}.")
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        run = _start(study, researcher)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert (run.n_done, run.n_failed) == (3, 1)
    failed = Score.objects.get(run=run, item=bad)
    assert failed.state == "failed" and failed.value is None
    assert "RuntimeError: cannot score bad" in failed.details["error"]


def test_a_transient_backend_error_is_retried_and_then_succeeds(study, researcher, django_capture_on_commit_callbacks):
    item = factories.make_item(study, "flaky", answer=f"Metformin is first-line. {FLAKY}.")
    factories.make_chunk(item, 1, CONTEXT)
    FLAKY_FAILURES["flaky"] = 2
    with eager_celery(propagate=False), django_capture_on_commit_callbacks(execute=True):
        run = _start(study, researcher)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and (run.n_done, run.n_failed) == (1, 0)
    assert Score.objects.get(run=run, item=item, unit_key="item").state == "ok"
    assert run.batches.get().attempts == 3


@override_settings(SCORING_MAX_TRANSIENT_RETRIES=2)
def test_a_transient_error_that_persists_past_the_cap_fails_the_item_not_the_run(
    study, researcher, django_capture_on_commit_callbacks
):
    from scoring.tasks import score_batch

    item = factories.make_item(study, "always-flaky", answer=f"{FLAKY} forever.")
    FLAKY_FAILURES["always-flaky"] = 1000
    saved = score_batch.max_retries
    score_batch.max_retries = 2
    try:
        with eager_celery(propagate=False), django_capture_on_commit_callbacks(execute=True):
            run = _start(study, researcher)
    finally:
        score_batch.max_retries = saved
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and (run.n_done, run.n_failed) == (0, 1)
    score = Score.objects.get(run=run, item=item)
    assert score.state == "failed" and score.details["error_type"] == "TransientBackendError"
    assert run.batches.get().attempts == 3  # the first try and two retries


def test_running_a_batch_twice_leaves_one_score_per_unit(study, researcher, django_capture_on_commit_callbacks):
    _items(study, 4)
    run = _start(study, researcher)
    batch_ids = services.score_run_fan_out(run_id=run.pk)
    first = services.score_batch_process(batch_id=batch_ids[0], worker="w1")
    second = services.score_batch_process(batch_id=batch_ids[0], worker="w2")
    assert (first.status, second.status) == ("done", "skipped")
    assert Score.objects.filter(run=run).count() == 2 * 3
    run.refresh_from_db()
    assert run.n_done == 2


def test_a_redelivered_batch_after_a_crash_resumes_without_duplicates_or_double_counting(study, researcher):
    items = _items(study, 4)
    run = _start(study, researcher, batch_size=4)
    (batch_id,) = services.score_run_fan_out(run_id=run.pk)
    services.score_batch_process(batch_id=batch_id, worker="w1")
    # A worker died after writing half the batch: the batch is still running under an expired lease.
    Score.objects.filter(run=run, item__in=items[2:]).delete()
    ScoreRun.objects.filter(pk=run.pk).update(n_done=2, status=RunStatus.RUNNING, finished_at=None)
    ScoreBatch.objects.filter(pk=batch_id).update(
        status=BatchStatus.RUNNING, leased_by="dead-worker", lease_until=timezone.now() - timedelta(seconds=1)
    )
    outcome = services.score_batch_process(batch_id=batch_id, worker="w2")
    assert outcome.scored_items == 2  # only the items without scores
    run.refresh_from_db()
    assert (run.status, run.n_done, run.n_failed) == (RunStatus.DONE, 4, 0)
    assert Score.objects.filter(run=run).count() == 4 * 3


def test_a_twin_delivery_waits_while_the_lease_is_live_and_writes_nothing(study, researcher):
    _items(study, 2)
    run = _start(study, researcher)
    (batch_id,) = services.score_run_fan_out(run_id=run.pk)
    ScoreBatch.objects.filter(pk=batch_id).update(
        status=BatchStatus.RUNNING, leased_by="alive-worker", lease_until=timezone.now() + timedelta(seconds=30)
    )
    with pytest.raises(services.LeaseHeld) as held:
        services.score_batch_process(batch_id=batch_id, worker="twin")
    assert 25 < held.value.retry_in <= 32
    assert not Score.objects.filter(run=run).exists()


def test_a_delivery_whose_lease_was_taken_over_writes_nothing(study, researcher):
    (item,) = _items(study, 1)
    run = _start(study, researcher)
    (batch_id,) = services.score_run_fan_out(run_id=run.pk)
    ScoreBatch.objects.filter(pk=batch_id).update(status=BatchStatus.RUNNING, leased_by="new-owner")
    with pytest.raises(services.LeaseLost):
        services._flush(
            batch_id=batch_id,
            run_id=run.pk,
            token="old-owner",
            results=[(item.pk, [UnitScore(ITEM, 1.0, "ok")])],
            finish=True,
        )
    run.refresh_from_db()
    assert not Score.objects.filter(run=run).exists() and run.n_done == 0


def test_cancel_skips_the_remaining_batches_and_keeps_finished_scores(study, researcher):
    _items(study, 6)
    run = _start(study, researcher)
    batch_ids = services.score_run_fan_out(run_id=run.pk)
    services.score_batch_process(batch_id=batch_ids[0], worker="w1")
    services.score_run_cancel(run=run, actor=researcher)
    assert services.score_batch_process(batch_id=batch_ids[1], worker="w1").status == "skipped"
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED and "rita-researcher" in run.error
    assert run.n_done == 2 and Score.objects.filter(run=run).values("item").distinct().count() == 2
    assert list(run.batches.order_by("index").values_list("status", flat=True)) == ["done", "skipped", "skipped"]
    with pytest.raises(Conflict, match="already cancelled"):
        services.score_run_cancel(run=run, actor=researcher)


def test_an_unavailable_backend_fails_the_run_with_a_clear_message(study, researcher, settings, tmp_path):
    """Available when the run started (the start refuses an unavailable backend), gone by the time a worker
    loads it: the worker fails the run with the reason rather than scoring with anything else."""
    model = nli_available(settings, tmp_path / "nli-model")
    _items(study, 2)
    run = _start(study, researcher, backend="nli")
    shutil.rmtree(model)
    assert services.score_run_fan_out(run_id=run.pk) == []
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.error.startswith("The nli backend is unavailable:")
    assert str(model) in run.error
    assert not Score.objects.filter(run=run).exists() and not run.batches.exists()


def test_a_run_of_a_study_without_items_is_done_at_once(study, researcher, django_capture_on_commit_callbacks):
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        run = _start(study, researcher)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and run.n_total == 0


def test_recovery_resends_unfinished_batches_after_their_lease(study, researcher):
    _items(study, 4)
    run = _start(study, researcher)
    batch_ids = services.score_run_fan_out(run_id=run.pk)
    services.score_batch_process(batch_id=batch_ids[0], worker="w1")
    ScoreBatch.objects.filter(pk=batch_ids[1]).update(
        status=BatchStatus.RUNNING, leased_by="killed", lease_until=timezone.now() + timedelta(seconds=10)
    )
    resent = dict(services.score_runs_recover())
    assert set(resent) == {batch_ids[1]}
    assert 9 < resent[batch_ids[1]] <= 11


@pytest.mark.parametrize(
    ("state", "value"), [("ok", float("nan")), ("ok", None), ("undetermined", float("inf")), ("maybe", 1.0)]
)
def test_the_database_refuses_nan_infinite_valueless_ok_and_unknown_states(study, researcher, state, value):
    (item,) = _items(study, 1)
    run = _start(study, researcher)
    with pytest.raises(IntegrityError), transaction.atomic():
        Score.objects.create(run=run, item=item, unit_key="item", state=state, value=value)


def test_progress_reports_counts_percent_and_an_eta_from_the_rate_so_far(study, researcher):
    from scoring.selectors import run_progress

    run = _start(study, researcher)
    ScoreRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, n_total=20, n_done=4, n_failed=1, started_at=timezone.now() - timedelta(seconds=10)
    )
    run.refresh_from_db()
    progress = run_progress(run)
    assert (progress.total, progress.done, progress.failed, progress.percent) == (20, 4, 1, 25)
    assert progress.items_per_second == pytest.approx(0.5, rel=0.05)
    assert progress.eta.total_seconds() == pytest.approx(30, abs=2)  # 15 items left at 0.5 items/s


def test_a_batch_that_crashes_outside_any_item_fails_the_run_with_the_reason_and_frees_its_lease(
    study, researcher, monkeypatch
):
    _items(study, 2)
    run = _start(study, researcher)
    (batch_id,) = services.score_run_fan_out(run_id=run.pk)

    def broken(_ids):
        raise RuntimeError("database went away")

    monkeypatch.setattr(services.selectors, "item_inputs", broken)
    with pytest.raises(RuntimeError):
        services.score_batch_process(batch_id=batch_id, worker="w1")
    batch = ScoreBatch.objects.get(pk=batch_id)
    assert (batch.leased_by, batch.lease_until) == ("", None)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.error == "Batch 0 failed: RuntimeError: database went away"


class WorkerKilled(Exception):
    """Stands for a worker dying in the middle of the fan-out task (its message is then delivered again)."""


def test_a_run_of_several_fan_out_chunks_scores_every_unit_once_even_when_the_fan_out_is_retried_half_way(
    study, researcher, monkeypatch
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from scoring import tasks

    items = _items(study, 11)
    monkeypatch.setattr(services, "FAN_OUT_CHUNK_BATCHES", 2)  # 2 batches of 2 items: 4 item ids per chunk
    run = _start(study, researcher)
    queued = tasks.score_batch.apply_async
    calls = []

    def dies_on_the_fourth(*args, **kwargs):
        calls.append(args[0][0])
        if len(calls) == 4:  # the second chunk is committed; its first batch was queued (and scored), not this one
            raise WorkerKilled
        return queued(*args, **kwargs)

    with eager_celery(), CaptureQueriesContext(connection) as first:
        monkeypatch.setattr(tasks.score_batch, "apply_async", dies_on_the_fourth)
        with pytest.raises(WorkerKilled):
            tasks.score_run_fan_out(run.pk)
    run.refresh_from_db()
    # Every batch so far is scored, but the run is not done: the fan-out has not read every item.
    assert (run.status, run.fanning_out, run.n_total, run.n_done) == (RunStatus.RUNNING, True, 8, 6)
    assert services.score_runs_queued() == [run.pk]  # the recovery re-sends its fan-out
    fan_out_reads = 'SELECT "annotation_item"."id" AS "pk" FROM "annotation_item" WHERE ("annotation_item"."id" > '
    item_reads = [q["sql"] for q in first.captured_queries if q["sql"].startswith(fan_out_reads)]
    assert len(item_reads) == 2 and all("LIMIT 4" in sql for sql in item_reads), item_reads
    with eager_celery():
        monkeypatch.setattr(tasks.score_batch, "apply_async", queued)
        tasks.score_run_fan_out(run.pk)  # the message delivered again
    run.refresh_from_db()
    assert (run.status, run.fanning_out, run.n_total, run.n_done, run.n_failed) == (RunStatus.DONE, False, 11, 11, 0)
    batches = list(run.batches.order_by("index").values_list("index", "item_ids", "status"))
    assert [i for i, _, _ in batches] == list(range(6))
    assert [pk for _, ids, _ in batches for pk in ids] == [i.pk for i in items]  # each item in one batch, in order
    assert {status for _, _, status in batches} == {BatchStatus.DONE}
    units = _units_per_item(run)
    assert set(units) == {i.pk for i in items}
    assert all(sorted(u) == ["item", "s:0", "s:1"] for u in units.values())
    assert services.score_run_fan_out(run_id=run.pk) == [] and services.score_runs_queued() == []


def test_a_fan_out_chunk_holds_at_most_fan_out_chunk_items_item_ids_whatever_the_batch_size(
    study, researcher, monkeypatch
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    assert services.fan_out_chunk_batches(32) == 500  # 16,000 item ids
    assert services.fan_out_chunk_batches(512) == 31  # 15,872, not 256,000
    assert services.fan_out_chunk_batches(50_000) == 1  # a batch larger than the bound: one a chunk
    items = _items(study, 11)
    monkeypatch.setattr(services, "FAN_OUT_CHUNK_ITEMS", 5)  # 2 batches of 2 items (4 item ids) per chunk, not 500
    run = _start(study, researcher)
    with CaptureQueriesContext(connection) as queries:
        chunks = list(services.score_run_fan_out_chunks(run_id=run.pk))
    fan_out_reads = 'SELECT "annotation_item"."id" AS "pk" FROM "annotation_item" WHERE ("annotation_item"."id" > '
    item_reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith(fan_out_reads)]
    assert len(item_reads) == 3 and all("LIMIT 4" in sql for sql in item_reads), item_reads
    assert [len(chunk) for chunk in chunks] == [2, 2, 2]
    batches = list(run.batches.order_by("index").values_list("item_ids", flat=True))
    assert [pk for ids in batches for pk in ids] == [i.pk for i in items]


def test_the_last_batch_to_finish_completes_a_run_only_after_the_fan_out_has_read_every_item(
    study, researcher, monkeypatch
):
    _items(study, 4)
    monkeypatch.setattr(services, "FAN_OUT_CHUNK_BATCHES", 1)
    run = _start(study, researcher, batch_size=2)
    chunks = services.score_run_fan_out_chunks(run_id=run.pk)
    (first,) = next(chunks)
    assert services.score_batch_process(batch_id=first, worker="w1").status == "done"
    run.refresh_from_db()
    assert (run.status, run.fanning_out, run.n_total) == (RunStatus.RUNNING, True, 2)
    (second,) = next(chunks)  # a full chunk: whether more items follow is known only by reading on
    services.score_batch_process(batch_id=second, worker="w1")
    run.refresh_from_db()
    assert (run.status, run.fanning_out) == (RunStatus.RUNNING, True)
    assert list(chunks) == []  # the fan-out reads no more items and finds every batch finished
    run.refresh_from_db()
    assert (run.status, run.fanning_out, run.n_total, run.n_done) == (RunStatus.DONE, False, 4, 4)
    assert run.finished_at is not None


def test_a_fan_out_resumed_by_a_twin_never_puts_an_item_in_two_batches(study, researcher, monkeypatch):
    items = _items(study, 5)
    monkeypatch.setattr(services, "FAN_OUT_CHUNK_BATCHES", 1)
    run = _start(study, researcher, batch_size=2)
    one = services.score_run_fan_out_chunks(run_id=run.pk)
    first = next(one)
    two = services.score_run_fan_out_chunks(run_id=run.pk)  # a twin delivery, while the first is alive
    resent = next(two)
    assert resent == first  # committed, maybe never queued: sent again (a second delivery is harmless)
    assert next(two) != next(one)
    rest = list(one) + list(two)
    run.refresh_from_db()
    assert run.fanning_out is False and run.n_total == 5
    ids = [pk for b in run.batches.order_by("index") for pk in b.item_ids]
    assert ids == [i.pk for i in items] and rest == []  # the last chunk was read by one of them only
    for batch_id in run.batches.values_list("pk", flat=True):
        services.score_batch_process(batch_id=batch_id, worker="w1")
    run.refresh_from_db()
    assert (run.status, run.n_done) == (RunStatus.DONE, 5)
