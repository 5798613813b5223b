"""Benchmark of the data manager's page on a large study: every filter, on N items (default 100,000).

A scratch PostgreSQL database (default ``concord_bench_datamgr``; DATABASE_URL overrides it) is
migrated and filled once per size with bulk inserts: N items with metadata, two pools (every item in
pool A with one assignment in a random state, half of them in pool B), open or resolved cases on 5%
of the items, current gold on 10%, and an item-level score for every item. Then each data manager
URL is requested through Django's test client (the whole view: access check, filters, count, one page
of rows, template), warmed once and timed ``--repeat`` times; the median and the worst are printed.

    .venv/bin/python bench/data_manager.py              # 100,000 items
    .venv/bin/python bench/data_manager.py --n 20000 --repeat 3

Target: every page under 1 s on 100,000 items (median), so that filtering feels immediate.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/concord_bench_datamgr")
os.environ.setdefault("CONCORD_VAR_DIR", str(Path(tempfile.gettempdir()) / "concord-datamgr-bench"))

TOPICS = ["drugs", "wounds", "vaccines", "diabetes", "pregnancy", "mental", "children", "heart", "skin", "sleep"]
WORDS = ["patient", "dose", "tablet", "infection", "fever", "pain", "warfarin", "doctor", "kidney", "blood"]


def _ensure_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def generate(n: int, slug: str) -> None:
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone

    from adjudication.models import AdjudicationCase, CaseStatus, GoldLabel, GoldSource
    from annotation.models import Assignment, Item, Pool, PoolMembership, Question, Role, Study, StudyRole
    from scoring.models import Score, ScoreRun

    rng = random.Random(n)
    User = get_user_model()
    now = timezone.now()
    with transaction.atomic():
        owner, _ = User.objects.get_or_create(username="bench-researcher")
        study = Study.objects.create(name=f"Data manager bench {n}", slug=slug, owner=owner)
        StudyRole.objects.create(study=study, user=owner, role=Role.RESEARCHER)
        yes_no = [{"value": "yes", "label": "Yes", "key": "1"}, {"value": "no", "label": "No", "key": "2"}]
        q = Question.objects.create(study=study, key="pf", scope="item", kind="binary", prompt="pf", options=yes_no)
        pools = []
        for name in ("A", "B"):
            pool = Pool.objects.create(study=study, name=name, overlap=1)
            pool.questions.set([q])
            pools.append(pool)
        members = {}
        for pool in pools:
            members[pool.pk] = []
            for i in range(4):
                user, _ = User.objects.get_or_create(username=f"bench-{slug}-{pool.name}-{i}")
                PoolMembership.objects.create(pool=pool, study=study, user=user, independent=False,
                                              pseudonym=f"{pool.name}{i + 1}")
                members[pool.pk].append(user)
        run = ScoreRun.objects.create(study=study, metric="cf", metric_version="1", backend="lexical", status="done")
        step = 10_000
        for start in range(0, n, step):
            items = Item.objects.bulk_create([
                Item(study=study, external_id=f"item-{i:07d}",
                     question=" ".join(rng.choice(WORDS) for _ in range(8)) + "?",
                     answer=" ".join(rng.choice(WORDS) for _ in range(30)) + ".",
                     system=rng.choice(["rag-a", "rag-b"]),
                     metadata={"topic": rng.choice(TOPICS), "site": f"site-{rng.randint(1, 20)}"})
                for i in range(start, min(n, start + step))
            ])
            assignments, cases, gold, scores = [], [], [], []
            for item in items:
                for pool in pools if item.pk % 2 == 0 else pools[:1]:
                    status = rng.choice(["assigned", "started", "submitted", "submitted", "skipped"])
                    assignments.append(Assignment(pool=pool, item=item, annotator=rng.choice(members[pool.pk]),
                                                  status=status, submitted_at=now if status == "submitted" else None))
                if rng.random() < 0.05:
                    cases.append(AdjudicationCase(pool=pools[0], item=item, question=q, unit_key="item",
                                                  status=rng.choice([CaseStatus.OPEN, CaseStatus.RESOLVED])))
                if rng.random() < 0.10:
                    gold.append(GoldLabel(pool=pools[0], item=item, question=q, unit_key="item", value="yes",
                                          source=GoldSource.UNANIMOUS, version=1, is_current=True))
                scores.append(Score(run=run, item=item, unit_key="item", value=rng.random(), state="ok"))
            Assignment.objects.bulk_create(assignments, batch_size=5000)
            AdjudicationCase.objects.bulk_create(cases, batch_size=5000)
            GoldLabel.objects.bulk_create(gold, batch_size=5000)
            Score.objects.bulk_create(scores, batch_size=5000)
            print(f"  generated {min(n, start + step):,} items", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    _ensure_database(os.environ["DATABASE_URL"])

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    from annotation.models import Pool, Study
    from scoring.models import ScoreRun

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    call_command("migrate", verbosity=0, interactive=False)
    slug = f"datamgr-{args.n}"
    if not Study.objects.filter(slug=slug).exists():
        print(f"generating {args.n:,} items (once per size)…", flush=True)
        t0 = time.perf_counter()
        generate(args.n, slug)
        print(f"  in {time.perf_counter() - t0:.0f} s", flush=True)
    study = Study.objects.get(slug=slug)
    pool = Pool.objects.get(study=study, name="A")
    run = ScoreRun.objects.filter(study=study).first()
    client = Client()
    client.force_login(study.owner)
    url = reverse("adjudication:data-manager", args=[slug])
    cases = [
        ("no filter (page 1)", {}),
        ("no filter, page 1000", {"page": "1000"}),
        ("text 'warfarin'", {"q": "warfarin"}),
        ("text, no match", {"q": "zzzz-no-such-text"}),
        ("pool A: done", {"pool": pool.pk, "pool_state": "done"}),
        ("pool A: not assigned", {"pool": pool.pk, "pool_state": "not_assigned"}),
        ("open disagreement", {"disagreement": "open"}),
        ("gold: yes", {"gold": "yes"}),
        ("score 0.2-0.3", {"run": run.pk, "score_min": "0.2", "score_max": "0.3"}),
        ("metadata topic=drugs", {"meta_key": "topic", "meta_value": "drugs"}),
        ("combined (text + pool + gold no + score)", {"q": "warfarin", "pool": pool.pk, "pool_state": "done",
                                                      "gold": "no", "run": run.pk, "score_min": "0.5"}),
    ]
    print(f"data manager on {study.items.count():,} items, {args.repeat} timed requests each (after one warm-up)")
    print(f"{'filter':45} {'median ms':>10} {'max ms':>8} {'matches':>9}")
    worst = 0.0
    for label, params in cases:
        for htmx in (False, True):
            headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
            response = client.get(url, params, secure=True, **headers)
            assert response.status_code == 200, (label, response.status_code)
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                response = client.get(url, params, secure=True, **headers)
                times.append((time.perf_counter() - t0) * 1000)
            body = response.content.decode()
            count = body.split('id="dm-count"><strong>', 1)[1].split("<", 1)[0]
            name = f"{label}{' (htmx fragment)' if htmx else ''}"
            print(f"{name:45} {statistics.median(times):10.0f} {max(times):8.0f} {count:>9}", flush=True)
            worst = max(worst, statistics.median(times))
    print(f"slowest median: {worst:.0f} ms (target < 1000 ms)")


if __name__ == "__main__":
    main()
