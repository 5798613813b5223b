"""The page client of the scale benchmark (bench/pageclient.py) against a scripted HTTP server on loopback: what
it counts, how it follows the next item to its page, and where it stops. No clock decides an outcome: the
window is open from the start, the deadline never comes, and the server ends each annotator by answering
something it does not expect."""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.util
import math
import random
import sys
from pathlib import Path

_BENCH = Path(__file__).resolve().parent.parent / "bench"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, _BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pageclient imports loadclient by name, dataclasses look their module up
    spec.loader.exec_module(module)
    return module


loadclient = sys.modules.get("loadclient") or _load("loadclient")
pageclient = _load("pageclient")


def _run(coro_factory):
    # A loop of its own in a thread of its own (an earlier test may leave a loop running in this thread).
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro_factory()).result()


async def _serve(answers: list[bytes], seen: list[bytes], handlers: list[asyncio.Task]) -> asyncio.Server:
    """A server that answers the n-th request (over every connection) with ``answers[n]``; each connection's
    handler task is put in ``handlers``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.append(task)
        try:
            while True:
                # Read the request before closing, answered or not: a close with unread data would be a reset.
                seen.append(await reader.readuntil(b"\r\n\r\n"))
                if not answers:
                    break
                answer = answers.pop(0)
                writer.write(answer)
                await writer.drain()
                if b"Connection: close" in answer:
                    break
        except asyncio.IncompleteReadError:
            pass
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def _config(port: int):
    # No clock decides an outcome: the window is open from the start and the deadline never comes; the
    # per-request timeout is only a guard against a test that would otherwise hang.
    return pageclient.PageConfig(
        host="127.0.0.1", port=port, interval=0.0, timeout=30.0, start_at=0.0, window_start=0.0, deadline=math.inf
    )


def _tally(answers: list[bytes], seen: list[bytes]):
    async def go():
        handlers: list[asyncio.Task] = []
        server = await _serve(answers, seen, handlers)
        port = server.sockets[0].getsockname()[1]
        cfg = _config(port)
        tally = pageclient.PageTally()
        async with server:
            await pageclient.annotator({"cookie": "sessionid=abc", "pool": 7}, cfg, tally, random.Random(1))
            await asyncio.gather(*handlers)  # the client closed its connection: each handler reads the end
        return tally

    return _run(go)


REDIRECT = b"HTTP/1.1 302 Found\r\nLocation: /assignments/%d/\r\nContent-Length: 0\r\n\r\n"
CLOSING = b"HTTP/1.1 302 Found\r\nLocation: /assignments/3/\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
PAGE = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n<html\r\n0\r\n\r\n"


def test_each_next_item_is_followed_to_its_page_until_an_unexpected_answer() -> None:
    seen: list[bytes] = []
    home = b"HTTP/1.1 302 Found\r\nLocation: /\r\nContent-Length: 0\r\n\r\n"
    tally = _tally([REDIRECT % 11, PAGE, REDIRECT % 12, PAGE, home], seen)
    assert (len(tally.next_ms), len(tally.item_ms), tally.requests) == (2, 2, 5)
    assert tally.errors == {"next item: 302 /": 1}
    assert [r.split(b"\r\n", 1)[0] for r in seen] == [
        b"GET /pools/7/continue/ HTTP/1.1",
        b"GET /assignments/11/ HTTP/1.1",
        b"GET /pools/7/continue/ HTTP/1.1",
        b"GET /assignments/12/ HTTP/1.1",
        b"GET /pools/7/continue/ HTTP/1.1",
    ]
    assert all(b"\r\nCookie: sessionid=abc\r\n" in r for r in seen)


def test_an_item_page_that_is_not_200_ends_the_annotator_and_is_counted() -> None:
    tally = _tally([REDIRECT % 11, b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\nno"], [])
    assert (len(tally.next_ms), len(tally.item_ms), tally.requests) == (1, 0, 2)
    assert tally.errors == {"item page: 500": 1}


def test_a_closed_connection_is_reopened_and_a_broken_one_is_an_error() -> None:
    seen: list[bytes] = []
    tally = _tally([CLOSING, PAGE], seen)
    # The page came on a second connection; then the server had nothing more and closed it on the third request.
    assert (len(tally.next_ms), len(tally.item_ms), tally.requests) == (1, 1, 2)
    assert tally.errors == {"IncompleteReadError": 1}
    assert len(seen) == 3


def test_tallies_merge() -> None:
    a = pageclient.PageTally(
        next_ms=[1.0], item_ms=[2.0], errors={"x": 1}, requests=2, cpu_window=0.5, loop_lag=[0.001]
    )
    b = pageclient.PageTally(next_ms=[3.0], item_ms=[], errors={"x": 2, "y": 1}, requests=1, cpu_window=0.25)
    a.merge(b)
    assert (a.next_ms, a.item_ms, a.errors, a.requests, a.cpu_window, a.loop_lag) == (
        [1.0, 3.0],
        [2.0],
        {"x": 3, "y": 1},
        3,
        0.75,
        [0.001],
    )


def test_read_message_gives_the_headers_too() -> None:
    async def go():
        reader = asyncio.StreamReader()
        reader.feed_data(b"HTTP/1.1 302 Found\r\nLocation: /a/\r\nContent-Length: 0\r\n\r\n")
        reader.feed_eof()
        return await loadclient.read_message(reader)

    assert _run(go) == (302, {"location": "/a/", "content-length": "0"}, b"", True)


def test_no_connection_is_opened_ahead_of_its_request() -> None:
    # A sync gunicorn worker that accepts a connection waits on it: after a response that closes the
    # connection, the next one is opened only when the next request goes out.
    seen: list[bytes] = []

    async def go():
        handlers: list[asyncio.Task] = []
        server = await _serve([CLOSING, PAGE], seen, handlers)
        port = server.sockets[0].getsockname()[1]
        cfg = _config(port)
        session = pageclient._Session(cfg, "sessionid=abc")
        async with server:
            assert session.conn is None
            first = await session.get("/pools/7/continue/")
            after_close = session.conn
            second = await session.get("/assignments/3/")
            kept = session.conn is not None
            session.close()
            await asyncio.gather(*handlers)
        return first[0], after_close, second[0], kept, len(handlers)

    assert _run(go) == (302, None, 200, True, 2)
