"""Concord at the scale of a national evaluation: build a study of N items (default 1,000,000) with ten labels
per item on PostgreSQL, then measure every page, report, export, score run and check against its budget.

    .venv/bin/python bench/scale.py --items 100000                   # build (once per size), measure, upgrade
    .venv/bin/python bench/scale.py --items 1000000 --phases build   # only the build
    .venv/bin/python bench/scale.py --growth                         # the growth table of the saved results
    .venv/bin/python bench/scale.py --items 100000 --drop            # drop the scratch database

The study (built once per size in the scratch database ``concord_scale_<N>``; ``--database`` overrides it):
200 annotators; two binary item-scope questions; pool A (overlap 3, annotators 1–120) and pool B (overlap 2,
annotators 121–200), every item submitted in both, so 5 assignments and 10 labels per item, each label with its
history row, 2 % of them changed once more (version 2, a second history row); pool C (overlap 1) holding an open
assignment on every tenth item (the annotators' queue); current gold (pool A, first question) on 10 % of the
items; a finished lexical ``cf`` score run with a score for every item. The items' text is drawn from a
300-word vocabulary (so a word is in about 10 % of the answers), plus a rare word in 0.1 % of them.

It is built with set-based SQL (``INSERT … SELECT generate_series``), a batch of items per statement, with the
audit triggers ON: the trail is written by the real triggers as the rows go in, and then sealed by the product's
own ``annotation.audit.events_seal``; ``manage.py audit_verify`` must pass on the result. Build time per table
is printed.

Measured at that size (each figure with its budget and "met" / "NOT met"):

* the annotator's next item (``GET /pools/<id>/continue/``) and item page (``GET /assignments/<id>/``) under the
  paced load of bench/annotate_load.py (``--annotators`` annotators of pool C, each saving a label through the
  API about once per ``--interval`` s) against gunicorn with the repository's gunicorn.conf.py, each annotator
  also asking for its next item and opening it about once per ``--page-interval`` s (bench/pageclient.py;
  ``--interval 0 --page-interval 1`` is the former, pages-only load): p50 / p95, budget p95 < 50 ms; the
  server's and the clients' CPU in the window are printed with them;
* the data manager's filters (bench/data_manager.py's requests, text search included): median, budget < 1 s;
* the agreement and validity reports run as report jobs (``adjudication.report_jobs``, the worker's code path:
  ``job_run`` in a child process): time, progress rows written, peak RSS of the process; the validity report twice:
  for the build's score run (10,000 distinct scores), for a second run written on first use whose score is
  distinct for nearly every item (a continuous metric: a joined row per unit), and for the first compared with the
  second (DeLong's paired test);
* the streamed gold export (bench/export.py's child process): time, peak RSS;
* the score run's fan-out task alone (``scoring.tasks.score_run_fan_out``, its batch messages counted, not sent):
  time, peak RSS, and that every item is in exactly one batch sent once;
* a lexical ``cf`` score run over every item as a job (the worker's ``score_run_fan_out`` / batch tasks, eager in
  one child process): items/s, peak RSS;
* ``manage.py audit_verify`` (seal, chain, data against trail): time.

"Memory flat" is judged by the growth table: peak RSS at 1,000,000 items ≤ 2 × its value at 100,000.

``--phases upgrade``: the last few migrations of each app are rolled back and re-applied while a saver thread
saves labels through the real save path (``annotation.labels.label_save``) on its own connection; the longest
save and every migration's time are printed. Budget: no save blocked more than 1 s; all migrations in minutes.

Results are written to ``<CONCORD_VAR_DIR or /tmp>/scale-results/scale-<N>.json``; ``--growth`` prints every
figure at each size found there and the ratio between the largest and the smallest.
"""

# ruff: noqa: S608 (SQL built from this file's own constants and identifiers; values are bound parameters)
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from data_manager import _ensure_database  # noqa: E402
from loadclient import percentile  # noqa: E402

ANNOTATORS = 200
POOL_A = 120  # annotators 1..120 in pool A (overlap 3), the rest in pool B (overlap 2)
BATCH = 50_000  # items per INSERT … SELECT
PAGE_P95_MS = 50.0
FILTER_S = 1.0
SAVE_BLOCK_S = 1.0
MIGRATIONS_S = 600.0
# "Memory flat": a job's peak above idle at the largest size at most this many times its peak at the smallest
# (judged by --growth, on the figures whose name ends so).
FLAT_RATIO = 2.0
FLAT_SUFFIX = "peak RSS above idle (MiB)"
RARE_WORD = "idarucizumab"
# The parameters' mark of the bench's second score run, a score distinct for nearly every item (_continuous_run).
CONTINUOUS = "continuous"
VOCABULARY = [
    'patient', 'dose', 'tablet', 'infection', 'fever', 'pain', 'warfarin', 'doctor', 'kidney', 'blood', 'pressure',
    'heart', 'rate', 'insulin', 'glucose', 'asthma', 'inhaler', 'steroid', 'rash', 'allergy', 'penicillin',
    'amoxicillin', 'antibiotic', 'vaccine', 'measles', 'mumps', 'rubella', 'child', 'infant', 'pregnancy',
    'trimester', 'midwife', 'labour', 'breastfeeding', 'formula', 'sleep', 'insomnia', 'anxiety', 'depression',
    'therapy', 'counselling', 'sertraline', 'fluoxetine', 'lithium', 'seizure', 'epilepsy', 'migraine', 'headache',
    'nausea', 'vomiting', 'diarrhoea', 'constipation', 'hydration', 'fluids', 'electrolyte', 'sodium', 'potassium',
    'calcium', 'vitamin', 'iron', 'anaemia', 'fatigue', 'dizziness', 'fainting', 'syncope', 'stroke', 'aspirin',
    'clopidogrel', 'statin', 'cholesterol', 'diet', 'exercise', 'weight', 'obesity', 'smoking', 'alcohol', 'liver',
    'hepatitis', 'jaundice', 'gallstones', 'pancreas', 'diabetes', 'thyroid', 'levothyroxine', 'hormone', 'menopause',
    'contraception', 'condom', 'pill', 'implant', 'coil', 'cancer', 'screening', 'mammogram', 'smear', 'colonoscopy',
    'biopsy', 'tumour', 'chemotherapy', 'radiotherapy', 'surgery', 'anaesthetic', 'wound', 'dressing', 'stitches',
    'infection', 'swelling', 'redness', 'pus', 'cellulitis', 'ulcer', 'pressure', 'sore', 'bandage', 'crutches',
    'fracture', 'sprain', 'physiotherapy', 'arthritis', 'gout', 'ibuprofen', 'paracetamol', 'codeine', 'morphine',
    'opioid', 'addiction', 'withdrawal', 'naloxone', 'overdose', 'poison', 'emergency', 'ambulance', 'hospital',
    'admission', 'discharge', 'referral', 'appointment', 'nurse', 'pharmacist', 'prescription', 'repeat', 'generic',
    'brand', 'interaction', 'side', 'effect', 'contraindication', 'kidney', 'dialysis', 'transplant', 'urine',
    'catheter', 'prostate', 'bladder', 'incontinence', 'eye', 'glaucoma', 'cataract', 'vision', 'hearing', 'tinnitus',
    'ear', 'wax', 'sinus', 'throat', 'tonsillitis', 'cough', 'cold', 'flu', 'covid', 'isolation', 'mask', 'oxygen',
    'pneumonia', 'bronchitis', 'wheeze', 'spacer', 'nebuliser', 'eczema', 'psoriasis', 'acne', 'sunscreen', 'mole',
    'melanoma', 'itch', 'scabies', 'lice', 'worms', 'travel', 'malaria', 'tetanus', 'rabies', 'bite', 'sting',
    'anaphylaxis', 'adrenaline', 'autoinjector', 'epipen', 'diabetes', 'hypoglycaemia', 'ketones', 'foot',
    'neuropathy', 'retinopathy', 'dementia', 'memory', 'confusion', 'delirium', 'falls', 'frailty', 'care', 'home',
    'carer', 'consent', 'capacity', 'advance', 'directive', 'palliative', 'hospice', 'grief', 'bereavement',
    'newborn', 'jaundice', 'colic', 'teething', 'weaning', 'growth', 'development', 'autism', 'adhd', 'dyslexia',
    'bullying', 'puberty', 'acne', 'period', 'endometriosis', 'fertility', 'ivf', 'miscarriage', 'ectopic',
    'ultrasound', 'scan', 'blood', 'test', 'result', 'normal', 'range', 'follow', 'up', 'review', 'monitor',
    'symptoms', 'worsen', 'improve'
]
TOPICS = ["drugs", "wounds", "vaccines", "diabetes", "pregnancy", "mental", "children", "heart", "skin", "sleep"]
YES_NO = [{"value": "yes", "label": "Yes", "key": "1"}, {"value": "no", "label": "No", "key": "2"}]


def results_dir() -> Path:
    base = Path(os.environ.get("CONCORD_VAR_DIR") or tempfile.gettempdir())
    return base / "scale-results"


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


class Figures:
    """Every measured figure of one size: printed as measured, saved for the growth table."""

    def __init__(self, n: int, path: Path) -> None:
        self.n = n
        self.path = path
        self.data: dict[str, dict] = json.loads(path.read_text()) if path.exists() else {}

    def discard(self, key: str) -> None:
        """Forget a figure an earlier run saved (a failure this run did not repeat)."""
        if self.data.pop(key, None) is not None:
            self.path.write_text(json.dumps(self.data, indent=1, sort_keys=True))

    def add(self, key: str, value: float, unit: str, budget: str = "", ok: bool | None = None) -> None:
        self.data[key] = {"value": value, "unit": unit, "budget": budget, "ok": ok}
        judged = f"  (budget {budget}: {verdict(ok)})" if budget and ok is not None else ""
        print(f"  {key:<58} {value:>12,.2f} {unit}{judged}", flush=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.data, indent=1, sort_keys=True))


def peak_rss_mib_children() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


# --- Build -------------------------------------------------------------------------------------------


def _sql(cursor, sql: str, params: list | None = None) -> int:
    cursor.execute(sql, params or [])
    return max(cursor.rowcount, 0)


def build(n: int, slug: str, figures: Figures) -> None:
    """The study, in set-based SQL with the audit triggers on (see the module docstring)."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from annotation.models import Pool, PoolMembership, Question, Role, Study, StudyRole
    from scoring.models import ScoreRun

    User = get_user_model()
    timings: dict[str, float] = {}
    rows: dict[str, int] = {}

    def timed(table: str, sql: str, params: list) -> None:
        t0 = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cursor:
            count = _sql(cursor, sql.replace(" % ", " %% "), params)
        timings[table] = timings.get(table, 0.0) + time.perf_counter() - t0
        rows[table] = rows.get(table, 0) + count

    t0 = time.perf_counter()
    with transaction.atomic():
        owner = User.objects.create_user(f"scale-owner-{n}", password=None)
        study = Study.objects.create(name=f"Scale {n:,} items", slug=slug, owner=owner)
        StudyRole.objects.create(study=study, user=owner, role=Role.RESEARCHER)
        questions = [
            Question.objects.create(study=study, key=key, order=i, scope="item", kind="binary", prompt=prompt,
                                    options=YES_NO)
            for i, (key, prompt) in enumerate([("supported", "Is the answer supported?"), ("harm", "Could it harm?")])
        ]
        users = [User(username=f"scale-{n}-annotator-{i:03d}") for i in range(ANNOTATORS)]
        for user in users:
            user.set_unusable_password()
        User.objects.bulk_create(users)
        users = list(User.objects.filter(username__startswith=f"scale-{n}-annotator-").order_by("username"))
        StudyRole.objects.bulk_create(StudyRole(study=study, user=u, role=Role.ANNOTATOR) for u in users)
        pools = {}
        for name, overlap, members in (("A", 3, users[:POOL_A]), ("B", 2, users[POOL_A:]), ("C", 1, users)):
            pool = Pool.objects.create(study=study, name=name, overlap=overlap, seed=7)
            pool.questions.set(questions)
            PoolMembership.objects.bulk_create(
                PoolMembership(pool=pool, study=study, user=u, independent=False, pseudonym=f"{name}{i + 1}")
                for i, u in enumerate(members)
            )
            pools[name] = pool
        ScoreRun.objects.create(study=study, metric="cf", metric_version="1", backend="lexical", status="done",
                                n_total=n, n_done=n, created_by=owner)
    timings["study, users, pools, memberships (ORM)"] = time.perf_counter() - t0
    run_id = ScoreRun.objects.get(study=study).pk
    ids = [u.pk for u in users]
    q1, q2 = (q.pk for q in questions)
    words = VOCABULARY
    sentence = (
        "(SELECT string_agg(w.v[1 + abs(hashint8((g * {k} + j)::bigint)::bigint) % {nw}], ' ') "
        "FROM generate_series(1, {m}) j, (SELECT %(words)s::text[] AS v) w)"
    )
    question_text = sentence.format(k=37, m=8, nw=len(words)) + " || '?'"
    answer_text = (
        sentence.format(k=101, m=30, nw=len(words))
        + f" || CASE WHEN g % 1000 = 7 THEN ' {RARE_WORD}' ELSE '' END || '.'"
    )
    for start in range(1, n + 1, BATCH):
        end = min(n, start + BATCH - 1)
        params = {"study": study.pk, "start": start, "end": end, "words": words, "topics": TOPICS, "ids": ids,
                  "a": pools["A"].pk, "b": pools["B"].pk, "c": pools["C"].pk, "q1": q1, "q2": q2, "run": run_id,
                  "owner": owner.pk}
        timed("annotation_item", (
            "INSERT INTO annotation_item (external_id, question, answer, source, scope_class, system, metadata, "
            "created_at, study_id) "
            f"SELECT 'item-' || lpad(g::text, 7, '0'), {question_text}, {answer_text}, '', '', "
            "CASE WHEN g % 2 = 0 THEN 'rag-a' ELSE 'rag-b' END, "
            "jsonb_build_object('topic', (%(topics)s::text[])[1 + g % 10], 'site', 'site-' || (1 + (g * 7) % 20)), "
            "now(), %(study)s FROM generate_series(%(start)s, %(end)s) g"
        ), params)
        # g: the item's number; the batch's items are those with these external ids.
        items = (
            "SELECT i.id, substr(i.external_id, 6)::int AS g FROM annotation_item i "
            "WHERE i.study_id = %(study)s AND i.external_id BETWEEN 'item-' || lpad(%(start)s::text, 7, '0') "
            "AND 'item-' || lpad(%(end)s::text, 7, '0')"
        )
        timed("annotation_assignment", (
            "INSERT INTO annotation_assignment (status, order_key, reserved_until, started_at, submitted_at, "
            "active_seconds, skip_reason, created_at, annotator_id, item_id, pool_id, reopened_count) "
            "SELECT CASE WHEN p.pool = %(c)s THEN 'assigned' ELSE 'submitted' END, "
            "abs(hashint8((it.g * 11 + p.j)::bigint)::bigint), "
            "NULL, CASE WHEN p.pool = %(c)s THEN NULL ELSE now() END, "
            "CASE WHEN p.pool = %(c)s THEN NULL ELSE now() END, "
            "CASE WHEN p.pool = %(c)s THEN 0 ELSE 20 + abs(hashint8((it.g + p.j)::bigint)::bigint) % 100 END, "
            "'', now(), "
            f"(%(ids)s::int[])[1 + CASE WHEN p.pool = %(a)s THEN (it.g * 3 + p.j) % {POOL_A} "
            f"WHEN p.pool = %(b)s THEN {POOL_A} + (it.g * 2 + p.j) % {ANNOTATORS - POOL_A} "
            f"ELSE (it.g / 10) % {ANNOTATORS} END], it.id, p.pool, 0 "
            f"FROM ({items}) it JOIN (VALUES (%(a)s::bigint, 0), (%(a)s, 1), (%(a)s, 2), (%(b)s, 0), (%(b)s, 1), "
            "(%(c)s, 0)) p(pool, j) ON p.pool <> %(c)s OR it.g % 10 = 0"
        ), params)
        # Each item has a latent answer per question; an annotator gives it 80 % of the time.
        value = (
            "to_jsonb(CASE WHEN (abs(hashint8((a.item_id * 2 + q.k)::bigint)::bigint) % 2 = 0) = "
            "(abs(hashint8((a.id * 3 + q.k)::bigint)::bigint) % 10 < 8) "
            "THEN 'yes' ELSE 'no' END)"
        )
        timed("annotation_label", (
            "INSERT INTO annotation_label (unit_key, value, version, updated_at, assignment_id, updated_by_id, "
            f"question_id) SELECT 'item', {value}, 1, a.submitted_at, a.id, a.annotator_id, q.id "
            f"FROM ({items}) it JOIN annotation_assignment a ON a.item_id = it.id AND a.pool_id IN (%(a)s, %(b)s) "
            "CROSS JOIN (VALUES (%(q1)s::bigint, 0), (%(q2)s, 1)) q(id, k) ORDER BY a.id, q.k"
        ), params)
        labels = (
            f"SELECT l.* FROM ({items}) it JOIN annotation_assignment a ON a.item_id = it.id "
            "JOIN annotation_label l ON l.assignment_id = a.id"
        )
        timed("annotation_labelhistory", (
            "INSERT INTO annotation_labelhistory (old_value, new_value, old_version, new_version, at, actor_id, "
            f"label_id, undoes_id) SELECT NULL, l.value, NULL, 1, l.updated_at, l.updated_by_id, l.id, NULL "
            f"FROM ({labels}) l ORDER BY l.id"
        ), params)
        # 2 % of the labels changed once more, as label_save does: the label's new value and version, then the
        # history row of that version (the triggers record the UPDATE and the INSERT).
        timed("annotation_label (2 % changed: UPDATE)", (
            "UPDATE annotation_label l SET value = CASE WHEN l.value = to_jsonb('yes'::text) "
            "THEN to_jsonb('no'::text) "
            "ELSE to_jsonb('yes'::text) END, version = 2, updated_at = clock_timestamp() "
            f"WHERE l.id IN (SELECT x.id FROM ({labels}) x WHERE x.id % 50 = 0)"
        ), params)
        timed("annotation_labelhistory", (
            "INSERT INTO annotation_labelhistory (old_value, new_value, old_version, new_version, at, actor_id, "
            "label_id, undoes_id) SELECT h.new_value, l.value, 1, 2, l.updated_at, l.updated_by_id, l.id, NULL "
            f"FROM ({labels}) l JOIN annotation_labelhistory h ON h.label_id = l.id AND h.new_version = 1 "
            "WHERE l.version = 2 ORDER BY l.id"
        ), params)
        timed("adjudication_goldlabel", (
            "INSERT INTO adjudication_goldlabel (unit_key, value, source, rationale, confidence, guideline_gap, "
            "version, is_current, created_at, adjudicator_id, case_id, item_id, pool_id, question_id, "
            "adjudicator_name) SELECT 'item', "
            "to_jsonb(CASE WHEN abs(hashint8((it.id * 2)::bigint)::bigint) % 2 = 0 THEN 'yes' "
            "ELSE 'no' END), 'adjudicated', '', NULL, false, 1, true, now(), %(owner)s, NULL, it.id, %(a)s, %(q1)s, '' "
            f"FROM ({items}) it WHERE it.g % 10 = 1"
        ), params)
        timed("scoring_score", (
            "INSERT INTO scoring_score (unit_key, value, state, details, computed_at, item_id, run_id) "
            "SELECT 'item', (abs(hashint8((it.id * 5)::bigint)::bigint) % 10000) / 10000.0, 'ok', '{}', now(), "
            "it.id, %(run)s "
            f"FROM ({items}) it"
        ), params)
        done = sum(timings.values())
        print(f"  built {end:,} / {n:,} items ({done:.0f} s so far)", flush=True)
    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    timings["ANALYZE"] = time.perf_counter() - t0
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM annotation_auditevent WHERE seq IS NULL")
        pending = cursor.fetchone()[0]
    print(f"build of {n:,} items, per table (rows, seconds; the triggers' audit rows are in each table's time):")
    for table, seconds in timings.items():
        print(f"    {table:<46} {rows.get(table, 0):>12,} rows {seconds:9.1f} s", flush=True)
        figures.add(f"build: {table} (s)", seconds, "s")
    figures.add("build: audit events written by the triggers", pending, "events")
    figures.add("build: total, before sealing (s)", sum(timings.values()), "s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--database", default=None, help="default postgres://postgres@127.0.0.1:5432/concord_scale_<N>")
    parser.add_argument("--phases", default="build,load,datamanager,reports,export,fanout,score,verify,upgrade")
    parser.add_argument("--annotators", type=int, default=50, help="paced load: concurrent annotators")
    parser.add_argument("--interval", type=float, default=1.0,
                        help="paced load: mean seconds between one annotator's label saves (0: no saves)")
    parser.add_argument("--page-interval", type=float, default=10.0,
                        help="paced load: mean seconds between one annotator's next item + item page")
    parser.add_argument("--duration", type=float, default=60.0, help="paced load: measured seconds")
    parser.add_argument("--warmup", type=float, default=20.0, help="paced load: seconds before the measured window")
    parser.add_argument("--clients", type=int, default=2,
                        help="paced load: client processes of each kind (saves, pages)")
    parser.add_argument("--repeat", type=int, default=3, help="data manager: timed requests per filter")
    parser.add_argument("--upgrade-back", type=int, default=3, help="upgrade: migrations rolled back per app")
    parser.add_argument("--growth", action="store_true", help="print the growth table of the saved results")
    parser.add_argument("--drop", action="store_true", help="drop the scratch database of --items and exit")
    parser.add_argument("--port", type=int, default=8791)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        os.environ["DATABASE_URL"] = args.database
        child(*args.child)
        return 0
    if args.growth:
        return growth()
    if args.items < 1000:
        parser.error("--items must be at least 1,000")
    url = args.database or f"postgres://postgres@127.0.0.1:5432/concord_scale_{args.items}"
    if not url.startswith(("postgres://", "postgresql://")):
        parser.error("the scale bench runs on PostgreSQL")
    if args.drop:
        import psycopg

        with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}"')
        return 0
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("CONCORD_VAR_DIR", str(Path(tempfile.gettempdir()) / f"concord-scale-{args.items}"))
    _ensure_database(url)
    import django

    django.setup()
    from django.core.management import call_command

    from annotation.models import Study

    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    if "build" in phases:
        call_command("migrate", verbosity=0, interactive=False)
    # Otherwise the database is left at the migrations it has: the upgrade phase applies the newer ones, measured.
    figures = Figures(args.items, results_dir() / f"scale-{args.items}.json")
    slug = f"scale-{args.items}"
    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    print(f"database: {url}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    if "build" in phases and not Study.objects.filter(slug=slug).exists():
        print(f"building {args.items:,} items…", flush=True)
        build(args.items, slug, figures)
    study = Study.objects.get(slug=slug)
    for phase in phases:
        if phase == "build":
            continue
        runner = PHASES.get(phase)
        if runner is None:
            parser.error(f"unknown phase {phase!r}: {', '.join(PHASES)}")
        print(f"\n== {phase} (load average {os.getloadavg()[0]:.1f})", flush=True)
        runner(args, study, figures, url)
    return 0



# --- Annotator pages under the paced load ------------------------------------------------------------


def _annotators(study, count: int) -> list[dict]:
    """``count`` annotators of pool C (each has open assignments there), each with a session cookie (the pages),
    an API token and twenty of its open assignments with the questions it may answer on them (the saves)."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    from rest_framework.authtoken.models import Token

    from annotation.models import Assignment, Pool, PoolMembership

    pool = Pool.objects.get(study=study, name="C")
    targets = [(q.key, "item", [str(o["value"]) for o in q.options]) for q in pool.questions.order_by("order")]
    out = []
    for membership in PoolMembership.objects.filter(pool=pool).select_related("user").order_by("id")[:count]:
        user = membership.user
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        token, _ = Token.objects.get_or_create(user=user)
        assignments = list(
            Assignment.objects.filter(pool=pool, annotator=user, status__in=["assigned", "started"])
            .order_by("id").values_list("id", flat=True)[:20]
        )
        out.append({"cookie": f"{settings.SESSION_COOKIE_NAME}={session.session_key}", "pool": pool.pk,
                    "token": token.key, "assignments": assignments, "targets": targets})
    return out


def _paced_load(args, annotators: list[dict], server_pid: int, database: str):
    """The paced load bench's load — each annotator saving a label about once per ``--interval`` s through the
    API (bench/loadclient.py) — and, beside it, each annotator asking for its next item and opening it about
    once per ``--page-interval`` s (bench/pageclient.py); ``--clients`` processes of each. Returns the merged
    save and page tallies and the server's CPU seconds inside the measured window (gunicorn, PostgreSQL)."""
    import multiprocessing

    from annotate_load import cpu_delta, cpu_snapshot
    from loadclient import LoadConfig, Tally
    from loadclient import client_process as save_process
    from pageclient import PageConfig, PageTally
    from pageclient import client_process as page_process

    start = time.monotonic() + 2.0
    window, deadline = start + args.warmup, start + args.warmup + args.duration
    save_cfg = LoadConfig(host="127.0.0.1", port=args.port, mode="paced", interval=args.interval, timeout=30.0,
                          start_at=start, window_start=window, deadline=deadline)
    page_cfg = PageConfig(host="127.0.0.1", port=args.port, interval=args.page_interval, timeout=30.0,
                          start_at=start, window_start=window, deadline=deadline)
    context = multiprocessing.get_context("fork")
    running = []
    for k in range(args.clients):
        specs = [(n, a) for n, a in enumerate(annotators) if n % args.clients == k]
        jobs = [("page", page_process, (specs, page_cfg, k))]
        if args.interval > 0:
            jobs.append(("save", save_process, (specs, save_cfg, {}, k)))
        for kind, target, job_args in jobs:
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=target, args=(*job_args, send), daemon=True)
            process.start()
            send.close()
            running.append((kind, process, receive))
    time.sleep(max(0.0, window - time.monotonic()))
    first = cpu_snapshot(server_pid, database)
    time.sleep(max(0.0, deadline - time.monotonic()))
    last = cpu_snapshot(server_pid, database)
    pages, saves = PageTally(), Tally()
    for kind, process, receive in running:
        (pages if kind == "page" else saves).merge(receive.recv())
        process.join()
    server_cpu = {
        "gunicorn": sum(cpu_delta(first.gunicorn, last.gunicorn)[0].values()),
        "postgres": sum(cpu_delta(first.postgres, last.postgres)[0].values()),
    }
    return pages, saves, server_cpu


def phase_load(args, study, figures: Figures, url: str) -> None:
    from annotate_load import gunicorn_config, server_env, start_gunicorn, stop

    annotators = _annotators(study, args.annotators)
    env = {**os.environ, **server_env(url)}
    opts = argparse.Namespace(workers=None, threads=None, port=args.port, gunicorn_args="")
    conf = gunicorn_config(opts, env)
    server = start_gunicorn("Concord", opts, env, int(conf["workers"]))
    load_before = os.getloadavg()[0]
    try:
        pages, saves, server_cpu = _paced_load(args, annotators, server.pid, url.rsplit("/", 1)[-1])
    finally:
        stop(server)
    n_pages = len(pages.next_ms) + len(pages.item_ms)
    n_saves = len(saves.latencies)
    save_ms = [1000 * s for s in saves.latencies]
    lag = sorted(pages.loop_lag + saves.loop_lag)
    errors = sorted(pages.errors.items()) + sorted(saves.errors.items())
    saving = f"saving ~1 label per {args.interval:g} s" if args.interval > 0 else "no saves"
    print(f"  {len(annotators)} annotators, each {saving} and asking for its next item and opening it ~every "
          f"{args.page_interval:g} s; {args.duration:g} s measured: {n_pages} page and {n_saves} save requests "
          f"(saves p50 / p95 {percentile(save_ms, 50):.1f} / {percentile(save_ms, 95):.1f} ms, {saves.ok} saved, "
          f"{saves.conflicts} conflicts); gunicorn {conf['workers']} workers × {conf['threads']} threads; server "
          f"CPU {server_cpu['gunicorn'] / args.duration:.2f} (gunicorn) + {server_cpu['postgres'] / args.duration:.2f}"
          f" (PostgreSQL) cores; client CPU {(pages.cpu_window + saves.cpu_window) / args.duration:.2f} cores "
          f"({2 * args.clients if args.interval > 0 else args.clients} processes; event-loop lag p95 "
          f"{1000 * percentile(lag, 95):.1f} ms); load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after; errors: {errors[:4]}")
    load = f"{len(annotators)} annotators: {saving}, pages ~1/{args.page_interval:g} s"
    for ms, name in ((pages.next_ms, "next item"), (pages.item_ms, "item page")):
        if not ms:
            figures.add(f"annotator {name} ({load}): requests", 0, "requests", "> 0", False)
            continue
        figures.add(f"annotator {name} ({load}): p50 (ms)", percentile(ms, 50), "ms")
        p95 = percentile(ms, 95)
        figures.add(f"annotator {name} ({load}): p95 (ms)", p95, "ms", f"< {PAGE_P95_MS:g} ms",
                    p95 < PAGE_P95_MS and not errors)
    if save_ms:
        figures.add(f"label save ({load}): p95 (ms)", percentile(save_ms, 95), "ms")
    figures.add(f"annotator pages ({load}): load average after", os.getloadavg()[0], "")


# --- Data manager -------------------------------------------------------------------------------------


def phase_datamanager(args, study, figures: Figures, url: str) -> None:
    from django.conf import settings
    from django.test import Client
    from django.urls import reverse

    from annotation.models import Pool
    from scoring.models import ScoreRun

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    pool = Pool.objects.get(study=study, name="A")
    run = ScoreRun.objects.filter(study=study).order_by("id").first()
    client = Client()
    client.force_login(study.owner)
    target = reverse("adjudication:data-manager", args=[study.slug])
    # bench/data_manager.py's requests, with this study's words: a common one (~10 % of the answers) and a rare
    # one (0.1 %).
    cases = [
        ("no filter (page 1)", {}),
        ("no filter, page 1000", {"page": "1000"}),
        ("text 'warfarin' (~10 %)", {"q": "warfarin"}),
        (f"text '{RARE_WORD}' (0.1 %)", {"q": RARE_WORD}),
        ("text, no match", {"q": "zzzz-no-such-text"}),
        ("pool A: done", {"pool": pool.pk, "pool_state": "done"}),
        ("pool A: not assigned", {"pool": pool.pk, "pool_state": "not_assigned"}),
        ("pool A: open (in progress)", {"pool": pool.pk, "pool_state": "open"}),
        ("open disagreement", {"disagreement": "open"}),
        ("gold: yes", {"gold": "yes"}),
        ("score 0.2-0.3", {"run": run.pk, "score_min": "0.2", "score_max": "0.3"}),
        ("metadata topic=drugs", {"meta_key": "topic", "meta_value": "drugs"}),
        ("combined (text + pool + gold + score)", {"q": "warfarin", "pool": pool.pk, "pool_state": "done",
                                                   "gold": "no", "run": run.pk, "score_min": "0.5"}),
    ]
    for label, params in cases:
        response = client.get(target, params, secure=True, HTTP_HX_REQUEST="true")
        assert response.status_code == 200, (label, response.status_code)
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            response = client.get(target, params, secure=True, HTTP_HX_REQUEST="true")
            times.append(time.perf_counter() - t0)
        body = response.content.decode()
        count = body.split('id="dm-count"><strong>', 1)[1].split("<", 1)[0] if 'id="dm-count"' in body else "?"
        median = statistics.median(times)
        print(f"    {label}: {count} matching items")
        figures.add(f"data manager: {label} (s)", median, "s", f"< {FILTER_S:g} s", median < FILTER_S)


# --- Jobs in a child process: reports, export, score run ----------------------------------------------


def _proc_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def child(what: str, slug: str, out: str) -> None:
    """Runs in a fresh process (one job, as a worker runs it): prints one JSON line of figures."""
    import django

    django.setup()
    import gc

    import numpy  # noqa: F401
    import pandas  # noqa: F401

    if what != "export":  # the others are a worker's jobs: what a worker's start does to its database connections
        from concord.ops.worker_connections import worker_connections

        worker_connections()

    from adjudication import report_jobs
    from adjudication.models import ReportJob
    from annotation.models import Pool, Study

    study = Study.objects.get(slug=slug)
    pool = Pool.objects.get(study=study, name="A")
    gc.collect()
    idle = _proc_kib("VmRSS")
    t0 = time.perf_counter()
    figures: dict = {}
    peak_kib = 0  # read right after the measured call where checking its result costs memory of its own
    if what in ("agreement", "validity", "validity-continuous", "validity-paired"):
        from scoring.models import ScoreRun

        runs = ScoreRun.objects.filter(study=study).order_by("id")
        continuous = runs.filter(parameters__bench=CONTINUOUS).first()
        # The build's run is the first; a run with no "bench" key is not matched by a JSON key's exclude().
        run = continuous if what == "validity-continuous" else runs.exclude(pk=getattr(continuous, "pk", None)).first()
        kind = "validity" if what.startswith("validity") else what
        data = {"kind": kind, "pool": str(pool.pk), "question": "supported", "n_boot": "200", "seed": "1"}
        if kind == "validity":
            data["source"] = f"run:{run.pk}"
        if what == "validity-paired":  # DeLong's paired test of the build's run against the continuous one
            data["compare"] = f"run:{continuous.pk}"
        kind, params = report_jobs.job_params_parse(study=study, family=report_jobs.REPORT, data=data)
        ReportJob.objects.filter(study=study, params_hash=report_jobs.params_hash(kind, params)).delete()
        job = ReportJob.objects.create(study=study, kind=kind, params=params, requested_by=study.owner,
                                       params_hash=report_jobs.params_hash(kind, params))
        t0 = time.perf_counter()
        report_jobs.job_run(job_id=job.pk)  # what the worker's task runs
        job.refresh_from_db()
        figures = {"status": job.status, "n_done": job.n_done, "n_total": job.n_total, "error": job.error}
    elif what == "export":
        from adjudication.exports.filters import ExportFilters
        from adjudication.exports.writers import write_export

        write_export(study=study, fmt="jsonl", out=Path(out), filters=ExportFilters(gold_only=True))
        with open(out, "rb") as written:
            lines = sum(1 for _ in written)
        figures = {"bytes": Path(out).stat().st_size, "lines": lines}
    elif what == "score":
        from concord.celery import app
        from scoring.models import ScoreRun
        from scoring.services import score_run_start

        app.conf.task_always_eager = True  # the worker's tasks (fan out, every batch) in this process
        app.conf.task_eager_propagates = True
        run = score_run_start(study=study, metric="cf", backend="lexical", parameters={}, actor=study.owner)
        run.refresh_from_db()
        figures = {"status": run.status, "n_done": run.n_done, "n_total": run.n_total, "n_failed": run.n_failed}
    elif what == "fanout":
        from scoring import tasks
        from scoring.models import ScoreRun

        # The fan-out task alone: its batches are written and counted, not sent (nothing scores them).
        run = ScoreRun.objects.create(study=study, metric="cf", metric_version="1", backend="lexical",
                                      batch_size=32, created_by=study.owner)
        # The batch ids sent, 8 bytes each (a list of Python ints would be the measurement's own growth with the
        # items); they are checked after the peak is read.
        sent = array("q")
        tasks.score_batch.apply_async = lambda args, **kw: sent.append(args[0])
        gc.collect()
        idle = _proc_kib("VmRSS")
        t0 = time.perf_counter()
        tasks.score_run_fan_out(run.pk)
        peak_kib = _proc_kib("VmHWM")
        run.refresh_from_db()
        figures = {"status": run.status, "n_total": run.n_total, "batches_sent": len(sent),
                   "distinct": len(set(sent)), "run": run.pk}  # deleted by the parent, after the measurement
    else:
        raise SystemExit(f"unknown child job {what}")
    figures.update(seconds=time.perf_counter() - t0, idle_mib=idle / 1024,
                   peak_above_idle_mib=((peak_kib or _proc_kib("VmHWM")) - idle) / 1024)
    print(json.dumps(figures))


def _run_child(what: str, study, url: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="concord-scale-") as tmp:
        result = subprocess.run(
            [sys.executable, __file__, "--child", what, study.slug, str(Path(tmp) / "out.jsonl"),
             "--database", url],
            capture_output=True, text=True, check=False, env={**os.environ, "DATABASE_URL": url},
        )
    if result.returncode != 0:
        print(result.stderr[-3000:])
        return {"failed": True}
    return json.loads(result.stdout.strip().splitlines()[-1])


def _continuous_run(study) -> None:
    """A second finished score run whose score is distinct for nearly every item (a continuous similarity, a
    judge's mean probability): the validity report of such a metric has nearly a joined row per unit. Written once
    per database, in set-based SQL, and kept."""
    from django.db import connection, transaction

    from scoring.models import ScoreRun

    if ScoreRun.objects.filter(study=study, parameters__bench=CONTINUOUS).exists():
        return
    t0 = time.perf_counter()
    with transaction.atomic():
        n = study.items.count()
        run = ScoreRun.objects.create(study=study, metric="cf", metric_version="1", backend="lexical", status="done",
                                      n_total=n, n_done=n, created_by=study.owner,
                                      parameters={"bench": CONTINUOUS})
        with connection.cursor() as cursor:
            # 52 bits of a hash of the item's id: about a million distinct scores among a million items.
            cursor.execute(
                "INSERT INTO scoring_score (unit_key, value, state, details, computed_at, item_id, run_id) "
                "SELECT 'item', (abs(hashint8((i.id * 13)::bigint)::bigint) %% 4503599627370496) / 4503599627370496.0, "
                "'ok', '{}', now(), i.id, %s FROM annotation_item i WHERE i.study_id = %s",
                [run.pk, study.pk],
            )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE scoring_score")  # as after the build: what autovacuum would do, not waited for
    print(f"  continuous score run written: {n:,} scores in {time.perf_counter() - t0:.0f} s")


def phase_reports(args, study, figures: Figures, url: str) -> None:
    _continuous_run(study)
    for what, name in (("agreement", "agreement"), ("validity", "validity"),
                       ("validity-continuous", "validity (continuous metric)"),
                       ("validity-paired", "validity (paired with the continuous metric)")):
        got = _run_child(what, study, url)
        if got.get("failed") or got.get("status") != "done":
            figures.add(f"{name} report job: done", 0, "", "done", False)
            print(f"    {got}")
            continue
        figures.discard(f"{name} report job: done")
        print(f"  {name} report job: {got['status']}, progress {got['n_done']}/{got['n_total']}")
        figures.add(f"{name} report job: time (s)", got["seconds"], "s")
        figures.add(f"{name} report job: peak RSS above idle (MiB)", got["peak_above_idle_mib"], "MiB")


def phase_export(args, study, figures: Figures, url: str) -> None:
    got = _run_child("export", study, url)
    if got.get("failed"):
        figures.add("gold export: done", 0, "", "done", False)
        return
    figures.discard("gold export: done")
    print(f"  gold export (jsonl, gold only): {got['lines']:,} lines, {got['bytes'] / 1e6:.0f} MB")
    figures.add("gold export: time (s)", got["seconds"], "s")
    figures.add("gold export: peak RSS above idle (MiB)", got["peak_above_idle_mib"], "MiB")


def phase_fanout(args, study, figures: Figures, url: str) -> None:
    from scoring.models import ScoreRun

    got = _run_child("fanout", study, url)
    if got.get("run"):
        ScoreRun.objects.filter(pk=got["run"]).delete()
    if got.get("failed") or got.get("distinct") != got.get("batches_sent") or got.get("n_total") != study.items.count():
        figures.add("score run fan-out: every item in one batch", 0, "", "yes", False)
        print(f"    {got}")
        return
    figures.discard("score run fan-out: every item in one batch")
    print(f"  score run fan-out: {got['batches_sent']:,} batches of {got['n_total']:,} items, each sent once")
    figures.add("score run fan-out: time (s)", got["seconds"], "s")
    figures.add("score run fan-out: peak RSS above idle (MiB)", got["peak_above_idle_mib"], "MiB")


def phase_score(args, study, figures: Figures, url: str) -> None:
    got = _run_child("score", study, url)
    if got.get("failed") or got.get("status") != "done":
        figures.add("score run (cf, lexical): done", 0, "", "done", False)
        print(f"    {got}")
        return
    figures.discard("score run (cf, lexical): done")
    print(f"  score run cf/lexical: {got['status']}, {got['n_done']:,} / {got['n_total']:,} items, "
          f"{got['n_failed']} failed")
    figures.add("score run (cf, lexical): items/s", got["n_done"] / got["seconds"], "items/s")
    figures.add("score run (cf, lexical): peak RSS above idle (MiB)", got["peak_above_idle_mib"], "MiB")


# --- audit_verify ----------------------------------------------------------------------------------------


def phase_verify(args, study, figures: Figures, url: str) -> None:
    from django.core.management import call_command

    from annotation import audit

    t0 = time.perf_counter()
    sealed = audit.events_seal()
    seal = time.perf_counter() - t0
    print(f"  sealed {sealed:,} pending events")
    figures.add("audit: seal pending events (events_seal) (s)", seal, "s")
    if sealed:
        figures.add("audit: seal rate (events/s)", sealed / seal, "events/s")
    t0 = time.perf_counter()
    with open(os.devnull, "w") as quiet:
        call_command("audit_verify", "--no-anchor", stdout=quiet)  # raises CommandError on any problem
    figures.add("audit: manage.py audit_verify (s)", time.perf_counter() - t0, "s", "passes", True)


# --- Upgrade: migrations at this size while labels are saved ------------------------------------------


def _saver(study, stop: threading.Event, saves: list[tuple[float, float]], errors: list[tuple[float, str]]) -> None:
    """Saves labels through the real save path (``label_save``: the label row locked, a new version, a history
    row, the triggers' audit events) on this thread's own connection, about 20 a second, until ``stop``."""
    import random

    from django.db import connection

    from annotation.labels import label_save
    from annotation.models import Assignment, Label, Question

    rng = random.Random(5)
    try:
        # Open assignments of pool C (a submitted item's answers can no longer change), the first question.
        assignments = list(
            Assignment.objects.filter(pool__study=study, pool__name="C").select_related("annotator", "pool")
            .order_by("id")[:400]
        )
        question = Question.objects.get(study=study, key="supported")
        # A save that waits more than the budget for a lock fails (and is counted) rather than waiting on: the
        # budget is judged on lock waits, whatever the CPU the machine's other work leaves the save.
        with connection.cursor() as cursor:
            cursor.execute(f"SET lock_timeout = '{int(SAVE_BLOCK_S * 1000)}ms'")
        while not stop.is_set():
            assignment = rng.choice(assignments)
            t0 = time.perf_counter()
            try:  # the read of the current version is part of the save (an annotator's page holds it)
                current = Label.objects.filter(assignment=assignment, question=question, unit_key="item").values_list(
                    "version", "value").first()
                version, value = current if current else (0, None)
                label_save(assignment=assignment, question=question, unit_key="item",
                           value="no" if value == "yes" else "yes", base_version=version, actor=assignment.annotator)
            except Exception as exc:  # a refused or timed-out save is a finding, reported with the figures
                errors.append((t0, f"{type(exc).__name__}: {exc}".splitlines()[0]))
            saves.append((t0, time.perf_counter() - t0))
            time.sleep(0.05)
    finally:
        connection.close()


def _leaf_back(app: str, back: int) -> tuple[str, list[str]]:
    """The migration ``back`` steps before the app's leaf (the target to roll back to) and the ones rolled back."""
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    loader = MigrationLoader(connection)
    names = sorted(name for label, name in loader.disk_migrations if label == app)
    return names[-back - 1], names[-back:]


def phase_upgrade(args, study, figures: Figures, url: str) -> None:
    import io
    import re

    from django.core.management import call_command

    apps = ["annotation", "adjudication", "scoring"]
    plan = {app: _leaf_back(app, args.upgrade_back) for app in apps}
    for app, (target, rolled) in plan.items():
        print(f"  {app}: back to {target}, then forward through {', '.join(rolled)}")
    stop, saves, errors = threading.Event(), [], []
    saver = threading.Thread(target=_saver, args=(study, stop, saves, errors))
    saver.start()
    time.sleep(3)
    timings: list[tuple[str, float]] = []
    try:
        t_all = time.perf_counter()
        for app, (target, _) in plan.items():
            out = io.StringIO()
            t0 = time.perf_counter()
            call_command("migrate", app, target, verbosity=2, interactive=False, stdout=out)
            timings.append((f"roll back {app} to {target}", time.perf_counter() - t0))
        out = io.StringIO()
        t0 = time.perf_counter()
        call_command("migrate", verbosity=2, interactive=False, stdout=out)
        forward = time.perf_counter() - t0
        total = time.perf_counter() - t_all
        for line in out.getvalue().splitlines():
            m = re.search(r"Applying (\S+)\.\.\. OK \(([\d.]+)s\)", line)
            if m:
                timings.append((f"apply {m.group(1)}", float(m.group(2))))
        timings.append(("migrate forward (all, post_migrate included)", forward))
        time.sleep(3)
    finally:
        stop.set()
        saver.join()
    for what, seconds in timings:
        print(f"    {what:<70} {seconds:8.2f} s")
    # Judged on the forward migrate alone, which is the upgrade; rolling back (dropping the newer tables, whose
    # foreign keys lock the tables they reference) is this bench's way of getting back to the older release.
    window = [d for start, d in saves if t0 <= start <= t0 + forward]
    blocked = [e for start, e in errors if t0 <= start <= t0 + forward and "lock timeout" in e]
    other = [e for start, e in errors if t0 <= start <= t0 + forward and "lock timeout" not in e]
    back = [e for start, e in errors if start < t0]
    print(f"  saver: {len(saves)} saves in all, {len(window)} during the forward migrate; refused while rolling back "
          f"(not judged): {len(back)} {back[:2]}; other refusals during the upgrade: {len(other)} {other[:2]}")
    figures.add("upgrade: slowest migration (s)", max(s for _, s in timings[:-1]), "s")
    figures.add("upgrade: migrate forward (the upgrade) (s)", forward, "s", f"< {MIGRATIONS_S:g} s",
                forward < MIGRATIONS_S)
    figures.add("upgrade: all migrations, back and forth (s)", total, "s")
    figures.add("upgrade: longest label save during the upgrade (s)", max(window, default=float("nan")), "s")
    figures.add(f"upgrade: saves waiting > {SAVE_BLOCK_S:g} s for a lock during the upgrade", len(blocked), "saves",
                "0", not blocked and not other and bool(window))
    figures.add("upgrade: label saves during the upgrade", len(window), "saves")

PHASES: dict = {
    "load": phase_load,
    "datamanager": phase_datamanager,
    "reports": phase_reports,
    "export": phase_export,
    "fanout": phase_fanout,
    "score": phase_score,
    "verify": phase_verify,
    "upgrade": phase_upgrade,
}


def growth() -> int:
    saved = {}
    for path in sorted(results_dir().glob("scale-*.json")):
        saved[int(path.stem.split("-")[1])] = json.loads(path.read_text())
    if len(saved) < 1:
        print(f"no results under {results_dir()}")
        return 1
    sizes = sorted(saved)
    keys = sorted({k for data in saved.values() for k in data})
    head = f"{'figure':<60}" + "".join(f"{n:>14,}" for n in sizes) + (f"{'ratio':>8}" if len(sizes) > 1 else "")
    print(head + "  budget")
    for key in keys:
        cells, values = "", []
        for n in sizes:
            entry = saved[n].get(key)
            values.append(entry["value"] if entry else None)
            cells += f"{entry['value']:>14,.2f}" if entry else f"{'—':>14}"
        ratio = ""
        if len(sizes) > 1 and values[0] and values[-1] is not None:
            ratio = f"{values[-1] / values[0]:>8.2f}"
        elif len(sizes) > 1:
            ratio = f"{'—':>8}"
        judged = [saved[n][key] for n in sizes if key in saved[n] and saved[n][key].get("budget")]
        budget = ", ".join(f"{e['budget']}: {verdict(e['ok'])}" for e in judged[-1:])
        if key.endswith(FLAT_SUFFIX) and len(sizes) > 1 and values[0] and values[-1] is not None:
            budget = f"flat (≤ {FLAT_RATIO:g} × at {sizes[0]:,}): {verdict(values[-1] <= FLAT_RATIO * values[0])}"
            # What the peak grows by per item added between the sizes (the fixed part of the peak cancels out): 0
            # for memory that is truly flat, a few bytes for a job that holds arrays of the units.
            per_item = (values[-1] - values[0]) * 2**20 / (sizes[-1] - sizes[0])
            budget += f"; {per_item:,.0f} bytes more per item added"
        print(f"{key:<60}{cells}{ratio}  {budget}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
