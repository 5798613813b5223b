"""A test-only task for tests/test_ops.py: it logs one line and answers the request id it runs under. A real
worker imports it with ``--include=tests.ops_tasks``."""

from __future__ import annotations

import logging

from celery import shared_task

from concord.ops import request_id


@shared_task(name="tests.ops_log_request_id", ignore_result=True)
def log_request_id() -> str | None:
    logging.getLogger("tests.ops").warning("task ran")
    return request_id.request_id.get()
