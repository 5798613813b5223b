"""Load benchmark of label saving: N simulated annotators against gunicorn on PostgreSQL.

    .venv/bin/python bench/annotate_load.py                                  # paced: 50 annotators, ~1 save/s each
    .venv/bin/python bench/annotate_load.py --mode capacity --annotators 50  # closed loop, as fast as answered
    .venv/bin/python bench/annotate_load.py --mode capacity --baseline       # and the bare save, alternating

What it does: (re)creates a scratch PostgreSQL database (default ``concord_bench_loadbench``), migrates it,
seeds one study with the ``astrid`` protocol, one pool with N members and 20 items each, and an API token
per annotator; starts gunicorn with the repository's gunicorn.conf.py on 127.0.0.1 (loopback only); runs N
annotators that save labels through ``PUT /api/assignments/<id>/labels/`` with the version they last saw;
stops gunicorn; and then counts from the database:

- lost: saves the client saw acknowledged (200) whose value is not in the label's history at the
  acknowledged version, or labels whose final value is not the last acknowledged one;
- duplicated: more than one label row per (assignment, question, unit), or history versions repeated;
- stored-on-error: history rows that no acknowledged save accounts for (the client got an error or a
  timeout, yet the server stored the change — harmless for the user, who sees a conflict and the
  stored value, but counted so that it is visible).

Paced mode: each annotator saves about once per ``--interval`` seconds (uniform in [0.5, 1.5] × interval;
a clinician clicking through a form is slower than that); target p95 < 25 ms. Capacity mode: each
annotator saves again as soon as the previous save returns (closed loop), which measures throughput at
saturation; targets ≥ 2 × doccano's 136 saves/s measured with the same client, p99 ≤ 2 × p50.

``--baseline``: the same load against the bare save of bench/load_baseline.py (token lookup, one INSERT or
UPDATE of the label, one INSERT of history, in one transaction; no audit triggers — see that module), served
by the same gunicorn.conf.py from a copy of the seeded database (``concord_bench_loadbase``). The two run
alternately, ``--rounds`` times each (baseline, Concord, baseline, Concord, ...); the medians are compared:
Concord's capacity as a ratio of the baseline's (goal ≥ 0.7 ×).

Measurement: every run has a warm-up (``--warmup`` s: connections opened, first queries) whose requests are
checked but not counted in the figures. Latency is measured by the client around each request. The client
(bench/loadclient.py: asyncio streams and a minimal HTTP/1.1 keep-alive client, no HTTP library) runs in
``--clients`` processes, annotators dealt round-robin. CPU is read from /proc at the window's edges: the
gunicorn processes (arbiter and workers, each worker shown), the PostgreSQL backends serving the bench
database (processes whose title names it; a backend that exits inside the window is not counted and is
reported), and the client processes; the client's share is its CPU over the server's (gunicorn +
PostgreSQL backends) and should stay under a third. The machine may be shared: the load average before and
after each run is printed, and ratios within one invocation are the figures to trust.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
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
sys.path.insert(0, str(ROOT / "bench"))

from loadclient import LoadConfig, Tally, client_process, percentile, verify_counts  # noqa: E402

DOCCANO_SAVES_PER_S = 136.0  # doccano 1.8.4, K=50 closed loop, same client, this machine
CAPACITY_TARGET = 2 * DOCCANO_SAVES_PER_S
PACED_P95_TARGET_MS = 25.0
BASELINE_RATIO_GOAL = 0.7
CONCORD, BASELINE = "Concord", "baseline"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of measured load per run")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds of load before the measured window")
    parser.add_argument("--mode", choices=["paced", "capacity"], default="paced")
    parser.add_argument(
        "--interval", type=float, default=1.0, help="paced mode: mean seconds between one annotator's saves"
    )
    parser.add_argument("--items", type=int, default=20, help="items per annotator")
    parser.add_argument("--baseline", action="store_true", help="also run the bare save, alternating with Concord")
    parser.add_argument(
        "--rounds", type=int, default=None, help="runs of each system (default: 2 with --baseline, else 1)"
    )
    parser.add_argument("--clients", type=int, default=2, help="client processes sharing the annotators")
    parser.add_argument(
        "--workers", type=int, default=None, help="gunicorn worker processes (default: gunicorn.conf.py's)"
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="threads per gunicorn worker (default: gunicorn.conf.py's)"
    )
    parser.add_argument(
        "--gunicorn-args",
        default="",
        help="extra gunicorn options for both systems, to try a setting (e.g. \"--worker-connections 16\")",
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/concord_bench_loadbench")
    parser.add_argument(
        "--baseline-database",
        default="postgres://postgres@127.0.0.1:5432/concord_bench_loadbase",
        help="with --baseline: the copy of the seeded database the bare save writes to",
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="client timeout per request, seconds")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not 1 <= args.annotators <= 1000:
        parser.error("--annotators must be within 1..1000")
    if not 1 <= args.duration <= 600:
        parser.error("--duration must be within 1..600 seconds")
    if not 0 <= args.warmup <= 60:
        parser.error("--warmup must be within 0..60 seconds")
    if args.rounds is None:
        args.rounds = 2 if args.baseline else 1
    if not 1 <= args.rounds <= 20:
        parser.error("--rounds must be within 1..20")
    if not 1 <= args.clients <= min(args.annotators, 64):
        parser.error("--clients must be within 1..min(annotators, 64)")
    for url in (args.database, args.baseline_database):
        if not url.startswith(("postgres://", "postgresql://")):
            parser.error("the databases must be PostgreSQL URLs: the benchmark measures the deployment database")
    if args.baseline and db_name(args.database) == db_name(args.baseline_database):
        parser.error("--baseline-database must differ from --database")
    return args


def db_name(url: str) -> str:
    return urlparse(url).path.lstrip("/")


# --- Database and seed -------------------------------------------------------------------------


def recreate_database(url: str, template: str | None = None) -> None:
    """Drop and create a scratch database (``template``: as a copy of that database)."""
    import psycopg

    parsed = urlparse(url)
    name = db_name(url)
    if not name.startswith("concord_bench"):
        raise SystemExit(f"refusing to drop {name!r}: the scratch database name must start with concord_bench")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))


def drop_label_audit_triggers(url: str) -> list[str]:
    """The bare save's copy of the database carries no audit triggers on the tables it writes."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE NOT t.tgisinternal AND t.tgname LIKE 'concord_audit_%%' "
            "AND c.relname IN ('annotation_label', 'annotation_labelhistory') ORDER BY 1"
        ).fetchall()
        for trigger, table in rows:
            conn.execute(f'DROP TRIGGER "{trigger}" ON "{table}"')
    return [trigger for trigger, _ in rows]


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
        "max_requests": conf.get("max_requests", 0),
        "preload_app": conf.get("preload_app", False),
    }


def start_gunicorn(system: str, args: argparse.Namespace, env: dict[str, str], workers: int) -> subprocess.Popen:
    """gunicorn with the configuration Concord recommends for production (README): Concord's WSGI
    application, or the bare save's (bench/load_baseline.py) on its copy of the database."""
    command = [str(ROOT / ".venv" / "bin" / "gunicorn"), "-c", str(GUNICORN_CONF)]
    if system == BASELINE:
        command += ["--pythonpath", str(ROOT / "bench"), "load_baseline:application"]
        env = {**env, "DJANGO_SETTINGS_MODULE": "load_baseline", "DATABASE_URL": args.baseline_database}
    else:
        command += ["concord.wsgi:application"]
    command += ["--bind", f"127.0.0.1:{args.port}", "--log-level", "warning", *shlex.split(args.gunicorn_args)]
    if args.workers:
        command += ["--workers", str(args.workers)]
    if args.threads:
        command += ["--threads", str(args.threads)]
    process = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn ({system}) exited with {process.returncode}")
        # Up when every worker is forked and one of them answers (any status: the bare save has no page).
        if len(children(process.pid)) >= workers:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=2)
                conn.request("GET", "/")
                conn.getresponse().read()
                conn.close()
                return process
            except OSError:
                pass
        time.sleep(0.2)
    stop(process)
    raise SystemExit(f"gunicorn ({system}) did not answer within 60 s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


# --- CPU and connections, from /proc -----------------------------------------------------------

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int | str) -> tuple[int, float, float] | None:
    """(parent pid, user + system CPU seconds, system CPU seconds) of a process; None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK, int(fields[12]) / TICK


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(entry.name)
            if stat is not None and stat[0] == pid:
                found.append(int(entry.name))
    return found


def postgres_backends(database: str) -> list[int]:
    """Backends serving ``database``: PostgreSQL titles them ``postgres: <cluster>: <user> <database> ...``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if title.startswith("postgres:") and database in title.split():
            found.append(int(entry.name))
    return found


@dataclass
class CpuSnapshot:
    gunicorn: dict[int, float]  # pid → CPU seconds (arbiter and workers)
    postgres: dict[int, float]  # backends serving the bench database
    parent: float  # this process
    kernel: dict[int, float]  # system CPU seconds of the same gunicorn and PostgreSQL processes


def cpu_snapshot(server_pid: int, database: str) -> CpuSnapshot:
    gunicorn, postgres, kernel = {}, {}, {}
    for pid in [server_pid, *children(server_pid)]:
        stat = _stat(pid)
        if stat is not None:
            gunicorn[pid], kernel[pid] = stat[1], stat[2]
    for pid in postgres_backends(database):
        stat = _stat(pid)
        if stat is not None:
            postgres[pid], kernel[pid] = stat[1], stat[2]
    return CpuSnapshot(gunicorn=gunicorn, postgres=postgres, parent=time.process_time(), kernel=kernel)


def cpu_delta(start: dict[int, float], end: dict[int, float]) -> tuple[dict[int, float], int]:
    """CPU per process over the window (a process born inside it counts from zero), and how many
    processes exited inside it (their CPU is not counted)."""
    return {pid: cpu - start.get(pid, 0.0) for pid, cpu in end.items()}, len(set(start) - set(end))


def connections_per_process(pids: list[int], port: int) -> dict[int, int]:
    """Established TCP connections to ``port`` held by each process (its socket fds, matched by inode
    against /proc/net/tcp and tcp6): where the clients' keep-alive connections sit."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == "01" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(cols[9])
    counts = {}
    for pid in pids:
        n = 0
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                try:
                    link = os.readlink(fd)
                except OSError:
                    continue
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    n += 1
        except OSError:
            pass
        counts[pid] = n
    return counts


# --- One run -----------------------------------------------------------------------------------


@dataclass
class Run:
    system: str
    tally: Tally
    duration: float
    gunicorn_cpu: dict[int, float]
    postgres_cpu: dict[int, float]
    exited: int  # server processes (gunicorn or backends) gone inside the window
    client_cpu: float
    kernel_cpu: float  # system (kernel) part of gunicorn_cpu + postgres_cpu
    connections: dict[int, int]  # worker pid → keep-alive connections at mid-window
    arbiter: int
    load_before: float
    load_after: float
    ms: list[float] = field(init=False)

    def __post_init__(self) -> None:
        self.ms = [1000 * v for v in self.tally.latencies]

    @property
    def requests(self) -> int:
        return len(self.ms)

    @property
    def saves_per_s(self) -> float:
        return sum(1 for o in self.tally.outcomes if o == 200) / self.duration

    @property
    def window_errors(self) -> int:
        return sum(1 for o in self.tally.outcomes if o not in (200, 409))

    @property
    def server_cpu(self) -> float:
        return sum(self.gunicorn_cpu.values()) + sum(self.postgres_cpu.values())

    def per_request_ms(self, cpu: float) -> float:
        return 1000 * cpu / self.requests if self.requests else float("nan")


def run_once(
    system: str, plan: list[dict], args: argparse.Namespace, env: dict[str, str], workers: int, views: dict
) -> Run:
    database = db_name(args.baseline_database if system == BASELINE else args.database)
    load_before = os.getloadavg()[0]
    server = start_gunicorn(system, args, env, workers)
    try:
        start_at = time.monotonic() + 0.5
        cfg = LoadConfig(
            host="127.0.0.1", port=args.port, mode=args.mode, interval=args.interval, timeout=args.timeout,
            start_at=start_at, window_start=start_at + args.warmup, deadline=start_at + args.warmup + args.duration,
        )
        context = multiprocessing.get_context("fork")
        processes = []
        for p in range(args.clients):
            specs = [(n, spec) for n, spec in enumerate(plan) if n % args.clients == p]
            own = {a for _, spec in specs for a in spec["assignments"]}
            mine = {key: view for key, view in views.items() if key[0] in own}
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=client_process, args=(specs, cfg, mine, args.seed, send), daemon=True)
            process.start()
            send.close()
            processes.append((process, receive))
        time.sleep(max(0.0, cfg.window_start - time.monotonic()))
        first = cpu_snapshot(server.pid, database)
        time.sleep(max(0.0, cfg.window_start + args.duration / 2 - time.monotonic()))
        workers_now = children(server.pid)
        connections = connections_per_process(workers_now, args.port)
        time.sleep(max(0.0, cfg.deadline - time.monotonic()))
        last = cpu_snapshot(server.pid, database)
        tally = Tally()
        for process, receive in processes:
            if not receive.poll(args.timeout + 60):
                raise SystemExit(f"a client process did not report within {args.timeout + 60:.0f} s of the end")
            tally.merge(receive.recv())
            process.join(timeout=10)
            if process.exitcode != 0:
                raise SystemExit(f"a client process exited with {process.exitcode}")
    finally:
        stop(server)
    gunicorn_cpu, gone_g = cpu_delta(first.gunicorn, last.gunicorn)
    postgres_cpu, gone_p = cpu_delta(first.postgres, last.postgres)
    return Run(
        system=system, tally=tally, duration=args.duration, gunicorn_cpu=gunicorn_cpu, postgres_cpu=postgres_cpu,
        exited=gone_g + gone_p, client_cpu=tally.cpu_window + (last.parent - first.parent), connections=connections,
        kernel_cpu=sum(cpu_delta(first.kernel, last.kernel)[0].values()),
        arbiter=server.pid, load_before=load_before, load_after=os.getloadavg()[0],
    )


# --- Verification ------------------------------------------------------------------------------


def verify(url: str, tally: Tally) -> dict[str, int]:
    """Read labels and history of the database and check them against what the client saw."""
    import psycopg

    with psycopg.connect(url) as conn:
        labels = {
            (assignment, key, unit): (label_id, version, value)
            for label_id, assignment, key, unit, version, value in conn.execute(
                "SELECT l.id, l.assignment_id, q.key, l.unit_key, l.version, l.value "
                "FROM annotation_label l JOIN annotation_question q ON q.id = l.question_id"
            )
        }
        history = conn.execute("SELECT label_id, new_version, new_value FROM annotation_labelhistory").fetchall()
        (duplicates,) = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM annotation_label "
            "GROUP BY assignment_id, question_id, unit_key HAVING count(*) > 1) d"
        ).fetchone()
    return verify_counts(tally.acked, labels, history, duplicates)


# --- Report ------------------------------------------------------------------------------------


def latency_line(ms: list[float]) -> str:
    if not ms:
        return "no request completed in the window"
    p50, p99 = percentile(ms, 50), percentile(ms, 99)
    return (
        f"p50 {p50:.1f}  p95 {percentile(ms, 95):.1f}  p99 {p99:.1f}  mean {statistics.fmean(ms):.1f}  "
        f"max {max(ms):.1f} ms; p99/p50 {p99 / p50:.2f}"
    )


def print_run(run: Run, label: str) -> None:
    gunicorn = sum(run.gunicorn_cpu.values())
    postgres = sum(run.postgres_cpu.values())
    errors = run.window_errors
    conflicts = sum(1 for o in run.tally.outcomes if o == 409)
    print(
        f"{label} {run.system}: {run.saves_per_s:.1f} saves/s ({run.requests} requests in {run.duration:g} s, "
        f"409s {conflicts}, errors {errors}); load average {run.load_before:.1f} → {run.load_after:.1f}"
    )
    print(f"    latency {latency_line(run.ms)}")
    share = run.client_cpu / run.server_cpu if run.server_cpu else float("nan")
    print(
        f"    CPU per request: server {run.per_request_ms(run.server_cpu):.2f} ms = gunicorn "
        f"{run.per_request_ms(gunicorn):.2f} + PostgreSQL backends {run.per_request_ms(postgres):.2f} "
        f"({len(run.postgres_cpu)} backends; kernel time {run.per_request_ms(run.kernel_cpu):.2f} of the server's); "
        f"client {run.per_request_ms(run.client_cpu):.3f} ms; "
        f"client CPU / server CPU {share:.3f} (must stay < 0.333); client event-loop lag p50 "
        f"{1000 * percentile(run.tally.loop_lag, 50):.1f} p99 {1000 * percentile(run.tally.loop_lag, 99):.1f} ms"
        + (f"; {run.exited} server processes exited inside the window (their CPU not counted)" if run.exited else "")
    )
    workers = sorted(pid for pid in run.gunicorn_cpu if pid != run.arbiter)
    total = sum(run.gunicorn_cpu[p] for p in workers) or float("nan")
    print(
        "    gunicorn workers (CPU s in the window, share; keep-alive connections at mid-window): "
        + ", ".join(
            f"{run.gunicorn_cpu[p]:.1f} s {run.gunicorn_cpu[p] / total:.0%} {run.connections.get(p, 0)} conn"
            for p in workers
        )
        + f"; arbiter {run.gunicorn_cpu.get(run.arbiter, 0.0):.2f} s"
    )


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def server_env(database: str) -> dict[str, str]:
    """The settings Concord runs with in the benchmarks: the scratch database, no debug, warnings only."""
    return {
        "DJANGO_SETTINGS_MODULE": "concord.settings",
        "DATABASE_URL": database,
        "DEBUG": "false",
        "CONCORD_ENV": "development",
        "CONCORD_VAR_DIR": os.environ.get("CONCORD_VAR_DIR") or tempfile.mkdtemp(prefix="concord-bench-"),
        "LOG_LEVEL": "WARNING",
    }


def main() -> int:
    args = parse_args()
    env = {**os.environ, **server_env(args.database)}
    os.environ.update(env)
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} before seeding (shared machine)")
    gconf = gunicorn_config(args, env)
    recreate_database(args.database)
    t0 = time.monotonic()
    plan = seed(args)
    if args.baseline:
        recreate_database(args.baseline_database, template=db_name(args.database))
        dropped = drop_label_audit_triggers(args.baseline_database)
    print(
        f"seeded {len(plan)} annotators × {args.items} items in {time.monotonic() - t0:.1f} s"
        + (
            f"; baseline database {db_name(args.baseline_database)}: a copy without {len(dropped)} audit triggers"
            if args.baseline
            else ""
        )
    )
    print(
        f"server: gunicorn ({GUNICORN_CONF.name}) {gconf['worker_class']}, {gconf['workers']} workers × "
        f"{gconf['threads']} threads, keep-alive {gconf['keepalive']} s, max requests {gconf['max_requests']}, "
        f"preload {gconf['preload_app']}, on 127.0.0.1:{args.port}"
        + (f"; extra options: {args.gunicorn_args}" if args.gunicorn_args else "")
    )
    print(
        f"client: {args.clients} processes × ~{len(plan) / args.clients:g} annotators (asyncio streams, "
        f"HTTP/1.1 keep-alive, one connection per annotator); "
        + (
            f"paced, ~1 save per {args.interval:g} s per annotator (jittered)"
            if args.mode == "paced"
            else "capacity: closed loop"
        )
        + f"; warm-up {args.warmup:g} s, window {args.duration:g} s, {args.rounds} round(s)"
    )
    systems = [BASELINE, CONCORD] if args.baseline else [CONCORD]
    views: dict[str, dict] = {s: {} for s in systems}
    totals: dict[str, Tally] = {s: Tally() for s in systems}
    runs: dict[str, list[Run]] = {s: [] for s in systems}
    for r in range(args.rounds):
        for system in systems:
            run = run_once(system, plan, args, env, int(gconf["workers"]), views[system])
            views[system] = run.tally.views
            totals[system].merge(run.tally)
            runs[system].append(run)
            print_run(run, f"round {r + 1}/{args.rounds}")
    print("— summary (medians over rounds) —")
    for system in systems:
        rs = runs[system]
        total = totals[system]
        counts = verify(args.baseline_database if system == BASELINE else args.database, total)
        print(
            f"{system}: {median([x.saves_per_s for x in rs]):.1f} saves/s; p50 "
            f"{median([percentile(x.ms, 50) for x in rs]):.1f}  p95 {median([percentile(x.ms, 95) for x in rs]):.1f}  "
            f"p99 {median([percentile(x.ms, 99) for x in rs]):.1f} ms; server CPU per request "
            f"{median([x.per_request_ms(x.server_cpu) for x in rs]):.2f} ms; client CPU share "
            f"{median([x.client_cpu / x.server_cpu for x in rs if x.server_cpu]):.3f}"
        )
        print(
            f"    whole run (warm-up included): acknowledged {total.ok}, 409s {total.conflicts}, errors "
            f"{sum(total.errors.values())} {total.errors or ''}; database: "
            + ", ".join(f"{k} {v}" for k, v in counts.items())
        )
        totals[system].errors["lost"] = counts["lost"]  # for the checks below
        totals[system].errors["duplicated"] = counts["duplicated"]
    concord_runs = runs[CONCORD]
    saves = median([x.saves_per_s for x in concord_runs])
    p50 = median([percentile(x.ms, 50) for x in concord_runs])
    p95 = median([percentile(x.ms, 95) for x in concord_runs])
    p99 = median([percentile(x.ms, 99) for x in concord_runs])
    errors = sum(v for k, v in totals[CONCORD].errors.items() if k not in ("lost", "duplicated"))
    lost, duplicated = totals[CONCORD].errors["lost"], totals[CONCORD].errors["duplicated"]
    clean = errors == 0 and lost == 0 and duplicated == 0
    if args.mode == "capacity":
        print(
            f"Concord capacity {saves:.1f} saves/s = {saves / DOCCANO_SAVES_PER_S:.2f} × doccano's "
            f"{DOCCANO_SAVES_PER_S:g}/s (same client; target ≥ 2 × = {CAPACITY_TARGET:g}/s): "
            f"{'met' if saves >= CAPACITY_TARGET else 'NOT met'}"
        )
        print(
            f"Concord p99/p50 {p99 / p50:.2f} (target ≤ 2): {'met' if p99 <= 2 * p50 else 'NOT met'}; "
            f"errors {errors}, lost {lost}, duplicated {duplicated} (target 0): {'met' if clean else 'NOT met'}"
        )
    else:
        print(
            f"Concord paced: {saves:.1f} saves/s of ~{len(plan) / args.interval:g}/s offered; "
            f"p95 {p95:.1f} ms (target < {PACED_P95_TARGET_MS:g} ms): "
            f"{'met' if p95 < PACED_P95_TARGET_MS else 'NOT met'}; errors {errors}, lost {lost}, "
            f"duplicated {duplicated} (target 0): {'met' if clean else 'NOT met'}"
        )
    if args.baseline:
        base = median([x.saves_per_s for x in runs[BASELINE]])
        pairs = ", ".join(
            f"{c.saves_per_s / b.saves_per_s:.2f}" for b, c in zip(runs[BASELINE], concord_runs, strict=True)
        )
        ratio = saves / base
        cpu_concord = median([x.per_request_ms(x.server_cpu) for x in concord_runs])
        cpu_base = median([x.per_request_ms(x.server_cpu) for x in runs[BASELINE]])
        print(
            f"server CPU per request (gunicorn + PostgreSQL backends), Concord / baseline: "
            f"{cpu_concord / cpu_base:.2f} × "
            f"({cpu_concord:.2f} / {cpu_base:.2f} ms; steadier than saves/s on a shared machine)"
        )
        if args.mode == "capacity":
            print(
                f"Concord / baseline capacity: {ratio:.2f} × (medians {saves:.1f} / {base:.1f} saves/s; per round "
                f"{pairs}; goal ≥ {BASELINE_RATIO_GOAL:g} ×): {'met' if ratio >= BASELINE_RATIO_GOAL else 'NOT met'}"
            )
        else:
            base_p95 = median([percentile(x.ms, 95) for x in runs[BASELINE]])
            print(
                f"Concord / baseline paced p95: {p95 / base_p95:.2f} × ({p95:.1f} / {base_p95:.1f} ms); saves/s "
                f"{ratio:.2f} × ({saves:.1f} / {base:.1f}; offered ~{len(plan) / args.interval:g}/s: below it, "
                "the server did not keep up)"
            )
    print(f"load average after the run: {os.getloadavg()[0]:.1f}")
    failed = any(totals[s].errors["lost"] or totals[s].errors["duplicated"] for s in systems)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
