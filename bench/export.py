"""Benchmark of the streaming export: N items with three annotators' labels, exported as JSONL and CSV.

The study is generated once per size directly with bulk inserts (PostgreSQL COPY for the large tables;
not through the slow import path) in a dedicated database, then reused. Each item has three answer
sentences, two chunks, two aspects, three submitted assignments, four labels per annotator (one
answer-level, three sentence-level: twelve labels per item), one gold label and one score.

Every export runs in a fresh child process, which prints its items per second and its peak memory
above the idle process (VmHWM after the export minus VmRSS just before it, from /proc), so the
generation does not pollute the figure.

    .venv/bin/python bench/export.py --n 10000
    .venv/bin/python bench/export.py --n 100000

DATABASE_URL defaults to postgres://postgres@127.0.0.1:5432/concord_bench_foxtrot (created if missing).
Targets: ≥ 5,000 items/s and peak memory < 300 MB whatever N.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/concord_bench_foxtrot"
os.environ.setdefault("DATABASE_URL", DEFAULT_DB)
os.environ.setdefault("CONCORD_VAR_DIR", str(Path(tempfile.gettempdir()) / "concord-foxtrot-bench"))

WORDS = [
    "patient",
    "dose",
    "tablet",
    "infection",
    "fever",
    "pain",
    "treatment",
    "doctor",
    "symptom",
    "kidney",
    "liver",
    "blood",
    "pressure",
    "daily",
    "morning",
    "water",
    "risk",
    "benefit",
    "allergy",
    "antibiotic",
]


def _proc_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _ensure_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 10))).capitalize() + "."


def _copy(model, fields: list[str], rows) -> int:
    from django.db import connection

    table = model._meta.db_table
    columns = ", ".join(f'"{model._meta.get_field(f).column}"' for f in fields)
    n = 0
    with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
            n += 1
    return n


def generate(n: int, slug: str) -> None:
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone

    from adjudication.models import GoldLabel
    from annotation import units
    from annotation.models import (
        Aspect,
        Assignment,
        Chunk,
        Item,
        Label,
        Pool,
        PoolMembership,
        Question,
        Role,
        Sentence,
        Study,
        StudyRole,
    )
    from scoring.models import Score, ScoreRun

    rng = random.Random(n)
    now = timezone.now()
    User = get_user_model()
    with transaction.atomic():
        owner, _ = User.objects.get_or_create(username="bench-owner")
        study = Study.objects.create(name=f"Export bench {n}", slug=slug, owner=owner, licence="CC BY 4.0 — synthetic")
        StudyRole.objects.create(study=study, user=owner, role=Role.RESEARCHER)
        yes_no = [{"value": "yes", "label": "Yes", "key": "1"}, {"value": "no", "label": "No", "key": "2"}]
        pf = Question.objects.create(study=study, key="pf", scope="item", kind="binary", prompt="pf", options=yes_no)
        ib = Question.objects.create(
            study=study, key="information_bearing", scope="sentence", kind="binary", prompt="ib", options=yes_no
        )
        pool = Pool.objects.create(study=study, name="bench", overlap=3)
        pool.questions.set([pf, ib])
        annotators = []
        for i in range(3):
            user, _ = User.objects.get_or_create(username=f"bench-{slug}-annotator-{i}")
            PoolMembership.objects.create(pool=pool, study=study, user=user, independent=True, pseudonym=f"A{i + 1}")
            annotators.append(user)
        run = ScoreRun.objects.create(study=study, metric="cf", metric_version="1", backend="lexical", status="done")
        step = 10_000
        for start in range(0, n, step):
            batch = []
            texts = []
            for i in range(start, min(n, start + step)):
                sentences = [_sentence(rng) for _ in range(3)]
                texts.append(sentences)
                batch.append(
                    Item(
                        study=study,
                        external_id=f"bench-{i}",
                        question="What about the dose?",
                        answer=" ".join(sentences),
                        system="sys",
                        metadata={"i": i},
                    )
                )
            items = Item.objects.bulk_create(batch)

            def sentence_rows(items=items, texts=texts):
                for item, sentences in zip(items, texts, strict=True):
                    offset = 0
                    for index, text in enumerate(sentences):
                        yield (item.pk, "answer", index, text, offset, offset + len(text))
                        offset += len(text) + 1

            _copy(Sentence, ["item", "part", "index", "text", "start", "end"], sentence_rows())
            _copy(
                Chunk,
                ["item", "rank", "text", "document_id", "is_labelled_target"],
                (
                    (item.pk, rank, "The usual dose is 0.5 mg daily.", f"doc-{rank}", rank == 1)
                    for item in items
                    for rank in (1, 2)
                ),
            )
            _copy(
                Aspect,
                ["item", "text", "importance", "origin", "status", "version", "created_at"],
                (
                    (item.pk, text, "must_have", "reference", "accepted", 1, now)
                    for item in items
                    for text in ("Dose", "Timing")
                ),
            )
            assignments = Assignment.objects.bulk_create(
                Assignment(
                    pool=pool, item=item, annotator=user, status="submitted", submitted_at=now, active_seconds=30.0
                )
                for item in items
                for user in annotators
            )

            def label_rows(assignments=assignments):
                for a in assignments:
                    yield (a.pk, pf.pk, "item", json.dumps(rng.choice(("yes", "yes", "no"))), 1, a.annotator_id, now)
                    for s in range(3):
                        yield (a.pk, ib.pk, units.sentence(s), json.dumps("yes"), 1, a.annotator_id, now)

            _copy(
                Label,
                ["assignment", "question", "unit_key", "value", "version", "updated_by", "updated_at"],
                label_rows(),
            )
            _copy(
                GoldLabel,
                [
                    "pool",
                    "item",
                    "unit_key",
                    "question",
                    "value",
                    "source",
                    "adjudicator_name",
                    "rationale",
                    "guideline_gap",
                    "version",
                    "is_current",
                    "created_at",
                ],
                (
                    (
                        pool.pk,
                        item.pk,
                        units.sentence(0),
                        ib.pk,
                        json.dumps("yes"),
                        "unanimous",
                        "",
                        "3 of 3 annotators agreed",
                        False,
                        1,
                        True,
                        now,
                    )
                    for item in items
                ),
            )
            _copy(
                Score,
                ["run", "item", "unit_key", "value", "state", "details", "computed_at"],
                (
                    (run.pk, item.pk, "item", rng.random(), "ok", json.dumps({"supported": 2, "total": 3}), now)
                    for item in items
                ),
            )
            print(f"  generated {min(n, start + step)}/{n} items", file=sys.stderr, flush=True)
    # What autovacuum would do soon after a bulk load; without it the planner sees yesterday's sizes.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def export_child(slug: str, fmt: str, out: str) -> None:
    """Runs in a fresh process: everything imported first, then idle RSS, then the export."""
    import django

    django.setup()
    import gc

    import krippendorff  # noqa: F401
    import numpy  # noqa: F401

    from adjudication.exports.writers import write_export
    from adjudication.stats import agreement  # noqa: F401
    from annotation.models import Study
    from scoring.models import Score  # noqa: F401

    study = Study.objects.get(slug=slug)
    gc.collect()
    idle = _proc_kib("VmRSS")
    started, cpu_started = time.perf_counter(), time.process_time()
    write_export(study=study, fmt=fmt, out=Path(out))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    peak = _proc_kib("VmHWM")
    n = study.items.count()
    print(
        json.dumps(
            {
                "format": fmt,
                "items": n,
                "seconds": round(elapsed, 2),
                "items_per_second": round(n / elapsed),
                "cpu_seconds": round(cpu, 2),
                "items_per_cpu_second": round(n / cpu),
                "peak_above_idle_mb": round((peak - idle) / 1024, 1),
                "idle_mb": round(idle / 1024, 1),
                "bytes": sum(f.stat().st_size for f in Path(out).rglob("*") if f.is_file())
                if Path(out).is_dir()
                else Path(out).stat().st_size,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--formats", default="jsonl,csv,hf")
    parser.add_argument("--child", nargs=3, metavar=("SLUG", "FORMAT", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        export_child(*args.child)
        return
    url = os.environ["DATABASE_URL"]
    if not url.startswith("postgres"):
        sys.exit("bench/export.py runs on PostgreSQL (set DATABASE_URL)")
    _ensure_database(url)
    import django

    django.setup()
    from django.core.management import call_command

    from annotation.models import Study

    call_command("migrate", verbosity=0)
    slug = f"bench-export-{args.n}"
    study = Study.objects.filter(slug=slug).first()
    if study is None or study.items.count() != args.n:
        if study is not None:
            study.delete()
        print(f"Generating {args.n} items (once; reused by later runs)...", file=sys.stderr)
        started = time.perf_counter()
        generate(args.n, slug)
        print(f"  generated in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="concord-export-bench-") as tmp:
        for fmt in args.formats.split(","):
            out = Path(tmp) / f"export.{fmt}"
            result = subprocess.run(
                [sys.executable, __file__, "--child", slug, fmt, str(out)], capture_output=True, text=True, check=False
            )
            if result.returncode != 0:
                sys.exit(result.stderr)
            figures = json.loads(result.stdout.strip().splitlines()[-1])
            print(
                f"{fmt:>5}: {figures['items']} items in {figures['seconds']} s = "
                f"{figures['items_per_second']} items/s; "
                f"(exporter CPU {figures['cpu_seconds']} s = {figures['items_per_cpu_second']} items/CPU-s); "
                f"peak memory {figures['peak_above_idle_mb']} MB above idle ({figures['idle_mb']} MB idle); "
                f"{figures['bytes'] / 1e6:.0f} MB written"
            )


if __name__ == "__main__":
    main()
