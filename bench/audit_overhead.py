"""What the audit triggers cost: label writes with and without them, and sealing/verifying the chain.

Usage (a scratch database: it migrates it and writes rows):
    CONCORD_VAR_DIR=/tmp/concord-bench .venv/bin/python bench/audit_overhead.py [N] [ROUNDS]
    CONCORD_VAR_DIR=/tmp/concord-bench DATABASE_URL=postgres://postgres@127.0.0.1:5432/concord_bench \\
        .venv/bin/python bench/audit_overhead.py [N]
Prints, for N labels: bulk insert, queryset update and single-row saves, with triggers and without,
then the time to seal and to verify the resulting chain.

Then the annotator's save itself (``annotation.labels.label_save``: the lock, the label and its history
row, i.e. two audit events per save) over 300 assignments, alternately with the audit triggers and without
them (ROUNDS times each, default 5), counting the CPU of this process and of its PostgreSQL backend: the save's
cost with the trail as a ratio of its cost without (target ≤ 1.3 ×).
"""

from __future__ import annotations

import os
import statistics
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


def _backend_cpu_seconds() -> float:
    """CPU seconds of this connection's PostgreSQL backend (same machine, /proc); 0 on SQLite."""
    if connection.vendor != "postgresql":
        return 0.0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _save_rounds(rounds: int) -> None:
    from annotation.labels import label_save

    study = factories.make_study(slug=f"bench-saves-{time.time_ns()}")
    question = factories.make_question(study)
    values = [str(o["value"]) for o in question.options][:2]
    pool = factories.make_pool(study, questions=[question])
    user = factories.make_user(f"bench-saves-{time.time_ns()}")
    assignments = [factories.make_assignment(pool, factories.make_item(study, f"s{i}"), user) for i in range(300)]
    for a in assignments:
        a.pool = pool
    version = {a.pk: 0 for a in assignments}

    def one_round() -> tuple[float, float]:
        cpu, backend = time.process_time(), _backend_cpu_seconds()
        for a in assignments:
            value = values[version[a.pk] % 2]
            label = label_save(
                assignment=a, question=question, unit_key="item", value=value, base_version=version[a.pk], actor=user
            )
            version[a.pk] = label.version
        python, database = time.process_time() - cpu, _backend_cpu_seconds() - backend
        return 1000 * python / len(assignments), 1000 * database / len(assignments)

    one_round()  # warm-up: the first save of each assignment inserts its label
    results: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for _ in range(rounds):
        for with_triggers in (True, False):
            if not with_triggers:
                audit.triggers_remove()
            try:
                results[with_triggers].append(one_round())
            finally:
                if not with_triggers:
                    audit.triggers_install()
    totals = {}
    for with_triggers, runs in results.items():
        python = statistics.median(r[0] for r in runs)
        database = statistics.median(r[1] for r in runs)
        totals[with_triggers] = statistics.median(r[0] + r[1] for r in runs)
        state = "with" if with_triggers else "without"
        print(
            f"  label_save {state} triggers: {totals[with_triggers]:.2f} ms CPU per save "
            f"(Python {python:.2f} + database backend {database:.2f}; median of {rounds} rounds of 300)"
        )
    ratio = totals[True] / totals[False]
    print(f"  the save's cost with the audit trail: {ratio:.2f} × without (target ≤ 1.3 ×): "
          f"{'met' if ratio <= 1.3 else 'NOT met'}")


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
    print("the annotator's save (lock, label, history), alternately with and without the triggers:")
    _save_rounds(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
    start = time.perf_counter()
    sealed = audit.events_seal()
    print(f"seal {sealed} events: {(time.perf_counter() - start) * 1000:.1f} ms")
    start = time.perf_counter()
    report = audit.chain_verify()
    print(f"verify {report.n_sealed} events: {(time.perf_counter() - start) * 1000:.1f} ms; ok={report.ok}")


if __name__ == "__main__":
    main()
