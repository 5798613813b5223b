"""The Celery application. Configuration comes from Django settings prefixed CELERY_."""

import os

from celery import Celery

from concord.ops import request_id, worker_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

app = Celery("concord")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Each start of a worker's consumer (the first, and every reconnection after a broker outage) re-sends
# from the database the scoring work whose messages may have been lost (scoring.tasks).
app.steps["consumer"].add("scoring.tasks:RecoverOnConsumerStart")
# Each worker records its heartbeat (its queues, every few seconds) for /readyz and /metrics (concord.ops.heartbeat).
app.steps["consumer"].add("concord.ops.heartbeat:Heartbeat")
# A request's id travels in the messages of the tasks it sends and into the worker's log lines (concord.ops.request_id).
request_id.connect_celery_signals()
# A worker's database connections prepare no statements and so keep no tally of them (concord.ops.worker_connections).
worker_connections.connect_celery_signals()
