"""A local OpenAI-compatible chat-completions server for tests (loopback only, one thread).

Each request pops the next scripted reply; when the script is empty the ``default`` reply is used.
A reply is one of:

- ``content(text)``: HTTP 200 with a chat completion whose message content is ``text``;
- ``status(code, body)``: that HTTP status with a JSON body (e.g. 429, 500);
- ``stall()``: no answer until the stub stops, so a client's timeout surely expires first (however
  slow the machine; a stall of a fixed length could end before a busy client noticed it);
- ``refused(text)``: HTTP 200 whose message carries OpenAI's ``refusal`` field and no content;
- ``content(text, finish_reason="length")``: an answer cut off at the token limit (vLLM and Ollama say so
  with that finish reason); ``usage=`` adds the token counts servers report;
- ``ollama_error(code, text)``: an error the way Ollama's OpenAI-compatible API words it (``{"error": "…"}``).

``hold()`` makes every following request wait until ``release()`` (``in_flight`` / ``max_in_flight`` count
requests being answered; ``changed`` is notified whenever they change), so a test can see how many
requests a client has in flight at once.

Every request body is recorded in ``requests`` for assertions.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    kind: str
    text: str = ""
    code: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"
    refusal: str | None = None
    usage: dict[str, int] | None = None


def content(value: str | dict[str, Any], *, finish_reason: str = "stop", usage: dict[str, int] | None = None) -> Reply:
    return Reply("content", text=value if isinstance(value, str) else json.dumps(value),
                 finish_reason=finish_reason, usage=usage)


def refused(text: str) -> Reply:
    return Reply("content", text="", refusal=text)


def ollama_error(code: int, text: str) -> Reply:
    return Reply("status", code=code, body={"error": text})


def status(code: int, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> Reply:
    return Reply("status", code=code, body=body or {"error": {"message": f"status {code}"}}, headers=headers or {})


def stall() -> Reply:
    return Reply("stall")


class LLMStub:
    def __init__(self) -> None:
        self.script: deque[Reply] = deque()
        self.default: Reply = status(500, {"error": {"message": "no scripted reply"}})
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._released = threading.Event()
        self._released.set()
        self.changed = threading.Condition()
        self.in_flight = 0
        self.max_in_flight = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                payload = json.loads(self.rfile.read(length) or b"{}")
                with stub._lock:
                    stub.requests.append({"path": self.path, "headers": dict(self.headers), "json": payload})
                    reply = stub.script.popleft() if stub.script else stub.default
                if reply.kind == "stall":
                    stub._stopping.wait()
                    return
                stub._flight(+1)
                try:
                    stub._released.wait()  # set unless a test holds requests; stop() sets it too
                finally:
                    stub._flight(-1)
                if reply.kind == "content":
                    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
                    if reply.refusal is not None:
                        message["refusal"] = reply.refusal
                    code, body = 200, {
                        "id": "chatcmpl-stub", "object": "chat.completion", "model": payload.get("model"),
                        "choices": [{"index": 0, "finish_reason": reply.finish_reason, "message": message}],
                    }
                    if reply.usage is not None:
                        body["usage"] = reply.usage
                else:
                    code, body = reply.code, reply.body
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def _flight(self, delta: int) -> None:
        with self.changed:
            self.in_flight += delta
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.changed.notify_all()

    def hold(self) -> None:
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def start(self) -> LLMStub:
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # stalled requests end without an answer
        self._released.set()
        self.server.shutdown()
        self.server.server_close()


def verdicts(field: str, values: list[bool]) -> Reply:
    """A valid answer to one of the numbered-verdict prompts."""
    return content({"verdicts": [{"index": i, field: v} for i, v in enumerate(values)]})
