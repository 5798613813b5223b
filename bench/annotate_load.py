"""Load benchmark of label saving: N simulated annotators against gunicorn on PostgreSQL.

    .venv/bin/python bench/annotate_load.py                      # 50 paced annotators, 30 s
    .venv/bin/python bench/annotate_load.py --mode capacity      # closed loop: as fast as the server answers
    .venv/bin/python bench/annotate_load.py --annotators 100 --duration 60 --workers 4 --threads 8

What it does: (re)creates a scratch PostgreSQL database (default ``concord_bench_bravo``), migrates it,
seeds one study with the ``astrid`` protocol, one pool with N members and 20 items each, and an API
token per annotator; starts gunicorn on 127.0.0.1 (loopback only); runs N concurrent annotators that
save labels through ``PUT /api/assignments/<id>/labels/`` with the version they last saw, for a fixed
time; stops gunicorn; and then counts from the database:

- lost: saves the client saw acknowledged (200) whose value is not in the label's history at the
  acknowledged version, or labels whose final value is not the last acknowledged one;
- duplicated: more than one label row per (assignment, question, unit), or history versions repeated;
- stored-on-error: history rows that no acknowledged save accounts for (the client got an error or a
  timeout, yet the server stored the change — harmless for the user, who sees a conflict and the
  stored value, but counted so that it is visible).

Paced mode: each annotator saves about once per second (interval uniform in [0.5, 1.5] s, a clinician
clicking through a form is slower than that). Capacity mode: each annotator saves again as soon as the
previous save returns, which measures throughput at saturation rather than a realistic latency.
Latency is measured by the client around each request (asyncio + httpx, one event loop).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import runpy
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load")
    parser.add_argument("--mode", choices=["paced", "capacity"], default="paced")
    parser.add_argument(
        "--interval", type=float, default=1.0, help="paced mode: mean seconds between one annotator's saves"
    )
    parser.add_argument("--items", type=int, default=20, help="items per annotator")
    parser.add_argument(
        "--workers", type=int, default=None, help="gunicorn worker processes (default: gunicorn.conf.py's)"
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="threads per gunicorn worker (default: gunicorn.conf.py's)"
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/concord_bench_bravo")
    parser.add_argument("--timeout", type=float, default=10.0, help="client timeout per request, seconds")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not 1 <= args.annotators <= 1000:
        parser.error("--annotators must be within 1..1000")
    if not 1 <= args.duration <= 600:
        parser.error("--duration must be within 1..600 seconds")
    if not args.database.startswith(("postgres://", "postgresql://")):
        parser.error("--database must be a PostgreSQL URL: the benchmark measures the deployment database")
    return args


# --- Database and seed -------------------------------------------------------------------------


def recreate_database(url: str) -> None:
    import psycopg

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    if not name.startswith("concord_bench"):
        raise SystemExit(f"refusing to drop {name!r}: the scratch database name must start with concord_bench")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def seed(args: argparse.Namespace) -> list[dict]:
    """Migrate and create the study; returns, per annotator, its token and what it may save."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from annotation.models import Assignment, Chunk, Item, Pool, PoolMembership, Role, Sentence, Study, StudyRole
    from annotation.protocols import study_protocol_apply
    from annotation.segmentation import split_sentences
    from annotation.services import pool_assign_items

    call_command("migrate", verbosity=0, interactive=False)
    User = get_user_model()
    owner = User.objects.create_user("bench-owner", password="bench-password-not-secret")
    study = Study.objects.create(name="Load benchmark", slug="load-bench", owner=owner)
    StudyRole.objects.create(study=study, user=owner, role=Role.RESEARCHER)
    questions = [q for q in study_protocol_apply(study=study, presets="astrid") if not q.condition]
    pool = Pool.objects.create(study=study, name="bench", overlap=1, seed=args.seed)
    pool.questions.set(questions)
    answer = "Take 0.5 mg of X once daily with food. Stop if you notice a rash. I hope this helps!"
    spans = split_sentences(answer)
    n_items = args.items * args.annotators
    items = Item.objects.bulk_create(
        Item(study=study, external_id=f"bench-{n}", question="What dose of X?", answer=answer) for n in range(n_items)
    )
    Sentence.objects.bulk_create(
        Sentence(item=item, part="answer", index=i, text=s.text, start=s.start, end=s.end)
        for item in items
        for i, s in enumerate(spans)
    )
    Chunk.objects.bulk_create(Chunk(item=item, rank=r, text=f"Passage {r} about X.") for item in items for r in (1, 2))
    users = []
    for n in range(args.annotators):
        user = User(username=f"bench-annotator-{n}")
        user.set_unusable_password()
        users.append(user)
    User.objects.bulk_create(users)
    users = list(User.objects.filter(username__startswith="bench-annotator-").order_by("id"))
    StudyRole.objects.bulk_create(StudyRole(study=study, user=u, role=Role.ANNOTATOR) for u in users)
    PoolMembership.objects.bulk_create(
        PoolMembership(pool=pool, study=study, user=u, independent=study.independent_pools, pseudonym=f"B{n}")
        for n, u in enumerate(users)
    )
    pool_assign_items(pool=pool)
    units = {"item": ["item"], "sentence": [f"s:{i}" for i in range(len(spans))], "chunk": ["c:1", "c:2"]}
    targets = [
        (q.key, unit, [str(o["value"]) for o in q.options])
        for q in questions
        if q.scope in units
        for unit in units[q.scope]
    ]
    plan = []
    for user in users:
        token = Token.objects.create(user=user)
        assignment_ids = list(Assignment.objects.filter(pool=pool, annotator=user).values_list("id", flat=True))
        plan.append({"user": user.username, "token": token.key, "assignments": assignment_ids, "targets": targets})
    from django.db import connections

    connections.close_all()
    return plan


# --- Server ------------------------------------------------------------------------------------


GUNICORN_CONF = ROOT / "gunicorn.conf.py"


def gunicorn_config(args: argparse.Namespace, env: dict[str, str]) -> dict[str, object]:
    """The settings gunicorn will run with: the repository's gunicorn.conf.py, read under the same
    environment, with --workers / --threads applied on top."""
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        conf = runpy.run_path(str(GUNICORN_CONF))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return {
        "worker_class": conf["worker_class"],
        "workers": args.workers or conf["workers"],
        "threads": args.threads or conf["threads"],
        "keepalive": conf["keepalive"],
    }


def start_gunicorn(args: argparse.Namespace, env: dict[str, str]) -> subprocess.Popen:
    # The configuration Concord recommends for production (README), so that the figures are those of a
    # deployment: worker class, processes and threads, keep-alive, max requests.
    command = [
        str(ROOT / ".venv" / "bin" / "gunicorn"),
        "-c",
        str(GUNICORN_CONF),
        "concord.wsgi:application",
        "--bind",
        f"127.0.0.1:{args.port}",
        "--log-level",
        "warning",
    ]
    if args.workers:
        command += ["--workers", str(args.workers)]
    if args.threads:
        command += ["--threads", str(args.threads)]
    process = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn exited with {process.returncode}")
        try:
            httpx.get(f"http://127.0.0.1:{args.port}/accounts/login/", timeout=2)
            return process
        except httpx.HTTPError:
            time.sleep(0.3)
    stop(process)
    raise SystemExit("gunicorn did not answer within 60 s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def process_tree_cpu_seconds(root_pid: int) -> float:
    """User + system CPU seconds of a process and its children (Linux /proc), so that the cost of a
    save can be stated independently of how busy the shared machine is."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry.name), int(fields[1])
        if pid == root_pid or ppid == root_pid:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


# --- Load --------------------------------------------------------------------------------------


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    ok: int = 0
    conflicts: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    # (assignment id, question, unit) -> list of (version, value) the server acknowledged
    acked: dict[tuple[int, str, str], list[tuple[int, str]]] = field(default_factory=dict)

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


async def annotator(
    client, spec: dict, args: argparse.Namespace, deadline: float, tally: Tally, rng: random.Random
) -> None:
    headers = {"Authorization": f"Token {spec['token']}"}
    versions: dict[tuple[int, str, str], tuple[int, str | None]] = {}
    max_saves = int(args.duration * 1000) + 10  # a bound on the loop whatever the clock does
    await asyncio.sleep(rng.uniform(0, args.interval if args.mode == "paced" else 0.05))
    for _ in range(max_saves):
        if time.monotonic() >= deadline:
            return
        assignment = rng.choice(spec["assignments"])
        question, unit, options = rng.choice(spec["targets"])
        key = (assignment, question, unit)
        version, current = versions.get(key, (0, None))
        value = rng.choice([o for o in options if o != current] or options)
        body = {"question": question, "unit_key": unit, "value": value, "base_version": version}
        started = time.perf_counter()
        try:
            response = await client.put(f"/api/assignments/{assignment}/labels/", json=body, headers=headers)
        except Exception as exc:
            tally.latencies.append(time.perf_counter() - started)
            tally.error(type(exc).__name__)
            continue
        tally.latencies.append(time.perf_counter() - started)
        if response.status_code == 200:
            data = response.json()
            tally.ok += 1
            versions[key] = (data["version"], data["value"])
            tally.acked.setdefault(key, []).append((data["version"], data["value"]))
        elif response.status_code == 409:
            tally.conflicts += 1
            details = response.json().get("details", {})
            versions[key] = (details.get("version", 0), details.get("value"))
        else:
            tally.error(f"HTTP {response.status_code}")
        if args.mode == "paced":
            await asyncio.sleep(rng.uniform(0.5 * args.interval, 1.5 * args.interval))


async def run_load(plan: list[dict], args: argparse.Namespace) -> tuple[Tally, float]:
    import httpx

    tally = Tally()
    limits = httpx.Limits(max_connections=len(plan), max_keepalive_connections=len(plan))
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{args.port}", timeout=args.timeout, limits=limits
    ) as client:
        started = time.monotonic()
        deadline = started + args.duration
        await asyncio.gather(
            *(
                annotator(client, spec, args, deadline, tally, random.Random(args.seed * 100_003 + n))
                for n, spec in enumerate(plan)
            )
        )
        elapsed = time.monotonic() - started
    return tally, elapsed


# --- Verification ------------------------------------------------------------------------------


def verify(tally: Tally) -> dict[str, int]:
    from django.db import connections
    from django.db.models import Count

    from annotation.models import Label, LabelHistory

    connections.close_all()
    labels = {(lb.assignment_id, lb.question.key, lb.unit_key): lb for lb in Label.objects.select_related("question")}
    history: dict[int, dict[int, object]] = {}
    repeated_versions = 0
    for label_id, version, value in LabelHistory.objects.values_list("label_id", "new_version", "new_value"):
        per_label = history.setdefault(label_id, {})
        if version in per_label:
            repeated_versions += 1
        per_label[version] = value
    duplicate_rows = (
        Label.objects.values("assignment_id", "question_id", "unit_key").annotate(n=Count("id")).filter(n__gt=1).count()
    )
    lost = 0
    acked_versions = 0
    for key, acks in tally.acked.items():
        label = labels.get(key)
        if label is None:
            lost += len(acks)
            continue
        versions = history.get(label.pk, {})
        for version, value in acks:
            if versions.get(version) != value:
                lost += 1
        distinct = {v for v, _ in acks}
        acked_versions += len(distinct)
        last_version, last_value = max(acks)
        if label.version == last_version and label.value != last_value:
            lost += 1
    stored_on_error = sum(len(v) for v in history.values()) - acked_versions
    return {
        "labels": len(labels),
        "history rows": sum(len(v) for v in history.values()),
        "lost": lost,
        "duplicated": duplicate_rows + repeated_versions,
        "stored-on-error": max(stored_on_error, 0),
    }


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def main() -> int:
    args = parse_args()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "concord.settings",
        "DATABASE_URL": args.database,
        "DEBUG": "false",
        "CONCORD_ENV": "development",
        "CONCORD_VAR_DIR": os.environ.get("CONCORD_VAR_DIR") or tempfile.mkdtemp(prefix="concord-bench-"),
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(
        f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} before the run "
        "(other work on the machine competes for the CPUs: figures are indicative)"
    )
    gconf = gunicorn_config(args, env)
    recreate_database(args.database)
    t0 = time.monotonic()
    plan = seed(args)
    print(
        f"seeded {len(plan)} annotators × {args.items} items in {time.monotonic() - t0:.1f} s; "
        f"gunicorn ({GUNICORN_CONF.name}) {gconf['worker_class']} {gconf['workers']} workers × {gconf['threads']} "
        f"threads, keep-alive {gconf['keepalive']} s, on 127.0.0.1:{args.port}"
    )
    server = start_gunicorn(args, env)
    try:
        server_cpu = process_tree_cpu_seconds(server.pid)
        client_cpu = time.process_time()
        tally, elapsed = asyncio.run(run_load(plan, args))
        server_cpu = process_tree_cpu_seconds(server.pid) - server_cpu
        client_cpu = time.process_time() - client_cpu
    finally:
        stop(server)
    counts = verify(tally)
    ms = [1000 * v for v in tally.latencies]
    print(
        f"mode: {args.mode}"
        + (f" (each annotator ~1 save per {args.interval:g} s, jittered)" if args.mode == "paced" else " (closed loop)")
    )
    print(f"requests: {len(ms)} in {elapsed:.1f} s → {tally.ok / elapsed:.1f} acknowledged saves/s")
    if ms:
        print(
            f"latency ms: p50 {percentile(ms, 50):.1f}  p95 {percentile(ms, 95):.1f}  p99 {percentile(ms, 99):.1f}  "
            f"mean {statistics.fmean(ms):.1f}  max {max(ms):.1f}"
        )
    if ms:
        print(
            f"CPU per request: gunicorn {1000 * server_cpu / len(ms):.1f} ms, "
            f"load generator {1000 * client_cpu / len(ms):.1f} ms "
            "(PostgreSQL's own CPU not included)"
        )
    print(
        f"acknowledged: {tally.ok}  conflicts (409): {tally.conflicts}  "
        f"errors: {sum(tally.errors.values())} {tally.errors or ''}"
    )
    print("database: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    print(f"load average after the run: {os.getloadavg()[0]:.1f}")
    target_ok = ms and percentile(ms, 95) < 100 and counts["lost"] == 0 and counts["duplicated"] == 0
    if args.mode == "paced":
        print(f"target (p95 < 100 ms, zero lost, zero duplicated): {'met' if target_ok else 'NOT met'}")
    return 0 if counts["lost"] == 0 and counts["duplicated"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
