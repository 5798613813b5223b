"""Request ids: one per HTTP request, in every log line it causes and in the Celery tasks it starts.

``RequestIdMiddleware`` takes the client's ``X-Request-ID`` when it is well formed (letters, digits and
``._:-``, 8 to 128 characters: a proxy's id, never anything that could forge a log line) or makes a uuid4, keeps
it in a context variable while the request runs and returns it in the response's ``X-Request-ID``.
``RequestIdFilter`` (on the log handlers, settings.LOGGING) puts it on every record as ``request_id``.
A task published while it is set carries it in its message headers (``before_task_publish``); the worker puts
it back in the context before the task runs (``task_prerun``) and clears it after (``task_postrun``), so the
worker's lines for that task show the same id.
"""

from __future__ import annotations

import importlib
import logging
import re
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from django.http import HttpRequest, HttpResponse

HEADER = "X-Request-ID"
TASK_HEADER = "concord_request_id"
_WELL_FORMED = re.compile(r"^[A-Za-z0-9._:-]{8,128}$")

request_id: ContextVar[str | None] = ContextVar("concord_request_id", default=None)


def well_formed(value: Any) -> bool:
    return isinstance(value, str) and _WELL_FORMED.match(value) is not None


def new_request_id() -> str:
    return uuid.uuid4().hex


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get(HEADER)
        rid = incoming if well_formed(incoming) else new_request_id()
        request.request_id = rid  # type: ignore[attr-defined]
        token = request_id.set(rid)
        try:
            response = self.get_response(request)
        finally:
            request_id.reset(token)
        response[HEADER] = rid
        return response


class RequestIdFilter(logging.Filter):
    """Puts the current request id (None outside a request or task) on every record as ``request_id``. Django logs
    a 4xx or 5xx answer ("Not Found: /x") after the middleware has returned, with the request on the record: its
    id is taken from there."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            rid = request_id.get()
            if rid is None:
                rid = getattr(getattr(record, "request", None), "request_id", None)
            record.request_id = rid
        return True


# --- Celery ---------------------------------------------------------------------------------------------------
_task_tokens: dict[str, Any] = {}


def add_to_task_headers(headers: dict[str, Any] | None = None, **_: Any) -> None:
    """``before_task_publish``: the publishing context's request id goes into the message headers."""
    rid = request_id.get()
    if rid and headers is not None and TASK_HEADER not in headers:
        headers[TASK_HEADER] = rid


def _task_request_id(task: Any) -> str | None:
    req = getattr(task, "request", None)
    rid = getattr(req, TASK_HEADER, None)  # a worker: the message headers are the request's attributes
    if rid is None:
        rid = (getattr(req, "headers", None) or {}).get(TASK_HEADER)  # task.apply(headers=...)
    return rid if well_formed(rid) else None


def restore_in_task(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    """``task_prerun``: the task runs with the request id it was published with. A task run in place (eager, or
    ``task.apply``) without one keeps its caller's."""
    if task_id is not None:
        _task_tokens[task_id] = request_id.set(_task_request_id(task) or request_id.get())


def clear_after_task(task_id: str | None = None, **_: Any) -> None:
    """``task_postrun``: back to the worker's own context."""
    token = _task_tokens.pop(task_id, None) if task_id is not None else None
    if token is not None:
        try:
            request_id.reset(token)
        except ValueError:  # set in another context (a thread pool): leave that context alone
            request_id.set(None)


def json_worker_logs(logger: logging.Logger | None = None, **_: Any) -> None:
    """``after_setup_logger`` / ``after_setup_task_logger``: with CONCORD_LOG_FORMAT=json a worker's handlers (which
    Celery sets up itself) write the same JSON lines as the web processes, request id included."""
    from django.conf import settings

    if logger is None or settings.CONCORD_LOG_FORMAT != "json":
        return
    for handler in logger.handlers:
        handler.setFormatter(json_formatter())
        if not any(isinstance(f, RequestIdFilter) for f in handler.filters):
            handler.addFilter(RequestIdFilter())


def json_formatter() -> logging.Formatter:
    """The formatter of settings.LOGGING's "json" entry."""
    from django.conf import settings

    options = dict(settings.LOGGING["formatters"]["json"])
    factory = options.pop("()")
    module, _, name = factory.rpartition(".")

    return getattr(importlib.import_module(module), name)(**options)


def connect_celery_signals() -> None:
    from celery import signals

    signals.after_setup_logger.connect(json_worker_logs, weak=False, dispatch_uid="concord.ops.request_id")
    signals.after_setup_task_logger.connect(json_worker_logs, weak=False, dispatch_uid="concord.ops.request_id")
    signals.before_task_publish.connect(add_to_task_headers, weak=False, dispatch_uid="concord.ops.request_id")
    signals.task_prerun.connect(restore_in_task, weak=False, dispatch_uid="concord.ops.request_id")
    signals.task_postrun.connect(clear_after_task, weak=False, dispatch_uid="concord.ops.request_id")
