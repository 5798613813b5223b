"""What the audit triggers cost: label writes with and without them, and sealing/verifying the chain.

Usage (a scratch database: it migrates it and writes rows):
    CONCORD_VAR_DIR=/tmp/concord-bench .venv/bin/python bench/audit_overhead.py [N]
    CONCORD_VAR_DIR=/tmp/concord-bench DATABASE_URL=postgres://postgres@127.0.0.1:5432/concord_bench \\
        .venv/bin/python bench/audit_overhead.py [N]
Prints, for N labels: bulk insert, queryset update and single-row saves, with triggers and without,
then the time to seal and to verify the resulting chain.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

import django

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from annotation import audit  # noqa: E402
from annotation.models import AuditEvent, Label  # noqa: E402
from tests import factories  # noqa: E402


def _timed(label: str, fn) -> float:
    start = time.perf_counter()
    with transaction.atomic():
        fn()
    elapsed = time.perf_counter() - start
    print(f"  {label:<34} {elapsed * 1000:9.1f} ms")
    return elapsed


def _round(n: int, tag: str) -> None:
    study = factories.make_study(slug=f"bench-{tag}-{time.time_ns()}")
    question = factories.make_question(study)
    pool = factories.make_pool(study, questions=[question])
    user = factories.make_user(f"bench-{tag}-{time.time_ns()}")
    items = [factories.make_item(study, f"i{i}") for i in range(n)]
    assignments = [factories.make_assignment(pool, item, user) for item in items]
    now = timezone.now()
    _timed(f"bulk_create {n} labels", lambda: Label.objects.bulk_create(
        Label(assignment=a, question=question, unit_key="item", value="yes", updated_by=user, updated_at=now)
        for a in assignments
    ))
    labels = Label.objects.filter(assignment__pool=pool)
    _timed(f"queryset update {n} labels", lambda: labels.update(value="no", version=2))
    rows = list(labels[:200])

    def save_each() -> None:
        for row in rows:
            row.value = "yes"
            row.save(update_fields=["value"])

    _timed(f"save() {len(rows)} labels one by one", save_each)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}; N = {n}")
    print("with audit triggers:")
    before = AuditEvent.objects.count()
    _round(n, "on")
    print(f"  events written: {AuditEvent.objects.count() - before}")
    print("without audit triggers:")
    audit.triggers_remove()
    try:
        _round(n, "off")
    finally:
        audit.triggers_install()
    start = time.perf_counter()
    sealed = audit.events_seal()
    print(f"seal {sealed} events: {(time.perf_counter() - start) * 1000:.1f} ms")
    start = time.perf_counter()
    report = audit.chain_verify()
    print(f"verify {report.n_sealed} events: {(time.perf_counter() - start) * 1000:.1f} ms; ok={report.ok}")


if __name__ == "__main__":
    main()
