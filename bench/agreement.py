"""Agreement report: database → point estimates, against the bare library calls on the same arrays.

    .venv/bin/python bench/agreement.py [--units 100000] [--raters 5] [--categories 4] [--repeat 3]
        [--database-url postgres://postgres@127.0.0.1:5432/concord_bench_echo]

Builds (once; reused when present) a study whose one pool has RATERS annotators who each labelled
UNITS sentence units (UNITS/5 items × 5 sentences) on one nominal question with CATEGORIES options,
in a dedicated PostgreSQL database. Then times, REPEAT times each:

* end to end: ``adjudication.analysis.agreement.agreement_report`` — read the labels from the database, build
  the units × raters matrix, and compute every point estimate the report shows (percent agreement,
  Fleiss' κ, Krippendorff's α, Cohen's κ for every pair, each annotator against the rest, per-label κ);
* bare: the libraries alone on the same, already built arrays — statsmodels ``aggregate_raters`` +
  ``fleiss_kappa``, ``krippendorff.alpha`` on the reliability matrix, scikit-learn
  ``cohen_kappa_score`` for every pair and every annotator against the rest's majority, and
  ``fleiss_kappa`` one label against the rest.

What the end-to-end side computes and the bare side does not (so the ratio is, if anything, against the
report): the arrays the bare calls are given (the units × raters matrix, each annotator's rest majority),
percent agreement with its Wilson interval (``proportion_confint``), and for every κ its asymptotic standard
error and interval (statsmodels ``cohens_kappa``, whose results object the report reads; scikit-learn's
``cohen_kappa_score`` gives no standard error), the observed agreement and each annotator's agreement with
the rest. The point estimates are the same statistics on both sides (equal up to rounding).

The database read runs with a parallel plan (PostgreSQL's workers build the lines, see
``adjudication.analysis.loading``): end to end may use a second core while PostgreSQL reads, the bare side is
one Python thread. On a machine shared with other work both sides slow down, the parallel read the more.

Prints the median (and range) of each, and the ratio. Target: end to end ≤ 1.5 × bare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SLUG = "bench-agreement"
TARGET_RATIO = 1.5


def _setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")
    import django

    django.setup()


def _ensure_database(database_url: str) -> None:
    import psycopg

    name = database_url.rsplit("/", 1)[1]
    admin = database_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def build(units: int, raters: int, categories: int) -> tuple[object, object]:
    """The bench study, pool and question; labels written with COPY (one-off, then reused)."""
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation import units as unit_keys
    from annotation.models import (
        Assignment,
        AssignmentStatus,
        Item,
        Label,
        Pool,
        PoolMembership,
        Question,
        Role,
        Study,
        StudyRole,
    )

    call_command("migrate", verbosity=0)
    study = Study.objects.filter(slug=SLUG).first()
    expected = units * raters
    if study is not None:
        pool = Pool.objects.get(study=study)
        question = pool.questions.get()
        if Label.objects.filter(question=question).count() == expected:
            return pool, question
        print("bench study is incomplete; rebuilding it", file=sys.stderr)
        with transaction.atomic():
            Label.objects.filter(question__study=study).delete()
            Assignment.objects.filter(pool__study=study).delete()
            study.delete()

    t0 = time.perf_counter()
    User = get_user_model()
    owner, _ = User.objects.get_or_create(username="bench-owner")
    study = Study.objects.create(name="Agreement bench", slug=SLUG, owner=owner)
    StudyRole.objects.create(study=study, user=owner, role=Role.RESEARCHER)
    options = [{"value": f"c{k}", "label": f"Category {k}", "key": str(k + 1)} for k in range(categories)]
    question = Question.objects.create(
        study=study, key="category", scope="sentence", kind="nominal", prompt="Category", options=options
    )
    pool = Pool.objects.create(study=study, name="bench", overlap=raters)
    pool.questions.set([question])
    annotators = []
    for r in range(raters):
        user, _ = User.objects.get_or_create(username=f"bench-rater-{r}")
        StudyRole.objects.get_or_create(study=study, user=user, role=Role.ANNOTATOR)
        PoolMembership.objects.create(pool=pool, study=study, user=user, independent=True, pseudonym=f"R{r + 1}")
        annotators.append(user)
    n_items = units // 5
    Item.objects.bulk_create(
        (Item(study=study, external_id=f"b{i}", question="q", answer="a") for i in range(n_items)), batch_size=5000
    )
    item_ids = list(Item.objects.filter(study=study).order_by("pk").values_list("pk", flat=True))
    now = timezone.now()
    Assignment.objects.bulk_create(
        (
            Assignment(pool=pool, item_id=item_id, annotator=user, status=AssignmentStatus.SUBMITTED, submitted_at=now)
            for item_id in item_ids
            for user in annotators
        ),
        batch_size=5000,
    )
    assignment = {
        (a, u): pk for pk, a, u in Assignment.objects.filter(pool=pool).values_list("pk", "item_id", "annotator_id")
    }
    # Ratings with realistic agreement: a true category per unit, each rater right 75% of the time.
    rng = np.random.default_rng(0)
    truth = rng.integers(0, categories, units)
    noise = rng.random((units, raters)) < 0.25
    values = np.where(noise, rng.integers(0, categories, (units, raters)), truth[:, None])
    with (
        connection.cursor() as cursor,
        cursor.copy(
            "COPY annotation_label (assignment_id, question_id, unit_key, value, version, updated_by_id, updated_at) "
            "FROM STDIN"
        ) as copy,
    ):
        for u in range(units):
            item_id = item_ids[u // 5]
            key = unit_keys.sentence(u % 5)
            for r, user in enumerate(annotators):
                copy.write_row(
                    (assignment[(item_id, user.pk)], question.pk, key, f'"c{values[u, r]}"', 1, user.pk, now)
                )
    with connection.cursor() as cursor:
        # What autovacuum does after a bulk load; without statistics the planner guesses a nested loop.
        cursor.execute("ANALYZE annotation_label")
        cursor.execute("ANALYZE annotation_assignment")
    print(f"built {units:,} units × {raters} raters in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return pool, question


def bare(codes, k: int) -> None:
    """The library calls alone, on arrays already in memory."""
    import krippendorff
    import numpy as np
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    table, _ = aggregate_raters(codes.astype(int), n_cat=k)
    fleiss_kappa(table)
    krippendorff.alpha(reliability_data=codes.T.astype(float), level_of_measurement="nominal")
    for i, j in combinations(range(codes.shape[1]), 2):
        cohen_kappa_score(codes[:, i], codes[:, j])
    for r, rest in enumerate(bare.rest):  # type: ignore[attr-defined]
        ok = rest >= 0
        cohen_kappa_score(codes[ok, r], rest[ok])
    for c in range(k):
        hits = table[:, c]
        fleiss_kappa(np.stack([hits, table.sum(axis=1) - hits], axis=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--raters", type=int, default=5)
    parser.add_argument("--categories", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/concord_bench_echo")
    args = parser.parse_args()
    if args.units % 5:
        parser.error("--units must be a multiple of 5 (five sentences per item)")
    if not args.database_url.startswith(("postgres://", "postgresql://")):
        parser.error("the bench runs on PostgreSQL (a dedicated database)")
    _ensure_database(args.database_url)
    _setup_django(args.database_url)

    import numpy as np

    # The project's modules are imported once the script has put the repository on the path and set
    # Django up (see _setup_django), as the model imports of build() are.
    from adjudication.analysis.agreement import agreement_report
    from adjudication.analysis.loading import ratings_load
    from adjudication.stats import agreement as ag

    pool, question = build(args.units, args.raters, args.categories)

    ratings = ratings_load(pool=pool, question=question)
    codes = ratings.codes.astype(int)
    k = len(ratings.scale)
    rests = []
    for r in range(codes.shape[1]):
        rest = ag.rest_majority(ratings.codes, r, k)
        rests.append(np.where(np.isnan(rest), -1, rest).astype(int))
    bare.rest = rests  # type: ignore[attr-defined]

    # Interleaved, so that both sides see the same load on a shared machine.
    e2e, lib, read, report = [], [], [], None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        report = agreement_report(pool=pool, question=question)
        e2e.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ratings_load(pool=pool, question=question)
        read.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        bare(codes, k)
        lib.append(time.perf_counter() - t0)

    def fmt(xs: list[float]) -> str:
        return f"median {statistics.median(xs):.3f} s (range {min(xs):.3f}–{max(xs):.3f}, n={len(xs)})"

    ratio = statistics.median(e2e) / statistics.median(lib)
    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    print(
        f"data: {report['n_units']:,} units × {report['n_raters']} raters × {k} categories "
        f"({report['n_units'] * report['n_raters']:,} labels), PostgreSQL"
    )
    print(
        f"report: Fleiss κ {report['fleiss_kappa']['value']:.4f}, "
        f"Krippendorff α {report['krippendorff_alpha']['value']:.4f}"
    )
    print(f"end to end (database → report point estimates): {fmt(e2e)}")
    print(f"bare library calls on the same arrays:           {fmt(lib)}")
    print(f"  of end to end, reading the matrix from the database alone: {fmt(read)}")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(
        f"ratio end to end / bare: {ratio:.2f} (target ≤ {TARGET_RATIO:.2f}): "
        f"{'met' if ratio <= TARGET_RATIO else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
