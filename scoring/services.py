"""Score runs and knowledge bases: every write of the scoring app.

A run moves queued → running → done | failed | cancelled. ``score_run_start`` validates and enqueues
the fan-out after commit; ``score_run_fan_out`` cuts the study's items into batches (one Celery task
each); ``score_batch_process`` scores one batch.

Exactly-once results over at-least-once delivery: a batch task first *claims* its batch with a
conditional UPDATE (status pending/running and no live lease), and every later write re-checks that
lease in the same transaction, so two deliveries of one task never write concurrently. Scores are
upserted on (run, item, unit_key), and the run's counters move only in the transaction that writes
new item results under the lease, so a redelivered task neither duplicates a score nor counts an item
twice. A worker killed mid-batch leaves its lease to expire; the next claim resumes at the first
item without scores.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Item, Study
from annotation.units import for_scope
from concord.errors import Conflict, PayloadTooLarge, ValidationFailed
from scoring import llm_runs, selectors, tasks
from scoring.backend_options import backend_options_clean
from scoring.backends import BACKENDS, BackendDescriptor, get_backend
from scoring.backends.text import sentences_of
from scoring.metrics import (
    ITEM,
    BackendUnavailable,
    MetricError,
    TransientBackendError,
    UnitRef,
    UnitScore,
    get_metric,
    score_item,
)
from scoring.models import (
    BatchStatus,
    KnowledgeBase,
    Passage,
    RunStatus,
    Score,
    ScoreBatch,
    ScoreRun,
    ScoreState,
)
from scoring.retrieval import DocumentError, HybridRetriever, chunk_words, parse_documents, passage_embeddings_ensure

logger = logging.getLogger(__name__)

# Scores computed under a lease are written at least this often, so the progress bar moves and the
# lease is renewed even when each item is slow (an LLM judge).
FLUSH_SECONDS = 2.0
KB_MAX_BYTES = 20 * 1024 * 1024
MAX_BATCH_SIZE = 10_000
# What one transaction of the fan-out (score_run_fan_out_chunks) writes: at most this many batches and this many
# item ids, whichever is fewer (at the default 32 items a batch, 500 batches of 16,000 item ids; at 512 items a
# batch, 31 batches), however many items the study has. Bounded by items too, so that what a chunk holds (its
# item ids, its batch rows, its insert statement) does not grow with the batch size.
FAN_OUT_CHUNK_BATCHES = 500
FAN_OUT_CHUNK_ITEMS = 16_000
NO_SUCH_KNOWLEDGE_BASE = "No such knowledge base in this study."


class LeaseHeld(Exception):
    """Another delivery of this batch holds a live lease; try again once it may have expired."""

    def __init__(self, retry_in: float) -> None:
        super().__init__(f"batch leased by another worker for {retry_in:.0f}s more")
        self.retry_in = retry_in


class LeaseLost(Exception):
    """Our lease ran out and another delivery took the batch over; stop without writing."""


def _lease_seconds() -> int:
    return settings.SCORING_LEASE_SECONDS


# --- Starting, cancelling, failing runs ---------------------------------------------------------------


def _descriptor(backend: str) -> BackendDescriptor:
    """The registered backend a run names; a run row naming none (a backend removed since) is a configuration
    error of this installation, not the run's."""
    try:
        return BACKENDS[backend]
    except KeyError:
        raise ImproperlyConfigured(
            f"no backend named {backend!r} is registered (scoring.backends); registered: {', '.join(BACKENDS)}"
        ) from None


def _provisional_identity(backend: str) -> str:
    """What names a queued run's model until a worker has loaded it: the values of its model settings."""
    values = [str(getattr(settings, name, "") or "") for name in _descriptor(backend).model_settings]
    return " @ ".join(v for v in values if v) or backend


def scoring_queue(backend: str) -> str:
    """The Celery queue of a backend's scoring tasks: a run's fan-out and batches go there, so that the workers
    holding its model on the right device take them. The backend's own (its descriptor), unless the environment
    names another for it (``SCORING_QUEUE_<BACKEND>``: ``settings.SCORING_QUEUES``)."""
    descriptor = _descriptor(backend)
    return settings.SCORING_QUEUES.get(backend, descriptor.queue)


def score_run_queues(run_ids: list[int]) -> dict[int, str]:
    """{run id: the queue of its backend} for the given runs."""
    rows = ScoreRun.objects.filter(pk__in=run_ids).values_list("id", "backend")
    return {run_id: scoring_queue(backend) for run_id, backend in rows}


def score_batch_queues(batch_ids: list[int]) -> dict[int, str]:
    """{batch id: the queue of its run's backend} for the given batches (queried 500 at a time, within
    any database's limit on query parameters)."""
    out: dict[int, str] = {}
    for start in range(0, len(batch_ids), 500):
        rows = ScoreBatch.objects.filter(pk__in=batch_ids[start : start + 500]).values_list("id", "run__backend")
        out.update((batch_id, scoring_queue(backend)) for batch_id, backend in rows)
    return out


def default_batch_size(backend: str) -> int:
    """Items per task when a run names no batch size: the backend's own (its descriptor), unless the environment
    sets one for it (``SCORING_BATCH_SIZE_<BACKEND>``) or for every backend (``SCORING_BATCH_SIZE``)."""
    descriptor = _descriptor(backend)
    return settings.SCORING_BATCH_SIZES.get(backend) or settings.SCORING_BATCH_SIZE or descriptor.batch_size


def _knowledge_base_of(study: Study, knowledge_base: KnowledgeBase | int | None) -> KnowledgeBase | None:
    """The study's knowledge base a run names; another study's reads exactly like one that does not exist."""
    if knowledge_base is None:
        return None
    kb_id = knowledge_base.pk if isinstance(knowledge_base, KnowledgeBase) else knowledge_base
    found = KnowledgeBase.objects.filter(study=study, pk=kb_id).first()
    if found is None:
        raise ValidationFailed(NO_SUCH_KNOWLEDGE_BASE)
    return found


def score_run_start(
    *,
    study: Study,
    metric: str,
    backend: str,
    parameters: dict[str, Any] | None,
    actor: AbstractBaseUser | None,
    backend_options: dict[str, Any] | None = None,
    knowledge_base: KnowledgeBase | int | None = None,
    retrieval_alpha: float = 0.5,
    batch_size: int | None = None,
) -> ScoreRun:
    """Validate the run, record it, and fan it out after commit.

    Every check of a run request is here, so the console form and the REST API answer alike: the knowledge
    base (given as a row or as the id a request named) must be one of the study's; the metric, its
    parameters, the backend and its options must be valid; and the backend must be available here for these
    options (its descriptor's ``availability``, decided without loading a model) — an unavailable one is
    refused with the reason before anything is queued, never replaced by another. The model itself is loaded
    by the workers; a backend that fails to load there fails the run with its message.
    """
    kb = _knowledge_base_of(study, knowledge_base)
    try:
        spec = get_metric(metric)
        resolved = spec.resolve_params(parameters)
    except MetricError as exc:
        raise ValidationFailed(str(exc)) from None
    if backend not in spec.backends:
        raise ValidationFailed(f"{metric} cannot use the {backend!r} backend; allowed: {', '.join(spec.backends)}")
    descriptor = _descriptor(backend)
    if not 0.0 <= retrieval_alpha <= 1.0:
        raise ValidationFailed(f"retrieval alpha must lie in [0, 1], got {retrieval_alpha}")
    queue = scoring_queue(backend)
    size = default_batch_size(backend) if batch_size is None else batch_size
    if not 1 <= size <= MAX_BATCH_SIZE:
        raise ValidationFailed(f"batch size must be between 1 and {MAX_BATCH_SIZE}")
    backend_options = backend_options_clean(backend, backend_options, study_id=study.pk, study_slug=study.slug)
    for key, option in descriptor.options.items():
        if option.kind == "study" and key in backend_options:
            # The services set it from the run (``_backend_options``); a run never names a study.
            raise ValidationFailed(f"backend option {key!r} is not allowed: a run uses its own study's judges")
    availability = descriptor.availability(study_id=study.pk, options=backend_options)
    if not availability.available:
        raise ValidationFailed(f"The {backend} backend is not available here: {availability.reason}.")

    with transaction.atomic():
        run = ScoreRun.objects.create(
            study=study,
            metric=spec.name,
            metric_version=spec.version,
            backend=backend,
            model_identity=_provisional_identity(backend),
            parameters=resolved,
            backend_options=backend_options or {},
            knowledge_base=kb,
            retrieval_alpha=retrieval_alpha,
            batch_size=size,
            created_by=actor,
        )
        tasks.score_run_fan_out.apply_async_on_commit((run.pk,), queue=queue)
    return run


def score_run_cancel(*, run: ScoreRun, actor: AbstractBaseUser | None) -> ScoreRun:
    """Stop a queued or running run: batches not yet started are skipped; a batch being scored
    finishes and keeps its scores."""
    now = timezone.now()
    with transaction.atomic():
        changed = ScoreRun.objects.filter(pk=run.pk, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]).update(
            status=RunStatus.CANCELLED,
            finished_at=now,
            error=f"Cancelled by {actor.get_username() if actor else 'the system'}.",
        )
        if not changed:
            run.refresh_from_db()
            raise Conflict(f"The run is already {run.get_status_display().lower()}.")
        ScoreBatch.objects.filter(run=run, status=BatchStatus.PENDING).update(
            status=BatchStatus.SKIPPED, finished_at=now
        )
    run.refresh_from_db()
    return run


def _run_fail(run_id: int, message: str) -> None:
    now = timezone.now()
    with transaction.atomic():
        ScoreRun.objects.filter(pk=run_id, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]).update(
            status=RunStatus.FAILED, error=message, finished_at=now
        )
        ScoreBatch.objects.filter(run_id=run_id, status=BatchStatus.PENDING).update(
            status=BatchStatus.SKIPPED, finished_at=now
        )
    logger.warning("score run %s failed: %s", run_id, message)


def _backend_options(run: ScoreRun) -> dict[str, Any]:
    # Checked again where the worker reads them: a run stored before a rule changed fails with the reason.
    try:
        options = backend_options_clean(run.backend, dict(run.backend_options or {}), study_id=run.study_id)
    except ValidationFailed as exc:
        raise BackendUnavailable(f"{run.backend} backend: {exc.message}") from None
    for key, option in _descriptor(run.backend).options.items():
        if option.kind == "study":
            # The learned backend's judges are looked up among the run's study's own and shared ones: whatever
            # the stored options say, the study is the run's (an option cannot name another study).
            options[key] = run.study_id
    return options


def _load_backend(run: ScoreRun) -> Any:
    return llm_runs.bind(get_backend(run.backend, **_backend_options(run)), run)


def score_run_fan_out(*, run_id: int) -> list[int]:
    """Cut a queued run into batches and mark it running; returns the batch ids to enqueue (every chunk of
    :func:`score_run_fan_out_chunks`, for callers that score a small study in-process)."""
    return [batch_id for chunk in score_run_fan_out_chunks(run_id=run_id) for batch_id in chunk]


def fan_out_chunk_batches(batch_size: int) -> int:
    """The batches a fan-out writes per transaction at ``batch_size`` items a batch (see ``FAN_OUT_CHUNK_ITEMS``)."""
    return max(1, min(FAN_OUT_CHUNK_BATCHES, FAN_OUT_CHUNK_ITEMS // max(batch_size, 1)))


def score_run_fan_out_chunks(*, run_id: int, chunk_batches: int | None = None) -> Iterator[list[int]]:
    """Cut a run into batches, ``chunk_batches`` batches per transaction (by default ``FAN_OUT_CHUNK_BATCHES``, fewer
    when they would hold more than ``FAN_OUT_CHUNK_ITEMS`` item ids, but at least one); yields
    each chunk's batch ids once it is committed, so that the caller queues them while the next chunk is read.

    The items are read by keyset over their ids (never the study's whole list in one process): each chunk
    starts after the last item of the run's last batch, read under the run's row lock in the same transaction
    that writes the chunk's batches, so a retried or twin fan-out continues where the committed work ends and
    no item is ever put in two batches. The first chunk marks the run running and ``fanning_out``; the batches
    of a running run are scored at once, but the run is done only once the last chunk has cleared
    ``fanning_out`` (here, or in ``_flush`` by the last batch to finish, whichever commits last). ``n_total``
    counts the items put in batches so far.

    Loads the backend first: an unavailable backend fails the run with its message and no batch. A delivery
    that finds the run neither queued nor fanning out does nothing (lost batch messages are re-sent by
    ``score_runs_recover``); one that resumes an interrupted fan-out first yields the batches that were
    committed but may never have been queued (a second delivery of a batch is harmless: claims and upserts).
    """
    run = ScoreRun.objects.select_related("study").filter(pk=run_id).first()
    if run is None or not (run.status == RunStatus.QUEUED or (run.status == RunStatus.RUNNING and run.fanning_out)):
        return
    per_chunk = chunk_batches or fan_out_chunk_batches(run.batch_size)
    if run.status == RunStatus.QUEUED:
        try:
            backend = _load_backend(run)
        except MetricError as exc:  # BackendUnavailable, or options the backend refuses
            _run_fail(run_id, f"The {run.backend} backend is unavailable: {exc}")
            return
        identity = str(getattr(backend, "identity", "") or run.model_identity)
    else:
        # Resumed: the batches committed before the interruption, in bounded slices.
        after = -1
        while True:
            pending = list(
                ScoreBatch.objects.filter(run_id=run_id, status=BatchStatus.PENDING, pk__gt=after)
                .order_by("pk").values_list("pk", flat=True)[:per_chunk]
            )
            if not pending:
                break
            yield pending
            after = pending[-1]
        identity = run.model_identity
    while True:
        now = timezone.now()
        with transaction.atomic():
            run = ScoreRun.objects.select_for_update().get(pk=run_id)
            if not (run.status == RunStatus.QUEUED or (run.status == RunStatus.RUNNING and run.fanning_out)):
                return  # cancelled or failed meanwhile, or a twin delivery finished the fan-out
            last = ScoreBatch.objects.filter(run_id=run_id).order_by("-index").values_list("index", "item_ids").first()
            index, after = (last[0] + 1, last[1][-1]) if last else (0, 0)
            item_ids = list(
                Item.objects.filter(study_id=run.study_id, pk__gt=after).order_by("pk")
                .values_list("pk", flat=True)[: per_chunk * run.batch_size]
            )
            batches = [
                ScoreBatch(run=run, index=index + i, item_ids=item_ids[start : start + run.batch_size])
                for i, start in enumerate(range(0, len(item_ids), run.batch_size))
            ]
            ScoreBatch.objects.bulk_create(batches)
            if run.status == RunStatus.QUEUED:
                run.status = RunStatus.RUNNING
                run.model_identity = identity[:300]
                run.started_at = now
                run.finished_at = None
                run.n_total = 0
            run.n_total += len(item_ids)
            run.fanning_out = len(item_ids) == per_chunk * run.batch_size  # a full chunk: maybe more to read
            fields = ["status", "n_total", "model_identity", "started_at", "finished_at", "fanning_out"]
            if not run.fanning_out:
                unfinished = ScoreBatch.objects.filter(
                    run_id=run_id, status__in=[BatchStatus.PENDING, BatchStatus.RUNNING]
                ).exists()
                if not unfinished:  # no item, or every batch already scored by the time the last chunk is read
                    run.status = RunStatus.DONE
                    run.finished_at = now
            run.save(update_fields=fields)
            created = list(
                ScoreBatch.objects.filter(run_id=run_id, index__gte=index).order_by("index")
                .values_list("id", flat=True)
            )
        if created:
            yield created
        if not run.fanning_out:
            return


def score_runs_recover() -> list[tuple[int, float]]:
    """(batch id, delay in seconds) for every unfinished batch of a running run, and fan-outs of
    queued runs, re-enqueued by the caller. Run when a worker starts or reconnects to the broker: a
    worker killed with SIGKILL takes its unacknowledged messages with it on some brokers, an outage can
    lose messages, and the database is the record of what remains. Extra deliveries are harmless
    (claims and upserts)."""
    now = timezone.now()
    out: list[tuple[int, float]] = []
    rows = ScoreBatch.objects.filter(
        run__status=RunStatus.RUNNING, status__in=[BatchStatus.PENDING, BatchStatus.RUNNING]
    ).values_list("id", "lease_until")
    for batch_id, lease_until in rows:
        delay = max(0.0, (lease_until - now).total_seconds() + 1.0) if lease_until and lease_until > now else 0.0
        out.append((batch_id, delay))
    return out


def score_runs_queued() -> list[int]:
    """The runs whose fan-out is to be (re-)sent: queued ones, and running ones whose fan-out was interrupted."""
    waiting = Q(status=RunStatus.QUEUED) | Q(status=RunStatus.RUNNING, fanning_out=True)
    return list(ScoreRun.objects.filter(waiting).values_list("id", flat=True))


# --- Scoring one batch ----------------------------------------------------------------------------------


@dataclass
class BatchOutcome:
    status: str  # "done", "skipped", "gone", "run_failed"
    scored_items: int = 0


def _claim(batch_id: int, token: str) -> ScoreBatch | None:
    now = timezone.now()
    claimed = (
        ScoreBatch.objects.filter(pk=batch_id, status__in=[BatchStatus.PENDING, BatchStatus.RUNNING])
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(
            status=BatchStatus.RUNNING,
            leased_by=token,
            lease_until=now + timedelta(seconds=_lease_seconds()),
            attempts=F("attempts") + 1,
            started_at=Coalesce(F("started_at"), now),
        )
    )
    if not claimed:
        return None
    return ScoreBatch.objects.select_related("run", "run__study").get(pk=batch_id)


def _release(batch_id: int, token: str) -> None:
    ScoreBatch.objects.filter(pk=batch_id, leased_by=token).update(lease_until=None, leased_by="")


def unit_key(unit: UnitRef) -> str:
    """The stored key of the unit a metric scored (``annotation.units`` formats every unit key)."""
    return for_scope(unit.scope, unit.ref)


def _item_failed(units: list[UnitScore]) -> bool:
    return any(u.state == ScoreState.FAILED for u in units)


def _flush(*, batch_id: int, run_id: int, token: str, results: list[tuple[int, list[UnitScore]]], finish: bool) -> None:
    """Write item results and renew (or close) the lease, all or nothing; raises LeaseLost when the
    batch is no longer ours."""
    now = timezone.now()
    with transaction.atomic():
        # The run row first: concurrent batches of one run then commit one after another, which keeps
        # the counters exact and lets the last one see every other batch finished.
        failed = sum(_item_failed(units) for _, units in results)
        ScoreRun.objects.filter(pk=run_id).update(
            n_done=F("n_done") + (len(results) - failed), n_failed=F("n_failed") + failed
        )
        changes: dict[str, Any] = {"lease_until": now + timedelta(seconds=_lease_seconds())}
        if finish:
            changes = {"status": BatchStatus.DONE, "finished_at": now, "lease_until": None}
        held = ScoreBatch.objects.filter(pk=batch_id, leased_by=token, status=BatchStatus.RUNNING).update(**changes)
        if not held:
            raise LeaseLost(f"batch {batch_id} was taken over by another delivery")
        rows = [
            Score(
                run_id=run_id, item_id=item_id, unit_key=unit_key(u.unit)[:40], value=u.value, state=u.state,
                details=u.details or {}, computed_at=now,
            )
            for item_id, units in results
            for u in units
        ]
        if rows:
            Score.objects.bulk_create(
                rows,
                batch_size=1000,
                update_conflicts=True,
                unique_fields=["run", "item", "unit_key"],
                update_fields=["value", "state", "details", "computed_at"],
            )
        if finish:
            unfinished = ScoreBatch.objects.filter(
                run_id=OuterRef("pk"), status__in=[BatchStatus.PENDING, BatchStatus.RUNNING]
            )
            # Not while the fan-out is still reading items: its last chunk finishes the run then.
            ScoreRun.objects.filter(pk=run_id, status=RunStatus.RUNNING, fanning_out=False).exclude(
                Exists(unfinished)
            ).update(status=RunStatus.DONE, finished_at=now)


def _usage_snapshot(backend: Any) -> dict[str, int] | None:
    usage = getattr(backend, "usage", None)
    return dict(usage) if isinstance(usage, dict) else None


def _record_cost(
    scores: list[UnitScore], *, seconds: float, usage_before: dict[str, int] | None, backend: Any
) -> None:
    """Keep what scoring this item cost in the details of its item-level score (else its first unit),
    once per item: wall seconds of the metric call, and for backends that count them (llm) the
    requests and tokens it used. Encoding done ahead for the whole batch (``prepare_backend``) is not
    in the seconds. Read by adjudication.analysis.model_comparison."""
    if not scores:
        return
    cost: dict[str, Any] = {"seconds": round(seconds, 6)}
    after = _usage_snapshot(backend)
    if usage_before is not None and after is not None:
        cost.update({key: after.get(key, 0) - usage_before.get(key, 0) for key in after})
    target = next((u for u in scores if u.unit == ITEM), scores[0])
    target.details = {**(target.details or {}), "cost": cost}


def _record_cross_fit(
    units: list[UnitScore], *, backend: Any, item_id: int, metric: Any, item: Any, params: dict[str, Any],
    retriever: HybridRetriever | None, final_attempt: bool,
) -> None:
    """For a backend whose judge was trained on this study's gold (``cross_fit``; the learned backend), keep in
    the item-level score's details under ``cross_fit`` what cross-prediction-powered estimates need: for an
    item that trained the judge, ``held_out`` (the folds whose models gave its value, never having seen it);
    for any other item, ``folds``: its item-level value under each fold model (None where that model's value is
    not ok). The score's value is unchanged. Other backends and runs: nothing is done (and nothing computed).
    Written with the score in the same row, so a batch delivered twice records it once."""
    cross_fit = getattr(backend, "cross_fit", None)
    plan = cross_fit(item_id) if cross_fit is not None else None
    target = next((u for u in units if u.unit == ITEM), None)
    if plan is None or target is None or target.state != "ok":
        return
    record: dict[str, Any]
    if plan.held_out:
        record = {"held_out": plan.held_out}
    elif not plan.views:
        record = {"folds": None, "reason": plan.reason}
    else:
        values: list[float | None] = []
        for view in plan.views:
            scored = score_item(metric, item, view, params, retriever=retriever, final_attempt=final_attempt)
            at_fold = next((u for u in scored if u.unit == ITEM and u.state == "ok"), None)
            values.append(None if at_fold is None else float(at_fold.value))
        record = {"folds": values}
    target.details = {**(target.details or {}), "cross_fit": record}


@dataclass
class Prepared:
    """What ``prepare_backend`` did: distinct texts encoded ahead, and the seconds spent splitting the
    context passages into sentences and in the model call."""

    texts: int = 0
    split_seconds: float = 0.0
    encode_seconds: float = 0.0


def prepare_backend(backend: Any, inputs: list[Any]) -> Prepared:
    """Encode every text of the batch in one call before the per-item metric calls, which then hit
    the backend's cache: one large batch through the model instead of many small ones (the model
    sorts one call's texts by length, so the fewer the calls, the less padding)."""
    encode = getattr(backend, "encode", None)
    if encode is None or not inputs:
        return Prepared()
    started = time.perf_counter()
    texts: list[str] = []
    for item in inputs:
        # Not the question: one text per item, and only some metrics compare with it.
        texts.extend(item.sentences)
        texts.extend(item.source_sentences)
        texts.extend(a.text for a in item.aspects)
        # Backends compare against the sentences of each context passage, split as at import.
        texts.extend(sentences_of([c.text for c in item.contexts]))
    texts = [t for t in dict.fromkeys(texts) if t]
    split_done = time.perf_counter()
    if texts:
        encode(texts)
    return Prepared(len(texts), split_done - started, time.perf_counter() - split_done)


def _retriever_for(run: ScoreRun) -> HybridRetriever | None:
    if run.knowledge_base_id is None:
        return None
    embedder = get_backend("embedding")
    return HybridRetriever(
        knowledge_base_id=run.knowledge_base_id, encode=embedder.encode, identity=embedder.identity,
        alpha=run.retrieval_alpha,
    )


def score_batch_process(*, batch_id: int, worker: str, final_attempt: bool = True) -> BatchOutcome:
    """Score the items of one batch that have no scores yet, under a lease.

    Raises LeaseHeld when another delivery holds a live lease, and TransientBackendError (lease
    released, results so far kept) when a backend call may succeed later and this is not the final
    attempt. A backend that is unavailable or cannot make the metric's judgements fails the run.
    An item whose scoring raises anything else gets a ``failed`` item score with the error; the
    batch goes on.
    """
    received = time.perf_counter()
    batch = ScoreBatch.objects.filter(pk=batch_id).only("id", "status", "run_id").first()
    if batch is None:
        return BatchOutcome("gone")
    if batch.status in (BatchStatus.DONE, BatchStatus.SKIPPED):
        return BatchOutcome("skipped")
    run_status = ScoreRun.objects.filter(pk=batch.run_id).values_list("status", flat=True).first()
    if run_status != RunStatus.RUNNING:
        ScoreBatch.objects.filter(pk=batch_id, status=BatchStatus.PENDING).update(
            status=BatchStatus.SKIPPED, finished_at=timezone.now()
        )
        return BatchOutcome("skipped")

    token = f"{worker}/{uuid.uuid4().hex[:12]}"[:100]
    claimed = _claim(batch_id, token)
    claim_seconds = time.perf_counter() - received
    if claimed is None:
        current = ScoreBatch.objects.filter(pk=batch_id).values_list("status", "lease_until").first()
        if current is None:
            return BatchOutcome("gone")
        status, lease_until = current
        if status in (BatchStatus.DONE, BatchStatus.SKIPPED):
            return BatchOutcome("skipped")
        retry_in = max(1.0, (lease_until - timezone.now()).total_seconds() + 1.0) if lease_until else 1.0
        raise LeaseHeld(retry_in)
    # Whatever stops this delivery, the next one may take the batch at once instead of waiting for the
    # lease to run out (a no-op when the lease was already lost).
    try:
        return _score_claimed(claimed, token=token, final_attempt=final_attempt, claim_seconds=claim_seconds)
    except LeaseLost:
        raise
    except TransientBackendError as exc:
        _release(batch_id, token)
        if final_attempt:  # outside any one item (loading the backend): no retry is left
            _run_fail(claimed.run_id, f"Batch {claimed.index} gave up after repeated transient errors: {exc}")
        raise
    except Exception as exc:
        _release(batch_id, token)
        # Not retried (only named transient errors are): the run stops with the reason rather than
        # waiting for a batch that no task will finish.
        _run_fail(claimed.run_id, f"Batch {claimed.index} failed: {type(exc).__name__}: {exc}")
        raise


@dataclass
class BatchTimings:
    """Where one batch's wall time went, in seconds; logged when the batch is done (bench/score_throughput.py
    reads the line to name the per-batch overhead: everything but splitting, encoding and the metric)."""

    claim: float = 0.0  # the checks before the claim and the claiming UPDATE
    load: float = 0.0  # metric, parameters, backend (loaded once per process) and retriever
    inputs: float = 0.0  # scores already there, and the items' plain data
    split: float = 0.0  # context passages into sentences (prepare_backend)
    encode: float = 0.0  # the batch's texts through the model (prepare_backend)
    metric: float = 0.0  # the per-item metric calls
    writes: float = 0.0  # score upserts, counters and lease renewals (_flush)

    def log_line(self, batch: ScoreBatch, items: int, texts: int) -> str:
        total = sum(vars(self).values())
        parts = ", ".join(f"{name} {seconds * 1000:.1f}" for name, seconds in vars(self).items())
        return (f"score batch {batch.pk} (run {batch.run_id}, index {batch.index}): {items} items, {texts} texts "
                f"encoded, {total * 1000:.1f} ms: {parts} ms")


def _score_claimed(claimed: ScoreBatch, *, token: str, final_attempt: bool, claim_seconds: float = 0.0) -> BatchOutcome:
    batch_id, run = claimed.pk, claimed.run
    timings = BatchTimings(claim=claim_seconds)
    mark = time.perf_counter()
    try:
        metric = get_metric(run.metric)
        params = metric.resolve_params(run.parameters)
        backend = _load_backend(run)
        retriever = _retriever_for(run)
    except MetricError as exc:
        _release(batch_id, token)
        unavailable = isinstance(exc, BackendUnavailable)
        _run_fail(run.pk, f"The {run.backend} backend is unavailable: {exc}" if unavailable else str(exc))
        return BatchOutcome("run_failed")
    timings.load, mark = time.perf_counter() - mark, time.perf_counter()

    already = set(
        Score.objects.filter(run=run, item_id__in=claimed.item_ids).values_list("item_id", flat=True).distinct()
    )
    todo = [i for i in claimed.item_ids if i not in already]
    inputs = selectors.item_inputs(todo)
    timings.inputs = time.perf_counter() - mark
    prepared = prepare_backend(backend, [inputs[i] for i in todo if i in inputs])
    timings.split, timings.encode = prepared.split_seconds, prepared.encode_seconds

    results: list[tuple[int, list[UnitScore]]] = []
    scored = 0
    # Renew the lease well before it can run out, however short it is configured.
    flush_every = min(FLUSH_SECONDS, _lease_seconds() / 3)
    last_flush = time.monotonic()

    def flush(finish: bool) -> None:
        started = time.perf_counter()
        _flush(batch_id=batch_id, run_id=run.pk, token=token, results=results, finish=finish)
        timings.writes += time.perf_counter() - started

    for item_id in todo:
        item = inputs.get(item_id)
        if item is None:  # deleted since the run started; nothing left to score
            continue
        started, usage_before = time.perf_counter(), _usage_snapshot(backend)
        # Cross-fitting: a backend may judge each item of the study with a model that never saw its labels.
        item_backend = backend.for_item(item_id) if hasattr(backend, "for_item") else backend
        try:
            units = score_item(metric, item, item_backend, params, retriever=retriever, final_attempt=final_attempt)
            if not units:
                units = [UnitScore(ITEM, None, "failed", {"error": "the metric returned no score"})]
            _record_cross_fit(
                units, backend=backend, item_id=item_id, metric=metric, item=item, params=params,
                retriever=retriever, final_attempt=final_attempt,
            )  # fmt: skip
        except TransientBackendError:
            flush(False)
            _release(batch_id, token)
            raise
        except MetricError as exc:
            flush(False)
            _release(batch_id, token)
            _run_fail(run.pk, f"{run.metric} with the {run.backend} backend cannot run: {exc}")
            return BatchOutcome("run_failed", scored)
        except Exception as exc:
            logger.exception("scoring item %s of run %s failed", item_id, run.pk)
            units = [UnitScore(ITEM, None, "failed", {"error": f"{type(exc).__name__}: {exc}"})]
        seconds = time.perf_counter() - started
        timings.metric += seconds
        _record_cost(units, seconds=seconds, usage_before=usage_before, backend=backend)
        results.append((item_id, units))
        scored += 1
        if time.monotonic() - last_flush >= flush_every:
            flush(False)
            results, last_flush = [], time.monotonic()
    flush(True)
    logger.info("%s", timings.log_line(claimed, scored, prepared.texts))
    return BatchOutcome("done", scored)


# --- Knowledge bases -----------------------------------------------------------------------------------------


MAX_PASSAGE_WORDS = 10_000


def knowledge_base_create(
    *, study: Study, name: str, chunk_size: int = 200, chunk_overlap: int = 40, actor: AbstractBaseUser | None
) -> KnowledgeBase:
    name = (name or "").strip()
    if not name:
        raise ValidationFailed("A knowledge base needs a name.")
    if len(name) > 200:
        raise ValidationFailed("The name is longer than 200 characters.")
    if not 1 <= chunk_size <= MAX_PASSAGE_WORDS:
        raise ValidationFailed(f"Passages need between 1 and {MAX_PASSAGE_WORDS} words.")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValidationFailed("The overlap must be at least 0 and smaller than the passage size.")
    return KnowledgeBase.objects.create(
        study=study, name=name, chunk_size=chunk_size, chunk_overlap=chunk_overlap, created_by=actor
    )


def knowledge_base_add_documents(
    *, knowledge_base: KnowledgeBase, filename: str, content: bytes, actor: AbstractBaseUser | None
) -> int:
    """Chunk an uploaded text or JSONL file into passages, all or nothing; returns the passage count.

    A document id already in the knowledge base is refused (re-uploading never duplicates).
    Passages are embedded after commit by a worker (and on first retrieval if that has not run).
    """
    if len(content) > KB_MAX_BYTES:
        raise PayloadTooLarge(f"The file is larger than {KB_MAX_BYTES // (1024 * 1024)} MiB.")
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationFailed(f"The file is not UTF-8 text (byte {exc.start}).") from None
    try:
        documents = parse_documents(text, filename=filename or "document.txt")
    except DocumentError as exc:
        raise ValidationFailed(str(exc)) from None
    doc_ids = [doc_id[:200] for doc_id, _ in documents]
    existing = set(
        Passage.objects.filter(knowledge_base=knowledge_base, document_id__in=doc_ids).values_list(
            "document_id", flat=True
        )
    )
    if existing:
        raise Conflict(
            f"Already in this knowledge base: {', '.join(sorted(existing)[:10])}",
            details={"document_ids": sorted(existing)},
        )
    passages = [
        Passage(knowledge_base=knowledge_base, document_id=doc_id, index=i, text=passage)
        for doc_id, (_, body) in zip(doc_ids, documents, strict=True)
        for i, passage in enumerate(
            chunk_words(body, size=knowledge_base.chunk_size, overlap=knowledge_base.chunk_overlap)
        )
    ]
    with transaction.atomic():
        Passage.objects.bulk_create(passages, batch_size=1000)
        KnowledgeBase.objects.filter(pk=knowledge_base.pk).update(version=F("version") + 1)
        tasks.knowledge_base_embed.delay_on_commit(knowledge_base.pk)
    knowledge_base.refresh_from_db()
    return len(passages)


def knowledge_base_embed(*, knowledge_base_id: int) -> int:
    if not KnowledgeBase.objects.filter(pk=knowledge_base_id).exists():
        return 0
    embedder = get_backend("embedding")
    return passage_embeddings_ensure(
        knowledge_base_id=knowledge_base_id, encode=embedder.encode, identity=embedder.identity
    )
