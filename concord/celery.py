"""The Celery application. Configuration comes from Django settings prefixed CELERY_."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

app = Celery("concord")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Each start of a worker's consumer (the first, and every reconnection after a broker outage) re-sends
# from the database the scoring work whose messages may have been lost (scoring.tasks).
app.steps["consumer"].add("scoring.tasks:RecoverOnConsumerStart")
