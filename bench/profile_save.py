"""Profile of one label save through the API, in process: where the time goes.

    .venv/bin/python bench/profile_save.py                 # 2,000 saves, top 30 functions by own time
    .venv/bin/python bench/profile_save.py --saves 500 --sort cumulative --top 60
    .venv/bin/python bench/profile_save.py --out var/save.prof   # also write the pstats file (snakeviz, flameprof)

Seeds a scratch PostgreSQL database as bench/annotate_load.py does (default ``concord_bench_profile``), then
drives Django's WSGI handler directly (no server, no network) with ``PUT /api/assignments/<id>/labels/``
and a token, changing one answer after another (always to another value) with the version it last saw,
as the load bench's annotators do. It prints, per save: the Python function calls, the SQL statements
(``CaptureQueriesContext``, in a separate pass so that the profile does not pay for it), the CPU time of
this process and of its PostgreSQL backend without the profiler; then the profile's top functions. Call
counts are deterministic; times depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def backend_cpu(pid: int) -> float:
    """User + system CPU seconds of a local process (the PostgreSQL backend serving this connection)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--saves", type=int, default=2000)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/concord_bench_profile")
    parser.add_argument("--sort", default="tottime", choices=["tottime", "cumulative", "ncalls"])
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--out", help="write the pstats file here")
    args = parser.parse_args()
    import annotate_load

    os.environ.update(annotate_load.server_env(args.database))
    annotate_load.recreate_database(args.database)
    plan = annotate_load.seed(argparse.Namespace(annotators=1, items=max(1, args.saves // 200 + 1), seed=1))[0]

    from django.core.wsgi import get_wsgi_application
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    application = get_wsgi_application()
    versions: dict[tuple[int, str, str], tuple[int, str | None]] = {}
    cases = [
        (assignment, key, unit, options)
        for assignment in plan["assignments"]
        for key, unit, options in plan["targets"]
    ]

    def environ(n: int) -> dict:
        assignment, key, unit, options = cases[n % len(cases)]
        version, current = versions.get((assignment, key, unit), (0, None))
        # Always a change, as a clinician's save (and the load bench's) is.
        value = options[(options.index(current) + 1) % len(options)] if current in options else options[0]
        body = json.dumps({"question": key, "unit_key": unit, "value": value, "base_version": version}).encode()
        return {
            "REQUEST_METHOD": "PUT", "PATH_INFO": f"/api/assignments/{assignment}/labels/", "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "127.0.0.1", "HTTP_AUTHORIZATION": f"Token {plan['token']}",
            "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr,
            "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False, "wsgi.version": (1, 0),
        }

    counter = iter(range(10**9))

    def save() -> None:
        n = next(counter)
        env = environ(n)
        status: list[str] = []
        body = b"".join(application(env, lambda s, h, *_: status.append(s)))
        if not status[0].startswith("200"):
            raise SystemExit(f"save {n} answered {status[0]}: {body[:300]!r}")
        saved = json.loads(body)
        assignment = int(env["PATH_INFO"].split("/")[3])
        versions[(assignment, saved["question"], saved["unit_key"])] = (saved["version"], saved["value"])

    for _ in range(50):  # warm: connection, caches, first imports
        save()
    with CaptureQueriesContext(connection) as queries:
        save()
    statements = [q["sql"].split()[0] for q in queries.captured_queries]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    t0, c0, b0 = time.perf_counter(), time.process_time(), backend_cpu(backend)
    for _ in range(args.saves):
        save()
    wall, cpu, db = time.perf_counter() - t0, time.process_time() - c0, backend_cpu(backend) - b0
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(args.saves):
        save()
    profile.disable()
    stats = pstats.Stats(profile)
    calls = stats.total_calls  # type: ignore[attr-defined]
    print(f"{args.saves} saves on {connection.vendor}: {calls / args.saves:,.0f} Python function calls per save, "
          f"{len(statements)} statements ({' '.join(statements)})")
    print(f"without the profiler: {1000 * wall / args.saves:.2f} ms wall, {1000 * cpu / args.saves:.2f} ms CPU "
          f"of this process and {1000 * db / args.saves:.2f} ms CPU of its PostgreSQL backend per save")
    if args.out:
        stats.dump_stats(args.out)
        print(f"profile written to {args.out}")
    stats.sort_stats(args.sort).print_stats(args.top)
    connection.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
