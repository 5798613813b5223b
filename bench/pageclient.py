"""The page load of bench/scale.py: annotators asking for their next item and opening it, on the minimal HTTP/1.1
client of bench/loadclient.py, in client processes of their own.

Each annotator, with its session cookie, about once per ``interval`` s (uniform in [0.5, 1.5] × interval),
asks for its next item (``GET /pools/<id>/continue/``, a 302 to the item) and then opens the item page it
names (a 200). The latency of each is measured by the client around the request, its connection's opening
included (a connection is opened only when a request goes out, and kept while the server keeps it alive); a
request that completes inside the measured window counts. Anything else (another status, a redirect
elsewhere, a broken connection, a timeout) is an error by kind and ends that annotator.

Why not threads and ``http.client`` in the bench's own process (its former client): 50 threads under one
interpreter lock, each parsing whole item pages, measured the client's queueing as much as the server's
latency on a 2-core machine. Here each process reports its CPU inside the window and how late its event
loop woke a 20 ms timer (time a response waited for the client, not the server), as bench/loadclient.py does.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

from loadclient import REQUEST_ERRORS, Connection, read_message, run_measured


@dataclass(frozen=True)
class PageConfig:
    host: str
    port: int
    interval: float  # mean seconds between one annotator's next-item requests
    timeout: float  # seconds per request
    start_at: float  # time.monotonic() values (CLOCK_MONOTONIC, the same in every process)
    window_start: float
    deadline: float


@dataclass
class PageTally:
    """What one client process saw: latencies (ms) inside the window per page, errors by kind over the run."""

    next_ms: list[float] = field(default_factory=list)
    item_ms: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    cpu_window: float = 0.0
    loop_lag: list[float] = field(default_factory=list)

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def merge(self, other: PageTally) -> None:
        self.next_ms += other.next_ms
        self.item_ms += other.item_ms
        for kind, n in other.errors.items():
            self.errors[kind] = self.errors.get(kind, 0) + n
        self.requests += other.requests
        self.cpu_window += other.cpu_window
        self.loop_lag += other.loop_lag


class _Session:
    """One annotator's connection, opened when a request is about to be sent, never ahead of it: a sync
    gunicorn worker that accepts a connection waits on it for its request, so a connection opened and left idle
    would hold a worker (gunicorn.conf.py's workers close each connection after its response)."""

    def __init__(self, cfg: PageConfig, cookie: str) -> None:
        self.cfg, self.cookie, self.host = cfg, cookie, f"{cfg.host}:{cfg.port}"
        self.conn: Connection | None = None

    async def get(self, path: str) -> tuple[int, dict[str, str]]:
        """One GET, the connection's opening included: (status, headers). The body is read and dropped."""
        request = f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\nCookie: {self.cookie}\r\nAccept: text/html\r\n\r\n"
        async with asyncio.timeout(self.cfg.timeout):
            if self.conn is None:
                self.conn = await Connection.open(self.cfg.host, self.cfg.port)
            self.conn.writer.write(request.encode("latin-1"))
            status, headers, _, keep_alive = await read_message(self.conn.reader)
        if not keep_alive:
            self.close()
        return status, headers

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


async def annotator(spec: dict[str, Any], cfg: PageConfig, tally: PageTally, rng: random.Random) -> None:
    session = _Session(cfg, spec["cookie"])
    next_path = f"/pools/{spec['pool']}/continue/"
    await asyncio.sleep(max(0.0, cfg.start_at - time.monotonic()) + rng.uniform(0, cfg.interval))
    try:
        while time.monotonic() < cfg.deadline:
            try:
                t0 = time.monotonic()
                status, headers = await session.get(next_path)
                t1 = time.monotonic()
                tally.requests += 1
                location = headers.get("location", "")
                if status != 302 or "/assignments/" not in location:
                    tally.error(f"next item: {status} {location[:60]}")
                    return
                if cfg.window_start <= t1 <= cfg.deadline:
                    tally.next_ms.append((t1 - t0) * 1000)
                status, _ = await session.get(location)
                t2 = time.monotonic()
                tally.requests += 1
                if status != 200:
                    tally.error(f"item page: {status}")
                    return
            except REQUEST_ERRORS as exc:
                tally.error("timeout" if isinstance(exc, TimeoutError) else type(exc).__name__)
                return
            if cfg.window_start <= t2 <= cfg.deadline:
                tally.item_ms.append((t2 - t1) * 1000)
            await asyncio.sleep(rng.uniform(0.5 * cfg.interval, 1.5 * cfg.interval))
    finally:
        session.close()


async def run_annotators(specs: list[tuple[int, dict[str, Any]]], cfg: PageConfig, seed: int) -> PageTally:
    tally = PageTally()
    await run_measured(
        cfg, tally, [annotator(spec, cfg, tally, random.Random(seed * 100_003 + n)) for n, spec in specs]
    )
    return tally


def client_process(specs: list[tuple[int, dict[str, Any]]], cfg: PageConfig, seed: int, conn: Any) -> None:
    """Entry point of one client process (multiprocessing): sends its PageTally back through ``conn``."""
    tally = asyncio.run(run_annotators(specs, cfg, seed))
    conn.send(tally)
    conn.close()
