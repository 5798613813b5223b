"""Workers' heartbeats: each Celery worker writes its row of ``WorkerHeartbeat`` (its name, the queues it consumes)
when its consumer starts and every CONCORD_WORKER_HEARTBEAT_SECONDS after, from a thread of its own, so that a
worker busy with a long task still beats. /readyz wants a row younger than CONCORD_WORKER_STALE_SECONDS for every
queue; /metrics gives each row's age. The consumer stops beating while it is cut off from the broker (Celery
stops and restarts its steps then) and deletes its row when it shuts down; rows untouched for a day are pruned.

Registered on the consumer blueprint by ``concord.celery``.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import datetime, timedelta
from typing import Any

from celery import bootsteps
from django.conf import settings
from django.db import close_old_connections, connections
from django.utils import timezone

from concord.ops.models import WorkerHeartbeat

logger = logging.getLogger(__name__)
PRUNE_AFTER = timedelta(days=1)


def beat(hostname: str, queues: list[str], started_at: datetime, now: datetime | None = None) -> None:
    """Record that ``hostname`` is alive now and consumes ``queues``; forget workers silent for a day."""
    now = now or timezone.now()
    WorkerHeartbeat.objects.update_or_create(
        hostname=hostname,
        defaults={"queues": sorted(queues), "pid": os.getpid(), "started_at": started_at, "last_seen": now},
    )
    WorkerHeartbeat.objects.filter(last_seen__lt=now - PRUNE_AFTER).delete()


def consumed_queues(consumer: Any) -> list[str]:
    task_consumer = getattr(consumer, "task_consumer", None)
    if task_consumer is not None:
        return sorted({queue.name for queue in task_consumer.queues})
    return sorted(consumer.app.amqp.queues.consume_from or consumer.app.amqp.queues)


class Heartbeat(bootsteps.StartStopStep):
    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.thread: threading.Thread | None = None
        self.stopping = threading.Event()
        self.hostname = ""
        self.started_at = timezone.now()

    def start(self, c: Any) -> None:
        self.hostname = c.hostname
        queues = consumed_queues(c)
        self.stop(c)
        self.stopping = threading.Event()
        self.thread = threading.Thread(
            target=self.run, args=(queues, self.stopping), name="concord-heartbeat", daemon=True
        )
        self.thread.start()

    def run(self, queues: list[str], stopping: threading.Event) -> None:
        interval = settings.CONCORD_WORKER_HEARTBEAT_SECONDS
        try:
            while not stopping.is_set():
                try:
                    close_old_connections()
                    beat(self.hostname, queues, self.started_at)
                except Exception:
                    logger.warning("worker heartbeat not recorded", exc_info=True)
                stopping.wait(interval)
        finally:
            connections.close_all()

    def stop(self, c: Any) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout=settings.CONCORD_PROBE_TIMEOUT_SECONDS + 5)
            self.thread = None

    def shutdown(self, c: Any) -> None:
        self.stop(c)
        if self.hostname:
            try:
                WorkerHeartbeat.objects.filter(hostname=self.hostname).delete()
            except Exception:
                logger.warning("worker heartbeat not removed", exc_info=True)
