"""Benchmark of the import service: N synthetic items through annotation.imports.items_import.

Each item is about 1.2 KB of JSON: a question, a five-sentence answer and five retrieved chunks.
The file is generated as a stream to a temporary file, then imported with the same call the
command line, the upload page and the API use. Prints items per second and the peak memory of the
import above the idle process (VmHWM after the import minus VmRSS before it, read from /proc), the
CPU seconds per 1,000 items of this process and of its PostgreSQL backend (less sensitive to other
load on the machine than the wall clock), and whether the target is met: at least
5,000 items/s at 100,000 items with segmentation, on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/concord_bench .venv/bin/python bench/import_items.py --n 10000

``--hard-fraction`` sets the share of answers written with abbreviations and decimals ("approx.",
"Dr.", "0.5 mg"), which the segmentation fast path hands to pysbd; the rest is plain prose.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from annotation.imports import items_import  # noqa: E402
from annotation.models import Role, Study, StudyRole  # noqa: E402

WORDS = [
    "patient",
    "dose",
    "tablet",
    "infection",
    "fever",
    "pain",
    "swelling",
    "treatment",
    "doctor",
    "symptom",
    "rash",
    "kidney",
    "liver",
    "heart",
    "blood",
    "pressure",
    "sugar",
    "insulin",
    "daily",
    "weekly",
    "morning",
    "evening",
    "water",
    "food",
    "rest",
    "sleep",
    "exercise",
    "risk",
    "benefit",
    "side",
    "effect",
    "allergy",
    "reaction",
    "antibiotic",
    "course",
    "week",
    "month",
    "child",
    "adult",
    "elderly",
    "pregnancy",
    "breastfeeding",
    "cough",
    "throat",
    "ear",
    "eye",
    "skin",
    "joint",
    "muscle",
    "bone",
    "headache",
    "nausea",
    "dizziness",
]
# The import target, judged only for the run it is stated for.
TARGET_RATE = 5_000
TARGET_ITEMS = 100_000
DEFAULT_HARD_FRACTION = 0.2

HARD_SENTENCES = [
    "Dr. Lee suggests approx. 0.5 mg twice daily, e.g. after meals.",
    "Take 2.5 ml, i.e. half a spoon, every 8 hrs.",
    "See fig. 2 for the dose vs. weight table.",
]


def _sentence(rng: random.Random, n_words: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n_words)]
    return " ".join(words).capitalize() + rng.choice(".....?!")


def _record(i: int, rng: random.Random, hard_fraction: float) -> dict:
    sentences = [_sentence(rng, rng.randint(8, 12)) for _ in range(5)]
    if rng.random() < hard_fraction:
        sentences[rng.randrange(5)] = rng.choice(HARD_SENTENCES)
    return {
        "id": f"bench-{i}",
        "question": _sentence(rng, 10).rstrip(".!") + "?",
        "answer": " ".join(sentences),
        "contexts": [
            {
                "id": f"doc-{rng.randrange(10**6)}",
                "text": " ".join(_sentence(rng, 6) for _ in range(2)),
                "is_target": k == 0,
            }
            for k in range(5)
        ],
        "system": rng.choice(["gpt4", "llama", "mistral"]),
        "scope": "in_scope",
        "metadata": {"bench": True, "n": i},
    }


def generate(path: Path, n: int, seed: int, hard_fraction: float) -> int:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps(_record(i, rng, hard_fraction)))
            f.write("\n")
    return path.stat().st_size


def _proc_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _backend_cpu_seconds() -> float | None:
    """CPU time of this connection's PostgreSQL backend process, when it runs on this machine."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _reset_peak() -> bool:
    """Resets VmHWM to the current RSS (Linux ≥ 4.0), so the peak measured is the import's own."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="number of items (default 100000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--hard-fraction",
        type=float,
        default=DEFAULT_HARD_FRACTION,
        help="share of answers with abbreviations/decimals (pysbd path); default 0.2",
    )
    parser.add_argument("--keep-file", action="store_true")
    args = parser.parse_args()

    command = " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv])
    db = connection.settings_dict
    print(f"command: DATABASE_URL=<{db['ENGINE'].rsplit('.', 1)[-1]}:{db.get('NAME')}> {command}")
    call_command("migrate", verbosity=0)

    User = get_user_model()
    owner, _ = User.objects.get_or_create(username="bench-owner")
    slug = f"bench-{int(time.time())}-{args.n}"
    study = Study.objects.create(name=slug, slug=slug, owner=owner)
    StudyRole.objects.create(study=study, user=owner, role=Role.RESEARCHER)

    tmp = Path(tempfile.mkdtemp(prefix="concord-bench-"))
    path = tmp / f"items-{args.n}.jsonl"
    t0 = time.perf_counter()
    size = generate(path, args.n, args.seed, args.hard_fraction)
    print(
        f"generated {args.n} items, {size / 1e6:.1f} MB ({size / args.n:.0f} bytes/item) "
        f"in {time.perf_counter() - t0:.1f}s"
    )

    # Warm the import path (imports, segmenter) so that idle memory includes the code, not the data.
    from annotation.segmentation import split_sentences

    split_sentences("Warm up. The segmenter.")
    idle = _proc_kib("VmRSS")
    load_before = f"{os.getloadavg()[0]:.2f}"
    exact = _reset_peak()
    db0 = _backend_cpu_seconds()
    t0, c0 = time.perf_counter(), time.process_time()
    with open(path, "rb") as f:
        result = items_import(study=study, file=f, filename=path.name)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    db1 = _backend_cpu_seconds()
    peak = _proc_kib("VmHWM")
    print(result.summary())
    rate = args.n / elapsed
    print(
        f"items/s: {rate:,.0f}  ({elapsed:.1f}s wall for {args.n} items, validation and write passes; "
        f"this process used {cpu:.1f}s CPU = {args.n / cpu:,.0f} items per CPU-second, the database's CPU not counted)"
    )
    print(f"CPU per 1,000 items: this process {1000 * cpu / args.n:.3f}s", end="")
    if db0 is not None and db1 is not None:
        db_cpu = db1 - db0
        print(f", database backend {1000 * db_cpu / args.n:.3f}s; both together {args.n / (cpu + db_cpu):,.0f} "
              "items per CPU-second")
    else:
        print()
    print(f"load average before/after: {load_before} / {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(
        f"peak memory above idle: {(peak - idle) / 1024:.1f} MiB  (idle RSS {idle / 1024:.1f} MiB, "
        f"peak RSS {peak / 1024:.1f} MiB{'' if exact else ', peak includes file generation'})"
    )
    on_postgresql = connection.vendor == "postgresql"
    applies = on_postgresql and args.n >= TARGET_ITEMS and args.hard_fraction >= DEFAULT_HARD_FRACTION
    verdict = ("MET" if rate >= TARGET_RATE else "NOT MET") if applies else (
        "not judged: it applies to PostgreSQL, --n >= 100000 and --hard-fraction >= 0.2")
    print(f"target: >= {TARGET_RATE:,} items/s at {TARGET_ITEMS:,} items with segmentation on PostgreSQL: "
          f"{verdict} ({rate:,.0f} items/s)")
    if not args.keep_file:
        path.unlink()
        tmp.rmdir()
    else:
        print(f"file kept: {path}")


if __name__ == "__main__":
    main()
