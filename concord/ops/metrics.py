"""Prometheus metrics (prometheus-client), served at /metrics (concord.ops.views.metrics).

Counted in the process that serves: requests (``RequestMetricsMiddleware``, labelled by the resolved URL's name,
never the raw path, so that ids in paths cannot grow the number of series) and label saves (the label save
service). Read at scrape time: the broker's queue depths, the workers' heartbeat ages and what the apps add
through :func:`register_scrape_collector` (scoring: the progress of running score runs).

With several web processes (gunicorn), each counts its own requests: set PROMETHEUS_MULTIPROC_DIR to an empty
folder, the same for every process and emptied at each start, and prometheus-client writes each process's
counters there; /metrics then sums them over the processes (``MultiProcessCollector``), whichever process answers.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

logger = logging.getLogger(__name__)

REQUESTS = Counter(
    "concord_http_requests", "HTTP requests answered, by URL name, method and status.", ["view", "method", "status"]
)
REQUEST_SECONDS = Histogram(
    "concord_http_request_duration_seconds",
    "Time to answer an HTTP request, by URL name, method and status.",
    ["view", "method", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
LABEL_SAVES = Counter("concord_label_saves", "Answers saved by annotators (each successful label save).")

METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
UNRESOLVED = "<unresolved>"  # no URL matched (404) or a middleware answered first (an HTTPS redirect)


def view_name(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    return (match.view_name if match is not None else "") or UNRESOLVED


class RequestMetricsMiddleware:
    """Counts and times every request; first in MIDDLEWARE, so that the time covers the whole stack."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        start = time.perf_counter()
        response = self.get_response(request)
        labels = (
            view_name(request),
            request.method if request.method in METHODS else "other",
            str(response.status_code),
        )
        REQUESTS.labels(*labels).inc()
        REQUEST_SECONDS.labels(*labels).observe(time.perf_counter() - start)
        return response


# --- Read at scrape time ----------------------------------------------------------------------------------------
_scrape_collectors: list[Collector] = []


def register_scrape_collector(collector: Collector) -> None:
    """Adds a collector read at each scrape (an app's, from its ``ready``); registering one twice is a no-op."""
    if not any(type(c) is type(collector) for c in _scrape_collectors):
        _scrape_collectors.append(collector)


class OperationsCollector(Collector):
    """The broker's queue depths and each worker's heartbeat age, read when scraped."""

    def collect(self) -> Iterable[Metric]:
        from concord.ops import checks

        up = GaugeMetricFamily("concord_broker_up", "1 when the broker answered this scrape, else 0.")
        depth = GaugeMetricFamily("concord_queue_messages", "Messages waiting in a Celery queue.", labels=["queue"])
        try:
            with checks.broker_connection() as conn:
                for queue, n in checks.queue_depths(conn, list(checks.celery_queues())).items():
                    depth.add_metric([queue], n)
            up.add_metric([], 1)
        except Exception:
            logger.warning("metrics: the broker did not answer", exc_info=True)
            up.add_metric([], 0)
        yield up
        yield depth
        age = GaugeMetricFamily(
            "concord_worker_heartbeat_age_seconds",
            "Seconds since each Celery worker's last heartbeat (stale rows of stopped workers grow old).",
            labels=["worker"],
        )
        now = timezone.now()
        try:
            for worker in checks.all_workers():
                age.add_metric([worker.hostname], max(0.0, (now - worker.last_seen).total_seconds()))
        except Exception:
            logger.warning("metrics: cannot read the workers' heartbeats", exc_info=True)
        yield age


class _Local(Collector):
    """This process's own counters (without PROMETHEUS_MULTIPROC_DIR)."""

    def collect(self) -> Iterable[Metric]:
        return REGISTRY.collect()


def exposition() -> bytes:
    """The text of one scrape."""
    registry = CollectorRegistry(auto_describe=False)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(_Local())
    registry.register(OperationsCollector())
    for collector in _scrape_collectors:
        registry.register(collector)
    return generate_latest(registry)
