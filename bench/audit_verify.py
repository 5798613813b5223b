"""How long ``manage.py audit_verify`` takes on N labels (default 50,000), check by check.

A scratch database (SQLite under CONCORD_VAR_DIR by default, or DATABASE_URL) is migrated and filled once per
size, with the audit triggers on, as the application writes: N/5 items, each assigned to 5 annotators, one
label per assignment with its history row, and one annotator's labels changed once more (version 2, a
second history row). That is about 3.4 events per label (assignment, label and history INSERTs, the
second version's UPDATE and INSERT). Then it seals the events and times the chain, each check of the data
against the trail that this checkout has (``labels_unaccounted``, ``attribution_changes``,
``rows_unaccounted``) and the whole command.

    CONCORD_VAR_DIR=/tmp/concord-bench-verify .venv/bin/python bench/audit_verify.py [--n 50000]
    CONCORD_VAR_DIR=/tmp/concord-bench-verify DATABASE_URL=postgres://postgres@127.0.0.1:5432/concord_bench_verify \\
        .venv/bin/python bench/audit_verify.py --n 50000

Run it on two checkouts to compare them: the data and the timings are the same code path otherwise.
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
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")
os.environ.setdefault("CONCORD_VAR_DIR", str(Path(tempfile.gettempdir()) / "concord-bench-verify"))

ANNOTATORS = 5


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

    from annotation.models import (
        Assignment,
        AssignmentStatus,
        Item,
        Label,
        LabelHistory,
        Pool,
        PoolMembership,
        Question,
        Role,
        Study,
        StudyRole,
    )

    User = get_user_model()
    now = timezone.now()
    with transaction.atomic():
        owner, _ = User.objects.get_or_create(username="bench-verify-researcher")
        study = Study.objects.create(name=f"audit_verify bench {n}", slug=slug, owner=owner)
        StudyRole.objects.create(study=study, user=owner, role=Role.RESEARCHER)
        yes_no = [{"value": "yes", "label": "Yes", "key": "1"}, {"value": "no", "label": "No", "key": "2"}]
        question = Question.objects.create(study=study, key="pf", scope="item", kind="binary", prompt="pf",
                                           options=yes_no)
        pool = Pool.objects.create(study=study, name="A", overlap=ANNOTATORS)
        pool.questions.set([question])
        users = []
        for i in range(ANNOTATORS):
            user, _ = User.objects.get_or_create(username=f"bench-{slug}-{i}")
            PoolMembership.objects.create(pool=pool, study=study, user=user, independent=False, pseudonym=f"A{i + 1}")
            users.append(user)
    step = 2_000  # items per transaction
    for start in range(0, n // ANNOTATORS, step):
        with transaction.atomic():
            items = Item.objects.bulk_create(
                Item(study=study, external_id=f"i{k}", question="What dose?", answer="Take 0.5 mg daily.")
                for k in range(start, min(start + step, n // ANNOTATORS))
            )
            assignments = Assignment.objects.bulk_create(
                Assignment(pool=pool, item=item, annotator=user, status=AssignmentStatus.SUBMITTED, submitted_at=now)
                for item in items
                for user in users
            )
            labels = Label.objects.bulk_create(
                Label(assignment=a, question=question, unit_key="item", value="yes", version=1,
                      updated_by_id=a.annotator_id, updated_at=now)
                for a in assignments
            )
            LabelHistory.objects.bulk_create(
                LabelHistory(label=label, old_value=None, new_value="yes", old_version=None, new_version=1,
                             actor_id=label.updated_by_id, at=now)
                for label in labels
            )
            changed = [label for label in labels if label.updated_by_id == users[0].pk]
            Label.objects.filter(pk__in=[label.pk for label in changed]).update(value="no", version=2)
            LabelHistory.objects.bulk_create(
                LabelHistory(label=label, old_value="yes", new_value="no", old_version=1, new_version=2,
                             actor_id=label.updated_by_id, at=now)
                for label in changed
            )


def _timed(what: str, fn):
    start = time.perf_counter()
    result = fn()
    print(f"  {what:<42} {time.perf_counter() - start:8.2f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=50_000, help="labels (default 50,000)")
    args = parser.parse_args()
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        _ensure_database(os.environ["DATABASE_URL"])

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotation import audit
    from annotation.models import AuditEvent, Label, Study

    call_command("migrate", verbosity=0)
    slug = f"bench-verify-{args.n}"
    if not Study.objects.filter(slug=slug).exists():
        _timed(f"generate {args.n:,} labels (triggers on)", lambda: generate(args.n, slug))
    print(f"database: {connection.vendor}; labels: {Label.objects.count():,}; events: {AuditEvent.objects.count():,}")
    _timed("seal pending events", audit.events_seal)
    report = _timed("chain_verify (hash chain, Python)", audit.chain_verify)
    assert report.ok, report.problem
    for name in ("labels_unaccounted", "attribution_changes", "rows_unaccounted"):
        check = getattr(audit, name, None)
        if check is not None:
            problems = _timed(name, check)
            assert problems == [], problems
    with open(os.devnull, "w") as quiet:
        _timed("manage.py audit_verify --no-anchor (all)", lambda: call_command("audit_verify", "--no-anchor",
                                                                               stdout=quiet))


if __name__ == "__main__":
    main()
