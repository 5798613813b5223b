"""The pure parts of the load benchmark's client (bench/loadclient.py): the HTTP response reader, the
percentile and the post-run check of what was acknowledged against the database. No server, no timing."""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "bench" / "loadclient.py"
_spec = importlib.util.spec_from_file_location("bench_loadclient", _PATH)
assert _spec is not None and _spec.loader is not None
loadclient = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = loadclient  # dataclasses look their module up there
_spec.loader.exec_module(loadclient)


def read(raw: bytes, *, eof: bool = True) -> tuple[int, bytes, bool]:
    async def go() -> tuple[int, bytes, bool]:
        reader = asyncio.StreamReader()
        reader.feed_data(raw)
        if eof:
            reader.feed_eof()
        return await loadclient.read_response(reader)

    # A loop of its own in a thread of its own: an earlier test of the suite (a browser driven through
    # Playwright's sync API) may leave an event loop running in this thread, where asyncio.run refuses.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, go()).result()


def test_content_length_body_and_keep_alive() -> None:
    raw = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{"version":2}'
    assert read(raw + b"HTTP/1.1 200 OK\r\n", eof=False) == (200, b'{"version":2}', True)


def test_header_names_are_case_insensitive_and_connection_close_is_seen() -> None:
    raw = b"HTTP/1.1 409 Conflict\r\ncontent-LENGTH: 2\r\nConnection: Close\r\n\r\n{}"
    assert read(raw) == (409, b"{}", False)


def test_chunked_body_with_extension_and_trailer() -> None:
    raw = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"4;x=y\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\nX-Trailer: t\r\n\r\n"
    )
    assert read(raw) == (200, b'{"a":1}', True)


def test_http_1_0_closes_unless_kept_alive() -> None:
    assert read(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n") == (200, b"", False)
    assert read(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n") == (200, b"", True)


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/2 200\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 OK 200\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nunframed",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY",
    ],
)
def test_malformed_responses_are_protocol_errors(raw: bytes) -> None:
    with pytest.raises(loadclient.ProtocolError):
        read(raw)


def test_a_truncated_body_is_an_incomplete_read() -> None:
    with pytest.raises(asyncio.IncompleteReadError):
        read(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")


def test_put_request_is_framed_by_its_body_length() -> None:
    data = loadclient.put_request("127.0.0.1:8765", "/api/assignments/7/labels/", "abc", '{"v":"é"}'.encode())
    head, body = data.split(b"\r\n\r\n", 1)
    assert head.startswith(b"PUT /api/assignments/7/labels/ HTTP/1.1\r\n")
    assert b"\r\nAuthorization: Token abc\r\n" in head + b"\r\n"
    assert b"\r\nContent-Length: 10" in head and len(body) == 10


def test_percentile_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert loadclient.percentile(values, 50) in (50.0, 51.0)
    assert loadclient.percentile(values, 99) == 99.0
    assert loadclient.percentile(values, 100) == 100.0
    assert loadclient.percentile([3.0, 1.0, 2.0], 0) == 1.0
    assert loadclient.percentile([], 50) != loadclient.percentile([], 50)  # NaN


A, B = (1, "q", "item"), (1, "q", "s:0")


def test_verify_counts_a_clean_run() -> None:
    acked = {A: [(1, "yes"), (2, "no")], B: [(1, "no")]}
    labels = {A: (10, 2, "no"), B: (11, 1, "no")}
    history = [(10, 1, "yes"), (10, 2, "no"), (11, 1, "no")]
    assert loadclient.verify_counts(acked, labels, history, 0) == {
        "labels": 2, "history rows": 3, "lost": 0, "duplicated": 0, "stored-on-error": 0,
    }


def test_verify_counts_lost_saves() -> None:
    acked = {A: [(1, "yes"), (2, "no")], B: [(1, "no")]}
    # A's version 2 holds another value in the history and in the label; B has no label at all.
    labels = {A: (10, 2, "maybe")}
    history = [(10, 1, "yes"), (10, 2, "maybe")]
    counts = loadclient.verify_counts(acked, labels, history, 0)
    assert counts["lost"] == 1 + 1 + 1  # A v2 in history, A's final value, B's one acknowledged save


def test_verify_counts_duplicates_and_stored_on_error() -> None:
    acked = {A: [(1, "yes")]}
    labels = {A: (10, 3, "no")}
    # Version 2 and 3 were stored although the client got errors; version 3 appears twice.
    history = [(10, 1, "yes"), (10, 2, "no"), (10, 3, "yes"), (10, 3, "no")]
    counts = loadclient.verify_counts(acked, labels, history, duplicate_label_rows=2)
    assert counts["duplicated"] == 2 + 1
    assert counts["stored-on-error"] == 2
    assert counts["lost"] == 0


def test_tallies_merge() -> None:
    one, two = loadclient.Tally(), loadclient.Tally()
    one.error("timeout")
    two.error("timeout")
    two.error("HTTP 500")
    one.acked[A] = [(1, "yes")]
    two.acked[A] = [(2, "no")]
    one.ok, two.ok = 1, 1
    one.merge(two)
    assert one.errors == {"timeout": 2, "HTTP 500": 1}
    assert one.acked[A] == [(1, "yes"), (2, "no")] and one.ok == 2
