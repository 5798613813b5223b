"""The load client of bench/annotate_load.py: simulated annotators on a minimal HTTP/1.1 client.

No Django and no HTTP library here: a client process must cost far less CPU than the server it
measures (the load bench measured 6.6–11.6 ms of CPU per request for the former asyncio + httpx client, more
than the server's own work on a 2-core machine). Each annotator holds one keep-alive connection
(asyncio streams), writes one pre-framed request per save and reads the status line, the headers
(``Content-Length``, or ``Transfer-Encoding: chunked``; ``Connection: close``) and the JSON body.

What an annotator does (unchanged from the former client): it saves a random answer of a random unit of
one of its items with the version it last saw (``base_version``); a 200 records the acknowledged
version and value and becomes its view; a 409 carries the stored version and value, which become its
view; anything else (another status, a timeout, a broken connection) is counted as an error by kind,
and the connection is dropped (a late answer must not be read as the next request's).

:func:`verify_counts` is the post-run check, on rows read from the database by the caller.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

import orjson

Key = tuple[int, str, str]  # (assignment id, question key, unit key)


class ProtocolError(Exception):
    """The server's answer is not HTTP/1.1 as this client reads it."""


# What ends one request as an error (counted by kind; the connection is dropped).
REQUEST_ERRORS = (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ProtocolError)


# --- HTTP ------------------------------------------------------------------------------------


def parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    """Status code and headers (names lower-cased) of a response head, without its final blank line."""
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or parts[0] not in (b"HTTP/1.1", b"HTTP/1.0") or not parts[1].isdigit():
        raise ProtocolError(f"bad status line {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    if parts[0] == b"HTTP/1.0":
        headers["connection"] = "close"  # no keep-alive unless the server says so below
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(b":")
        if not sep or not name.strip():
            raise ProtocolError(f"bad header line {line[:80]!r}")
        headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
    return int(parts[1]), headers


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes, bool]:
    """One response from ``reader``: (status, body, whether the connection may be reused)."""
    status, _, body, keep_alive = await read_message(reader)
    return status, body, keep_alive


async def read_message(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes, bool]:
    """One response from ``reader``: (status, headers, body, whether the connection may be reused)."""
    head = await reader.readuntil(b"\r\n\r\n")
    status, headers = parse_head(head[:-4])
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks = []
        while True:
            size_line = await reader.readuntil(b"\r\n")
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise ProtocolError(f"bad chunk size {size_line[:40]!r}") from None
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, up to the blank line
                    pass
                break
            chunk = await reader.readexactly(size + 2)
            if chunk[-2:] != b"\r\n":
                raise ProtocolError("chunk not followed by CRLF")
            chunks.append(chunk[:-2])
        body = b"".join(chunks)
    elif "content-length" in headers:
        length = headers["content-length"]
        if not length.isdigit():
            raise ProtocolError(f"bad Content-Length {length!r}")
        body = await reader.readexactly(int(length))
    elif status in (204, 304) or 100 <= status < 200:
        body = b""
    else:
        raise ProtocolError("response without Content-Length or chunked framing")
    keep_alive = headers.get("connection", "").lower() != "close"
    return status, headers, body, keep_alive


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, host: str, port: int) -> Connection:
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer)

    async def request(self, data: bytes) -> tuple[int, bytes, bool]:
        self.writer.write(data)
        return await read_response(self.reader)

    def close(self) -> None:
        self.writer.close()


def put_request(host: str, path: str, token: str, body: bytes) -> bytes:
    return (
        f"PUT {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Token {token}\r\n"
        f"Accept: application/json\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode("latin-1") + body


# --- Annotators ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadConfig:
    host: str
    port: int
    mode: str  # "paced" or "capacity"
    interval: float  # paced: mean seconds between one annotator's saves
    timeout: float  # seconds per request
    start_at: float  # time.monotonic() values (CLOCK_MONOTONIC, the same in every process)
    window_start: float  # requests completed before this are warm-up: counted for the checks, not the figures
    deadline: float  # no request starts after this


@dataclass
class Tally:
    """What one client process saw. ``acked`` and ``views`` are keyed by annotator-independent label keys
    (an assignment belongs to one annotator)."""

    # Per request completed inside the window: latency in seconds and the outcome (status, or -1: error).
    latencies: list[float] = field(default_factory=list)
    outcomes: list[int] = field(default_factory=list)
    # Over the whole run, warm-up and tail included (what the database is checked against).
    ok: int = 0
    conflicts: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    acked: dict[Key, list[tuple[int, Any]]] = field(default_factory=dict)
    # The annotators' views after the run (version, value), carried to the next round on the same database.
    views: dict[Key, tuple[int, Any]] = field(default_factory=dict)
    cpu_window: float = 0.0  # this process's CPU seconds inside the window
    # How late the event loop woke a 20 ms timer inside the window, seconds: time a response waited
    # for the client rather than for the server (it inflates the measured latency).
    loop_lag: list[float] = field(default_factory=list)

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def merge(self, other: Tally) -> None:
        self.latencies += other.latencies
        self.outcomes += other.outcomes
        self.ok += other.ok
        self.conflicts += other.conflicts
        for kind, n in other.errors.items():
            self.errors[kind] = self.errors.get(kind, 0) + n
        for key, acks in other.acked.items():
            self.acked.setdefault(key, []).extend(acks)
        self.views.update(other.views)
        self.cpu_window += other.cpu_window
        self.loop_lag += other.loop_lag


async def annotator(spec: dict, cfg: LoadConfig, tally: Tally, rng: random.Random) -> None:
    host = f"{cfg.host}:{cfg.port}"
    token = spec["token"]
    paths = {a: f"/api/assignments/{a}/labels/" for a in spec["assignments"]}
    views = tally.views
    conn: Connection | None = None
    await asyncio.sleep(max(0.0, cfg.start_at - time.monotonic()))
    await asyncio.sleep(rng.uniform(0, cfg.interval if cfg.mode == "paced" else 0.05))
    try:
        while time.monotonic() < cfg.deadline:
            assignment = rng.choice(spec["assignments"])
            question, unit, options = rng.choice(spec["targets"])
            key = (assignment, question, unit)
            version, current = views.get(key, (0, None))
            value = rng.choice([o for o in options if o != current] or options)
            body = orjson.dumps({"question": question, "unit_key": unit, "value": value, "base_version": version})
            data = put_request(host, paths[assignment], token, body)
            started = time.monotonic()
            outcome = -1
            try:
                async with asyncio.timeout(cfg.timeout):
                    if conn is None:
                        conn = await Connection.open(cfg.host, cfg.port)
                    status, payload, keep_alive = await conn.request(data)
            except REQUEST_ERRORS as exc:
                tally.error("timeout" if isinstance(exc, TimeoutError) else type(exc).__name__)
                if conn is not None:
                    conn.close()
                    conn = None
            else:
                if not keep_alive:
                    conn.close()
                    conn = None
                outcome = status
                if status == 200:
                    answer = orjson.loads(payload)
                    tally.ok += 1
                    views[key] = (answer["version"], answer["value"])
                    tally.acked.setdefault(key, []).append((answer["version"], answer["value"]))
                elif status == 409:
                    tally.conflicts += 1
                    details = orjson.loads(payload).get("details") or {}
                    views[key] = (details.get("version", 0), details.get("value"))
                else:
                    tally.error(f"HTTP {status}")
            ended = time.monotonic()
            if cfg.window_start <= ended <= cfg.deadline:
                tally.latencies.append(ended - started)
                tally.outcomes.append(outcome)
            if cfg.mode == "paced":
                await asyncio.sleep(rng.uniform(0.5 * cfg.interval, 1.5 * cfg.interval))
    finally:
        if conn is not None:
            conn.close()


async def probe_loop_lag(cfg: LoadConfig, tally: Tally, period: float = 0.02) -> None:
    await asyncio.sleep(max(0.0, cfg.window_start - time.monotonic()))
    while True:
        due = time.monotonic() + period
        if due > cfg.deadline:
            return
        await asyncio.sleep(period)
        tally.loop_lag.append(time.monotonic() - due)


async def run_annotators(specs: list[tuple[int, dict]], cfg: LoadConfig, views: dict, seed: int) -> Tally:
    """Run annotators ``(index, spec)`` until the deadline; the CPU of this process inside the window is
    measured at the window's edges by the event loop's own clock (time.monotonic)."""
    tally = Tally(views=dict(views))
    await run_measured(
        cfg, tally, [annotator(spec, cfg, tally, random.Random(seed * 100_003 + n)) for n, spec in specs]
    )
    return tally


async def run_measured(cfg: Any, tally: Any, annotators: list[Any]) -> None:
    """Await ``annotators`` (coroutines) beside the event-loop lag probe, and set ``tally.cpu_window`` to this
    process's CPU inside [cfg.window_start, cfg.deadline] (bench/pageclient.py's tallies too)."""
    loop = asyncio.get_running_loop()
    marks: dict[str, float] = {}
    loop.call_at(cfg.window_start, lambda: marks.__setitem__("start", time.process_time()))
    loop.call_at(cfg.deadline, lambda: marks.__setitem__("end", time.process_time()))
    await asyncio.gather(probe_loop_lag(cfg, tally), *annotators)
    if "end" not in marks:  # every annotator was done before the deadline (only with an absurd timeout)
        marks["end"] = time.process_time()
    tally.cpu_window = marks["end"] - marks.get("start", marks["end"])


def client_process(specs: list[tuple[int, dict]], cfg: LoadConfig, views: dict, seed: int, conn: Any) -> None:
    """Entry point of one client process (multiprocessing): sends its Tally back through ``conn``."""
    tally = asyncio.run(run_annotators(specs, cfg, views, seed))
    conn.send(tally)
    conn.close()


# --- Figures and checks ----------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile ``q`` (0–100) of ``values``; NaN when there are none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def verify_counts(
    acked: dict[Key, list[tuple[int, Any]]],
    labels: dict[Key, tuple[int, int, Any]],
    history: list[tuple[int, int, Any]],
    duplicate_label_rows: int,
) -> dict[str, int]:
    """Check what the client saw acknowledged against the database.

    ``labels``: (assignment, question key, unit) → (label id, version, value); ``history``: (label id,
    new version, new value) of every history row; ``duplicate_label_rows``: the number of (assignment,
    question, unit) holding more than one label row.

    - lost: an acknowledged (version, value) that is not in the label's history at that version, and a
      label whose stored value differs from the last acknowledged one while at that version;
    - duplicated: duplicate label rows plus history versions repeated for one label;
    - stored-on-error: history rows that no acknowledged save accounts for (the client got an error or a
      timeout and the server stored the change anyway).
    """
    by_label: dict[int, dict[int, Any]] = {}
    repeated_versions = 0
    for label_id, version, value in history:
        per_label = by_label.setdefault(label_id, {})
        if version in per_label:
            repeated_versions += 1
        per_label[version] = value
    lost = 0
    acked_versions = 0
    for key, acks in acked.items():
        label = labels.get(key)
        if label is None:
            lost += len(acks)
            continue
        label_id, stored_version, stored_value = label
        versions = by_label.get(label_id, {})
        for version, value in acks:
            if versions.get(version) != value:
                lost += 1
        acked_versions += len({v for v, _ in acks})
        last_version, last_value = max(acks, key=lambda a: a[0])
        if stored_version == last_version and stored_value != last_value:
            lost += 1
    history_rows = sum(len(v) for v in by_label.values())
    return {
        "labels": len(labels),
        "history rows": history_rows,
        "lost": lost,
        "duplicated": duplicate_label_rows + repeated_versions,
        "stored-on-error": max(history_rows - acked_versions, 0),
    }
